"""Load stage, part 3: run pydantic validation and turn its errors into positioned diagnostics.

Consumes a model class, the plain data and its SourceMap; produces the validated model or a list
of Diagnostics, each pointing at the offending key or value with a message in the spec's terms
and a hint ("did you mean ...?", the allowed values, the valid range).
"""

from __future__ import annotations

import difflib
import types
import typing
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from fabricc import patterns
from fabricc.errors import Diagnostic, error
from fabricc.spec.yamlsource import DataPath, SourceMap, format_path

M = TypeVar("M", bound=BaseModel)


def validate(
    model: type[M], data: Any, source: SourceMap, prefix: DataPath = ()
) -> tuple[M | None, list[Diagnostic]]:
    """Validate `data` (found at `prefix` in the file) against `model`."""
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, [
            _diagnostic(model, data, source, prefix, detail)
            for detail in exc.errors(include_url=False)
        ]


def suggest(word: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to a misspelt word, if any is close enough."""
    matches = difflib.get_close_matches(word, sorted(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


def did_you_mean(word: str, candidates: Sequence[str], noun: str = "") -> str:
    best = suggest(word, candidates)
    if best is not None:
        return f"did you mean {best!r}?"
    listing = ", ".join(sorted(candidates))
    return f"known {noun}: {listing}" if noun else f"allowed: {listing}"


# What people write for a value that the spec names otherwise (the technology, not the key's
# word for it): RoCE and Spectrum-X are Ethernet fabrics; IB is InfiniBand.
SYNONYMS = {
    "roce": "ethernet",
    "rocev2": "ethernet",
    "spectrum-x": "ethernet",
    "spectrumx": "ethernet",
    "eth": "ethernet",
    "ib": "infiniband",
}


def _literal_hint(value: str, options: Sequence[str], key: str) -> str:
    """A value in the wrong case is one (`SONiC` -> 'sonic'), a known synonym is said to be its
    value (`roce`: RoCE runs on `ethernet`), else the closest option."""
    folded = {o.lower(): o for o in options}
    if value.lower() in folded and value not in options:
        return f"values are lower case: write '{key}: {folded[value.lower()]}'"
    synonym = SYNONYMS.get(value.lower().replace("_", "-").replace(" ", "-"))
    if synonym in options:
        return f"{value!r} runs over {synonym}: write '{key}: {synonym}'"
    return did_you_mean(value, options)


def _data_path(data: Any, loc: tuple[int | str, ...]) -> tuple[DataPath, bool]:
    """Follow pydantic's loc through the data, skipping union/validator tags.

    Returns the data path and whether the last loc element named a key that is absent.
    """
    path: list[int | str] = []
    current = data
    for item in loc:
        if isinstance(current, dict):
            if item in current:
                path.append(item)
                current = current[item]
            elif isinstance(item, str) and item == loc[-1]:
                return (*path, item), True
        elif isinstance(current, list) and isinstance(item, int) and 0 <= item < len(current):
            path.append(item)
            current = current[item]
    return tuple(path), False


def _fields_at(model: type[BaseModel], path: DataPath) -> list[str]:
    """Field names of the model found at `path`, to suggest corrections for unknown keys."""
    current: Any = model
    for item in path:
        current = _step(current, item)
        if current is None:
            return []
    models = [m for m in _unwrap(current) if isinstance(m, type) and issubclass(m, BaseModel)]
    names: list[str] = []
    for m in models:
        names.extend(n for n in m.model_fields if n not in names)
    return names


def _unwrap(annotation: Any) -> list[Any]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        out: list[Any] = []
        for arg in typing.get_args(annotation):
            out.extend(_unwrap(arg))
        return out
    return [annotation]


def _step(annotation: Any, item: int | str) -> Any:
    for candidate in _unwrap(annotation):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            if isinstance(item, str) and item in candidate.model_fields:
                return candidate.model_fields[item].annotation
            continue
        origin = typing.get_origin(candidate)
        args = typing.get_args(candidate)
        if origin is dict and args:
            return args[1]
        if origin is list and args and isinstance(item, int):
            return args[0]
    return None


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _diagnostic(
    model: type[BaseModel],
    data: Any,
    source: SourceMap,
    prefix: DataPath,
    detail: ErrorDetails,
) -> Diagnostic:
    loc = tuple(detail["loc"])
    kind = detail["type"]
    if loc and loc[-1] == "[key]":  # pydantic's marker for a mapping key that failed validation
        key_path = prefix + _data_path(data, loc[:-1])[0]
        key_hint = _pattern_hint(str((detail.get("ctx") or {}).get("pattern", "")))
        return error(
            f"key {_describe(detail.get('input'))} has the wrong format",
            path=format_path(key_path[:-1]),
            location=source.key(key_path),
            hint=key_hint if kind == "string_pattern_mismatch" else None,
        )
    ctx = detail.get("ctx") or {}
    value = detail.get("input")
    path, missing = _data_path(data, loc)
    full = prefix + path
    where = format_path(full)

    if kind == "extra_forbidden":
        key = str(path[-1]) if path else "?"
        fields = _fields_at(model, path[:-1])
        hint = did_you_mean(key, fields, "keys") if fields else None
        return error(f"unknown key {key!r}", path=where, location=source.key(full), hint=hint)
    if kind == "missing":
        key = str(loc[-1])
        parent = prefix + (path[:-1] if missing else path)
        return error(
            f"missing required key {key!r}",
            path=format_path(parent),
            location=source.key(parent),
            hint=f"add '{key}: ...' here",
        )
    location = source.value(full)
    if kind == "literal_error":
        expected = str(ctx.get("expected", ""))
        options = [
            o.strip().strip("'") for o in expected.replace(" or ", ",").split(",") if o.strip()
        ]
        hint = (
            _literal_hint(value, options, str(path[-1]) if path else "")
            if isinstance(value, str)
            else f"allowed: {expected}"
        )
        return error(
            f"{_describe(value)} is not allowed here; expected {expected}",
            path=where,
            location=location,
            hint=hint,
        )
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        bound = {
            "greater_than_equal": (">=", "ge"),
            "greater_than": (">", "gt"),
            "less_than_equal": ("<=", "le"),
            "less_than": ("<", "lt"),
        }[kind]
        limit = ctx.get(bound[1])
        return error(
            f"{_describe(value)} is out of range; must be {bound[0]} {limit}",
            path=where,
            location=location,
        )
    if kind in ("int_parsing", "int_type", "int_from_float"):
        return error(f"expected an integer, got {_describe(value)}", path=where, location=location)
    if kind in ("float_parsing", "float_type"):
        return error(f"expected a number, got {_describe(value)}", path=where, location=location)
    if kind in ("bool_parsing", "bool_type"):
        return error(
            f"expected true or false, got {_describe(value)}",
            path=where,
            location=location,
            hint="YAML 1.2: only true/false are booleans (yes/no/on/off are strings)",
        )
    if kind == "string_type" and path and path[-1] in RATIO_FIELDS:
        number = value if isinstance(value, int) and not isinstance(value, bool) else None
        return error(
            f"expected a ratio 'down:up', got {_describe(value)}",
            path=where,
            location=location,
            hint=f"write '{number}:1' ({number} down for every 1 up), in quotes"
            if number is not None and number > 0
            else "write a ratio as 'down:up' in quotes, e.g. '1:1' or '2:1'",
        )
    if kind == "string_pattern_mismatch" and isinstance(value, str) and _zero_ratio(value):
        return error(
            f"{_describe(value)} is impossible: neither side of a down:up ratio can be 0",
            path=where,
            location=location,
            hint="a leaf without uplinks has no ratio: leave oversubscription out and set "
            "tiers: 1 for leaves without spines; otherwise e.g. '1:1' or '2:1'",
        )
    if kind == "string_type":
        return error(
            f"expected a string, got {_describe(value)}",
            path=where,
            location=location,
            hint="quote the value",
        )
    if kind == "string_pattern_mismatch":
        return error(
            f"{_describe(value)} has the wrong format",
            path=where,
            location=location,
            hint=_pattern_hint(str(ctx.get("pattern", ""))),
        )
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return error(f"expected a mapping, got {_describe(value)}", path=where, location=location)
    if kind == "list_type":
        return error(f"expected a list, got {_describe(value)}", path=where, location=location)
    if kind in ("too_short", "too_long"):
        return error(f"{_describe(value)}: {_lower(detail['msg'])}", path=where, location=location)
    if kind == "value_error":
        message = str(ctx.get("error", detail["msg"]))
        return error(_lower(message), path=where, location=location)
    return error(_lower(detail["msg"]), path=where, location=location)


# the spec fields that take a down:up ratio (models.Ratio)
RATIO_FIELDS = ("oversubscription",)


def _zero_ratio(text: str) -> bool:
    """'1:0', '0:1': the format of a ratio, with a side that cannot be."""
    down, colon, up = text.strip().partition(":")
    return bool(colon) and down.isdigit() and up.isdigit() and 0 in (int(down), int(up))


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:] if text else text


def _pattern_hint(pattern: str) -> str:
    return patterns.HINTS.get(pattern, f"must match {pattern}")
