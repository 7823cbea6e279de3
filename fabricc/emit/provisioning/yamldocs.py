"""Emit helper, provisioning: YAML documents in PyYAML's block style, written in one pass.

Consumes documents of dicts, lists, str and int and the PyYAML Dumper class the text must match;
produces the text `yaml.dump_all(docs, Dumper, sort_keys=False, width=100, ...)` gives, without
building PyYAML's node graph per scalar (tens of thousands of Node and label documents at scale).
Each distinct scalar is spelled once by PyYAML itself, so quoting follows its rules exactly;
whatever this writer does not reproduce line for line (a multi-line or long scalar that PyYAML
may fold, a repeated object that becomes an alias, other types) makes the whole text PyYAML's.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

WIDTH = 100
# Text PyYAML writes plain, recognised without asking it: a name (a letter, then letters, digits
# and _ . / -; longer than the resolver's words true, null, off...) or an IPv4 address or prefix
# (never an int, float or timestamp). Everything else is spelled by PyYAML once per text.
_SHORT = 5
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_./-]*")
_IPV4 = re.compile(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?:/[0-9]{1,2})?")


class _Unsupported(Exception):
    """A document this writer does not reproduce: the caller's PyYAML writes the text."""


def dump_documents(
    docs: list[dict[str, Any]], dumper: type[yaml.SafeDumper], explicit_start: bool = True
) -> str:
    """The documents as `yaml.dump_all(..., Dumper=dumper, sort_keys=False, width=WIDTH,
    explicit_start=explicit_start)` writes them."""
    writer = _Writer(dumper)
    try:
        for number, doc in enumerate(docs):
            writer.document(doc, explicit_start or number > 0)
    except _Unsupported:
        return yaml.dump_all(
            docs, Dumper=dumper, sort_keys=False, explicit_start=explicit_start, width=WIDTH
        )
    return "".join(writer.lines)


class _Writer:
    def __init__(self, dumper: type[yaml.SafeDumper]) -> None:
        self.dumper = dumper
        self.lines: list[str] = []
        self.keys: dict[str, str] = {}
        self.texts: dict[str, str] = {}
        self.ints: dict[int, str] = {}
        self.seen: set[int] = set()  # ids of the dicts and lists of the current document

    def document(self, doc: Any, start: bool) -> None:
        if type(doc) is not dict or not doc:
            raise _Unsupported
        self.seen.clear()
        if start:
            self.lines.append("---\n")
        self.mapping(doc, "", "")

    def _container(self, value: Any) -> None:
        # PyYAML gives a dict or list met twice in one document an anchor and an alias
        if id(value) in self.seen:
            raise _Unsupported
        self.seen.add(id(value))

    def mapping(self, tree: dict[Any, Any], first: str, pad: str) -> None:
        """`tree` at indent `pad`, its first line opened by `first` (a sequence's "- ")."""
        self._container(tree)
        lines = self.lines
        keys = self.keys
        inner = pad + "  "
        lead = first or pad
        plain, address = _NAME.fullmatch, _IPV4.fullmatch
        for key, value in tree.items():
            name = keys.get(key) if type(key) is str else None
            if name is None:
                name = self.key(key)
            kind = type(value)
            if kind is dict or kind is list:
                if not value:
                    lines.append(f"{lead}{name}: {self.flow_empty(value)}\n")
                elif kind is dict:
                    lines.append(f"{lead}{name}:\n")
                    self.mapping(value, "", inner)
                else:
                    lines.append(f"{lead}{name}:\n")
                    self.sequence(value, pad)  # indentless: "- " under the key
            else:
                # plain names and addresses inline (most values): a call per scalar is felt
                if kind is str and len(value) > _SHORT and (plain(value) or address(value)):
                    text = value
                else:
                    text = self.scalar(value)
                line = f"{lead}{name}: {text}\n"
                if len(line) > WIDTH:
                    self.check(text)
                lines.append(line)
            lead = pad

    def sequence(self, items: list[Any], pad: str) -> None:
        self._container(items)
        lines = self.lines
        for item in items:
            kind = type(item)
            if kind is dict and item:
                self.mapping(item, pad + "- ", pad + "  ")
            elif kind is dict or kind is list:
                raise _Unsupported  # nested sequences and empty items: PyYAML's
            else:
                text = self.scalar(item)
                line = f"{pad}- {text}\n"
                if len(line) > WIDTH:
                    self.check(text)
                lines.append(line)

    def check(self, text: str) -> None:
        """A scalar on a line past the width: PyYAML breaks double-quoted text anywhere, plain
        and single-quoted text at a space."""
        if " " in text or text.startswith('"'):
            raise _Unsupported

    def flow_empty(self, value: dict[Any, Any] | list[Any]) -> str:
        self._container(value)
        return "{}" if type(value) is dict else "[]"

    def key(self, key: Any) -> str:
        if type(key) is not str:
            raise _Unsupported
        text = yaml.dump({key: 0}, Dumper=self.dumper, width=WIDTH)
        if not text.endswith(": 0\n") or text.count("\n") != 1 or text.startswith("?"):
            raise _Unsupported
        self.keys[key] = text[: -len(": 0\n")]
        return self.keys[key]

    def scalar(self, value: Any) -> str:
        kind = type(value)
        if kind is str:
            found = self.texts.get(value)
            if found is None:
                if len(value) > _SHORT and (_NAME.fullmatch(value) or _IPV4.fullmatch(value)):
                    return value  # type: ignore[no-any-return]
                found = self.texts[value] = self.spell(value)
            return found
        if kind is int:
            return str(value)
        raise _Unsupported

    def spell(self, value: str | int) -> str:
        """PyYAML's own spelling of the scalar as a block sequence item: one line or none."""
        text = yaml.dump([value], Dumper=self.dumper, width=WIDTH)
        if not text.startswith("- ") or text.count("\n") != 1:
            raise _Unsupported
        return text[2:-1]
