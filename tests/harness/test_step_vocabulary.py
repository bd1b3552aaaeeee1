"""The step vocabulary holds no dead words: every step definition is used by some scenario of the shipped
features (an unused step is untested code that a reader takes for part of the language)."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from pytest_bdd.feature import get_features

import draconform.steps
from draconform.paths import FEATURES_DIR


def _step_definitions() -> list[tuple[str, Any, str]]:
    """(type, parser, function name) of every step the step modules define."""
    found = []
    for module_info in pkgutil.iter_modules(draconform.steps.__path__):
        module = importlib.import_module(f"draconform.steps.{module_info.name}")
        for name, value in vars(module).items():
            if name.startswith("pytestbdd_stepdef_"):
                context = value._get_wrapped_function()()  # pytest-bdd's StepFunctionContext
                found.append((context.type, context.parser, context.step_func.__name__))
    return found


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
    unused = sorted({f"{function} ({kind}: {getattr(parser, 'name', parser)})"
                     for kind, parser, function in _step_definitions()
                     if not any(t == kind and parser.is_matching(text) for t, text in texts)})
    assert unused == [], "step definitions no scenario uses"
