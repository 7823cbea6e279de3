"""Emitter `bom`: the bill of materials by part number, per category, per rack and per network.

Consumes the Fabric IR, the BOM lines of synth/bom.py (whole design, per network, per rack,
spares) and the rack power plan of synth/power.py; produces bom/bom.csv, bom/bom.json,
bom/bom.md, bom/per-rack.csv, bom/per-network.csv, bom/power.csv (per rack and supply: each
feed's PDUs with outlets used and available, each power shelf with its input circuit; load and
rating, rack weight and floor load), bom/rack-power.csv (per rack: PDU-fed, busbar-fed and total
draw, of it the optics) and bom/power-cords.csv (device PSU -> PDU outlet). Device power is the
catalog's maximum, which includes the device's own optics, so transceiver power is listed for
information and not added again. Spares (synth/bom.spare_policy: transceivers and cables 2%
by default, outputs.bom.spares per family in its place) are lines of their own, in
bom.csv/json/md only (summary.json and the report count what is built); bom.md states the policy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from fabricc.emit import Artifact
from fabricc.emit.tables import Cell, csv_text, json_text, markdown_table
from fabricc.ir import Fabric
from fabricc.synth.bom import (
    CATEGORY_ORDER,
    Line,
    bom_lines,
    network_lines,
    rack_lines,
    spare_lines,
    spare_policy,
)
from fabricc.synth.cooling import rack_cooling_parts, rack_heat, row_cooling, row_cooling_parts
from fabricc.synth.power import rack_power

POWER_HEADER = (
    "rack",
    "supply",
    "kind",
    "pdus",
    "input",
    "phases",
    "voltage_v",
    "breaker_a",
    "c13_used",
    "c13_available",
    "c19_used",
    "c19_available",
    "load_w",
    "rating_w",
    "rack_weight_kg",
    "floor_load_kg_per_m2",
    "floor_limit_kg_per_m2",
)
RACK_POWER_HEADER = (
    "rack",
    "pdu_fed_w",
    "busbar_w",
    "unplanned_w",
    "total_w",
    "feeds",
    "power_shelves",
    "shelf_capacity_w",
    "optics_w",
)
CORD_HEADER = ("rack", "device", "psu", "feed", "pdu", "outlet")
COOLING_HEADER = (
    "row",
    "rack",
    "liquid_w",
    "air_w",
    "cdus",
    "cdu_model",
    "cdu_w",
    "water_lpm",
    "cooling_parts",
)


def _parts_cell(fabric: Fabric, parts: Counter[str]) -> str:
    """Cooling parts as 'PART-NUMBER x N' joined by '; ', by part number."""
    catalog = fabric.loaded.catalog.catalog.parts
    return "; ".join(sorted(f"{catalog[key].part_number} x {n}" for key, n in parts.items()))


def _cooling_rows(fabric: Fabric) -> Iterable[tuple[Cell, ...]]:
    """Each rack's heat split liquid/air, then per row of liquid-cooled racks its CDUs (N+1,
    their capacity) and the facility water flow at the design rise; each with the cooling parts
    it takes (a rack's manifold, leak detection, hoses and quick disconnects; a row's per CDU)."""
    for heat in rack_heat(fabric):
        parts = _parts_cell(fabric, rack_cooling_parts(fabric, heat.rack))
        yield (
            heat.row + 1,
            heat.rack,
            round(heat.liquid_w),
            round(heat.air_w),
            "",
            "",
            "",
            "",
            parts,
        )
    for row in row_cooling(fabric):
        yield (
            row.row + 1,
            "",
            round(row.liquid_w),
            "",
            row.cdus,
            row.cdu_model,
            row.cdu_w,
            round(row.water_lpm, 1),
            _parts_cell(fabric, row_cooling_parts(fabric, row)),
        )


def _power_rows(fabric: Fabric) -> Iterable[tuple[Cell, ...]]:
    """One row per supply of each rack: each feed's PDUs, each power shelf with its input
    circuit, and the load no supply carries; the load column adds up to the rack's power."""
    limit = fabric.loaded.spec.site.floor_load_kg_per_m2
    for power in rack_power(fabric):
        tail = (round(power.weight_kg, 1), round(power.load_kg_per_m2), limit)
        blank = ("",) * 4
        rows = 0
        for feed in power.feeds:
            used, outlets = feed.used, feed.outlets
            yield (
                power.rack,
                feed.name,
                "pdu",
                " ".join(p.name for p in feed.pdus),
                *blank,
                used["c13"],
                outlets["c13"],
                used["c19"],
                outlets["c19"],
                round(feed.load_w),
                feed.rating_w,
                *tail,
            )
            rows += 1
        for shelf in power.shelves:
            circuit: tuple[Cell, ...] = blank
            if shelf.input is not None:
                inlet = shelf.input
                circuit = (inlet.plug, inlet.phases, inlet.voltage_v, inlet.breaker_a)
            yield (
                power.rack,
                f"{shelf.name} (feed {shelf.feed})",
                "power-shelf",
                "",
                *circuit,
                "",
                "",
                "",
                "",
                round(shelf.load_w),
                shelf.capacity_w,
                *tail,
            )
            rows += 1
        loose = power.unfed_w + (0 if power.shelves else power.busbar_w)
        if loose or not rows:
            supply = "none" if loose else ""
            yield (power.rack, supply, "", "", *blank, "", "", "", "", loose or "", "", *tail)


def _rack_power_rows(fabric: Fabric) -> Iterable[tuple[Cell, ...]]:
    """Each rack's draw by supply, and of it the transceivers plugged into its devices' cages
    (catalog power per module, sourced per entry): part of the devices' published maximum,
    which counts their own optics, so shown and not added again."""
    optics: dict[str, float] = {}
    for rack, line in rack_lines(fabric):
        if line.item.category == "transceiver":
            optics[rack] = optics.get(rack, 0.0) + line.total_power_w
    for power in rack_power(fabric):
        yield (
            power.rack,
            round(power.pdu_w),
            power.busbar_w,
            power.unfed_w,
            round(power.total_w),
            " ".join(feed.name for feed in power.feeds),
            len(power.shelves),
            sum(shelf.capacity_w for shelf in power.shelves),
            round(optics.get(power.rack, 0.0)),
        )


def _cord_rows(fabric: Fabric) -> Iterable[tuple[Cell, ...]]:
    for power in rack_power(fabric):
        for cord in power.cords:
            outlet = f"{cord.outlet.upper()}-{cord.number}"
            yield (power.rack, cord.device, cord.psu, cord.feed, cord.pdu, outlet)


HEADER = (
    "part_number",
    "legacy_part_number",
    "description",
    "category",
    "quantity",
    "unit_power_w",
    "total_power_w",
    "source",
)


def _row(line: Line) -> tuple[str, str, str, str, int, float, float, str]:
    power = line.item.unit_power_w
    total = 0.0 if line.item.category in ("transceiver", "spare") else line.total_power_w
    return (
        line.item.part_number,
        line.item.legacy_part_number,
        line.item.description,
        line.item.category,
        line.quantity,
        power,
        total,
        line.item.source,
    )


def emit(fabric: Fabric) -> list[Artifact]:
    lines = [*bom_lines(fabric)]
    lines += spare_lines(fabric, lines)
    per_network = network_lines(fabric)
    per_rack = rack_lines(fabric)
    total_power = sum(d.power_w for d in fabric.devices.values())
    data = {
        "design": fabric.name,
        "power_kw": round(total_power / 1000, 3),
        "lines": [
            {
                "part_number": line.item.part_number,
                "legacy_part_number": line.item.legacy_part_number,
                "description": line.item.description,
                "category": line.item.category,
                "quantity": line.quantity,
                "unit_power_w": line.item.unit_power_w,
                "source": line.item.source,
            }
            for line in lines
        ],
        "per_network": {
            name: {line.item.part_number: line.quantity for line in network}
            for name, network in per_network.items()
        },
    }
    md = [f"# Bill of materials: {fabric.name}\n"]
    md.append(f"Total power (device maximum): {total_power / 1000:,.1f} kW\n")
    for category in CATEGORY_ORDER:
        subset = [line for line in lines if line.item.category == category]
        if not subset:
            continue
        md.append(f"\n## {category}\n\n")
        md.append(
            markdown_table(
                ("part number", "legacy OPN", "description", "qty", "unit W"),
                (
                    (
                        ln.item.part_number,
                        ln.item.legacy_part_number,
                        ln.item.description,
                        ln.quantity,
                        ln.item.unit_power_w,
                    )
                    for ln in subset
                ),
                right=(3, 4),
            )
        )
    policy = ", ".join(
        f"{family} {value}" for family, value in sorted(spare_policy(fabric).items())
    )
    notes = (
        "\nDevice power is the published maximum including the device's own optics; transceiver "
        "power is shown per unit and not added again.\n"
        f"\nSpares policy: {policy} of each part, rounded up (outputs.bom.spares; transceivers "
        "and cables 2% unless the spec says otherwise).\n"
    )
    md.append(notes)
    return [
        ("bom/bom.csv", csv_text(HEADER, (_row(line) for line in lines))),
        ("bom/bom.json", json_text(data)),
        ("bom/bom.md", "".join(md)),
        ("bom/power.csv", csv_text(POWER_HEADER, _power_rows(fabric))),
        ("bom/rack-power.csv", csv_text(RACK_POWER_HEADER, _rack_power_rows(fabric))),
        ("bom/power-cords.csv", csv_text(CORD_HEADER, _cord_rows(fabric))),
        ("bom/cooling.csv", csv_text(COOLING_HEADER, _cooling_rows(fabric))),
        (
            "bom/per-rack.csv",
            csv_text(
                ("rack", "part_number", "description", "category", "quantity", "unit_power_w"),
                (
                    (
                        rack,
                        ln.item.part_number,
                        ln.item.description,
                        ln.item.category,
                        ln.quantity,
                        ln.item.unit_power_w,
                    )
                    for rack, ln in per_rack
                ),
            ),
        ),
        (
            "bom/per-network.csv",
            csv_text(
                ("network", "part_number", "description", "category", "quantity"),
                (
                    (name, ln.item.part_number, ln.item.description, ln.item.category, ln.quantity)
                    for name, network in per_network.items()
                    for ln in network
                ),
            ),
        ),
    ]
