"""The one way a known-bad variant loosens the API server's JSON Schemas: the schema loader of
draconform/validation/schema.py passes every schema through a `_loosened` function that changes one
definition, so a limit a KEP sets (a list's length, unique items, a pattern) goes unchecked."""

from __future__ import annotations

from draconform.mutation.variant import Patch

SCHEMA_MODULE = "draconform/validation/schema.py"
_READ = '        contents = json.loads(path.read_text(encoding="utf-8"))\n'
_END = "    return raw, kinds, jsonschema_rs.Registry(raw)\n"


def loosened_schema(definition: str, change: str) -> tuple[Patch, Patch]:
    """Patches that run `change` (a statement over `definitions[definition]`, e.g. `["maxItems"] = 5`) on every
    schema that defines `definition`, as it is loaded."""
    return (
        Patch(SCHEMA_MODULE, _READ, _READ + "        contents = _loosened(contents)\n"),
        Patch(SCHEMA_MODULE, _END, (
            _END
            + "\n\n"
            + "def _loosened(contents: dict[str, Any]) -> dict[str, Any]:\n"
            + '    """The variant: an API server that checks a KEP\'s limits less strictly."""\n'
            + '    definitions = contents.get("$defs") or {}\n'
            + f'    if "{definition}" in definitions:\n'
            + f'        definitions["{definition}"]{change}\n'
            + "    return contents\n")),
    )
