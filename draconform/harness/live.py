"""The pytest plugin a live run (`draconform run --kubeconfig`) adds: scenarios that can see one another on the
cluster run alone, the others side by side (`draconform.live.isolation`), and the run ends with a check that
nothing of it is left on the cluster."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import pytest
from pytest_bdd.parser import ScenarioTemplate
from pytest_bdd.scenario import scenario_wrapper_template_registry
from pytest_bdd.utils import registry_get_safe

from draconform.live.config import ClusterConfig, LiveOptions
from draconform.live.isolation import ALONE_GROUP, alone_reasons, manifest_names, turn
from draconform.reporting.records import HarnessError

ALONE = pytest.StashKey[list[str]]()
MANIFESTS = "manifests"


def scenario_texts(template: ScenarioTemplate) -> list[str]:
    """What a scenario says: its steps (with the background's), their tables and docstrings, and the
    manifests they name."""
    texts: list[str] = []
    for step in template.steps:
        texts.append(step.name)
        if step.docstring:
            texts.append(step.docstring)
        if step.datatable is not None:
            texts += [" | ".join(map(str, row)) for row in step.datatable.raw()]
    folder = Path(template.feature.filename).parent / MANIFESTS
    for name in manifest_names(step.name for step in template.steps):
        path = folder / name
        if path.is_file():
            texts.append(path.read_text(encoding="utf-8"))
    return texts


class LivePlugin:
    def __init__(self, options: LiveOptions) -> None:
        self.options = options
        cluster = ClusterConfig.load(Path(options.cluster_config)) if options.cluster_config else ClusterConfig()
        self.driver_under_test = cluster.own_driver is not None

    @pytest.hookimpl(tryfirst=True)  # before xdist's own, which sends each group to one worker
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            template = registry_get_safe(scenario_wrapper_template_registry, getattr(item, "obj", None))
            if template is None:
                continue
            reasons = alone_reasons(scenario_texts(template), template.tags | template.feature.tags,
                                    self.driver_under_test)
            item.stash[ALONE] = reasons
            if reasons:
                item.add_marker(pytest.mark.xdist_group(ALONE_GROUP))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        if not self.options.lock_dir:
            return (yield)
        alone = bool(item.stash.get(ALONE, []))
        with turn(Path(self.options.lock_dir), alone):
            if alone:
                from draconform.live.metrics import wait_for_idle_schedulers

                wait_for_idle_schedulers(self.options)  # earlier scenarios' binding cycles end outside its metrics
            return (yield)

    @pytest.hookimpl(tryfirst=True)  # before the recorder writes the reports
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(session.config, "workerinput") or not self.options.run_id:
            return
        from draconform.live.cleanup import run_leftovers

        try:
            left = run_leftovers(self.options)
            problem = f"the run left objects on the cluster after every scenario's clean-up: {', '.join(left)}" \
                if left else None
        except Exception as error:  # a cluster gone away: the scenarios' records say so already, keep them
            problem = f"the run's final check for objects left on the cluster failed: {type(error).__name__}: {error}"
        if problem is not None:
            recorder = session.config.pluginmanager.get_plugin("draconform-recorder")
            assert recorder is not None  # registered by every run (harness/recorder.py)
            recorder.errors.append(HarnessError("live clean-up", problem))
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(LivePlugin(LiveOptions.from_environ()), "draconform-live")
