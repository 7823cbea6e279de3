"""Twin check: every LID of an InfiniBand subnet has a route from every CA port, in the LFTs OpenSM
programmed.

Consumes OpenSM's `opensm-lfts.dump` (one linear forwarding table per switch: destination LID ->
exit port, each line naming the port that owns the LID) and the links ibnetdiscover found;
produces the number of (CA port, destination LID) pairs checked and those a packet cannot complete:
an LFT without an entry, an exit port with nothing behind it, or a loop. Forwarding is by
destination only, so each destination is walked once from every switch (memoised). Sources are
the CA ports, where traffic starts: fat-tree engines (ftree, updn) leave switch-to-switch LIDs of
one rank unrouted, and switches are managed by directed-route SMPs, which need no LFT.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricc.verify.ibnetdiscover import IbNode

_HEADER = re.compile(r"^Unicast lids \[.*\] of switch Lid (\d+) guid (0x[0-9a-fA-F]+) \('(.*)'\):")
_ENTRY = re.compile(r"^(0x[0-9a-fA-F]+) (\d+) # .*portguid 0x[0-9a-fA-F]+: '(.*)'")
SHOWN = 20  # unrouted pairs named in the report; the count has them all


@dataclass(slots=True)
class Tables:
    owner: dict[int, str] = field(default_factory=dict)  # LID -> node description
    switch_lid: dict[int, int] = field(default_factory=dict)  # switch node GUID -> its LID
    lft: dict[int, dict[int, int]] = field(default_factory=dict)  # switch GUID -> LID -> port


def parse_lfts(text: str) -> Tables:
    tables = Tables()
    current: dict[int, int] | None = None
    for line in text.splitlines():
        header = _HEADER.match(line)
        if header:
            guid = int(header.group(2), 16)
            tables.switch_lid[guid] = int(header.group(1))
            tables.owner[int(header.group(1))] = header.group(3)
            current = tables.lft.setdefault(guid, {})
            continue
        entry = _ENTRY.match(line)
        if entry and current is not None:
            lid = int(entry.group(1), 16)
            current[lid] = int(entry.group(2))
            tables.owner.setdefault(lid, entry.group(3))
    return tables


def whole(text: str, switches: int) -> bool:
    """Whether an LFT dump holds a closed table ("N lids dumped") for each of `switches`: OpenSM
    rewrites the file in place at every heavy sweep (osm_dump.c opens it with fopen "w"), so a read
    can catch it half written, and a sweep that has not reached every switch dumps fewer tables."""
    tables = closed = 0
    for line in text.splitlines():
        if _HEADER.match(line):
            tables += 1
        elif line.endswith(" lids dumped"):
            closed += 1
    return tables == closed == switches and text.endswith(" lids dumped\n")


def _names(nodes: dict[int, IbNode]) -> dict[str, int]:
    return {node.description: guid for guid, node in nodes.items()}


def _walk(nodes: dict[int, IbNode], tables: Tables, lid: int, target: int) -> dict[int, str | None]:
    """Switch GUID -> None when a packet for `lid` entering it arrives, else why not."""
    verdict: dict[int, str | None] = {}
    for start in tables.lft:
        path: list[int] = []
        problem: str | None = None
        guid = start
        while guid not in verdict:
            if guid in path:
                problem = "loops at " + nodes[guid].description
                break
            path.append(guid)
            if guid == target:
                break
            port = tables.lft[guid].get(lid)
            here = nodes[guid].description if guid in nodes else f"{guid:#x}"
            if port is None or port == 255:
                problem = f"no entry for it in the LFT of {here}"
                break
            link = nodes[guid].ports.get(port) if guid in nodes else None
            if link is None:
                problem = f"{here} forwards it to port {port}, which has no link"
                break
            if link.far_guid == target:
                break
            if link.far_guid not in tables.lft:
                far = nodes.get(link.far_guid)
                problem = f"{here} port {port} leads to {far.description if far else 'nothing'}"
                break
            guid = link.far_guid
        else:
            problem = verdict[guid]
        for step in path:
            verdict[step] = problem
    return verdict


def unrouted(nodes: dict[int, IbNode], tables: Tables) -> tuple[int, int, list[dict[str, str]]]:
    """(pairs checked, pairs without a route, the first SHOWN of those named)."""
    by_name = _names(nodes)
    sources: list[tuple[str, int]] = []  # (name, switch a packet enters first)
    for _lid, name in sorted(tables.owner.items()):
        guid = by_name.get(name)
        if guid is None:
            continue
        if guid not in tables.lft:
            ports = sorted(nodes[guid].ports.items())
            if ports:
                sources.append((name, ports[0][1].far_guid))
    checked = missing = 0
    named: list[dict[str, str]] = []
    for lid, target_name in sorted(tables.owner.items()):
        target = by_name.get(target_name, -1)
        verdict = _walk(nodes, tables, lid, target)
        for name, entry in sources:
            if name == target_name:
                continue
            checked += 1
            problem = None if entry == target else verdict.get(entry, "enters no switch")
            if problem is not None:
                missing += 1
                if len(named) < SHOWN:
                    named.append(
                        {"from": name, "to": f"{target_name} (LID {lid})", "problem": problem}
                    )
    return checked, missing, named
