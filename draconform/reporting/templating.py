"""The one Jinja2 set-up every rendered format shares: templates live in `templates/` beside this
module; HTML templates are autoescaped, Markdown ones are not; an undefined name is an error, never
an empty string."""

from __future__ import annotations

from functools import cache

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


@cache
def environment() -> Environment:
    return Environment(
        loader=PackageLoader("draconform.reporting", "templates"),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
