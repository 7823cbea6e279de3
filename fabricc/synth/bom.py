"""Synthesis view: the bill of materials as lines, derived from the finished design.

Consumes the cabled Fabric IR (devices, racks, transceiver modules, cables), the catalog (part
numbers, descriptions, power, sources), each device's physical facts (synth/power.py: one power
cord per supply, C13-C14 or C19-C20 by its inlet; busbar-fed trays none) and outputs.bom.spares;
produces Lines (an Item - one orderable part - and its quantity) for the whole design, per
network and per rack, the spares, and the cables and transceivers counted per kind. Trays,
switch trays and power shelves of rack-scale systems ship inside the system and are not ordered
separately. Read by the BOM, summary and report emitters and by the cost analysis.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from fabricc.catalog.models import ordering_numbers
from fabricc.ir import EXTERNAL, Cable, Device, Fabric, Link
from fabricc.synth.cooling import cooling_parts, row_cooling
from fabricc.synth.power import on_busbar, physical

CATEGORY_ORDER = (
    "node",
    "appliance",
    "switch",
    "transceiver",
    "cable",
    "rack",
    "pdu",
    "power-cord",
    "cdu",
    "cooling",
    "spare",
)
CORDS = {"c14": "cord-c13-c14", "c20": "cord-c19-c20"}  # PSU inlet -> catalog cord
NODE_CATEGORY = {
    "gpu-node": "node",
    "rack-system": "node",
    "server": "node",
    "appliance": "appliance",
    "storage": "appliance",
}
INCLUDED_IN_SYSTEM = ("tray", "nvlink-switch", "power-shelf")


@dataclass(frozen=True, slots=True, eq=False)
class Item:
    """One orderable part; _Items makes one object per part, so identity is the key."""

    part_number: str
    description: str
    category: str
    unit_power_w: float
    source: str
    family: str = ""  # cables: the catalog family, so lengths sort as numbers within it
    length_m: float = 0.0
    legacy_part_number: str = ""  # the legacy OPN beside a vendor ordering number (980-...)


@dataclass(frozen=True, slots=True)
class Line:
    item: Item
    quantity: int

    @property
    def total_power_w(self) -> float:
        return self.item.unit_power_w * self.quantity


class _Items:
    """Catalog entries as BOM items, one object per part (cached: a 100k-GPU design has a
    million cable and module entries but a few dozen distinct parts)."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.catalog = fabric.loaded.catalog.catalog
        self.cache: dict[tuple[str, str], Item] = {}
        self.parts: dict[tuple[str, ...], Item] = {}

    def device(self, device: Device) -> Item | None:
        if device.kind in INCLUDED_IN_SYSTEM:
            return None
        key = (device.kind, device.model)
        if key in self.cache:
            return self.cache[key]
        item: Item
        if device.kind == "switch":
            switch = self.catalog.switches[device.model]
            item = Item(
                switch.part_number, switch.description, "switch", switch.power_w, switch.source
            )
        elif device.kind == "pdu":
            part = self.catalog.parts[device.model]
            item = Item(part.part_number, part.description, "pdu", part.power_w, part.source)
        else:
            node = self.catalog.nodes[device.model]
            item = Item(
                node.part_number,
                node.description,
                NODE_CATEGORY[node.kind],
                node.power_w,
                node.source,
            )
        self.cache[key] = item
        return item

    def system(self, model: str) -> Item:
        key = ("system", model)
        if key not in self.parts:
            node = self.catalog.nodes[model]
            members = node.rack_scale.members if node.rack_scale else []
            power = sum(
                (self.catalog.nodes[m.model].power_w if m.model in self.catalog.nodes else 0)
                * len(m.u)
                for m in members
            )
            self.parts[key] = Item(node.part_number, node.description, "node", power, node.source)
        return self.parts[key]

    def rack(self, part: str) -> Item:
        key = ("rack", part)
        if key not in self.parts:
            spec = self.catalog.parts[part]
            self.parts[key] = Item(spec.part_number, spec.description, "rack", 0, spec.source)
        return self.parts[key]

    def part(self, key: str) -> Item:
        if ("part", key) not in self.parts:
            spec = self.catalog.parts[key]
            self.parts[("part", key)] = Item(
                spec.part_number, spec.description, spec.category, 0, spec.source
            )
        return self.parts[("part", key)]

    def cords(self, device: Device) -> tuple[Item, int] | None:
        """One cord per power supply of a device that is ordered on its own."""
        if device.kind in INCLUDED_IN_SYSTEM:
            return None
        facts = physical(self.fabric, device)
        if facts is None or facts.psus == 0 or on_busbar(self.fabric, device):
            return None
        return self.part(CORDS[facts.inlet]), facts.psus

    def module(self, part: str) -> Item:
        key = ("module", part)
        if key not in self.parts:
            module = self.catalog.transceivers[part]
            number, legacy = ordering_numbers(part, module.part_number)
            self.parts[key] = Item(
                number,
                module.description,
                "transceiver",
                module.power_w,
                module.source,
                legacy_part_number=legacy,
            )
        return self.parts[key]

    def cable(self, family: str, part: str, length: float) -> Item:
        key = ("cable", family, part)
        if key not in self.parts:
            cable = self.catalog.cables[family]
            number, legacy = ordering_numbers(part, cable.ordering.get(length))
            self.parts[key] = Item(
                number,
                f"{cable.description}, {length:g} m",
                "cable",
                0,
                cable.source,
                family,
                length,
                legacy,
            )
        return self.parts[key]


def _tally(items: Iterable[tuple[Item, int]]) -> list[Line]:
    counts: dict[Item, int] = {}
    for item, quantity in items:
        counts[item] = counts.get(item, 0) + quantity
    lines = [Line(item, quantity) for item, quantity in counts.items()]
    return sorted(lines, key=_order)


def _order(line: Line) -> tuple[int, str, float, str]:
    """By category, then part number - cables by family and length as a number (1 m, 1.5 m,
    2 m, 10 m; not CAT6-1.5M, CAT6-10M, CAT6-15M, CAT6-1M as text would)."""
    item = line.item
    return (
        CATEGORY_ORDER.index(item.category),
        item.family or item.part_number,
        item.length_m,
        item.part_number,
    )


def _systems(fabric: Fabric, items: _Items) -> Iterable[tuple[Item, int]]:
    seen: set[str] = set()
    for device in fabric.devices.values():
        if device.system is not None and device.system not in seen:
            seen.add(device.system)
            assert device.group is not None
            yield items.system(fabric.loaded.spec.nodes[device.group].model), 1


def _rack_items(fabric: Fabric, items: _Items) -> Iterable[tuple[Item, int]]:
    for rack in fabric.racks:
        if rack.role != "system":
            yield items.rack(rack.part), 1


def bom_lines(fabric: Fabric) -> list[Line]:
    return fabric.derived("bom_lines", lambda: _bom_lines(fabric))


def _bom_lines(fabric: Fabric) -> list[Line]:
    items = _Items(fabric)
    entries: list[tuple[Item, int]] = []
    for device in fabric.devices.values():
        if device.kind == EXTERNAL:  # the site's network: its cables and near modules only
            continue
        item = items.device(device)
        if item is not None:
            entries.append((item, 1))
        cords = items.cords(device)
        if cords is not None:
            entries.append(cords)
    entries.extend(_systems(fabric, items))
    # hundreds of thousands of modules and cables: one item per kind, counted once per build
    entries.extend((items.module(part), count) for (_, _, part), count in module_counts(fabric))
    for kinds in cable_kinds(fabric).values():
        for (family, part, _, length, quantity), count in kinds.items():
            entries.append((items.cable(family, part, length), quantity * count))
    entries.extend(_rack_items(fabric, items))
    cdus = sum(row.cdus for row in row_cooling(fabric))
    if cdus:
        entries.append((items.part(fabric.loaded.spec.site.cooling.cdu_model), cdus))
    entries.extend((items.part(key), n) for key, n in sorted(cooling_parts(fabric).items()))
    return _tally(entries)


CableKind = tuple[str, str, str, float, int]  # family, part, media, length, quantity


def cable_kinds(fabric: Fabric) -> dict[str, Counter[CableKind]]:
    """Per network (in order of its first link), its cables counted per kind, each cable once
    (a cable's links are all of one network: legs of one DAC, splitter or fiber pair). Counted
    in C once per build for the BOM, the summary and the report."""
    return fabric.derived("bom.cable_kinds", lambda: _cable_kinds(fabric))


def _cable_kinds(fabric: Fabric) -> dict[str, Counter[CableKind]]:
    kinds = attrgetter("family", "part", "media", "length_m", "quantity")
    return {
        network: Counter(map(kinds, unique_cables(links)))
        for network, links in fabric.links_by_network().items()
    }


def module_counts(fabric: Fabric) -> list[tuple[tuple[str, str, str], int]]:
    """The transceivers counted per (device, network, part), in first-module order: counted
    in C once per build for the BOM's totals, networks and racks."""
    return fabric.derived(
        "bom.module_counts",
        lambda: list(Counter(map(attrgetter("device", "network", "part"), fabric.modules)).items()),
    )


def network_lines(fabric: Fabric) -> dict[str, list[Line]]:
    """Switches, transceivers and cables of each network."""
    return fabric.derived("network_lines", lambda: _network_lines(fabric))


def _network_lines(fabric: Fabric) -> dict[str, list[Line]]:
    items = _Items(fabric)
    per: dict[str, list[tuple[Item, int]]] = {name: [] for name in fabric.networks}
    for device in fabric.devices.values():
        if device.kind == "switch" and device.network in per:
            item = items.device(device)
            assert item is not None
            per[device.network].append((item, 1))
    for (_, network, part), count in module_counts(fabric):
        per.setdefault(network, []).append((items.module(part), count))
    for network, kinds in cable_kinds(fabric).items():
        for (family, part, _, length, quantity), count in kinds.items():
            per.setdefault(network, []).append(
                (items.cable(family, part, length), quantity * count)
            )
    return {name: _tally(entries) for name, entries in per.items()}


def unique_cables(links: Iterable[Link]) -> Iterable[Cable]:
    """The cables of these links, each once (a twin-port DAC or splitter carries several links),
    in first-link order; deduplicated by identity in C (cables compare by value)."""
    cables = [link.cable for link in links]
    unique = dict(zip(map(id, cables), cables, strict=True))
    unique.pop(id(None), None)
    return unique.values()  # type: ignore[return-value]


def rack_lines(fabric: Fabric) -> list[tuple[str, Line]]:
    """Each rack's parts, (rack, line) in rack order: what is mounted in it, the cords of its
    devices and the modules in their cages (the per-rack BOM and the racks' optics power read
    it; made once)."""
    return fabric.derived("bom.rack_lines", lambda: _rack_lines(fabric))


def _rack_lines(fabric: Fabric) -> list[tuple[str, Line]]:
    items = _Items(fabric)
    out: list[tuple[str, Line]] = []
    modules_of: dict[str, list[tuple[str, int]]] = {}
    for (holder, _, part), count in module_counts(fabric):
        modules_of.setdefault(holder, []).append((part, count))
    for rack in fabric.racks:
        entries: list[tuple[Item, int]] = []
        if rack.role != "system":
            entries.append((items.rack(rack.part), 1))
        systems: set[str] = set()
        for name in rack.devices:
            device = fabric.devices[name]
            item = items.device(device)
            cords = items.cords(device)
            if cords is not None:
                entries.append(cords)
            if item is not None:
                entries.append((item, 1))
            elif device.system is not None and device.system not in systems:
                systems.add(device.system)
                assert device.group is not None
                entries.append((items.system(fabric.loaded.spec.nodes[device.group].model), 1))
            for part, count in modules_of.get(name, []):
                entries.append((items.module(part), count))
        out.extend((rack.name, line) for line in _tally(entries))
    return out


# Spares ordered unless the spec says otherwise (outputs.bom.spares replaces a family): optics
# and cables fail and get damaged at install, so a hall orders some of each part it cables with.
# assumed: 2% of each part's quantity, rounded up (so at least one) - a planning figure, not a
# published one; set it per site.
DEFAULT_SPARES: dict[str, int | str] = {"transceiver": "2%", "cable": "2%"}


def spare_policy(fabric: Fabric) -> dict[str, int | str]:
    """The spares per family this design orders: the default policy with the spec's families
    in its place."""
    written = fabric.loaded.spec.outputs.bom.spares
    return {**DEFAULT_SPARES, **{str(family): value for family, value in written.items()}}


def spare_lines(fabric: Fabric, lines: list[Line]) -> list[Line]:
    """Spares per family (spare_policy): a percentage of each part's quantity (rounded up) or
    a count of each part; one line per part, its source naming the policy or the spec value."""
    spares = spare_policy(fabric)
    written = fabric.loaded.spec.outputs.bom.spares
    out = []
    for line in lines:
        value = spares.get(line.item.category)
        if value is None:
            continue
        if isinstance(value, str):
            quantity = math.ceil(line.quantity * float(value[:-1]) / 100 - 1e-9)
            how = f"{value} of {line.quantity}"
        else:
            quantity, how = value, f"{value} per part"
        if quantity <= 0:
            continue
        item = Item(
            line.item.part_number,
            f"spare: {line.item.description}",
            "spare",
            line.item.unit_power_w,
            f"outputs.bom.spares.{line.item.category}: {how}"
            + ("" if line.item.category in written else " (default spares policy)"),
            line.item.family,
            line.item.length_m,
            line.item.legacy_part_number,
        )
        out.append(Line(item, quantity))
    return out
