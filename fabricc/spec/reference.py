"""The spec reference (Markdown) generated from the pydantic models, kept in docs/.

Consumes fabricc.spec.models; produces one page with a table per model (key, type, default,
meaning), in the order a spec is written. scripts/regen.py writes it to docs/reference/spec.md
and a test fails when that file is stale.
"""

from __future__ import annotations

import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from fabricc.spec.models import Spec

PAGE = "docs/reference/spec.md"

_INTRO = """\
# Spec reference

Generated from the spec's pydantic models (`fabricc/spec/models.py`) by
`python scripts/regen.py`; do not edit. The same models give the JSON Schema
(`fabricc schema`, `schemas/fabricc.schema.json`) that editors use to complete and check keys.
Each section is one mapping of the spec, under the path it names; a key's default applies when
the key is left out.
"""


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_name(args[0])
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_name(a) for a in args)
    if origin is typing.Literal:
        return " or ".join(f"`{a!r}`" if isinstance(a, str) else f"`{a}`" for a in args)
    if origin is list:
        return f"list of {_type_name(args[0])}"
    if origin is dict:
        return f"map of name to {_type_name(args[1])}"
    if annotation is type(None):
        return "null"
    if isinstance(annotation, type):
        return (
            annotation.__name__
            if issubclass(annotation, BaseModel)
            else {
                "str": "string",
                "int": "integer",
                "float": "number",
                "bool": "boolean",
            }.get(annotation.__name__, annotation.__name__)
        )
    return str(annotation)


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    if field.default_factory is not None:
        return "see below" if _nested(field.annotation) else "empty"
    value = field.default
    if value is None or value is PydanticUndefined:
        return "-"
    return f"`{value!r}`" if isinstance(value, str) else f"`{value}`"


def _nested(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    found: list[type[BaseModel]] = []
    for arg in typing.get_args(annotation):
        found.extend(_nested(arg))
    return found


def reference() -> str:
    sections: list[str] = []
    seen: set[type[BaseModel]] = set()
    queue: list[tuple[str, type[BaseModel]]] = [("(top level)", Spec)]
    while queue:
        where, model = queue.pop(0)
        if model in seen:
            continue
        seen.add(model)
        doc = " ".join((model.__doc__ or "").strip().split("\n\n")[0].split())
        lines = [f"## `{model.__name__}` - {where}", ""]
        if doc and model is not Spec:
            lines += [doc, ""]
        lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for name, field in model.model_fields.items():
            lines.append(
                f"| `{name}` | {_type_name(field.annotation)} | {_default(field)} | "
                f"{(field.description or '').replace('|', '/')} |"
            )
            inner = typing.get_args(field.annotation)
            suffix = (
                ".<name>"
                if any(typing.get_origin(a) is dict for a in (field.annotation, *inner))
                else ""
            )
            parent = "" if model is Spec else where.strip("`") + "."
            for nested in _nested(field.annotation):
                queue.append((f"`{parent}{name}{suffix}`", nested))
        sections.append("\n".join(lines))
    return "\n\n".join(sections) + "\n"


def page() -> str:
    """The whole spec reference page."""
    return f"{_INTRO}\n{reference()}"
