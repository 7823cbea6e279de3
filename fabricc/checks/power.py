"""Check stage: power feeds, PDU outlets, failover, power shelves and floor loading of every rack.

Consumes the rack power plan of synth/power.py (each rack's PDUs per feed with the cord of every
power supply, its power shelves and busbar load, its weight); produces Diagnostics. Each feed
needs a C13 outlet per C14 inlet and a C19 outlet per C20 inlet, and its PDUs must carry the
share of the device power its supplies draw in normal operation. Failover: with each feed lost
in turn, and each PDU lost in turn, every device must keep its minimum supplies (DGX H100: 4 of
6) and every PDU still standing must carry the device power now shared by fewer supplies; the
power shelves still fed must carry the busbar load. A rack giving more heat to the air than
site.rack.air_cooled_kw (synth/cooling.py: what cold plates do not carry to liquid), or a switch
rack without site.rack.cable_u units left for cable managers (the layout packs switch racks
within both, so this is a rack the spec forced), is warned about. A rack's weight over its
footprint (site.rack_width_m x rack_depth_m) must stay within site.floor_load_kg_per_m2 when the
spec gives one (an error). The rest are warnings with the figure: PDU counts come from synthesis
and the catalog's PDU is a generic assumption, so they tell the site engineer what to order
rather than stop the design.
"""

from __future__ import annotations

import math

from fabricc.errors import Diagnostic, error, warning
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path
from fabricc.synth.cooling import rack_heat
from fabricc.synth.power import RackPower, rack_power


def lost_supplies(
    power: RackPower, lost: str
) -> tuple[list[tuple[str, int, int]], dict[str, float]]:
    """With feed or PDU `lost` down: the devices left short ((device, supplies left, minimum))
    and the load of each PDU still standing, each device's power shared by its live supplies."""
    short = []
    load = {pdu.name: 0.0 for feed in power.feeds for pdu in feed.pdus}
    for device in power.supplied:
        live = [c for c in device.cords if lost not in (c.feed, c.pdu)]
        if len(live) < device.minimum:
            short.append((device.device, len(live), device.minimum))
        for cord in live:
            load[cord.pdu] += device.power_w / len(live)
    return short, load


def shelf_shortfall(power: RackPower, lost: str) -> tuple[float, float]:
    """With feed `lost` down: the busbar load and what the shelves still fed deliver."""
    live = sum(shelf.capacity_w for shelf in power.shelves if shelf.feed != lost)
    return float(power.busbar_w), float(live)


# what a lost feed or PDU does, one warning per kind for the whole design (the worst named)
SHORT, OVERLOAD, SHELVES = "short", "overload", "shelves"
FAILURE_LEADS = {
    SHORT: "losing one feed or PDU leaves devices short of power supplies",
    OVERLOAD: "losing one feed or PDU overloads a PDU left standing",
    SHELVES: "losing one feed leaves the power shelves short of the busbar load",
}


def _failures(power: RackPower) -> list[tuple[str, float, str]]:
    """(kind, how bad, message) for each lost feed and PDU of the rack that does not hold."""
    messages: list[tuple[str, float, str]] = []
    ratings = {pdu.name: pdu.rating_w for feed in power.feeds for pdu in feed.pdus}
    lost_things = [feed.name for feed in power.feeds]
    if len(power.feeds) > 1:
        lost_things += [pdu.name for feed in power.feeds for pdu in feed.pdus]
    for lost in lost_things:
        what = f"feed {lost}" if lost in {f.name for f in power.feeds} else lost
        short, load = lost_supplies(power, lost)
        if short:
            device, left, minimum = short[0]
            more = f" (and {len(short) - 1} more devices)" if len(short) > 1 else ""
            messages.append(
                (
                    SHORT,
                    minimum - left + len(short) / 1000,
                    f"rack {power.rack}: losing {what} leaves {device} {left} of the {minimum} "
                    f"power supplies it needs{more}",
                )
            )
        over = sorted(n for n, w in load.items() if ratings[n] and w > ratings[n])
        if over:
            name = max(over, key=lambda n: (load[n] / ratings[n], n))
            messages.append(
                (
                    OVERLOAD,
                    load[name] / ratings[name],
                    f"rack {power.rack}: losing {what} puts {load[name] / 1000:.1f} kW on "
                    f"{name}, rated {ratings[name] / 1000:.1f} kW",
                )
            )
    feeds = sorted({shelf.feed for shelf in power.shelves})
    for lost in feeds if len(feeds) > 1 else []:
        need, live = shelf_shortfall(power, lost)
        if need > live:
            messages.append(
                (
                    SHELVES,
                    need / live if live else need,
                    f"rack {power.rack}: losing feed {lost} leaves {live / 1000:.1f} kW of "
                    f"power shelves for a {need / 1000:.1f} kW busbar load",
                )
            )
    return messages


def check_power(fabric: Fabric) -> list[Diagnostic]:
    source = fabric.loaded.source
    site = fabric.loaded.spec.site
    problems: list[Diagnostic] = []

    def fail(message: str, path: tuple[str, ...], hint: str, *, hard: bool = False) -> None:
        make = error if hard else warning
        problems.append(
            make(message, path=format_path(path), location=source.value(path), hint=hint)
        )

    heat = {h.rack: h.air_w for h in rack_heat(fabric)}
    failures: dict[str, tuple[set[str], tuple[float, str]]] = {}
    for power in rack_power(fabric):
        for feed in power.feeds:
            used, outlets = feed.used, feed.outlets
            for outlet in ("c13", "c19"):
                if used[outlet] > outlets[outlet]:
                    fail(
                        f"rack {power.rack} feed {feed.name} needs {used[outlet]} "
                        f"{outlet.upper()} outlets, its PDUs have {outlets[outlet]}",
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
        for kind, badness, message in _failures(power):
            racks, worst = failures.get(kind, (set(), (0.0, "")))
            racks.add(power.rack)
            # the worst, the first rack in layout order among equals
            failures[kind] = (racks, (badness, message) if badness > worst[0] else worst)
        if power.busbar_w and not power.shelves:
            fail(
                f"rack {power.rack} holds {power.busbar_w / 1000:.1f} kW of busbar-fed trays "
                "and no power shelves",
                ("site", "rack"),
                "place the trays with their rack-scale system",
            )
        capacity = sum(shelf.capacity_w for shelf in power.shelves)
        if power.shelves and power.busbar_w > capacity:
            fail(
                f"rack {power.rack} busbar draws {power.busbar_w / 1000:.1f} kW, its power "
                f"shelves deliver {capacity / 1000:.1f} kW",
                ("site", "rack"),
                "check the rack-scale system's power shelves in the catalog",
            )
        if power.unfed_w:
            fail(
                f"rack {power.rack} has {power.unfed_w / 1000:.1f} kW of devices with power "
                "supplies and no PDU",
                ("site", "rack", "pdus"),
                "give the racks PDUs (site.rack.pdus)",
            )
        air = site.rack.air_cooled_kw * 1000
        if heat[power.rack] > air:
            fail(
                f"rack {power.rack} gives {heat[power.rack] / 1000:.1f} kW of heat to the air; "
                f"the room cools {air / 1000:g} kW per rack",
                ("site", "rack", "air_cooled_kw"),
                "fewer nodes per rack (nodes_per_rack), rear-door or in-row cooling for this "
                "rack, or site.rack.air_cooled_kw set to what the room cools",
            )
        rack = fabric.rack_by_name[power.rack]
        if rack.role in ("central", "network"):
            filled = sum(fabric.devices[n].height_u for n in rack.devices)
            room = rack.height_u - site.rack.reserved_u - site.rack.cable_u
            if filled > room:
                fail(
                    f"rack {power.rack} fills {filled} of {rack.height_u} U, leaving fewer than "
                    f"the {site.rack.cable_u} U kept for cable managers",
                    ("site", "rack", "cable_u"),
                    "more switch racks (a lower site.rack.air_cooled_kw or power_kw spreads "
                    "them), or taller racks",
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
    for kind in (SHORT, OVERLOAD, SHELVES):
        if kind not in failures:
            continue
        racks, (_, message) = failures[kind]
        fail(
            f"{FAILURE_LEADS[kind]} in {len(racks)} rack{'s' if len(racks) != 1 else ''}; "
            f"the worst: {message}",
            ("site", "rack", "pdus"),
            "three feeds (site.rack.feeds: 3) where one feed holds more of a device's "
            "supplies than may fail, more PDUs per rack (site.rack.pdus) or a PDU model with "
            "a higher rating; a device short of supplies caps its power or stops",
        )
    return problems
