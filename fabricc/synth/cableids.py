"""Synthesis helper (pass 5): cable IDs that survive growth.

Consumes the links with their cables; produces Cable.id for every cable and the fabric's cable
list (in link order). An ID is <NETWORK>-<SERIES>-<serial>. The series is what the lower-tier end
of the cable is: the node group of a host cable; the tier of a switch-to-switch cable (-PEER and
-UPLINK apart for MLAG peer links and uplinks into another network; on a network that is not the
switch's own, the switch's network first: OOB-COMPUTE-LEAF); the kind of any other device
(PDU); plus the plane from the second plane on (-P2). Serials count links, not cables - a
splitter or twin-port cable takes the serial of its first link and leaves the others unused, so
whether a run ends up on one cable or two never shifts the rest - in the order of the lower end's
index within its group or tier (by name for trays and for devices named after their rack), then
its port. Adding nodes, SUs, leaves, a node group or a plane appends to a series or opens a new
one, so every existing cable keeps its ID; only cables whose ends move (a topology change) change.
"""

from __future__ import annotations

import re
from collections import defaultdict
from operator import itemgetter

from fabricc.ir import PEER, UPLINK, Cable, Device, Fabric, Link

_DIGITS = re.compile(r"(\d+)")
_TOKEN = re.compile(r"[^A-Z0-9]+")


def _natural(text: str) -> tuple[tuple[int, int | str], ...]:
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(text) if part
    )


def _token(text: str) -> str:
    return _TOKEN.sub("-", text.upper()).strip("-") or "X"


def series(link: Link, device: Device) -> str:
    if device.kind in ("node", "tray") and device.group is not None:
        what = device.group
    elif device.kind == "switch":
        own = device.network is None or device.network == link.network
        what = device.role if own else f"{device.network}-{device.role}"
        if link.kind in (PEER, UPLINK):  # apart from the tier's own cables, which may rewire
            what += f"-{link.kind}"
    else:
        what = device.kind
    plane = f"-P{link.plane + 1}" if link.plane else ""
    return f"{_token(link.network)}-{_token(what)}{plane}"


def number_cables(fabric: Fabric) -> None:
    ordered: list[Cable] = []
    by_series: dict[str, list[tuple[tuple[object, ...], Cable]]] = defaultdict(list)
    seen: set[int] = set()  # cables of several links (leg 1, 2, ...); leg 0 is a cable's only link
    # device -> ((index, natural name), the class of devices whose links share their series)
    heads: dict[str, tuple[tuple[object, ...], int]] = {}
    classes: dict[tuple[object, ...], int] = {}
    ports: dict[str, tuple[tuple[int, int | str], ...]] = {}
    kinds: dict[tuple[object, ...], str] = {}  # what decides the series -> series
    devices = fabric.devices
    for link in fabric.links:
        cable = link.cable
        if cable is None:
            continue
        if not link.leg:
            ordered.append(cable)
        elif id(cable) not in seen:
            seen.add(id(cable))
            ordered.append(cable)
        found = heads.get(link.a)
        if found is None:
            device = devices[link.a]
            # nodes and switches grow by index; trays (numbered within their system), PDUs and
            # the like go by name
            index = device.index if device.kind in ("node", "switch") else 0
            alike = (device.kind, device.group, device.role, device.network)
            found = heads[link.a] = (
                (index, _natural(link.a)),
                classes.setdefault(alike, len(classes)),
            )
        head, category = found
        port = ports.get(link.a_port)
        if port is None:
            port = ports[link.a_port] = _natural(link.a_port)
        what = (link.network, link.kind, link.plane, category)
        name = kinds.get(what)
        if name is None:
            name = kinds[what] = series(link, devices[link.a])
        by_series[name].append(((head, port, link.leg), cable))
    for name, cables in by_series.items():
        cables.sort(key=itemgetter(0))
        for serial, (_, cable) in enumerate(cables, 1):
            if not cable.id:  # a multi-leg cable is named by its first leg
                cable.id = f"{name}-{serial:06d}"
    fabric.cables = ordered
