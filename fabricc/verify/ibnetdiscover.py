"""Verification input: the text `ibnetdiscover` prints (real fabric or ibsim).

Consumes the file's text; produces IbNode records - node GUID, type, description and, per port,
the far node GUID, far port and the active width and speed ("4xNDR"). Every link appears on both
ends; the caller deduplicates. Lines it does not know (vendid=, sysimgguid=, comments) are skipped;
a port line before any node, or a file without nodes, is an error at that line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricc.errors import Location, SpecError, error

_NODE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([SHR])-([0-9a-fA-F]+)"(.*)$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\](?:\([0-9a-fA-F]+\))?(.*)$'
)
_QUOTED = re.compile(r'"([^"]*)"')
_RATE = re.compile(r"\b(\d+)x([A-Z]+\d*)\b")


@dataclass(slots=True)
class IbPort:
    far_guid: int
    far_port: int
    rate: str | None


@dataclass(slots=True)
class IbNode:
    guid: int
    switch: bool
    description: str
    ports: dict[int, IbPort] = field(default_factory=dict)


def _description(comment: str) -> str:
    names = _QUOTED.findall(comment)
    return names[0] if names else ""


# ibnetdiscover writes GUIDs as 16 hex digits and port numbers and LIDs of a few decimal ones;
# anything much longer is not its output (and a decimal past 4,300 digits would not convert).
_DIGITS = 32


def _number(match: re.Match[str], group: int, base: int, file: str, number: int) -> int:
    digits = match.group(group)
    if len(digits) > _DIGITS:
        raise SpecError(
            [
                error(
                    f"a number of {len(digits):,} digits (ibnetdiscover writes at most 16)",
                    location=Location(file, number, match.start(group) + 1),
                    hint="give the complete output of ibnetdiscover",
                )
            ]
        )
    return int(digits, base)


def parse(text: str, file: str) -> dict[int, IbNode]:
    nodes: dict[int, IbNode] = {}
    current: IbNode | None = None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        node = _NODE.match(stripped)
        if node:
            guid = _number(node, 4, 16, file, number)
            current = IbNode(guid, node.group(1) == "Switch", _description(node.group(5)))
            nodes[guid] = current
            continue
        port = _PORT.match(stripped)
        if port:
            if current is None:
                raise SpecError(
                    [
                        error(
                            "port line before any Switch or Ca line",
                            location=Location(file, number, 1),
                            hint="give the complete output of ibnetdiscover",
                        )
                    ]
                )
            rates = _RATE.findall(port.group(5))
            rate = f"{rates[-1][0]}x{rates[-1][1]}" if rates else None
            far = _number(port, 3, 16, file, number)
            current.ports[_number(port, 1, 10, file, number)] = IbPort(
                far, _number(port, 4, 10, file, number), rate
            )
    if not nodes:
        raise SpecError(
            [
                error(
                    "no InfiniBand nodes found (expected ibnetdiscover output)",
                    location=Location(file, 1, 1),
                    hint="run `ibnetdiscover > FILE` on a host of the fabric",
                )
            ]
        )
    return nodes
