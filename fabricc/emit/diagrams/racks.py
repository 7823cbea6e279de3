"""Diagrams `racks-row-<row>` and `floorplan`: rack elevations and the floor, drawn as SVG.

Consumes the Fabric IR; produces Diagrams whose source is SVG written by fabricc (Graphviz is the
wrong tool for a rack). Each row of racks gets one elevation drawing: every rack front view with
its U numbers, each device at its U position with name, model and power, the rack's power
against its budget, and its PDUs. A row wider than the report page wraps into bands of racks,
so that every rack is on screen and on paper at a size where 1U labels stay readable; a name too
long for its box is shortened with an ellipsis (the full name is in the tooltip). The floor plan
shows every rack at its row and position, coloured by role, with its power use; it stays one
compact picture for thousands of racks. Legends list only the colours the drawing uses.
"""

from __future__ import annotations

from collections import Counter

from fabricc.emit.diagrams import facts, style
from fabricc.emit.diagrams.model import DRAWN, Diagram
from fabricc.emit.diagrams.svg import Canvas
from fabricc.ir import Device, Fabric, Rack
from fabricc.synth.cooling import rack_heat, row_cooling
from fabricc.synth.power import rack_device_power_w

U = 12.0  # points per rack unit: a 1U label of 8 pt (10.7 px) fits with air
RACK_W = 150.0
GAP = 18.0
MARGIN = 20.0
HEAD = 64.0  # title of the drawing
RACK_HEAD = 46.0  # name, role and power above each rack
FOOT = 30.0
U_LABEL = 16.0  # column of U numbers left of the rack interior
BAND_GAP = 24.0  # between the bands of a wrapped row
MAX_WIDTH = 915.0  # pt (1,220 px): inside a report figure (1,320 px page less paddings)
ONE_U_TEXT = 8.0
TALL_TEXT = 9.0

ROLE_TONE = {
    "compute": style.Tone("#f7fee7", "#65a30d"),
    "system": style.Tone("#f7fee7", "#65a30d"),
    "network": style.Tone("#eef2ff", "#4f46e5"),
    "central": style.Tone("#f1f5f9", "#475569"),
}


ROLE_NAMES = {"system": "rack-scale system"}


def power_colour(used: float, budget: float) -> str:
    share = used / budget if budget else 0.0
    if share > 1.0:
        return "#dc2626"
    if share > 0.9:
        return "#d97706"
    return "#16a34a"


def kw(watts: float) -> str:
    return f"{watts / 1000:,.1f} kW"


def device_tone(fabric: Fabric, device: Device) -> style.Tone:
    if device.kind == "switch" and device.network in fabric.networks:
        return style.network_tone(fabric.networks[device.network].role)
    return style.node_tone(facts.node_kind(fabric, device))


def row_name(rack: Rack) -> str:
    return rack.name.rstrip("0123456789") or str(rack.row + 1)


def _rack(canvas: Canvas, fabric: Fabric, rack: Rack, x: float, y: float, reserved: int) -> None:
    devices = [fabric.devices[name] for name in rack.devices]
    used = rack_device_power_w(fabric, rack)
    budget = rack.power_budget_w
    tone = ROLE_TONE.get(rack.role, ROLE_TONE["central"])
    role = rack.role + (f" · SU {fabric.su_label(rack.su)}" if rack.su is not None else "")
    canvas.text(x, y + 13, rack.name, size=12, bold=True)
    canvas.text(x + RACK_W, y + 13, role, size=8, fill=style.MUTED, anchor="end")
    canvas.text(x, y + 28, f"{kw(used)} of {kw(budget)}", size=8, fill=style.INK)
    share = min(used / budget, 1.0) if budget else 0.0
    canvas.text(
        x + RACK_W,
        y + 28,
        f"{round(100 * used / budget) if budget else 0} %",
        size=8,
        fill=power_colour(used, budget),
        anchor="end",
        bold=True,
    )
    canvas.rect(x, y + 33, RACK_W, 4, fill="#e2e8f0", rx=2)
    canvas.rect(x, y + 33, RACK_W * share, 4, fill=power_colour(used, budget), rx=2)
    top = y + RACK_HEAD
    height_u = rack.height_u
    inner_x = x + U_LABEL
    inner_w = RACK_W - U_LABEL
    canvas.rect(
        x, top - 3, RACK_W, height_u * U + 6, fill=tone.fill, stroke="#334155", width=1.4, rx=3
    )
    canvas.rect(inner_x, top, inner_w, height_u * U, fill=style.PAPER, stroke="#94a3b8", width=0.6)
    scale = f"u{height_u}"
    if scale not in canvas.defs:
        canvas.define(scale, _u_scale(height_u))
    canvas.use(scale, x, top)
    if reserved:
        canvas.rect(
            inner_x + 2,
            top + 1,
            inner_w - 4,
            reserved * U - 2,
            fill="#f8fafc",
            stroke="#cbd5e1",
            dash="3,2",
            tip=f"{reserved} U reserved (patch panels)",
        )
        canvas.text(
            inner_x + inner_w / 2,
            top + reserved * U / 2 + 3,
            "reserved",
            size=7,
            fill=style.FAINT,
            anchor="middle",
        )
    pdus = [d for d in devices if d.u is None or d.height_u == 0]
    for device in sorted(
        (d for d in devices if d.u is not None and d.height_u > 0), key=lambda d: (d.u or 0, d.name)
    ):
        assert device.u is not None
        dy = top + (height_u - (device.u + device.height_u - 1)) * U
        dh = device.height_u * U
        dtone = device_tone(fabric, device)
        tip = _tip(fabric, device)
        canvas.group(tip)
        canvas.rect(
            inner_x + 1.5,
            dy + 0.8,
            inner_w - 3,
            dh - 1.6,
            fill=dtone.fill,
            stroke=dtone.stroke,
            width=0.9,
            rx=1.5,
        )
        size = ONE_U_TEXT if device.height_u == 1 else TALL_TEXT
        baseline = dy + dh / 2 + size * 0.35 if device.height_u < 3 else dy + 13
        power = kw(device.power_w) if device.power_w else ""
        room = inner_w - 9 - (style.text_width(power, size - 1) + 6 if power else 0)
        canvas.text(inner_x + 5, baseline, fit(device.name, size, room), size=size, bold=True)
        if power:
            canvas.text(
                inner_x + inner_w - 4,
                baseline,
                power,
                size=size - 1,
                fill=style.MUTED,
                anchor="end",
            )
        if device.height_u >= 3:
            model = facts.model_name(fabric, device)
            canvas.text(inner_x + 5, dy + 25, fit(model, 8, inner_w - 9), size=8, fill=style.MUTED)
        canvas.end_group()
    foot = top + height_u * U + 14
    if pdus:
        pdu_power = Counter(d.model for d in pdus)
        text = ", ".join(f"{n} × {m}" for m, n in sorted(pdu_power.items()))
        canvas.text(x, foot, f"0U: {text}", size=7, fill=style.MUTED)


def fit(text: str, size: float, room: float, bold: bool = True) -> str:
    """`text`, shortened with an ellipsis until it fits `room` points."""
    if style.text_width(text, size, bold) <= room:
        return text
    while text and style.text_width(text + "…", size, bold) > room:
        text = text[:-1]
    return text + "…"


def per_band(count: int) -> int:
    """Racks per band: as many as fit MAX_WIDTH, the bands of a row as even as possible."""
    fits = max(1, int((MAX_WIDTH - 2 * MARGIN + GAP) // (RACK_W + GAP)))
    bands = -(-count // fits)
    return -(-count // bands)


def _u_scale(height_u: int) -> Canvas:
    """U numbers and unit lines of an empty rack, drawn once per drawing and reused."""
    scale = Canvas(RACK_W, height_u * U, "")
    for u in range(1, height_u + 1):
        uy = (height_u - u) * U
        scale.text(U_LABEL - 3, uy + U - 3, str(u), size=7, fill=style.FAINT, anchor="end")
        if u > 1:
            scale.line(U_LABEL, uy + U, RACK_W, uy + U, stroke="#eef2f6", width=0.5)
    return scale


def _tip(fabric: Fabric, device: Device) -> str:
    assert device.u is not None
    span = (
        f"U{device.u}" if device.height_u <= 1 else f"U{device.u}–U{device.u + device.height_u - 1}"
    )
    parts = [device.name, facts.model_name(fabric, device), span, kw(device.power_w)]
    if device.mgmt_ip:
        parts.append(f"mgmt {device.mgmt_ip}")
    return " · ".join(parts)


def elevations(fabric: Fabric) -> list[Diagram]:
    rows: dict[int, list[Rack]] = {}
    for rack in fabric.racks:
        rows.setdefault(rack.row, []).append(rack)
    reserved = fabric.loaded.spec.site.rack.reserved_u
    diagrams = []
    for _, unsorted in sorted(rows.items()):
        racks = sorted(unsorted, key=lambda r: r.position)
        tallest = max(r.height_u for r in racks)
        across = per_band(len(racks))
        bands = -(-len(racks) // across)
        band_h = RACK_HEAD + tallest * U + FOOT
        width = MARGIN * 2 + across * RACK_W + (across - 1) * GAP
        height = HEAD + bands * band_h + (bands - 1) * BAND_GAP + MARGIN
        label = row_name(racks[0])
        used = sum(rack_device_power_w(fabric, r) for r in racks)
        budget = sum(r.power_budget_w for r in racks)
        title = f"Row {label} · rack elevations"
        canvas = Canvas(width, height, title)
        canvas.text(MARGIN, 28, title, size=15, bold=True)
        canvas.text(
            MARGIN,
            46,
            f"{style.plural(len(racks), 'rack')}, front view · {kw(used)} of {kw(budget)} budget",
            size=10,
            fill=style.MUTED,
        )
        for index, rack in enumerate(racks):
            band, column = divmod(index, across)
            x = MARGIN + column * (RACK_W + GAP)
            y = HEAD + band * (band_h + BAND_GAP) + (tallest - rack.height_u) * U
            _rack(canvas, fabric, rack, x, y, reserved)
        names = tuple(
            d
            for r in racks
            for d in r.devices
            if fabric.devices[d].u is not None and fabric.devices[d].height_u > 0
        )
        kinds = Counter(r.role for r in racks)
        caption = (
            f"Row {label}, front view: "
            + ", ".join(f"{n} {k} rack{'s' if n != 1 else ''}" for k, n in sorted(kinds.items()))
            + f", drawing {kw(used)} of their {kw(budget)} budget. Each device sits at its U "
            "position with its maximum power; the bar over a rack turns amber above 90 % and "
            "red above its budget."
        )
        diagrams.append(
            Diagram(
                f"racks-row-{label.lower()}", title, caption, "racks", DRAWN, canvas.source(), names
            )
        )
    return diagrams


CELL_W = 70.0
CELL_H = 44.0
CELL_GAP = 6.0


def floorplan(fabric: Fabric) -> Diagram:
    rows: dict[int, list[Rack]] = {}
    for rack in fabric.racks:
        rows.setdefault(rack.row, []).append(rack)
    positions = max((r.position for r in fabric.racks), default=0) + 1
    left = MARGIN + 28
    width = left + positions * (CELL_W + CELL_GAP) + MARGIN
    height = HEAD + len(rows) * (CELL_H + CELL_GAP * 3) + 40
    total = sum(rack_device_power_w(fabric, r) for r in fabric.racks)
    budget = sum(r.power_budget_w for r in fabric.racks)
    canvas = Canvas(width, height, "Floor plan")
    canvas.text(MARGIN, 28, "Floor plan · rack power", size=15, bold=True)
    canvas.text(
        MARGIN,
        46,
        f"{style.plural(len(fabric.racks), 'rack')} in {style.plural(len(rows), 'row')} · "
        f"{kw(total)} of {kw(budget)} budget",
        size=10,
        fill=style.MUTED,
    )
    over = 0
    heat = {h.rack: h for h in rack_heat(fabric)}
    cooled = {row.row: row for row in row_cooling(fabric)}
    for index, (number, racks) in enumerate(sorted(rows.items())):
        y = HEAD + index * (CELL_H + CELL_GAP * 3)
        if number in cooled:
            row = cooled[number]
            canvas.text(
                left,
                y + CELL_H + CELL_GAP * 2,
                f"{row.cdus} x {row.cdu_model} (N+1) for {kw(row.liquid_w)} to liquid · "
                f"facility water {row.water_lpm:,.0f} l/min at {row.delta:g} K",
                size=7,
                fill=style.MUTED,
            )
        canvas.text(
            MARGIN + 10,
            y + CELL_H / 2 + 4,
            row_name(racks[0]),
            size=11,
            bold=True,
            fill=style.MUTED,
            anchor="middle",
        )
        for rack in racks:
            x = left + rack.position * (CELL_W + CELL_GAP)
            used = rack_device_power_w(fabric, rack)
            tone = ROLE_TONE.get(rack.role, ROLE_TONE["central"])
            colour = power_colour(used, rack.power_budget_w)
            over += used > rack.power_budget_w
            share = min(used / rack.power_budget_w, 1.0) if rack.power_budget_w else 0.0
            tip = (
                f"{rack.name} · {rack.role}"
                + (f" · SU {fabric.su_label(rack.su)}" if rack.su is not None else "")
                + f" · {kw(used)} of {kw(rack.power_budget_w)}"
                + (
                    f" · liquid {kw(heat[rack.name].liquid_w)}, air {kw(heat[rack.name].air_w)}"
                    if heat[rack.name].liquid_w
                    else ""
                )
            )
            canvas.group(tip)
            canvas.rect(x, y, CELL_W, CELL_H, fill=tone.fill, stroke=tone.stroke, width=1, rx=3)
            canvas.text(x + 5, y + 13, rack.name, size=9, bold=True)
            if rack.su is not None:
                canvas.text(
                    x + CELL_W - 4,
                    y + 13,
                    f"SU {fabric.su_label(rack.su)}",
                    size=7,
                    fill=style.MUTED,
                    anchor="end",
                )
            canvas.text(x + 5, y + 26, kw(used), size=8)
            canvas.rect(x + 5, y + CELL_H - 11, CELL_W - 10, 4, fill="#e2e8f0", rx=2)
            canvas.rect(x + 5, y + CELL_H - 11, (CELL_W - 10) * share, 4, fill=colour, rx=2)
            canvas.end_group()
    legend_y = height - 22
    x = MARGIN
    for role, tone in ROLE_TONE.items():
        if not any(r.role == role for r in fabric.racks):
            continue
        label = ROLE_NAMES.get(role, f"{role} rack")
        canvas.rect(x, legend_y - 8, 10, 10, fill=tone.fill, stroke=tone.stroke)
        canvas.text(x + 14, legend_y, label, size=8, fill=style.MUTED)
        x += style.text_width(label, 8) + 30
    shown = {power_colour(rack_device_power_w(fabric, r), r.power_budget_w) for r in fabric.racks}
    for label, colour in (
        ("≤ 90 % of budget", "#16a34a"),
        ("> 90 %", "#d97706"),
        ("over budget", "#dc2626"),
    ):
        if colour not in shown:
            continue
        canvas.rect(x, legend_y - 6, 14, 4, fill=colour, rx=2)
        canvas.text(x + 18, legend_y, label, size=8, fill=style.MUTED)
        x += 100
    caption = (
        f"Every rack at its row and position, coloured by role, with its power use against its "
        f"budget ({kw(total)} in all"
        + (f"; {over} rack{'s' if over != 1 else ''} over budget" if over else "; none over budget")
        + ")."
    )
    return Diagram(
        "floorplan",
        "Floor plan · rack power",
        caption,
        "racks",
        DRAWN,
        canvas.source(),
        tuple(r.name for r in fabric.racks),
    )
