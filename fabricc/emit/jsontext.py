"""Emit helper: indented JSON text, the bytes of json.dumps(data, indent=2, ensure_ascii=False),
several times faster on large documents.

Consumes JSON-shaped data (dicts, lists, tuples, str, int, float, bool, None); produces its text
(json_dumps; json_flow is json.dumps(data) for many small values).
json.dumps with an indent runs the standard library's pure-Python encoder, a generator per
container and a yield per token; a 100,000-GPU design's DHCP reservations, analysis and summary
have millions of tokens. Here every container whose values are all scalars (most of them) is
encoded by the C encoder json.dumps uses without an indent, with ",\\n" between items; its lines
are then indented by one str.replace (JSON text has no raw line breaks inside strings, so each
one is between tokens). Only containers that hold containers are walked in Python.
"""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from typing import Any

_INDENT = "  "

# The encoder json.dumps(indent=None) makes per call (its C twin where CPython has one), made once:
# no circular check (a design's data is a tree), keys and scalars converted as json.dumps does.
_make = getattr(json.encoder, "c_make_encoder", None)
_leaf: Callable[[Any, int], Any] | None = (
    _make(
        None,
        json.JSONEncoder().default,
        json.encoder.encode_basestring,
        None,
        ": ",
        ",\n",
        False,
        False,
        True,
    )
    if _make is not None
    else None
)
_quoted: Callable[[str], str] = json.encoder.encode_basestring
# json.dumps(value)'s encoder (ASCII, ", " and ": "), likewise made once.
_flow: Callable[[Any, int], Any] | None = (
    _make(
        None,
        json.JSONEncoder().default,
        json.encoder.encode_basestring_ascii,
        None,
        ": ",
        ", ",
        False,
        False,
        True,
    )
    if _make is not None
    else None
)


def json_flow(data: Any) -> str:
    """The text json.dumps(data) gives, without its per-call setup: for the many small values
    (a flow mapping per rail of an inventory) of a large document."""
    if _flow is None:
        return json.dumps(data)
    return "".join(_flow(data, 0))


def json_dumps(data: Any) -> str:
    """The text json.dumps(data, indent=2, ensure_ascii=False) gives."""
    if _leaf is None:  # no C encoder in this Python: the standard library's own
        return json.dumps(data, indent=2, ensure_ascii=False)
    out: list[str] = []
    _encode(data, 0, out)
    return "".join(out)


def _encode(value: Any, level: int, out: list[str]) -> None:
    assert _leaf is not None
    if isinstance(value, dict):
        values: Any = value.values()
    elif isinstance(value, list | tuple):
        values = value
    else:
        out.append("".join(_leaf(value, 0)))
        return
    if not value:
        out.append("{}" if isinstance(value, dict) else "[]")
        return
    inner = "\n" + _INDENT * (level + 1)
    if not any(issubclass(kind, dict | list | tuple) for kind in set(map(type, values))):
        text = "".join(_leaf(value, 0))
        body = text[1:-1].replace("\n", inner)
        out.append(f"{text[0]}{inner}{body}\n{_INDENT * level}{text[-1]}")
        return
    separator = ""
    if isinstance(value, dict):
        out.append("{")
        for key, item in value.items():
            out.append(f"{separator}{inner}{_key(key)}: ")
            _encode(item, level + 1, out)
            separator = ","
        out.append(f"\n{_INDENT * level}}}")
    else:
        out.append("[")
        for item in value:
            out.append(f"{separator}{inner}")
            _encode(item, level + 1, out)
            separator = ","
        out.append(f"\n{_INDENT * level}]")


def _key(key: Any) -> str:
    if type(key) is str:
        return _quoted(key)
    assert _leaf is not None
    # a number, bool or None key, converted as json.dumps converts it (or its TypeError)
    return "".join(_leaf({key: None}, 0))[1:-7]
