"""Emit-stage helper: an NCCL topology XML tree and its serializer.

Consumes Element trees built by fabricc.nccl.topology; produces the file text exactly as NCCL's
hand-written parser wants it (NCCL src/graph/xml.cc xmlGetToken, xmlGetValue): no XML declaration,
2-space indentation, one start tag per line, `k="v"` with single spaces, attributes in the fixed
order of NCCL's own dumps, `/>` for elements without children. Anything the parser would reject
raises ValueError here, so a generator bug cannot produce a file that only fails on the cluster.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from fabricc.nccl.dialect import PCI_ATTRIBUTES

MAX_TOKEN = 253  # NCCL's MAX_STR_LEN 255 minus the terminator and one spare (src/graph/xml.h)
MAX_GENERATED_ATTRIBUTES = 12  # 16 is the hard limit; NCCL may add up to ~3 itself
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_FORBIDDEN_IN_VALUE = re.compile(r"[\"'<>&\t\r\n]")

# Attribute order per element: the order NCCL_TOPO_DUMP_FILE writes them in.
ATTRIBUTE_ORDER: dict[str, tuple[str, ...]] = {
    "system": ("version", "name"),
    "cpu": ("numaid", "affinity", "arch", "vendor", "familyid", "modelid"),
    "pci": PCI_ATTRIBUTES,
    "gpu": ("dev", "sm", "rank", "gdr"),
    "nvlink": ("target", "count", "tclass"),
    "c2c": ("bw", "count"),
    "nic": (),
    "net": ("name", "dev", "speed", "port", "latency", "guid", "maxconn", "gdr"),
}


@dataclass(frozen=True, slots=True)
class Element:
    name: str
    attributes: tuple[tuple[str, str], ...] = ()
    children: tuple[Element, ...] = ()


def element(name: str, attributes: Mapping[str, str | int], *children: Element) -> Element:
    """An element whose attributes are put in NCCL's dump order; unknown ones are an error."""
    order = ATTRIBUTE_ORDER.get(name)
    if order is None:
        raise ValueError(f"<{name}> is not an NCCL topology element")
    unknown = sorted(set(attributes) - set(order))
    if unknown:
        raise ValueError(f"<{name}> has no attribute {', '.join(unknown)}")
    ordered = tuple((key, str(attributes[key])) for key in order if key in attributes)
    return Element(name, ordered, tuple(children))


def render(root: Element) -> str:
    """The file text: one element per line, two spaces per level, a final newline."""
    lines: list[str] = []
    _render(root, 0, lines)
    return "\n".join(lines) + "\n"


def _render(node: Element, depth: int, lines: list[str]) -> None:
    _check(node)
    attributes = "".join(f' {key}="{value}"' for key, value in node.attributes)
    indent = "  " * depth
    if not node.children:
        lines.append(f"{indent}<{node.name}{attributes}/>")
        return
    lines.append(f"{indent}<{node.name}{attributes}>")
    for child in node.children:
        _render(child, depth + 1, lines)
    lines.append(f"{indent}</{node.name}>")


def _check(node: Element) -> None:
    if not _NAME.match(node.name) or len(node.name) > MAX_TOKEN:
        raise ValueError(f"bad element name {node.name!r}")
    if len(node.attributes) > MAX_GENERATED_ATTRIBUTES:
        raise ValueError(f"<{node.name}> has more than {MAX_GENERATED_ATTRIBUTES} attributes")
    keys = [key for key, _ in node.attributes]
    if len(set(keys)) != len(keys):
        raise ValueError(f"<{node.name}> repeats an attribute")
    for key, value in node.attributes:
        if not _NAME.match(key) or len(key) > MAX_TOKEN:
            raise ValueError(f"bad attribute name {key!r} on <{node.name}>")
        if len(value) > MAX_TOKEN:
            raise ValueError(f"{node.name}.{key} is longer than {MAX_TOKEN} characters")
        if _FORBIDDEN_IN_VALUE.search(value):
            raise ValueError(f"{node.name}.{key}={value!r} contains a character NCCL cannot read")
