"""Synthesis view: the power plan of every rack, derived from the finished design.

Consumes the placed Fabric IR (devices with their catalog power, racks with their devices), the
catalog's `physical` data (PSUs, inlet, weight; `assumed_physical` where an entry has none) and
its PDU and power-shelf parts; produces each rack's supply (RackPower): the PDUs of each feed
with the cord of every power supply (device PSU -> PDU outlet), the power shelves of a
rack-scale system with their input circuits and the DC busbar they feed, the load of each and
the rack's total, which adds up to the devices' power. Read by the power check
(checks/power.py), the BOM (synth/bom.py: a cord per power supply; emit/bom.py: bom/power.csv,
bom/power-cords.csv), the capacity analysis and the rack diagrams and report, so that each
layer reads the same numbers from below rather than from another.

Cords: a rack's PDUs take the feeds in turn, each PDU its own feed while the site has feeds
left (site.rack.feeds, default 3: pdu1 A, pdu2 B, pdu3 C; a rack of two PDUs uses A and B).
The rack's cords are dealt over its feeds in one rotation, in the order the devices were placed
(cord_feeds: the rack's n-th cord on feed n mod feeds), so a device's supplies land on as many
feeds as it has supplies and a rack's 1+1 switches fill three feeds evenly (A+B, C+A, B+C);
within a feed each cord goes to the PDU with the most free outlets of its kind. The rack layout
(synth/racks.py: pdu_count, outlets_hold) packs switch racks with the PDUs this plan gives them
and the same rotation, so both count the same outlets per feed. Power shelves alternate over
feeds A and B (shelf 1 A, shelf 2 B, ...) and share the busbar load evenly (N+N: either feed's
shelves carry the rack); the management switches of a rack-scale system's rack hang on its
busbar (NVIDIA Enterprise Reference Architecture for NVL72 AI factories, "System Hardware &
Components": the in-rack SN2201 switches are fed from the rack's DC busbar).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

from fabricc.catalog.models import FEEDS, OUTLET_OF, Physical, ShelfInput, physical_of
from fabricc.ir import Device, Fabric, Rack


def physical(fabric: Fabric, device: Device) -> Physical | None:
    """PSUs, inlet and weight of a device; None for PDUs and power shelves (wired to the feed).
    Asked per device by the power check and the BOM, so kept per (kind, model) for the build."""
    known: dict[tuple[str, str], Physical | None] = fabric.derived("power.physical", dict)
    key = (device.kind, device.model)
    if key not in known:
        known[key] = physical_of(fabric.loaded.catalog.catalog, device.kind, device.model)
    return known[key]


def rack_device_power_w(fabric: Fabric, rack: Rack) -> int:
    """The power of a rack's devices, each at its catalog maximum (W)."""
    return sum(fabric.devices[name].power_w for name in rack.devices)


# power shelves are fed N+N: half of them on A, half on B, so either feed alone carries the
# rack (8 x 33 kW: 132 kW on one feed for a GB200 NVL72 rack of up to about 132 kW)
SHELF_FEEDS = 2


def feed_count(pdus: int, feeds: int) -> int:
    """Feeds a rack of `pdus` PDUs uses: one per PDU while the site has feeds (site.rack.feeds)."""
    return min(pdus, feeds, len(FEEDS))


def cord_feeds(dealt: int, psus: int, feeds: int) -> list[int]:
    """The feed (0-based) of each supply of a device whose rack has `dealt` cords already: the
    rack's cords rotate over its feeds, so a device's supplies spread over as many feeds as
    they can and two-supply devices take the feed pairs in turn. The one rule of the power plan
    and the rack layout's outlet count."""
    return [(dealt + psu) % feeds for psu in range(psus)] if feeds else []


def pdus_for_load(load_w: float, rating_w: int) -> int:
    """PDUs enough that, with one lost, those left carry `load_w` with the cords rotated over
    them (each carries at most load / (PDUs - 1)): 1 + ceil(load / rating); 0 without a rating."""
    return 1 + math.ceil(load_w / rating_w) if rating_w and load_w else 0


def minimum_psus(facts: Physical) -> int:
    """Supplies a device needs to keep running: all but its redundant ones (DGX H100: 4 of 6);
    where the catalog does not say, half of them rounded up (N+N, the 1+1 of a switch)."""
    redundant = facts.redundant_psus if facts.redundant_psus is not None else facts.psus // 2
    return max(1, facts.psus - redundant)


@dataclass(slots=True)
class Pdu:
    name: str
    feed: str
    outlets: dict[str, int]  # c13/c19 -> available
    rating_w: int
    used: dict[str, int] = field(default_factory=lambda: {"c13": 0, "c19": 0})
    load_w: float = 0.0


@dataclass(slots=True)
class Feed:
    name: str
    pdus: list[Pdu]

    @property
    def outlets(self) -> dict[str, int]:
        return {kind: sum(p.outlets[kind] for p in self.pdus) for kind in ("c13", "c19")}

    @property
    def used(self) -> dict[str, int]:
        return {kind: sum(p.used[kind] for p in self.pdus) for kind in ("c13", "c19")}

    @property
    def rating_w(self) -> int:
        return sum(p.rating_w for p in self.pdus)

    @property
    def load_w(self) -> float:
        return sum(p.load_w for p in self.pdus)


class Cord(NamedTuple):
    """One power cord: a device's supply (1-based) to a PDU outlet of its kind (1-based). A
    named tuple: a 65k-GPU design has about 66,000, made several times faster than a frozen
    dataclass."""

    device: str
    psu: int
    pdu: str
    feed: str
    outlet: str  # c13 | c19
    number: int


@dataclass(slots=True)
class Supplied:
    """A device on the rack's PDUs: its supplies, the minimum it needs, its cords."""

    device: str
    power_w: int
    minimum: int
    cords: list[Cord]


@dataclass(slots=True)
class Shelf:
    """A power shelf: its DC output onto the busbar and the facility circuit feeding it."""

    name: str
    feed: str
    capacity_w: int
    input: ShelfInput | None
    load_w: float = 0.0


@dataclass(slots=True)
class RackPower:
    rack: str
    feeds: list[Feed]
    weight_kg: float
    footprint_m2: float
    shelves: list[Shelf] = field(default_factory=list)
    busbar_w: int = 0  # devices fed from the rack's DC busbar
    unfed_w: int = 0  # devices with power supplies in a rack without PDUs
    supplied: list[Supplied] = field(default_factory=list)

    @property
    def load_kg_per_m2(self) -> float:
        return self.weight_kg / self.footprint_m2

    @property
    def pdu_w(self) -> float:
        return sum(feed.load_w for feed in self.feeds)

    @property
    def total_w(self) -> float:
        """What the rack draws: its PDU-fed, busbar-fed and unplanned devices together."""
        return self.pdu_w + self.busbar_w + self.unfed_w

    @property
    def cords(self) -> list[Cord]:
        return [cord for device in self.supplied for cord in device.cords]


def system_weight(fabric: Fabric, device: Device) -> float:
    """Weight of the rack-scale system a tray belongs to (counted once per system)."""
    assert device.group is not None
    model = fabric.loaded.catalog.catalog.nodes[fabric.loaded.spec.nodes[device.group].model]
    return model.physical.weight_kg if model.physical is not None else 0.0


def rack_power(fabric: Fabric) -> list[RackPower]:
    return fabric.derived("rack_power", lambda: [_rack(fabric, r) for r in fabric.racks])


def _feeds(fabric: Fabric, pdus: list[Device]) -> list[Feed]:
    catalog = fabric.loaded.catalog.catalog
    count = feed_count(len(pdus), fabric.loaded.spec.site.rack.feeds)
    feeds = []
    for k in range(count):
        members = []
        for device in pdus[k::count]:
            part = catalog.parts[device.model]
            outlets = {"c13": part.outlets_c13, "c19": part.outlets_c19}
            members.append(Pdu(device.name, FEEDS[k], outlets, part.rating_w))
        feeds.append(Feed(FEEDS[k], members))
    return feeds


def on_busbar(fabric: Fabric, device: Device) -> bool:
    """Whether a device draws from a rack's DC busbar (a tray, or the management switch of a
    rack-scale system's rack) rather than from PDU outlets."""
    facts = physical(fabric, device)
    if facts is None or device.rack is None:
        return False
    rack = fabric.rack_by_name[device.rack]
    shelves = any(fabric.devices[name].kind == "power-shelf" for name in rack.devices)
    return _busbar_fed(fabric, device, facts, shelves)


def _busbar_fed(fabric: Fabric, device: Device, facts: Physical, shelves: bool) -> bool:
    if facts.inlet == "busbar":
        return True
    # a rack-scale system's own management switches hang on its busbar (module docstring)
    network = fabric.loaded.networks.get(device.network) if device.network else None
    return shelves and network is not None and network.spec.role == "oob"


def _plug(device: Device, facts: Physical, feeds: list[Feed], dealt: int) -> Supplied:
    """`dealt`: the cords the rack's devices before this one have."""
    outlet = OUTLET_OF[facts.inlet]
    share = device.power_w / facts.psus
    cords = []
    for psu, k in enumerate(cord_feeds(dealt, facts.psus, len(feeds))):
        feed = feeds[k]
        pdu = max(feed.pdus, key=lambda p: (p.outlets[outlet] - p.used[outlet], -p.load_w))
        pdu.used[outlet] += 1
        pdu.load_w += share
        cords.append(Cord(device.name, psu + 1, pdu.name, feed.name, outlet, pdu.used[outlet]))
    return Supplied(device.name, device.power_w, minimum_psus(facts), cords)


def _rack(fabric: Fabric, rack: Rack) -> RackPower:
    catalog = fabric.loaded.catalog.catalog
    site = fabric.loaded.spec.site
    devices = [fabric.devices[name] for name in rack.devices]
    pdus = sorted((d for d in devices if d.kind == "pdu"), key=lambda d: d.index)
    feeds = _feeds(fabric, pdus)
    shelf_devices = [d for d in devices if d.kind == "power-shelf"]
    shelves = []
    for k, device in enumerate(shelf_devices):
        part = catalog.parts[device.model]
        feed = FEEDS[k % SHELF_FEEDS]
        shelves.append(Shelf(device.name, feed, part.shelf_w, part.input))
    power = RackPower(rack.name, feeds, 0.0, site.rack_width_m * site.rack_depth_m, shelves=shelves)
    weight = catalog.parts[rack.part].weight_kg if rack.part in catalog.parts else 0.0
    systems: set[str] = set()
    dealt = 0  # cords so far
    for device in devices:
        if device.kind == "pdu":
            weight += catalog.parts[device.model].weight_kg
            continue
        if device.system is not None and device.system not in systems:
            systems.add(device.system)
            weight += system_weight(fabric, device)
        facts = physical(fabric, device)
        if facts is None:
            continue
        weight += facts.weight_kg
        if _busbar_fed(fabric, device, facts, bool(shelves)):
            power.busbar_w += device.power_w
        elif not feeds or facts.psus == 0:
            power.unfed_w += device.power_w
        else:
            supplied = _plug(device, facts, feeds, dealt)
            dealt += len(supplied.cords)
            power.supplied.append(supplied)
    for shelf in shelves:
        shelf.load_w = power.busbar_w / len(shelves)
    power.weight_kg = weight
    return power
