"""Test helper: the product's ibsim driver (fabricc.twin.ibsim) and net-file editing for tests.

The simulator, OpenSM and diagnostics run through fabricc.twin.ibsim (the twin's own driver, with
a private IBSIM_SOCKNAME per run, so tests run in parallel); this module adds what only tests need:
the LIDs ibnetdiscover reports and mis-cabled variants of a net file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabricc.twin.ibsim import READY, Simulator, net_limits, simulator

__all__ = ["READY", "Simulator", "lids", "net_limits", "simulator"]

FTREE_OK = "ftree tables configured on all switches"
FAT_TREE_FOUND = "Fabric topology has been identified as FatTree"
# ibnetdiscover: a switch port line naming the CA behind it and that CA's LID
_CA_LID = re.compile(r'^\[\d+\]\s+"H-[0-9a-f]+"\[\d+\]\([0-9a-f]+\)\s+#\s+"([^"]+)" lid (\d+) ')
_PORT_LINE = re.compile(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]')
_SWITCH_LID = re.compile(r'^Switch\s+\d+\s+"S-[0-9a-f]+"\s+#\s+"([^"]+)" .*\blid (\d+) ')


def lids(sim: Simulator) -> dict[str, int]:
    """IB node name -> LID, from ibnetdiscover against the routed simulator."""
    result = sim.tool("ibnetdiscover")
    assert result.returncode == 0, result.stderr
    found: dict[str, int] = {}
    for line in result.stdout.splitlines():
        match = _CA_LID.match(line) or _SWITCH_LID.match(line)
        if match:
            found[match.group(1)] = int(match.group(2))
    return found


# -- editing net files (mis-cabled variants) ------------------------------------------------------


@dataclass(slots=True)
class NetRecord:
    header: list[str]  # guid line and node line
    name: str
    links: dict[int, tuple[str, int]]


def parse_net(net: str) -> tuple[list[str], list[NetRecord]]:
    preamble: list[str] = []
    records: list[NetRecord] = []
    pending: list[str] = []
    for line in net.splitlines():
        if line.startswith(("switchguid=", "caguid=")):
            pending = [line]
        elif line.startswith(("Switch\t", "Ca\t")):
            name = line.split('"')[1]
            records.append(NetRecord([*pending, line], name, {}))
            pending = []
        elif line.startswith("["):
            match = _PORT_LINE.fullmatch(line)
            assert match is not None, f"unexpected port line {line!r}"
            records[-1].links[int(match.group(1))] = (match.group(2), int(match.group(3)))
        elif not records and line.strip():
            preamble.append(line)
    return preamble, records


def write_net(preamble: list[str], records: list[NetRecord]) -> str:
    lines = [*preamble, ""]
    for record in records:
        lines.extend(record.header)
        lines.extend(
            f'[{port}]\t"{far}"[{far_port}]'
            for port, (far, far_port) in sorted(record.links.items())
        )
        lines.append("")
    return "\n".join(lines) + "\n"
