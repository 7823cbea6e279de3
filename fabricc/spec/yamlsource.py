"""Load stage, part 1: YAML text -> plain Python data plus a map of source positions.

Consumes the bytes of a spec or catalog file; produces (data, SourceMap) where the map knows the
line and column of every key and value, so later stages can point at the exact spot. Parsing is
event-driven and iterative (no recursion), uses the YAML 1.2 core schema (``yes``/``no``/``on``
stay strings), rejects duplicate keys, foreign tags, alias bombs, deep nesting and huge files.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fabricc.errors import Diagnostic, Location, SpecError, error
from fabricc.inputs import InputError, read_limited

try:  # libyaml is much faster and gives the same marks; fall back to the pure parser.
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

PathItem = str | int
DataPath = tuple[PathItem, ...]

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000  # scalars + collections after alias expansion

_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_BOOL_TRUE = re.compile(r"^(?:true|True|TRUE)$")
_BOOL_FALSE = re.compile(r"^(?:false|False|FALSE)$")
_INT_DEC = re.compile(r"^[-+]?[0-9]+$")
_INT_OCT = re.compile(r"^0o[0-7]+$")
_INT_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(?:inf|Inf|INF)$")
_NAN = re.compile(r"^\.(?:nan|NaN|NAN)$")

_ALLOWED_TAGS = {
    "tag:yaml.org,2002:str",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:map",
    "tag:yaml.org,2002:seq",
}


def format_path(path: DataPath) -> str:
    """``("networks", "compute", "endpoints", 0)`` -> ``networks.compute.endpoints[0]``."""
    text = ""
    for item in path:
        if isinstance(item, int):
            text += f"[{item}]"
        else:
            text += f".{item}" if text else str(item)
    return text


@dataclass(slots=True)
class SourceMap:
    """Positions of the keys and values of one loaded file, by data path."""

    file: str
    keys: dict[DataPath, Location] = field(default_factory=dict)
    values: dict[DataPath, Location] = field(default_factory=dict)

    def key(self, path: DataPath) -> Location:
        """Where the key of `path` is written, or the nearest enclosing thing that exists."""
        return self._nearest(path, prefer_key=True)

    def value(self, path: DataPath) -> Location:
        """Where the value at `path` starts, or the nearest enclosing thing that exists."""
        return self._nearest(path, prefer_key=False)

    def _nearest(self, path: DataPath, *, prefer_key: bool) -> Location:
        for end in range(len(path), -1, -1):
            sub = path[:end]
            first, second = (self.keys, self.values) if prefer_key else (self.values, self.keys)
            if sub in first:
                return first[sub]
            if sub in second:
                return second[sub]
        return Location(self.file, 1, 1)


@dataclass(slots=True)
class _Frame:
    container: dict[Any, Any] | list[Any]
    path: DataPath
    anchor: str | None
    start_nodes: int
    pending_key: Any = None
    has_key: bool = False
    key_locations: dict[Any, Location] = field(default_factory=dict)


class _Budget(Exception):
    def __init__(self, diagnostic: Diagnostic) -> None:
        self.diagnostic = diagnostic


def load_yaml_file(path: Path, display_name: str | None = None) -> tuple[Any, SourceMap]:
    """Read and parse one YAML file; raises SpecError with positions on any problem.

    The read is bounded and only regular files are read (fabricc.inputs); a file that cannot be
    read is reported by name, without an invented position.
    """
    name = display_name if display_name is not None else str(path)
    try:
        raw = read_limited(path, MAX_FILE_BYTES, what="specs and catalog files")
    except InputError as exc:
        hint = (
            "a spec describes a design in a few hundred lines; generate repeated parts with counts "
            "instead of listing them"
            if "refused" in str(exc)
            else None
        )
        raise SpecError([error(str(exc), location=Location(name), hint=hint)]) from None
    return load_yaml_bytes(raw, name)


def load_yaml_bytes(raw: bytes, name: str) -> tuple[Any, SourceMap]:
    if len(raw) > MAX_FILE_BYTES:
        raise SpecError(
            [
                error(
                    f"input larger than {MAX_FILE_BYTES:,} bytes is refused",
                    location=Location(name, 1, 1),
                )
            ]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError(
            [
                error(
                    "file is not valid UTF-8",
                    location=Location(name, line, col),
                    hint="save the file as UTF-8",
                )
            ]
        ) from None
    text = text.removeprefix("\ufeff")
    return _Builder(name).build(text)


class _Builder:
    def __init__(self, name: str) -> None:
        self.name = name
        self.source = SourceMap(name)
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.nodes = 0

    def loc(self, mark: Any) -> Location:
        return Location(self.name, mark.line + 1, mark.column + 1)

    def build(self, text: str) -> tuple[Any, SourceMap]:
        try:
            return self._build(text), self.source
        except _Budget as budget:
            raise SpecError([budget.diagnostic]) from None
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            location = self.loc(mark) if mark is not None else Location(self.name, 1, 1)
            problem = exc.problem or exc.context or "invalid YAML"
            if "maximum nesting depth" in problem:
                # PyYAML >= 6.0.4 has its own depth limit, met while scanning ahead of the events
                # that would have stopped at MAX_DEPTH: the same refusal, at the parser's mark
                raise SpecError(
                    [error(f"nesting deeper than {MAX_DEPTH} levels is refused", location=location)]
                ) from None
            context = f" ({exc.context})" if exc.context and exc.problem else ""
            raise SpecError(
                [
                    error(
                        f"YAML syntax error: {problem}{context}",
                        location=location,
                        hint="check indentation and that every 'key: value' pair has a space after "
                        "the colon",
                    )
                ]
            ) from None
        except yaml.reader.ReaderError as exc:
            # A character YAML does not allow (NUL, other control characters): point at it.
            before = text[: exc.position]
            line = before.count("\n") + 1
            col = exc.position - (before.rfind("\n") + 1) + 1
            char = exc.character if isinstance(exc.character, str) else chr(exc.character)
            raise SpecError(
                [
                    error(
                        f"character {char!r} (U+{ord(char):04X}) is not allowed in YAML",
                        location=Location(self.name, line, col),
                        hint="remove it; a spec is plain text",
                    )
                ]
            ) from None
        except yaml.YAMLError as exc:
            raise SpecError(
                [error(f"YAML error: {exc}", location=Location(self.name, 1, 1))]
            ) from None

    def _events(self, text: str) -> Iterator[yaml.Event]:
        loader = _Loader(text)
        try:
            while loader.check_event():
                event = loader.get_event()
                assert event is not None
                yield event
        finally:
            loader.dispose()

    def _build(self, text: str) -> Any:
        stack: list[_Frame] = []
        root: Any = None
        documents = 0
        for event in self._events(text):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise _Budget(
                        error(
                            "more than one YAML document in the file",
                            location=self.loc(event.start_mark),
                            hint="a spec is one document; remove the second '---'",
                        )
                    )
                continue
            if isinstance(event, yaml.AliasEvent):
                value, size = self._alias(event)
                self._count(size, event)
                root = self._place(stack, value, event, root)
                continue
            if isinstance(event, yaml.ScalarEvent):
                self._count(1, event)
                self._check_tag(event)
                value = self._scalar(event)
                if event.anchor:
                    self.anchors[event.anchor] = (value, 1)
                root = self._place(stack, value, event, root)
                continue
            if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
                self._count(1, event)
                self._check_tag(event)
                if len(stack) >= MAX_DEPTH:
                    raise _Budget(
                        error(
                            f"nesting deeper than {MAX_DEPTH} levels is refused",
                            location=self.loc(event.start_mark),
                        )
                    )
                container: dict[Any, Any] | list[Any] = (
                    {} if isinstance(event, yaml.MappingStartEvent) else []
                )
                path = self._child_path(stack)
                if stack and self._is_key_position(stack[-1]):
                    raise _Budget(
                        error(
                            "a mapping key must be a plain value, not a mapping or list",
                            location=self.loc(event.start_mark),
                        )
                    )
                self._record_value(stack, path, event)
                stack.append(_Frame(container, path, event.anchor, self.nodes))
                continue
            if isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
                frame = stack.pop()
                if frame.anchor:
                    self.anchors[frame.anchor] = (
                        frame.container,
                        self.nodes - frame.start_nodes + 1,
                    )
                root = self._attach(stack, frame.container, root)
                continue
        return root

    # -- helpers -------------------------------------------------------------------------------

    def _count(self, size: int, event: yaml.Event) -> None:
        self.nodes += size
        if self.nodes > MAX_NODES:
            raise _Budget(
                error(
                    f"document expands to more than {MAX_NODES:,} values (alias bomb?)",
                    location=self.loc(event.start_mark),
                    hint="anchors and aliases may be used, but not to multiply content",
                )
            )

    def _check_tag(self, event: yaml.NodeEvent) -> None:
        tag = getattr(event, "tag", None)
        if tag and tag != "!" and tag not in _ALLOWED_TAGS:
            raise _Budget(
                error(
                    f"YAML tag {tag!r} is not allowed",
                    location=self.loc(event.start_mark),
                    hint="specs are plain data; remove the tag",
                )
            )

    def _alias(self, event: yaml.AliasEvent) -> tuple[Any, int]:
        anchor = event.anchor
        if anchor not in self.anchors:
            raise _Budget(error(f"unknown alias *{anchor}", location=self.loc(event.start_mark)))
        return self.anchors[anchor]

    @staticmethod
    def _is_key_position(frame: _Frame) -> bool:
        return isinstance(frame.container, dict) and not frame.has_key

    @staticmethod
    def _child_path(stack: list[_Frame]) -> DataPath:
        if not stack:
            return ()
        frame = stack[-1]
        if isinstance(frame.container, dict):
            return (*frame.path, frame.pending_key)
        return (*frame.path, len(frame.container))

    def _record_value(self, stack: list[_Frame], path: DataPath, event: yaml.Event) -> None:
        if stack and not self._is_key_position(stack[-1]):
            self.source.values[path] = self.loc(event.start_mark)
        elif not stack:
            self.source.values[()] = self.loc(event.start_mark)

    def _place(self, stack: list[_Frame], value: Any, event: yaml.Event, root: Any) -> Any:
        if stack and self._is_key_position(stack[-1]):
            frame = stack[-1]
            if isinstance(value, dict | list):
                raise _Budget(
                    error(
                        "a mapping key must be a plain value, not a mapping or list",
                        location=self.loc(event.start_mark),
                    )
                )
            location = self.loc(event.start_mark)
            assert isinstance(frame.container, dict)
            if isinstance(event, yaml.ScalarEvent) and value == "<<" and not event.style:
                raise _Budget(
                    error(
                        "merge keys ('<<') are not supported",
                        path=format_path(frame.path),
                        location=location,
                        hint="write the keys out, or repeat a value with an anchor and alias",
                    )
                )
            if value in frame.container:
                first = frame.key_locations[value]
                raise _Budget(
                    error(
                        f"duplicate key {value!r}",
                        path=format_path((*frame.path, value)),
                        location=location,
                        hint=f"first defined at line {first.line}, column {first.col}; "
                        "remove or rename one of them",
                    )
                )
            frame.pending_key = value
            frame.has_key = True
            frame.key_locations[value] = location
            self.source.keys[(*frame.path, value)] = location
            return root
        path = self._child_path(stack)
        self._record_value(stack, path, event)
        return self._attach(stack, value, root)

    @staticmethod
    def _attach(stack: list[_Frame], value: Any, root: Any) -> Any:
        if not stack:
            return value
        frame = stack[-1]
        if isinstance(frame.container, dict):
            frame.container[frame.pending_key] = value
            frame.pending_key = None
            frame.has_key = False
        else:
            frame.container.append(value)
        return root

    def _scalar(self, event: yaml.ScalarEvent) -> Any:
        value: str = event.value
        tag = event.tag
        plain = bool(event.implicit[0]) and event.style in (None, "")
        if tag == "!" or (tag is None and not plain):
            return value  # quoted, block or non-specific '!' scalars are strings
        if tag == "tag:yaml.org,2002:str":
            return value
        if len(value) > MAX_INT_DIGITS and _INT_DEC.match(value):
            raise _Budget(
                error(
                    f"a number of {len(value):,} characters",
                    location=self.loc(event.start_mark),
                    hint=f"a number here has at most {MAX_INT_DIGITS} digits",
                )
            )
        resolved = _resolve_plain(value)
        if tag is None:
            return resolved
        wanted = {
            "tag:yaml.org,2002:int": int,
            "tag:yaml.org,2002:float": float,
            "tag:yaml.org,2002:bool": bool,
            "tag:yaml.org,2002:null": type(None),
        }.get(tag)
        if wanted is float and isinstance(resolved, int) and not isinstance(resolved, bool):
            return float(resolved)
        if wanted is not None and type(resolved) is not wanted:
            raise _Budget(
                error(
                    f"value {value!r} does not match its tag {tag.rsplit(':', 1)[-1]!r}",
                    location=self.loc(event.start_mark),
                )
            )
        return resolved


# Longer decimal integers are no count or size of a design (and past 4,300 digits Python refuses
# to convert them).
MAX_INT_DIGITS = 100


def _resolve_plain(value: str) -> Any:
    """YAML 1.2 core schema resolution of a plain scalar."""
    if _NULL.match(value):
        return None
    if _BOOL_TRUE.match(value):
        return True
    if _BOOL_FALSE.match(value):
        return False
    if _INT_DEC.match(value):
        return int(value, 10)
    if _INT_OCT.match(value):
        return int(value[2:], 8)
    if _INT_HEX.match(value):
        return int(value[2:], 16)
    if _FLOAT.match(value):
        return float(value)
    if _INF.match(value):
        return -math.inf if value.startswith("-") else math.inf
    if _NAN.match(value):
        return math.nan
    return value
