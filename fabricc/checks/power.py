"""Check stage: power feeds, PDU outlets and floor loading of every rack.

Consumes the Fabric IR, each device's physical facts (synth/power.py: the catalog's PSUs, inlet
and weight) and the PDU parts (outlets, rating); produces one RackPower per rack (the BOM's
bom/power.csv reads it too) and Diagnostics. A rack's PDUs are split
over the A and B feeds (pdu1 A, pdu2 B, pdu3 A, ...) and PSU i of a device plugs into feed
i mod feeds: each feed needs a C13 outlet per C14 inlet and a C19 outlet per C20 inlet, and its
PDUs must carry the share of the device power its PSUs draw in normal operation (failover
capacity is not checked). Busbar-fed trays take no outlet. The rack's weight (rack, devices,
rack-scale systems, PDUs) over its footprint (site.rack_width_m x rack_depth_m) must stay within
site.floor_load_kg_per_m2 when the spec gives one (an error). Outlets and rating are warnings:
PDU counts come from synthesis and the catalog's PDU is a generic assumption, so they tell the
site engineer what to order rather than stop the design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fabricc.catalog.models import FEEDS, OUTLET_OF
from fabricc.errors import Diagnostic, error, warning
from fabricc.ir import Device, Fabric, Rack
from fabricc.spec.yamlsource import format_path
from fabricc.synth.power import physical


@dataclass(slots=True)
class Feed:
    name: str
    pdus: list[str]
    outlets: dict[str, int]  # c13/c19 -> available
    used: dict[str, int] = field(default_factory=lambda: {"c13": 0, "c19": 0})
    rating_w: int = 0
    load_w: float = 0.0


@dataclass(slots=True)
class RackPower:
    rack: str
    feeds: list[Feed]
    weight_kg: float
    footprint_m2: float

    @property
    def load_kg_per_m2(self) -> float:
        return self.weight_kg / self.footprint_m2


def system_weight(fabric: Fabric, device: Device) -> float:
    """Weight of the rack-scale system a tray belongs to (counted once per system)."""
    assert device.group is not None
    model = fabric.loaded.catalog.catalog.nodes[fabric.loaded.spec.nodes[device.group].model]
    return model.physical.weight_kg if model.physical is not None else 0.0


def rack_power(fabric: Fabric) -> list[RackPower]:
    return fabric.derived("rack_power", lambda: [_rack(fabric, r) for r in fabric.racks])


def _rack(fabric: Fabric, rack: Rack) -> RackPower:
    catalog = fabric.loaded.catalog.catalog
    site = fabric.loaded.spec.site
    devices = [fabric.devices[name] for name in rack.devices]
    pdus = sorted((d for d in devices if d.kind == "pdu"), key=lambda d: d.index)
    count = min(len(pdus), len(FEEDS))
    feeds = []
    for k in range(count):
        mine = pdus[k::count]
        parts = [catalog.parts[p.model] for p in mine]
        feeds.append(
            Feed(
                FEEDS[k],
                [p.name for p in mine],
                {
                    "c13": sum(p.outlets_c13 for p in parts),
                    "c19": sum(p.outlets_c19 for p in parts),
                },
                rating_w=sum(p.rating_w for p in parts),
            )
        )
    weight = catalog.parts[rack.part].weight_kg if rack.part in catalog.parts else 0.0
    systems: set[str] = set()
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
        if not feeds or facts.inlet == "busbar" or facts.psus == 0:
            continue
        outlet = OUTLET_OF[facts.inlet]
        share = device.power_w / facts.psus
        for psu in range(facts.psus):
            feed = feeds[psu % len(feeds)]
            feed.used[outlet] += 1
            feed.load_w += share
    return RackPower(rack.name, feeds, weight, site.rack_width_m * site.rack_depth_m)


def check_power(fabric: Fabric) -> list[Diagnostic]:
    source = fabric.loaded.source
    site = fabric.loaded.spec.site
    problems: list[Diagnostic] = []

    def fail(message: str, path: tuple[str, ...], hint: str, *, hard: bool = False) -> None:
        make = error if hard else warning
        problems.append(
            make(message, path=format_path(path), location=source.value(path), hint=hint)
        )

    for power in rack_power(fabric):
        for feed in power.feeds:
            for outlet in ("c13", "c19"):
                if feed.used[outlet] > feed.outlets[outlet]:
                    fail(
                        f"rack {power.rack} feed {feed.name} needs {feed.used[outlet]} "
                        f"{outlet.upper()} outlets, its PDUs have {feed.outlets[outlet]}",
                        ("site", "rack", "pdu_model"),
                        "choose a PDU model with more outlets, or more PDUs per rack "
                        "(site.rack.pdus), or fewer nodes per rack",
                    )
            if feed.rating_w and feed.load_w > feed.rating_w:
                fail(
                    f"rack {power.rack} feed {feed.name} draws {feed.load_w / 1000:.1f} kW, "
                    f"its PDUs are rated {feed.rating_w / 1000:.1f} kW",
                    ("site", "rack", "pdu_model"),
                    "choose a PDU model with a higher rating, or more PDUs per rack",
                )
        limit = site.floor_load_kg_per_m2
        if limit is not None and power.load_kg_per_m2 > limit:
            fail(
                f"rack {power.rack} weighs {math.ceil(power.weight_kg)} kg, "
                f"{power.load_kg_per_m2:.0f} kg/m2 over its footprint; the floor takes {limit:g}",
                ("site", "floor_load_kg_per_m2"),
                "spread the load: fewer nodes per rack (nodes_per_rack), or a spreader plate "
                "(a larger rack_depth_m / rack_width_m footprint)",
                hard=True,
            )
    return problems
