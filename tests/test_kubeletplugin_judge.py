"""The judgements of a kubelet plugin's answers (draconform/kubeletplugin/judge.py) that plugin-check's checks and
the kubelet-plugin features' Then steps share: each holds for the answer its rule allows and names what is wrong
with the plausible wrong answer."""

from __future__ import annotations

import os
from pathlib import Path

from draconform.kube.cdi import spec_text
from draconform.kubeletplugin import judge
from draconform.kubeletplugin.client import PluginCallError
from draconform.kubeletplugin.types import ClaimRef, PluginInfo, PreparedDevice, PrepareResult

MODEL = ClaimRef("default", "model", "uid-model")
SCRATCH = ClaimRef("default", "scratch", "uid-scratch")
GPU0 = PreparedDevice("node-1", "gpu-0", ("gpus",), ("example.com/gpu=gpu-0",))
GPU1 = PreparedDevice("node-1", "gpu-1", ("gpus",), ("example.com/gpu=gpu-1",))
ALLOCATED = [{"request": "gpus", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-0"},
             {"request": "gpus", "driver": "gpu.example.com", "pool": "node-1", "device": "gpu-1"}]


def test_entries_missing_and_unasked_are_found_by_uid() -> None:
    assert judge.missing_entries([MODEL, SCRATCH], {"uid-model": PrepareResult()}) == [SCRATCH]
    assert judge.missing_entries([MODEL], {"model": PrepareResult()}) == [MODEL]  # keyed by name, not UID
    assert judge.unasked_entries([SCRATCH], ["uid-scratch", "uid-model"]) == ["uid-model"]
    assert judge.unasked_entries([MODEL, SCRATCH], ["uid-model"]) == []


def test_refused_prepared_and_unprepare_failures() -> None:
    assert judge.refused(PrepareResult(error="no such claim"))
    assert not judge.refused(None)  # left out is not a refusal
    assert not judge.refused(PrepareResult(devices=(GPU0,)))
    assert judge.prepared(PrepareResult()) and not judge.prepared(None)
    assert judge.unprepare_failure({"uid-model": ""}, "uid-model") is None
    assert judge.unprepare_failure({"uid-model": "busy"}, "uid-model") == "busy"
    assert judge.unprepare_failure({}, "uid-model") == judge.NOT_ANSWERED


def test_answers_alike_ignore_order_but_not_cdi_ids() -> None:
    first = PrepareResult(devices=(GPU0, GPU1))
    assert judge.answered_alike(first, PrepareResult(devices=(GPU1, GPU0)))
    renamed = PreparedDevice("node-1", "gpu-1", ("gpus",), ("example.com/gpu=other",))
    assert not judge.answered_alike(first, PrepareResult(devices=(GPU0, renamed)))
    assert judge.signature_text(PrepareResult()) == "no devices"
    assert "node-1/gpu-0 for requests gpus with CDI example.com/gpu=gpu-0" in judge.signature_text(first)


def test_the_devices_of_the_allocation_pass_and_wrong_ones_are_named() -> None:
    def problems(*devices: PreparedDevice, version: str = "v1") -> list[str]:
        return judge.allocation_problems("model", "gpu.example.com", ALLOCATED, PrepareResult(devices=devices),
                                         version)

    assert problems(GPU0, GPU1) == []
    assert problems() == []  # no devices at all (D-3063-8)
    assert problems(GPU0) == ["left out node-1/gpu-1 of the allocation"]
    nic = PreparedDevice("node-1-nics", "nic-0")
    assert problems(GPU0, GPU1, nic) == ["prepared node-1-nics/nic-0, which the allocation of claim model does not "
                                         "give driver gpu.example.com"]
    wrong_request = PreparedDevice("node-1", "gpu-1", ("other",))
    assert problems(GPU0, wrong_request) == ["device node-1/gpu-1 names request other, but was allocated for "
                                             "request gpus"]
    assert problems(GPU0, PreparedDevice("node-1", "gpu-1")) == []  # naming no request serves them all


def test_a_subrequest_may_be_named_by_its_parent_and_shares_count_over_v1_only() -> None:
    allocated = [{"request": "gpu/one", "pool": "node-1", "device": "gpu-0", "shareID": "s-1"}]
    parent = PreparedDevice("node-1", "gpu-0", ("gpu",), share_id="s-1")
    assert judge.allocation_problems("c", "d", allocated, PrepareResult(devices=(parent,)), "v1") == []
    unshared = PreparedDevice("node-1", "gpu-0", ("gpu/one",))
    assert judge.allocation_problems("c", "d", allocated, PrepareResult(devices=(unshared,)), "v1") == [
        "device node-1/gpu-0 was answered with share ID none, allocated with share ID s-1"]
    assert judge.allocation_problems("c", "d", allocated, PrepareResult(devices=(unshared,)), "v1beta1") == []


def test_answered_pools_are_named_back_before_comparing() -> None:
    renamed = PreparedDevice("scenario-7-node-1", "gpu-0", ("gpus",))
    allocated = ALLOCATED[:1]
    assert judge.allocation_problems("c", "d", allocated, PrepareResult(devices=(renamed,)), "v1",
                                     lambda pool: pool.removeprefix("scenario-7-")) == []


def test_a_concurrent_answer_must_be_a_success_like_the_answer_alone() -> None:
    alone = PrepareResult(devices=(GPU0,))
    assert judge.concurrent_answer(PrepareResult(devices=(GPU0,)), alone) is None
    assert judge.concurrent_answer(None, alone) == "refused"
    assert judge.concurrent_answer(PrepareResult(error="busy"), alone) == "refused"
    assert judge.concurrent_answer(PrepareResult(devices=(GPU1,)), alone) == "differs"


def test_cdi_ids_qualified_and_per_device() -> None:
    assert judge.unqualified_cdi_ids(["example.com/gpu=gpu-0", "gpu-0", "example.com/gpu="]) == [
        "gpu-0", "example.com/gpu="]
    result = PrepareResult(devices=(GPU0, PreparedDevice("node-1", "gpu-1")))
    assert judge.cdi_ids(result) == ["example.com/gpu=gpu-0"]
    assert judge.devices_without_cdi_id(result) == ["node-1/gpu-1"]


def test_undefined_and_twice_defined_cdi_ids() -> None:
    spec = spec_text("example.com/gpu", {"gpu-0": {"GPU": "0"}})
    missing, problems = judge.undefined_cdi_ids(["example.com/gpu=gpu-0", "example.com/gpu=gpu-1"],
                                                {"a.json": spec, "bad.json": "{"})
    assert missing == ["example.com/gpu=gpu-1"]
    assert problems and problems[0].startswith("bad.json")
    ids = ["example.com/gpu=gpu-0"]
    assert judge.defined_twice(ids, {"a.json": spec}) == []
    assert judge.defined_twice(ids, {"a.json": spec, "a-copy.json": spec}) == [
        "example.com/gpu=gpu-0 in a.json and a-copy.json"]
    # A later directory overrides an earlier one: no conflict.
    assert judge.defined_twice(ids, {"/etc/cdi/a.json": spec, "/var/run/cdi/a.json": spec}) == []


def test_spec_files_a_prepare_wrote_and_left() -> None:
    written = judge.new_spec_files({"driver.json"}, {"driver.json", "claim-1.json"})
    assert written == ["claim-1.json"]
    assert judge.spec_files_left(written, {"driver.json"}) == []
    assert judge.spec_files_left(written, {"driver.json", "claim-1.json"}) == ["claim-1.json"]


def test_the_registered_endpoint_is_the_socket_or_a_link_to_it(tmp_path: Path) -> None:
    real = tmp_path / "dra.sock"
    real.touch()
    link = tmp_path / "link.sock"
    os.symlink(real, link)
    assert judge.endpoint_problem(str(real), str(link)) is None
    assert judge.endpoint_problem(f"unix://{real}", str(real)) == "not a path"
    assert judge.endpoint_problem(str(tmp_path / "other.sock"), str(real)) == "another socket"


def test_versions_known_and_preferred() -> None:
    listed = ["v1alpha1.DRAResourceHealth", "v1.DRAPlugin", "v1beta1.DRAPlugin", "v9.DRAPlugin"]
    assert judge.known_versions(listed) == ["v1.DRAPlugin", "v1beta1.DRAPlugin"]
    assert judge.prefers(listed, "v1.DRAPlugin", "v1beta1.DRAPlugin")
    assert not judge.prefers(list(reversed(listed)), "v1.DRAPlugin", "v1beta1.DRAPlugin")
    assert judge.prefers(["v1.DRAPlugin"], "v1.DRAPlugin", "v1beta1.DRAPlugin")
    assert not judge.prefers(["v1beta1.DRAPlugin"], "v1.DRAPlugin", "v1beta1.DRAPlugin")


def test_a_registration_notification_may_be_refused_only_when_it_says_failed() -> None:
    refusal = PluginCallError("unix:///reg.sock", "NotifyRegistrationStatus", "INTERNAL", "told so")
    hang = PluginCallError("unix:///reg.sock", "NotifyRegistrationStatus", "DEADLINE_EXCEEDED", "")
    assert not judge.notification_refused_wrongly(True, None)
    assert judge.notification_refused_wrongly(True, refusal)
    assert not judge.notification_refused_wrongly(False, refusal)
    assert judge.notification_refused_wrongly(False, hang)


def test_only_successes_marked_permanent_are_wrong() -> None:
    good, bad = PrepareResult(error="no", permanent=True), PrepareResult(devices=(GPU0,), permanent=True)
    assert judge.permanent_without_error([good, bad, PrepareResult()]) == [bad]
    assert judge.refused_permanently(good)
    assert not judge.refused_permanently(bad) and not judge.refused_permanently(PrepareResult(error="no"))
    assert not judge.refused_permanently(None)


def test_the_registration_names_and_lists() -> None:
    info = PluginInfo("DRAPlugin", "gpu.example.com", "/dra.sock", ("v1.DRAPlugin",))
    assert judge.registered_as(info, "DRAPlugin", "gpu.example.com")
    assert not judge.registered_as(info, "DRAPlugin", "nic.example.com")
    assert not judge.registered_as(PluginInfo("CSIPlugin", "gpu.example.com", "/dra.sock", ()), "DRAPlugin",
                                   "gpu.example.com")
    assert judge.not_advertised(info.supported_versions, ["v1.DRAPlugin", "v1beta1.DRAPlugin"]) == ["v1beta1.DRAPlugin"]
