"""The step vocabulary as data: every step the step modules define, with its keyword, its pattern and
where it is written, for `draconform steps` and the test that keeps the vocabulary free of dead words.

pytest-bdd keeps a step's parser on a private wrapper (`_get_wrapped_function`); this is the one place
that reads it, and tests/harness/test_step_vocabulary.py pins that contract on the pytest-bdd range the
project allows."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import draconform.steps

STEPDEF_PREFIX = "pytestbdd_stepdef_"  # pytest-bdd's name for the fixture a step decorator registers


@dataclass(frozen=True)
class StepDefinition:
    keyword: str  # given, when, then
    pattern: str  # the text or regular expression a step line must match
    function: str
    module: str  # draconform.steps.<module>
    file: Path
    line: int
    parser: Any  # pytest-bdd's parser: `is_matching(text)` says whether a step line uses this definition

    def matches(self, keyword: str, text: str) -> bool:
        return keyword == self.keyword and bool(self.parser.is_matching(text))


def step_definitions() -> list[StepDefinition]:
    """Every step definition of draconform.steps, in module order, then in source order."""
    found: list[StepDefinition] = []
    for module_info in sorted(pkgutil.iter_modules(draconform.steps.__path__), key=lambda info: info.name):
        module = importlib.import_module(f"draconform.steps.{module_info.name}")
        for name, value in vars(module).items():
            if not name.startswith(STEPDEF_PREFIX):
                continue
            context = value._get_wrapped_function()()  # pytest-bdd's StepFunctionContext
            function = inspect.unwrap(context.step_func)
            source = Path(inspect.getsourcefile(function) or module.__file__ or "")
            found.append(StepDefinition(
                keyword=str(context.type), pattern=str(getattr(context.parser, "name", context.parser)),
                function=function.__name__, module=module.__name__, file=source,
                line=inspect.getsourcelines(function)[1], parser=context.parser,
            ))
    found.sort(key=lambda step: (step.module, step.line))
    return found
