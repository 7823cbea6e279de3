"""Emit helper: the Jinja2 environment over the top-level templates/ folder.

Consumes nothing but the template files; produces a cached Environment. Installed, the templates
ship inside the package as fabricc/templates (pyproject force-include); run from a source checkout
they are <repo>/templates. Templates only loop and format: every value is computed in Python and
passed in, and StrictUndefined turns a missing value into an error instead of empty text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2

_PACKAGE = Path(__file__).resolve().parent.parent


def templates_root() -> Path:
    installed = _PACKAGE / "templates"
    if installed.is_dir():
        return installed
    source = _PACKAGE.parent / "templates"
    if source.is_dir():
        return source
    raise FileNotFoundError(f"fabricc templates not found at {installed} or {source}")


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./+-]*(?::[A-Za-z0-9_./+-]+)*")
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
# Printable ASCII without '"' and '\\': JSON quotes such text by adding the quotes alone.
_QUOTE_ONLY = re.compile(r"[ !#-\[\]-~]*")


def yaml_scalar(value: Any) -> str:
    """A YAML scalar that reads back as the same value: ints as they are, strings plain where
    that is unambiguous and double-quoted (JSON string syntax, a subset of YAML) otherwise."""
    kind = type(value)
    if kind is str:
        if _PLAIN.fullmatch(value):
            if len(value) > 5 or value.lower() not in _YAML_WORDS:
                return value  # type: ignore[no-any-return]
        elif _QUOTE_ONLY.fullmatch(value):
            return f'"{value}"'
        return json.dumps(value, ensure_ascii=False)
    if kind is int:
        return str(value)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"not a YAML scalar of fabricc's: {value!r}")
    return yaml_scalar(int(value) if isinstance(value, int) else str.__str__(value))


def yaml_block(tree: Mapping[str, Any], indent: int = 0) -> str:
    """A nested mapping of yaml_scalar values as block-style YAML, keys in the mapping's order,
    two spaces per level and an empty mapping as `{}` - the shape of NVUE's startup.yaml. One
    pass in Python: per-scalar template filters were most of the configs stage at scale. A
    mapping object that occurs more than once in the tree (tree builders share the subtrees
    every port repeats) is spelled once and its lines reused."""
    lines: list[str] = []
    _block(tree, " " * indent, lines, {})
    return "".join(lines)


# Keys (type, link, mtu...) and many values (swp, on, 9216) repeat in every interface: their
# YAML spelling is kept, up to a bound (names and addresses are unique and fill it once).
_SPELLED: dict[object, str] = {}
_SPELLED_MAX = 1 << 12


def _spell(value: Any) -> str:
    kind = type(value)
    if kind is not str and kind is not int:
        return yaml_scalar(value)  # raises for what is no scalar of fabricc's
    spelled = _SPELLED.get(value)
    if spelled is None:
        spelled = yaml_scalar(value)
        if len(_SPELLED) < _SPELLED_MAX:
            _SPELLED[value] = spelled
    return spelled


# id of a mapping in the tree -> (its indent, its first and end line): the tree is alive and
# unchanged while yaml_block runs, so an id stands for one mapping throughout.
_Seen = dict[int, tuple[str, int, int]]


def _block(tree: Mapping[str, Any], pad: str, lines: list[str], seen: _Seen) -> None:
    inner = pad + "  "
    spelled = _SPELLED
    for key, value in tree.items():
        # the cache inline for text (the usual key): a dict lookup, not a call per scalar
        name = (spelled.get(key) if type(key) is str else None) or _spell(key)
        if type(value) is dict:
            if value:
                lines.append(f"{pad}{name}:\n")
                found = seen.get(id(value))
                if found is not None and found[0] == inner:
                    lines.extend(lines[found[1] : found[2]])
                else:
                    start = len(lines)
                    _block(value, inner, lines, seen)
                    seen[id(value)] = (inner, start, len(lines))
            else:
                lines.append(f"{pad}{name}: {{}}\n")
        else:
            text = (spelled.get(value) if type(value) is str else None) or _spell(value)
            lines.append(f"{pad}{name}: {text}\n")


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_root())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # The templates do not change during a build: no stat of the file per render and include.
        auto_reload=False,
        # Only the HTML report escapes; config formats must come out exactly as computed.
        autoescape=jinja2.select_autoescape(enabled_extensions=("html.j2",), default=False),
    )
    env.filters["yaml"] = yaml_scalar
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
