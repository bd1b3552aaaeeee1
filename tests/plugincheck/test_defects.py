"""Every check of `draconform plugin-check` against the reference plugin run as exactly one of its known-bad
variants (draconform/mutation/known_bad/plugin.py PLUGIN_CHECK_DEFECTS, installed as overrides of named
methods, outside the production code): the check of the rule the defect breaks fails, naming what went
wrong in words, and every other check passes as it does for the plugin without defects. So a check that
accepted any answer fails its test, and so does a check that blames the wrong rule."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from draconform.kube.kinds import with_pod_room
from draconform.mutation.catalogue import variant_named
from draconform.mutation.known_bad.plugin import PLUGIN_CHECK_DEFECTS
from draconform.plugincheck.checks import CHECKS
from tests.plugincheck.conftest import Api
from tests.plugincheck.helpers import DRIVER, NODE, SLICES, Plugin, failed, outcomes, plugin_check

# The one check these runs cannot give what it needs: a pair of claims KEP-5963 makes incompatible.
NEEDS_DECLARATIONS = {"KEP-5963/DRIVER-VALIDATES-AT-PREPARE"}
# The reference driver refuses, permanently, opaque configuration it does not understand (KEP-5322).
SUPPORTS = "permanentErrors:\n  config: {mode: no-such-mode}\n"


def run(workdir: Path, api: Api, variant: str | None = None) -> tuple[int, dict]:  # type: ignore[type-arg]
    (workdir / "supports.yaml").write_text(SUPPORTS)
    plugin = Plugin(workdir, "--kubeconfig", str(api.kubeconfig), variant=variant)
    try:
        return plugin_check(workdir, "--kubeconfig", str(api.kubeconfig), "--cdi-dir", str(workdir / "cdi"),
                            "--restart-command", plugin.restart_command, "--timeout", "10",
                            "--supports", str(workdir / "supports.yaml"))
    finally:
        plugin.stop()


def test_the_plugin_without_defects_passes_every_check_it_can_be_given(workdir: Path, api: Api) -> None:
    status, report = run(workdir, api)
    expected = {c.rule: "skipped" if c.rule in NEEDS_DECLARATIONS else "passed" for c in CHECKS}
    assert outcomes(report) == expected, failed(report)
    assert status == 0
    leftovers = [f"{o['kind']}/{o['metadata']['name']}" for kind in ("ResourceClaim", "Pod")
                 for o in api.store.list(kind)]
    assert not leftovers, f"plugin-check left {leftovers} in the cluster"


@pytest.mark.parametrize("defect", sorted(PLUGIN_CHECK_DEFECTS))
def test_each_defect_fails_exactly_the_check_of_its_rule(workdir: Path, api: Api, defect: str) -> None:
    rule = variant_named(defect).rule
    status, report = run(workdir, api, defect)
    got = failed(report)
    assert set(got) == {rule}, got
    assert status == 1
    message = got[rule]
    assert "PrepareResult(" not in message and "PreparedDevice(" not in message and "{'" not in message, message
    skipped = {r for r, s in outcomes(report).items() if s == "skipped"}
    assert skipped == NEEDS_DECLARATIONS, skipped


def test_plugin_check_kubeconfig_against_draconform_serve(workdir: Path) -> None:
    """The vendor's two commands against `draconform serve` (its scheduler, controllers and kubelets running):
    plugin-check makes its claims there itself, every check it can judge passes, and it leaves nothing behind."""
    from draconform.live.kube import KubeClient, load_config
    from tests.live.helpers import served_reference

    served_dir = workdir / "served"
    served_dir.mkdir()
    with served_reference(served_dir) as served:
        config = served / "kubeconfig"
        client = KubeClient(load_config(config))
        try:
            for node in (NODE, "node-2"):
                client.create(with_pod_room({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}}))
            for slice_ in SLICES:
                client.create(slice_)
            plugin = Plugin(workdir, "--kubeconfig", str(config))
            try:
                status, report = plugin_check(workdir, "--kubeconfig", str(config), "--cdi-dir", str(workdir / "cdi"),
                                              "--restart-command", plugin.restart_command)
            finally:
                plugin.stop()
            left = [o["metadata"]["name"] for kind in ("ResourceClaim", "Pod") for o in client.list(kind)[0]]
        finally:
            client.close()
    assert failed(report) == {}
    assert status == 0
    assert {r for r, s in outcomes(report).items() if s == "skipped"} == {
        *NEEDS_DECLARATIONS, "KEP-5322/WIRE-FIELD", "KEP-5322/PERMANENT-NEEDS-ERROR", "KEP-5322/DRIVER-EXPECTS-REPEAT",
        "KEP-5322/DRIVER-UNPREPARE-AFTER-PERMANENT"}
    assert left == []


def test_a_check_that_accepts_anything_would_fail_its_defect_test(workdir: Path, api: Api,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The defect tests above assert the failure, so a check weakened to accept any answer cannot pass them:
    here the identity check accepts anything, and the defect it exists for goes unnoticed."""
    from draconform.plugincheck import runner

    rule = variant_named("state-by-name").rule
    lax = tuple(replace(check, run=lambda session: None) if check.rule == rule else check for check in CHECKS)
    monkeypatch.setattr(runner, "CHECKS", lax)
    status, report = run(workdir, api, "state-by-name")
    assert failed(report) == {} and status == 0  # what test_each_defect_fails_exactly_the_check_of_its_rule refuses


def test_a_run_stopped_by_sigterm_deletes_what_it_created(workdir: Path, api: Api) -> None:
    """The restart command here stops plugin-check itself (its parent process) in the middle of the run."""
    plugin = Plugin(workdir, "--kubeconfig", str(api.kubeconfig))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "draconform.cli", "plugin-check", "--endpoint", f"unix://{workdir}/dra.sock",
             "--driver", DRIVER, "--node", NODE, "--kubeconfig", str(api.kubeconfig), "--restart-command",
             "kill -TERM $PPID", "--report-dir", str(workdir / "reports")],
            capture_output=True, text=True, timeout=300, check=False)
    finally:
        plugin.stop()
    assert done.returncode == 143, done.stderr  # 128 + SIGTERM, as any interrupted run
    assert api.store.list("ResourceClaim") == [] and api.store.list("Pod") == []
    reports = list((workdir / "reports").rglob("report.json"))
    assert reports, "an interrupted run still writes its reports, marked so"
    assert json.loads(reports[0].read_text())["run"]["interrupted"]["signal"] == "SIGTERM"
