"""Check stage for NCCL topology files, part 1: text -> element tree, with lexical findings.

Consumes the bytes of a topology XML file; produces the elements as NCCL's hand-written parser would
see them (names, attributes and children, each with its line and column) and a finding for every
lexical rule of NCCL's parser (NCCL src/graph/xml.cc xmlGetToken, xmlGetValue) that the text breaks:
XML declarations, a BOM, TABs, start tags over several lines, spaces around '=' or doubled between
attributes, unquoted values, text nodes, tokens over 253 characters, broken closing tags. The
scanner follows those rules, not NCCL's code, and goes on after an error so that one run reports
every problem.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from fabricc.nccl.dialect import MAX_ELEMENTS

MAX_TOKEN = 253  # name or value length NCCL still reads (MAX_STR_LEN in NCCL src/graph/xml.h)
_SEPARATORS = frozenset(" \t\r\n")


class Level(Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One broken rule: where (1-based line and column), which rule, and what NCCL does."""

    line: int
    col: int
    rule: str
    message: str
    level: Level = field(default=Level.ERROR, compare=False)

    def render(self, file: str) -> str:
        return f"{file}:{self.line}:{self.col}: {self.level.value}: {self.rule}: {self.message}"


@dataclass(frozen=True, slots=True)
class Attribute:
    name: str
    value: str
    line: int
    col: int


@dataclass(slots=True, eq=False)
class Node:
    name: str
    line: int
    col: int
    attributes: list[Attribute] = field(default_factory=list)
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None
    self_closing: bool = False
    blank_attributes: int = 0  # extra spaces NCCL reads as attributes without a name

    def get(self, name: str) -> str | None:
        """The first attribute of that name, as NCCL reads it."""
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute.value
        return None

    def attribute(self, name: str) -> Attribute | None:
        for attribute in self.attributes:
            if attribute.name == name:
                return attribute
        return None

    def walk(self) -> list[Node]:
        nodes = [self]
        for child in self.children:
            nodes.extend(child.walk())
        return nodes


@dataclass(slots=True)
class Document:
    roots: list[Node]
    elements: list[Node]  # every element in file order
    findings: list[Finding]


def parse(data: bytes) -> Document:
    """Scan a whole file; never raises on bad input."""
    return _Scanner(data).run()


class _Scanner:
    def __init__(self, data: bytes) -> None:
        self.findings: list[Finding] = []
        self.text = data.decode("utf-8", errors="replace")
        self.lines = [0]
        for index, char in enumerate(self.text):
            if char == "\n":
                self.lines.append(index + 1)
        if "\ufffd" in self.text and b"\xef\xbf\xbd" not in data:
            line, col = self.where(self.text.index("\ufffd"))
            self.add(line, col, "encoding", "the file is not valid UTF-8")
        self.pos = 0
        self.roots: list[Node] = []
        self.elements: list[Node] = []
        self.stack: list[Node] = []
        self.open_names: Counter[str] = Counter()  # names on the stack: closing tags are O(1)

    # -- helpers ---------------------------------------------------------------------------------

    def where(self, pos: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.lines, pos) - 1
        return line + 1, pos - self.lines[line] + 1

    def add(self, line: int, col: int, rule: str, message: str, level: Level = Level.ERROR) -> None:
        self.findings.append(Finding(line, col, rule, message, level))

    def at(self, pos: int, rule: str, message: str, level: Level = Level.ERROR) -> None:
        line, col = self.where(pos)
        self.add(line, col, rule, message, level)

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    # -- top level -------------------------------------------------------------------------------

    def run(self) -> Document:
        text = self.text
        if text.startswith("\ufeff"):
            self.at(0, "bom", "the file starts with a byte order mark; NCCL expects '<' first")
            self.pos = 1
        tab_lines: set[int] = set()
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \r\n":
                self.pos += 1
            elif char == "\t":
                line, col = self.where(self.pos)
                if line not in tab_lines:
                    tab_lines.add(line)
                    self.add(line, col, "tab", "TAB character; NCCL skips only spaces and newlines")
                self.pos += 1
            elif char != "<":
                end = text.find("<", self.pos)
                end = len(text) if end < 0 else end
                self.at(self.pos, "text-node", "text outside tags; NCCL allows only elements here")
                self.pos = end
            elif text.startswith("<!--", self.pos):
                end = text.find("-->", self.pos + 4)
                if end < 0:
                    self.at(self.pos, "unterminated", "comment is never closed with -->")
                    self.pos = len(text)
                else:
                    self.pos = end + 3
            elif text.startswith("<?", self.pos) or text.startswith("<!", self.pos):
                self.at(
                    self.pos,
                    "xml-declaration",
                    "XML declarations and <!...> are rejected by NCCL's parser "
                    "('expected >, got ?'); remove the line",
                )
                end = text.find(">", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("</", self.pos):
                self.closing_tag()
            else:
                self.start_tag()
        for node in reversed(self.stack):
            self.add(node.line, node.col, "unterminated", f"<{node.name}> is never closed")
        return Document(self.roots, self.elements, self.findings)

    # -- tags ------------------------------------------------------------------------------------

    def read_name(self, stop: str) -> str:
        start = self.pos
        text = self.text
        while self.pos < len(text) and text[self.pos] not in stop and text[self.pos] not in "<":
            self.pos += 1
        return text[start : self.pos]

    def closing_tag(self) -> None:
        start = self.pos
        self.pos += 2
        name = self.read_name(" \t\r\n>")
        if self.peek() != ">":
            self.at(
                start,
                "closing-tag",
                f"closing tag </{name}> must end right after the name (no spaces or newlines)",
            )
            end = self.text.find(">", self.pos)
            if end < 0:
                self.at(start, "unterminated", f"closing tag </{name}> has no '>'")
                self.pos = len(self.text)
                return
            self.pos = end
        self.pos += 1
        if not self.stack or self.stack[-1].name != name:
            expected = f"</{self.stack[-1].name}>" if self.stack else "no closing tag"
            self.at(start, "tag-mismatch", f"</{name}> found where {expected} is expected")
            if self.open_names[name]:
                while self.stack and self.stack[-1].name != name:
                    node = self.pop()
                    self.add(node.line, node.col, "unterminated", f"<{node.name}> is never closed")
            else:
                return
        if self.stack:
            self.pop()

    def pop(self) -> Node:
        node = self.stack.pop()
        self.open_names[node.name] -= 1
        return node

    def start_tag(self) -> None:
        start = self.pos
        line, col = self.where(start)
        self.pos += 1
        name = self.read_name(" \t\r\n/>")
        if not name:
            self.at(start, "element-name", "'<' must be followed by an element name")
        elif len(name) > MAX_TOKEN:
            self.at(start, "token-too-long", f"element name longer than {MAX_TOKEN} characters")
        node = Node(name, line, col)
        multiline = False
        closed = False
        while self.pos < len(self.text):
            char = self.peek()
            if char == ">":
                self.pos += 1
                closed = True
                break
            if char == "<":
                break  # a new tag starts: this one was never closed
            if char == "/" and self.peek(1) == ">":
                self.pos += 2
                node.self_closing = True
                closed = True
                break
            if char in _SEPARATORS:
                gap_start = self.pos
                while self.peek() in _SEPARATORS and self.peek():
                    if self.peek() in "\r\n" and not multiline:
                        multiline = True
                        self.add(
                            line,
                            col,
                            "multiline-start-tag",
                            f"<{name}> continues on the next line; NCCL needs a whole start "
                            "tag on one line ('expected >, got \\n')",
                        )
                    if self.peek() == "\t":
                        self.at(self.pos, "tab", "TAB inside a tag; separate attributes by spaces")
                    self.pos += 1
                gap = self.text[gap_start : self.pos]
                following = self.peek()
                if (gap != " " or following in (">", "/")) and not multiline and "\t" not in gap:
                    # xml.cc xmlGetNode reads an attribute after every space; a space that no
                    # name follows gives an attribute with an empty name (NCCL 2.30.7).
                    blank = len(gap) - (0 if following in (">", "/") else 1)
                    node.blank_attributes += blank
                    self.at(
                        gap_start,
                        "attribute-spacing",
                        "NCCL reads each extra space as an attribute without a name, which takes "
                        "one of its 16 attribute slots; write one space between attributes and "
                        "none before '>' or '/>'",
                        Level.WARNING,
                    )
                continue
            if not self.attribute(node):
                break
        if not closed:
            self.at(start, "unterminated", f"start tag <{name}> has no closing '>'")
            node.self_closing = True  # keep the rest of the file readable
        self.open(node)

    def attribute(self, node: Node) -> bool:
        """Read `name="value"`; False when the tag cannot be read further."""
        start = self.pos
        name = self.read_name(" \t\r\n=/>")
        line, col = self.where(start)
        if not name:
            self.at(start, "attribute-syntax", f"unexpected {self.peek()!r} in <{node.name}>")
            self.pos += 1
            return True
        if len(name) > MAX_TOKEN:
            self.at(start, "token-too-long", f"attribute name longer than {MAX_TOKEN} characters")
        spaced = False
        while self.peek() in (" ", "\t"):
            self.pos += 1
            spaced = True
        if self.peek() != "=":
            self.at(start, "attribute-syntax", f"attribute {name!r} of <{node.name}> has no value")
            return True
        self.pos += 1
        while self.peek() in (" ", "\t"):
            self.pos += 1
            spaced = True
        if spaced:
            self.at(
                start,
                "attribute-spacing",
                f"spaces around '=' in {name}; NCCL fails with 'Expected (double) quote'",
            )
        quote = self.peek()
        if quote not in ('"', "'"):
            self.at(
                self.pos,
                "unquoted-value",
                f"value of {name} is not quoted; NCCL fails with 'Expected (double) quote'",
            )
            value = self.read_name(" \t\r\n/>")
        else:
            if quote == "'":
                self.at(
                    self.pos,
                    "single-quote",
                    "single quotes need NCCL 2.27 or newer; use double quotes",
                    Level.WARNING,
                )
            end = self.text.find(quote, self.pos + 1)
            if end < 0:
                self.at(self.pos, "unterminated", f"value of {name} has no closing quote")
                self.pos = len(self.text)
                return False
            value = self.text[self.pos + 1 : end]
            self.pos = end + 1
            if "\n" in value or "\r" in value:
                self.add(line, col, "multiline-start-tag", f"value of {name} spans lines")
        if len(value) > MAX_TOKEN:
            self.add(
                line,
                col,
                "token-too-long",
                f"value of {name} is {len(value)} characters; NCCL reads at most {MAX_TOKEN}",
            )
        node.attributes.append(Attribute(name, value, line, col))
        if self.peek() not in _SEPARATORS and self.peek() not in ("/", ">", ""):
            self.at(self.pos, "attribute-spacing", "attributes must be separated by a space")
        return True

    def open(self, node: Node) -> None:
        if len(self.stack) >= MAX_ELEMENTS:
            # NCCL reads at most MAX_ELEMENTS elements, so no file it reads whole is deeper; the
            # rest of the file is not read (every later check would walk this depth again).
            self.add(
                node.line,
                node.col,
                "nesting-depth",
                f"elements nested more than {MAX_ELEMENTS} deep; NCCL reads at most "
                f"{MAX_ELEMENTS} elements in all; the rest of the file is not checked",
            )
            self.stack.clear()
            self.open_names.clear()
            self.pos = len(self.text)
            return
        self.elements.append(node)
        if self.stack:
            node.parent = self.stack[-1]
            self.stack[-1].children.append(node)
        else:
            self.roots.append(node)
        if not node.self_closing:
            self.stack.append(node)
            self.open_names[node.name] += 1
