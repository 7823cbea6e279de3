"""Emit helper: the Jinja2 environment of the template-based emitters.

Consumes the templates folder - fabricc/templates in an installed wheel (pyproject's
force-include), <repo>/templates when running from a source checkout; produces a cached
Environment with StrictUndefined, trim_blocks, lstrip_blocks and keep_trailing_newline.
HTML templates (*.html.j2) are autoescaped; every other template is not.
"""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2


def template_dir() -> Path:
    package = Path(__file__).resolve().parent.parent
    installed = package / "templates"
    if installed.is_dir():
        return installed
    return package.parent / "templates"


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
    )
