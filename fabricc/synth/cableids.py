"""Synthesis helper (pass 5): cable IDs that survive growth.

Consumes the links with their cables; produces Cable.id for every cable and the fabric's cable
list (in link order). An ID is <NETWORK>-<SERIES>-<serial>. The series is what the lower-tier end
of the cable is: the node group of a host cable; the tier of a switch-to-switch cable (-PEER and
-UPLINK apart for MLAG peer links and uplinks into another network; on a network that is not the
switch's own, the switch's network first: OOB-COMPUTE-LEAF; a leaf class with a name series of
its own, its name: STORAGE-STORAGE-ARRAY-LEAF); the group and kind of a device of a node group's
systems (OOB-GB200-NVLINK-SWITCH), so that one group's growth renumbers no other's; the kind of
any other device (PDU); plus the plane from the second plane on (-P2). Serials count links, not cables - a
splitter or twin-port cable takes the serial of its first link and leaves the others unused, so
whether a run ends up on one cable or two never shifts the rest - in the order of the lower end's
index within its group or tier (by name for trays), then its port; PDUs, the uplinks of
access switches and their own management ports take serials from their rack's place and the
switch's number. Adding
nodes, SUs, leaves, a node group or a plane appends to a series or opens a new one, so every
existing cable keeps its ID; only cables whose ends move (a topology change) change.
"""

from __future__ import annotations

import re
from collections import defaultdict
from operator import itemgetter

from fabricc.ir import MGMT, PEER, SITE, UPLINK, Cable, Device, Fabric, Link

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
        role = f"{device.series}-{device.role}" if device.series else device.role
        what = role if own else f"{device.network}-{role}"
        if link.kind in (PEER, UPLINK, SITE):  # apart from the tier's own cables, which may rewire
            what += f"-{link.kind}"
    elif device.group is not None:  # a rack-scale system's NVLink switch or power shelf
        what = f"{device.group}-{device.kind}"
    else:
        what = device.kind
    plane = f"-P{link.plane + 1}" if link.plane else ""
    return f"{_token(link.network)}-{_token(what)}{plane}"


def number_cables(fabric: Fabric) -> None:
    ordered: list[Cable] = []
    # per series: (sort key, the serial a place fixes or None, link)
    by_series: dict[str, list[tuple[tuple[object, ...], int | None, Link]]] = defaultdict(list)
    seen: set[int] = set()  # cables of several links (leg 1, 2, ...); leg 0 is a cable's only link
    # device -> (index, natural name), the class of devices whose links share their series, and
    # what fixes its serials (_Places)
    heads: dict[str, tuple[tuple[object, ...], int, int | None, int | None, int]] = {}
    classes: dict[tuple[object, ...], int] = {}
    ports: dict[str, tuple[tuple[int, int | str], ...]] = {}
    kinds: dict[tuple[object, ...], str] = {}  # what decides the series -> series
    devices = fabric.devices
    places = _Places(fabric)
    taken: dict[str, int] = defaultdict(int)  # an access switch's uplinks so far
    for link in fabric.links:
        a = link.a
        found = heads.get(a)
        if found is None:
            device = devices[a]
            # nodes and switches grow by index; trays (numbered within their system), PDUs and
            # the like go by name
            index = device.index if device.kind in ("node", "switch") else 0
            alike = (device.kind, device.group, device.role, device.network, device.series)
            found = heads[a] = (
                (index, _natural(a)),
                classes.setdefault(alike, len(classes)),
                places.pdu(device),
                places.uplinks.get(a),
                device.index,
            )
        head, category, pdu, uplinks, number = found
        # (every link counts towards an access switch's uplinks, cabled or not)
        fixed: int | None = None
        if pdu is not None:
            fixed = pdu
        elif link.kind == SITE:  # border link k (port site<k>, synth/sitelinks.py) keeps serial k
            fixed = int(link.b_port.removeprefix("site"))
        elif uplinks is not None and link.kind == UPLINK:
            taken[a] += 1
            fixed = number * uplinks + taken[a]
        elif uplinks is not None and link.kind == MGMT:
            # an access switch's own management port on its parent (synth/oob.py connect_tree):
            # a switch whose number was kept free comes between existing ones
            fixed = number + 1
        cable = link.cable
        if cable is None:
            continue
        if not link.leg:
            ordered.append(cable)
        elif id(cable) not in seen:
            seen.add(id(cable))
            ordered.append(cable)
        port = ports.get(link.a_port)
        if port is None:
            port = ports[link.a_port] = _natural(link.a_port)
        what = (link.network, link.kind, link.plane, category)
        name = kinds.get(what)
        if name is None:
            name = kinds[what] = series(link, devices[a])
        by_series[name].append(((head, port, link.leg), fixed, link))
    for name, links in by_series.items():
        links.sort(key=itemgetter(0))
        for serial, (_, fixed, link) in enumerate(links, 1):
            cable = link.cable
            assert cable is not None
            if not cable.id:  # a multi-leg cable is named by its first leg
                cable.id = f"{name}-{serial if fixed is None else fixed:06d}"
    fabric.cables = ordered


class _Places:
    """Serials that come from a place rather than a count, where a count would shift when a
    design grows: a PDU's from its rack's place on the floor (row by row) and its number in the
    rack - a rack may fill a place reserved before existing racks (a partial unit growing); an
    access switch's uplinks and its own management port's cable from the switch's number in
    its floor region's series (`uplinks`: access switch -> uplinks per switch)."""

    def __init__(self, fabric: Fabric) -> None:
        loaded = fabric.loaded
        self.fabric = fabric
        self.site = loaded.spec.site
        nodes = loaded.catalog.catalog.nodes.values()
        self.stride = max([self.site.rack.pdus, *(model.power_feeds for model in nodes)])
        self.uplinks = {
            name: network.spec.uplinks_per_switch
            for network in loaded.networks.values()
            if network.spec.role == "oob" and network.name in fabric.networks
            for name in fabric.networks[network.name].switches.get("leaf", [])
        }

    def pdu(self, device: Device) -> int | None:
        """The serial of a PDU's cables; None for any other device."""
        if device.kind != "pdu" or device.rack is None:
            return None
        rack = self.fabric.rack_by_name[device.rack]
        place = rack.row * self.site.racks_per_row + rack.position
        return place * self.stride + device.index + 1
