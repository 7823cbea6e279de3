"""Emit helper: the Jinja2 environment over the top-level templates/ folder, and YAML scalars and
blocks written in Python (yaml_scalar, yaml_block; SharedTrees: subtrees spelled once per build).

Consumes nothing but the template files; produces a cached Environment (Jinja2 loads with it).
Installed, the templates ship inside the package as fabricc/templates (pyproject force-include);
run from a source checkout they are <repo>/templates. Templates only loop and format: every value
is computed in Python and passed in, and StrictUndefined turns a missing value into an error
instead of empty text.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fabricc.yamlsafe import typed_if_plain

if TYPE_CHECKING:
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


# Possessive: a name followed by a space (a BGP neighbor's "leaf01:swp1 AS65001") fails at once
# instead of retrying every split of the name before it (3 times slower); the same matches, as
# no character class holds the colon that follows it.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./+-]*+(?::[A-Za-z0-9_./+-]++)*+")
# Printable ASCII without '"' and '\\': JSON quotes such text by adding the quotes alone.
_QUOTE_ONLY = re.compile(r"[ !#-\[\]-~]*")


def yaml_scalar(value: Any) -> str:
    """A YAML scalar that reads back as the same value: ints as they are, strings plain where
    that is unambiguous and double-quoted (JSON string syntax, a subset of YAML) otherwise."""
    kind = type(value)
    if kind is str:
        if _PLAIN.fullmatch(value):
            if len(value) > 5 or not typed_if_plain(value):
                return value  # type: ignore[no-any-return]
        elif _QUOTE_ONLY.fullmatch(value):
            return f'"{value}"'
        return json.dumps(value, ensure_ascii=False)
    if kind is int:
        return str(value)
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"not a YAML scalar of fabricc's: {value!r}")
    return yaml_scalar(int(value) if isinstance(value, int) else str.__str__(value))


def yaml_block(tree: Mapping[str, Any], indent: int = 0, shared: SharedTrees | None = None) -> str:
    """A nested mapping of yaml_scalar values as block-style YAML, keys in the mapping's order,
    two spaces per level and an empty mapping as `{}` - the shape of NVUE's startup.yaml. One
    pass in Python: per-scalar template filters were most of the configs stage at scale. A
    mapping object that occurs more than once in the tree (tree builders share the subtrees
    every port repeats) is spelled once and its lines reused; one that `shared` holds (the
    trees of a whole build share it) is spelled once per indent for all of them."""
    lines: list[str] = []
    _block(tree, " " * indent, lines, {}, _NONE_SHARED if shared is None else shared.held)
    return "".join(lines)


class SharedTrees:
    """Mappings that many trees of a build hold (one object each, built once and never changed
    after: a switch's QoS section, a port's link settings), with their YAML per indent. Holds
    them, so that an id stands for one mapping while this object lives."""

    def __init__(self) -> None:
        self.held: _Held = {}

    def share(self, tree: _Tree) -> _Tree:
        """`tree`, registered: yaml_block given this object spells it once per indent."""
        self.held.setdefault(id(tree), (tree, {}))
        return tree


_Tree = TypeVar("_Tree", bound=Mapping[str, Any])
# id of a shared mapping -> (the mapping, its text per indent)
_Held = dict[int, tuple[Mapping[str, Any], dict[str, str]]]
_NONE_SHARED: _Held = {}


# Keys (type, link, mtu...) and many values (swp, on, 9216) repeat in every interface: their
# YAML spelling is kept, up to a bound (names and addresses are unique and fill it once).
_SPELLED: dict[object, str] = {}
_SPELLED_MAX = 1 << 12


def _spell(value: Any) -> str:
    """yaml_scalar through the cache (text and ints; names and addresses past the cache's
    bound, one per port, are spelled anew)."""
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


def _block(tree: Mapping[str, Any], pad: str, lines: list[str], seen: _Seen, held: _Held) -> None:
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
                    continue
                shared = held.get(id(value))
                if shared is not None:
                    text = shared[1].get(inner)
                    if text is None:
                        part: list[str] = []
                        _block(value, inner, part, {}, held)
                        text = shared[1][inner] = "".join(part)
                    lines.append(text)
                else:
                    start = len(lines)
                    _block(value, inner, lines, seen, held)
                    seen[id(value)] = (inner, start, len(lines))
            else:
                lines.append(f"{pad}{name}: {{}}\n")
        else:
            text = (spelled.get(value) if type(value) is str else None) or _spell(value)
            lines.append(f"{pad}{name}: {text}\n")


@functools.cache
def environment() -> jinja2.Environment:
    import jinja2  # loaded by the first render: validate needs yaml_block's helpers at most

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


# (template, the fixed values, the slot names) -> the template's text split at its slots: the
# text between them and, per gap, the index of the slot that fills it
_Frame = tuple[tuple[str, ...], tuple[int, ...]]
_FRAMES: dict[tuple[object, ...], _Frame] = {}
_FRAMES_MAX = 256
_SLOT = re.compile("\x00([0-9]+)\x00")


def render_framed(template: str, fixed: Mapping[str, Any], **slots: str) -> str:
    """render(template, **fixed, **slots) for a template that only prints each slot as it is
    (no filter, test or branch on it): the template is rendered once per set of `fixed` values
    (hashable; what it branches on) with a marker in each slot, and each call joins the text
    between the markers with the slots' values - a file per host or switch without a Jinja2
    context each (most of the time of a small template's render)."""
    names = tuple(slots)
    key = (template, names, *fixed.items())
    frame = _FRAMES.get(key)
    if frame is None:
        markers = {name: f"\x00{i}\x00" for i, name in enumerate(names)}
        parts = _SLOT.split(render(template, **fixed, **markers))
        frame = (tuple(parts[::2]), tuple(int(i) for i in parts[1::2]))
        if len(_FRAMES) >= _FRAMES_MAX:
            _FRAMES.clear()
        _FRAMES[key] = frame
    texts, order = frame
    values = list(slots.values())
    out = [texts[0]]
    for index, text in zip(order, texts[1:], strict=True):
        out.append(values[index])
        out.append(text)
    return "".join(out)
