"""Diagrams helper: a tiny, deterministic writer of Graphviz DOT text.

Consumes nodes, edges and attributes in the order the caller adds them; produces DOT source.
Nothing is sorted or hashed here, so the same calls always give the same bytes. HTML-like labels
are passed as `Html` values; every other attribute value is quoted and escaped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Attrs = dict[str, "str | Html"]


@dataclass(frozen=True, slots=True)
class Html:
    """An HTML-like label, written as <...> instead of a quoted string."""

    text: str


def quote(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def html_escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _value(value: str | Html) -> str:
    return f"<{value.text}>" if isinstance(value, Html) else quote(value)


def _attr_list(attrs: Attrs) -> str:
    return ", ".join(f"{key}={_value(value)}" for key, value in attrs.items())


@dataclass(slots=True)
class Graph:
    """An undirected graph (fabrics have no direction) with default attributes."""

    name: str
    graph: Attrs = field(default_factory=dict)
    node_defaults: Attrs = field(default_factory=dict)
    edge_defaults: Attrs = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)
    _lines: list[str] = field(default_factory=list)
    _ids: set[str] = field(default_factory=set)

    def node(self, node_id: str, **attrs: str | Html) -> str:
        if node_id in self._ids:
            raise ValueError(f"diagram {self.name}: node {node_id!r} added twice")
        self._ids.add(node_id)
        self._lines.append(f"  {quote(node_id)} [{_attr_list(attrs)}];")
        return node_id

    def edge(self, a: str, b: str, **attrs: str | Html) -> None:
        for end in (a, b):
            if end not in self._ids:
                raise ValueError(f"diagram {self.name}: edge to unknown node {end!r}")
        suffix = f" [{_attr_list(attrs)}]" if attrs else ""
        self._lines.append(f"  {quote(a)} -- {quote(b)}{suffix};")

    def same_rank(self, node_ids: list[str]) -> None:
        """Keep nodes on one rank (dot only)."""
        if node_ids:
            self._lines.append(f"  {{rank=same; {'; '.join(quote(n) for n in node_ids)};}}")

    def __contains__(self, node_id: str) -> bool:
        return node_id in self._ids

    @property
    def node_count(self) -> int:
        return len(self._ids)

    def source(self) -> str:
        head = [f"// {line}" for line in self.comments]
        head.append(f"graph {quote(self.name)} {{")
        for keyword, attrs in (
            ("graph", self.graph),
            ("node", self.node_defaults),
            ("edge", self.edge_defaults),
        ):
            if attrs:
                head.append(f"  {keyword} [{_attr_list(attrs)}];")
        return "\n".join([*head, *self._lines, "}"]) + "\n"
