"""The one way a known-bad variant loosens the API server's JSON Schemas: an edit of the schema loader
(draconform/validation/schema.py) that passes the `$defs` of every schema through a function changing one
definition as it is loaded, so a limit a KEP sets (a list's length, unique items, a pattern) goes unchecked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from draconform.mutation.overrides import Edit

LOADER = "draconform.validation.schema:_registry_and_kinds"
_READ = '        contents = json.loads(path.read_text(encoding="utf-8"))\n'


def loosened_schemas(loosen: Callable[[dict[str, Any]], None]) -> tuple[Edit]:
    """An edit of the loader that runs `loosen` on the `$defs` of every schema as it is loaded."""

    def loosened(contents: dict[str, Any]) -> dict[str, Any]:
        loosen(contents.get("$defs") or {})
        return contents

    return (Edit(LOADER, _READ, _READ + "        contents = _loosened(contents)\n", names={"_loosened": loosened}),)


def loosened_schema(definition: str, **changes: Any) -> tuple[Edit]:
    """An edit of the loader that sets `changes` (keyword: value, e.g. maxItems=5) in the definition named
    `definition` of every schema that has it."""

    def loosen(definitions: dict[str, Any]) -> None:
        if definition in definitions:
            definitions[definition].update(changes)

    return loosened_schemas(loosen)
