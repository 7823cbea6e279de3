"""Synthesis view: the cooling plan of every rack and row, derived from the finished design.

Consumes the placed Fabric IR (devices with their catalog power, racks in rows) and each
device's physical facts (synth/power.py: `liquid_share`, the share of its heat that cold plates
carry to liquid); produces each rack's heat split liquid/air and, per row holding liquid-cooled
racks, the CDUs (site.cooling.cdu_model, a catalog part of category cdu) that carry the row's
liquid heat with one more than that needs (N+1) and the facility water flow at the design
temperature rise (site.cooling.water_delta_t_c: flow = heat / (c_p x dT), water at 4.186 kJ/kg K
and 1 kg per litre), and the cooling parts (catalog parts of category cooling: manifolds, leak
detection, hoses, quick disconnects) each liquid-cooled rack, tray and CDU takes (cooling_parts).
Read by the BOM (a line per CDU model and cooling part), bom/cooling.csv, the air-cooling check
(checks/power.py) and the report.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from fabricc.ir import Fabric
from fabricc.synth.power import physical

WATER_J_PER_KG_K = 4186  # specific heat of water near 25 C


@dataclass(slots=True)
class RackHeat:
    rack: str
    row: int
    liquid_w: float
    air_w: float


@dataclass(slots=True)
class RowCooling:
    row: int
    racks: list[str]
    liquid_w: float
    cdu_model: str
    cdu_w: int
    cdus: int = 0  # N+1: one more than the row's liquid heat needs
    delta: float = 10.0  # facility water rise (K)

    @property
    def water_lpm(self) -> float:
        """Facility water flow (l/min) that carries the row's liquid heat at the design rise."""
        return self.liquid_w * 60 / (WATER_J_PER_KG_K * self.delta)


def rack_heat(fabric: Fabric) -> list[RackHeat]:
    return fabric.derived("cooling.racks", lambda: _rack_heat(fabric))


def _rack_heat(fabric: Fabric) -> list[RackHeat]:
    out = []
    for rack in fabric.racks:
        liquid = air = 0.0
        for name in rack.devices:
            device = fabric.devices[name]
            facts = physical(fabric, device)
            share = facts.liquid_share if facts is not None else 0.0
            liquid += device.power_w * share
            air += device.power_w * (1 - share)
        out.append(RackHeat(rack.name, rack.row, liquid, air))
    return out


def row_cooling(fabric: Fabric) -> list[RowCooling]:
    """Per row holding liquid-cooled racks: the CDUs (N+1) and facility water."""
    return fabric.derived("cooling.rows", lambda: _row_cooling(fabric))


def _row_cooling(fabric: Fabric) -> list[RowCooling]:
    site = fabric.loaded.spec.site
    model = site.cooling.cdu_model
    capacity = fabric.loaded.catalog.catalog.parts[model].cooling_w
    rows: dict[int, RowCooling] = {}
    for heat in rack_heat(fabric):
        if heat.liquid_w <= 0:
            continue
        row = rows.setdefault(
            heat.row,
            RowCooling(heat.row, [], 0.0, model, capacity, delta=site.cooling.water_delta_t_c),
        )
        row.racks.append(heat.rack)
        row.liquid_w += heat.liquid_w
    for row in rows.values():
        row.cdus = (math.ceil(row.liquid_w / capacity) if capacity else 0) + 1
    return [rows[k] for k in sorted(rows)]


def liquid_trays(fabric: Fabric, rack: str) -> int:
    """Devices in a rack whose cold plates carry heat to liquid (a liquid_share)."""
    count = 0
    for name in fabric.rack_by_name[rack].devices:
        facts = physical(fabric, fabric.devices[name])
        count += facts is not None and facts.liquid_share > 0
    return count


def rack_cooling_parts(fabric: Fabric, rack: str) -> Counter[str]:
    """The cooling parts (catalog key -> quantity) one rack takes: each `per: liquid-rack` part
    when it gives heat to liquid, each `per: liquid-tray` part per liquid-cooled tray in it."""
    parts = fabric.loaded.catalog.catalog.parts
    trays = liquid_trays(fabric, rack)
    out: Counter[str] = Counter()
    liquid: set[str] = fabric.derived(
        "cooling.liquid_racks", lambda: {h.rack for h in rack_heat(fabric) if h.liquid_w > 0}
    )
    if not trays and rack not in liquid:
        return out
    for key in sorted(parts):
        part = parts[key]
        if part.per == "liquid-rack":
            out[key] += part.per_quantity
        elif part.per == "liquid-tray":
            out[key] += part.per_quantity * trays
    return +out


def row_cooling_parts(fabric: Fabric, row: RowCooling) -> Counter[str]:
    """The cooling parts of a row's CDUs: each `per: cdu` part for every CDU (N+1 included)."""
    parts = fabric.loaded.catalog.catalog.parts
    out: Counter[str] = Counter(
        {key: part.per_quantity * row.cdus for key, part in parts.items() if part.per == "cdu"}
    )
    return +out


def cooling_parts(fabric: Fabric) -> Counter[str]:
    """Every cooling part of the design (catalog key -> quantity): racks, trays and CDUs."""

    def count() -> Counter[str]:
        total: Counter[str] = Counter()
        for heat in rack_heat(fabric):
            total += rack_cooling_parts(fabric, heat.rack)
        for row in row_cooling(fabric):
            total += row_cooling_parts(fabric, row)
        return total

    return fabric.derived("cooling.parts", count)
