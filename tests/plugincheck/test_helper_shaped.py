"""`draconform plugin-check --kubeconfig` against a driver's plugin shaped like those built on upstream's helper
(helper_shaped_driver.py): it reads claims from the API server over HTTP, fails a whole call for a claim it
cannot read, serialises its calls, answers a refused registration with an error and advertises v1 only. Every
MUST rule passes, with and without devices in its answers (D-3063-8), and no --supports file is needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from draconform.catalogue import load_catalogue
from tests.plugincheck.conftest import Api
from tests.plugincheck.helpers import Plugin, failed, outcomes, plugin_check

HELPER_DRIVER = [sys.executable, str(Path(__file__).with_name("helper_shaped_driver.py"))]


@pytest.mark.parametrize("answers", ["devices", "no devices"])
def test_a_helper_shaped_driver_passes_every_must_rule(workdir: Path, api: Api, answers: str) -> None:
    extra = ["--no-devices"] if answers == "no devices" else []
    plugin = Plugin(workdir, "--kubeconfig", str(api.kubeconfig), *extra, command=HELPER_DRIVER)
    try:
        status, report = plugin_check(workdir, "--kubeconfig", str(api.kubeconfig), "--cdi-dir",
                                      str(workdir / "cdi"), "--restart-command", plugin.restart_command)
    finally:
        plugin.stop()
    rules = load_catalogue().rules
    got = outcomes(report)
    # KEP-5322's and KEP-5963's checks need claims the driver declares it refuses; this one declares none.
    must = {rule for rule in got if rules[rule].level.startswith("MUST") and rules[rule].kep == "DRA-PLUGIN"}
    assert not failed(report), failed(report)
    assert status == 0
    # What the helper does differently from the reference plugin (a whole call refused for a claim it cannot
    # read, an error for a refused registration, v1 alone) is accepted, not skipped.
    for rule in ("DRA-PLUGIN/PER-CLAIM-ERRORS", "DRA-PLUGIN/CLAIMS-INDEPENDENT", "DRA-PLUGIN/REGISTRATION-STATUS",
                 "DRA-PLUGIN/REGISTRATION-VERSIONS", "DRA-PLUGIN/SERVES-V1", "DRA-PLUGIN/SURVIVES-RESTART",
                 "DRA-PLUGIN/CONCURRENT-CALLS", "DRA-PLUGIN/PREPARED-DEVICES-MATCH-ALLOCATION",
                 "DRA-PLUGIN/CLAIM-IDENTITY-IS-UID", "DRA-PLUGIN/DEVICES-ON-THIS-NODE"):
        assert got[rule] == "passed", (rule, got[rule])
    assert got["DRA-PLUGIN/SERVES-V1BETA1"] == "skipped"  # it does not advertise v1beta1
    if answers == "no devices":
        assert {got[r] for r in ("DRA-PLUGIN/CDI-ID-SYNTAX", "DRA-PLUGIN/CDI-ID-PER-DEVICE",
                                 "DRA-PLUGIN/CDI-SPEC-FILES")} == {"skipped"}
    else:
        assert got["DRA-PLUGIN/CDI-SPEC-FILES"] == "passed"
    unjudged = sorted(r for r in must if got[r] != "passed")
    no_cdi_ids = ["DRA-PLUGIN/CDI-ID-DEFINED-ONCE", "DRA-PLUGIN/CDI-ID-SYNTAX", "DRA-PLUGIN/CDI-SPEC-FILES"]
    assert unjudged == (no_cdi_ids if answers == "no devices" else []), unjudged
