"""The step vocabulary holds no dead words: every step definition is used by some scenario of the shipped
features (an unused step is untested code that a reader takes for part of the language)."""

from __future__ import annotations

from pytest_bdd.feature import get_features

from draconform.commands.steps import handle
from draconform.paths import FEATURES_DIR
from draconform.suite.vocabulary import step_definitions


def _step_texts() -> set[tuple[str, str]]:
    """(type, text) of every step of every scenario, outlines expanded, backgrounds included."""
    texts: set[tuple[str, str]] = set()
    for feature in get_features([str(path) for path in FEATURES_DIR.rglob("*.feature")]):
        if feature.background is not None:
            texts.update((step.type, step.name) for step in feature.background.steps)
        for template in feature.scenarios.values():
            for example in [row for table in template.examples for row in table.as_contexts()] or [{}]:
                texts.update((step.type, step.name) for step in template.render(example).steps)
    return texts


def test_every_step_definition_is_used_by_a_scenario() -> None:
    texts = _step_texts()
    unused = sorted({f"{step.function} ({step.keyword}: {step.pattern})" for step in step_definitions()
                     if not any(step.matches(kind, text) for kind, text in texts)})
    assert unused == [], "step definitions no scenario uses"


def test_the_vocabulary_reads_pytest_bdds_step_registry() -> None:
    """Pins the pytest-bdd internals vocabulary.py reads: every step module's definitions are found, each
    with a keyword, a parser that matches a real step line, and the line of its function."""
    steps = step_definitions()
    assert {step.module.rsplit(".", 1)[-1] for step in steps} >= {"objects", "scheduling", "observe", "kubelet"}
    assert {step.keyword for step in steps} == {"given", "when", "then"}
    runs = [step for step in steps if step.pattern == "the scheduler runs"]
    assert runs and runs[0].matches("when", "the scheduler runs") and not runs[0].matches("then", "the scheduler runs")
    assert all(step.line > 0 and step.file.is_file() for step in steps)


def test_the_steps_command_lists_and_filters(capsys) -> None:  # type: ignore[no-untyped-def]
    import argparse
    assert handle(argparse.Namespace(pattern="scheduler runs", output="text")) == 0
    shown = capsys.readouterr().out
    assert "When  the scheduler runs" in shown and "scheduling.py" in shown
    assert handle(argparse.Namespace(pattern="no step says this", output="text")) == 1
