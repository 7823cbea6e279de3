"""Emitter `report`: report/index.html, one self-contained page to review a design.

Consumes the Fabric IR, the headline numbers of fabricc.emit.summary, the BOM lines of
fabricc.synth.bom and the diagrams (rendered through the same cache as the diagrams emitter);
produces one HTML file with inline CSS and inline SVG - no network access, no scripts, opens
from file://. Everything the page prints is computed here; templates/report/ only lays it out.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from markupsafe import Markup

from fabricc import __version__
from fabricc.emit import Artifact
from fabricc.emit.analysis import section as analysis_section
from fabricc.emit.diagrams import diagrams
from fabricc.emit.diagrams.model import DRAWN, SECTIONS, Diagram
from fabricc.emit.diagrams.render import INSTALL_HINT, graphviz_available, should_render, to_svg
from fabricc.emit.diagrams.style import plural
from fabricc.emit.lengths import cable_lengths, length_stats
from fabricc.emit.summary import summary
from fabricc.emit.templating import environment
from fabricc.errors import Diagnostic
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Fabric
from fabricc.synth.bom import CATEGORY_ORDER, bom_lines, cable_kinds
from fabricc.synth.cooling import rack_heat, row_cooling
from fabricc.synth.power import rack_device_power_w

PATH = "report/index.html"
RACK_ROWS_INLINE = 12  # rack elevation rows drawn in the page; the rest are linked
POWER_TABLE_OPEN = 24  # racks up to which the power table starts unfolded (the floor plan leads)
MEDIA_NAMES = {
    "copper": "copper (DAC/ACC)",
    "mmf": "multimode fiber",
    "smf": "single-mode fiber",
    "cat6": "Cat6 patch",
}
PT_TO_PX = 4 / 3

_PROLOG = re.compile(r"^.*?(?=<svg\b)", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
# an id attribute (where a word does not run into it: the match is checked, not the pattern -
# a pattern that starts with its literal text is found by a fast scan, \b at every place is not)
_ID = re.compile(r'id="([^"]+)"')
_REF = re.compile(r'(url\(#|href="#)([^)"]+)')
_WIDTH = re.compile(r'<svg\b[^>]*?\bwidth="([0-9.]+)pt"')


@dataclass(frozen=True, slots=True)
class Figure:
    name: str
    title: str
    caption: str
    svg: Markup | None  # inline SVG, or None when Graphviz did not render it
    source: str  # file in diagrams/ that holds the picture or its DOT source
    width_px: int  # natural width, the most the picture is stretched to
    scroll: bool  # drawn at natural size in a scrolling box (rack elevations)


def inline_svg(svg: str, prefix: str) -> Markup:
    """An SVG document made fit to sit in HTML: no prolog or comments, ids made unique."""
    body = _COMMENT.sub("", _PROLOG.sub("", svg, count=1)).strip()
    body = _own_ids(body, prefix)
    body = _REF.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", body)
    return Markup(body)


def _own_ids(body: str, prefix: str) -> str:
    """Every `id="x"` that no word runs into (what r'\bid="..."' matches) as `id="prefix-x"`."""
    parts: list[str] = []
    done = scan = 0
    while (found := _ID.search(body, scan)) is not None:
        start = found.start()
        before = body[start - 1] if start else " "
        if before.isalnum() or before == "_":  # a word character: no boundary, try further on
            scan = start + 1
            continue
        parts.append(body[done:start])
        parts.append(f'id="{prefix}-{found.group(1)}"')
        done = scan = found.end()
    parts.append(body[done:])
    return "".join(parts)


def natural_width(svg: str) -> int:
    found = _WIDTH.search(svg)
    return round(float(found.group(1)) * PT_TO_PX) if found else 1200


def figures(fabric: Fabric) -> tuple[list[dict[str, Any]], int, list[Diagram]]:
    """Figures per report section; also how many were not rendered, and the unlisted rows."""
    rendering = should_render(fabric)
    by_section: dict[str, list[Figure]] = {key: [] for key, _ in SECTIONS}
    missing = 0
    linked: list[Diagram] = []
    rack_rows = 0
    for diagram in diagrams(fabric):
        if diagram.name.startswith("racks-row-"):
            rack_rows += 1
            if rack_rows > RACK_ROWS_INLINE:
                linked.append(diagram)
                continue
        svg: str | None = None
        if diagram.engine == DRAWN or rendering:
            svg = to_svg(diagram)
        else:
            missing += 1
        by_section[diagram.section].append(
            Figure(
                diagram.name,
                diagram.title,
                diagram.caption,
                inline_svg(svg, diagram.name) if svg is not None else None,
                f"../diagrams/{diagram.name}.{'svg' if svg is not None else 'dot'}",
                natural_width(svg) if svg is not None else 0,
                diagram.name.startswith("racks-row-"),
            )
        )
    sections = [
        {"key": key, "heading": heading, "figures": by_section[key]}
        for key, heading in SECTIONS
        if by_section[key]
    ]
    return sections, missing, linked


def key_figures(fabric: Fabric, data: dict[str, Any]) -> list[tuple[str, str, str]]:
    networks = data["networks"]
    switches = sum(sum(n["switches"].values()) for n in networks.values())
    cables = sum(c.quantity for c in fabric.cables)
    nodes = sum(data["nodes"].values())
    domains = sum(data["nvlink_domains"].values())
    sizes = ", ".join(f"{n} × {size} GPUs" for size, n in data["nvlink_domains"].items())
    groups = ", ".join(f"{n:,} {g}" for g, n in data["nodes"].items())
    return [
        ("GPUs", f"{data['gpus']:,}", gpu_models(fabric) or "none"),
        ("Nodes", f"{nodes:,}", groups),
        ("Switches", f"{switches:,}", f"in {len(networks)} networks"),
        ("Links", f"{len(fabric.links):,}", f"{cables:,} cables"),
        ("Racks", f"{data['racks']:,}", plural(len({r.row for r in fabric.racks}), "row")),
        ("Power", power_text(data["power_kw"]), "device maximum"),
        ("NVLink domains", f"{domains:,}", sizes or "-"),
    ]


def gpu_models(fabric: Fabric) -> str:
    catalog = fabric.loaded.catalog.catalog
    models: Counter[str] = Counter()
    for device in fabric.devices.values():
        node = catalog.nodes.get(device.model)
        if node is not None and node.gpu is not None and node.gpus:
            models[node.gpu.model] += node.gpus
    return ", ".join(models)


def power_text(kw: float) -> str:
    return f"{kw / 1000:,.2f} MW" if kw >= 1000 else f"{kw:,.1f} kW"


def network_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for name, net in data["networks"].items():
        links = net["links"]
        rows.append(
            {
                "name": name,
                "role": net["role"],
                "fabric": net["fabric"],
                "topology": net.get("topology", "fat-tree"),
                "tiers": net["tiers"],
                "planes": net["planes"],
                "sus": net["scalable_units"] or "",
                "rail": "yes" if net["rail_optimized"] else "",
                "leaf": net["switches"]["leaf"],
                "spine": net["switches"]["spine"] or "",
                "core": net["switches"]["core"] or "",
                "models": " / ".join(
                    dict.fromkeys(
                        net["switch_models"][tier].upper()
                        for tier in ("leaf", "spine", "core")
                        if net["switches"][tier]
                    )
                ),
                "endpoint_links": f"{links.get(ENDPOINT_LEAF, 0):,}",
                "switch_links": f"{links.get(LEAF_SPINE, 0) + links.get(SPINE_CORE, 0):,}",
                "other_links": ", ".join(
                    f"{n:,} {kind}"
                    for kind, n in links.items()
                    if kind not in (ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE) and n
                ),
            }
        )
    return rows


def cable_table(fabric: Fabric) -> dict[str, Any]:
    counts: Counter[tuple[str, float]] = Counter()
    for kinds in cable_kinds(fabric).values():
        for (_, _, medium, length, quantity), n in kinds.items():
            counts[medium, length] += quantity * n
    lengths = sorted({length for _, length in counts})
    media = sorted(
        {m for m, _ in counts},
        key=lambda m: (list(MEDIA_NAMES).index(m) if m in MEDIA_NAMES else 99, m),
    )
    biggest = max(counts.values(), default=1)
    rows = []
    for medium in media:
        cells = []
        for length in lengths:
            n = counts.get((medium, length), 0)
            cells.append({"count": f"{n:,}" if n else "", "share": round(100 * n / biggest)})
        total = sum(counts.get((medium, length), 0) for length in lengths)
        rows.append(
            {"medium": MEDIA_NAMES.get(medium, medium), "cells": cells, "total": f"{total:,}"}
        )
    totals = [f"{sum(counts.get((m, length), 0) for m in media):,}" for length in lengths]
    return {
        "lengths": [f"{length:g} m" for length in lengths],
        "rows": rows,
        "totals": totals,
        "total": f"{sum(counts.values()):,}",
    }


def length_tables(fabric: Fabric) -> list[dict[str, Any]]:
    """Per network, its cables per kind of link: count, shortest, median, longest, and a
    histogram over the orderable lengths the network uses."""
    tables = []
    for network, kinds in cable_lengths(fabric).items():
        lengths = sorted({length for counts in kinds.values() for length in counts})
        biggest = max((n for counts in kinds.values() for n in counts.values()), default=1)
        rows = []
        for kind, counts in kinds.items():  # in LINK_KINDS order
            stats = length_stats(counts)
            rows.append(
                {
                    "kind": kind,
                    "cables": f"{stats['cables']:,}",
                    "min": f"{stats['min_m']:g}",
                    "median": f"{stats['median_m']:g}",
                    "max": f"{stats['max_m']:g}",
                    "cells": [
                        {
                            "count": f"{counts[length]:,}" if counts.get(length) else "",
                            "share": round(100 * counts.get(length, 0) / biggest),
                        }
                        for length in lengths
                    ],
                }
            )
        tables.append(
            {"network": network, "lengths": [f"{length:g}" for length in lengths], "rows": rows}
        )
    return tables


def cooling_rows(fabric: Fabric) -> list[dict[str, Any]]:
    """Per row of liquid-cooled racks: its liquid heat, CDUs (N+1) and facility water."""
    return [
        {
            "row": row.row + 1,
            "racks": len(row.racks),
            "liquid": f"{row.liquid_w / 1000:,.1f}",
            "cdus": row.cdus,
            "model": row.cdu_model,
            "capacity": f"{row.cdu_w / 1000:,.0f}",
            "water": f"{row.water_lpm:,.0f}",
            "delta": f"{row.delta:g}",
        }
        for row in row_cooling(fabric)
    ]


def power_rows(fabric: Fabric) -> list[dict[str, Any]]:
    rows = []
    heat = {h.rack: h for h in rack_heat(fabric)}
    for rack in fabric.racks:
        used = rack_device_power_w(fabric, rack)
        budget = rack.power_budget_w
        share = used / budget if budget else 0.0
        rows.append(
            {
                "rack": rack.name,
                "role": rack.role,
                "su": fabric.su_label(rack.su) if rack.su is not None else "",
                "devices": sum(1 for d in rack.devices if fabric.devices[d].height_u > 0),
                "kw": f"{used / 1000:,.1f}",
                "liquid": f"{heat[rack.name].liquid_w / 1000:,.1f}",
                "air": f"{heat[rack.name].air_w / 1000:,.1f}",
                "budget": f"{budget / 1000:,.1f}",
                "percent": round(100 * share),
                "bar": min(round(100 * share), 100),
                "level": "over" if share > 1 else "high" if share > 0.9 else "ok",
            }
        )
    return rows


def bom_sections(fabric: Fabric) -> list[dict[str, Any]]:
    lines = bom_lines(fabric)
    sections = []
    for category in CATEGORY_ORDER:
        subset = [line for line in lines if line.item.category == category]
        if not subset:
            continue
        counted = category != "transceiver"  # optics power is inside the device maximum
        sections.append(
            {
                "category": category,
                "quantity": f"{sum(line.quantity for line in subset):,}",
                "power": f"{sum(line.total_power_w for line in subset) / 1000:,.1f} kW"
                if counted and any(line.item.unit_power_w for line in subset)
                else "",
                "lines": [
                    {
                        "part": line.item.part_number,
                        "description": line.item.description,
                        "quantity": f"{line.quantity:,}",
                        "unit_w": f"{line.item.unit_power_w:g}" if line.item.unit_power_w else "",
                        "total_kw": f"{line.total_power_w / 1000:,.1f}"
                        if counted and line.item.unit_power_w
                        else "",
                        "source": line.item.source,
                    }
                    for line in subset
                ],
            }
        )
    return sections


def missing_reason(fabric: Fabric, count: int) -> str:
    what = f"{plural(count, 'diagram')} {'was' if count == 1 else 'were'} not rendered"
    if fabric.loaded.spec.outputs.diagrams.render == "never" or graphviz_available():
        return (
            f"{what} (outputs.diagrams.render: never). Their Graphviz sources are in diagrams/; "
            "the first lines of each give the command that renders it."
        )
    return (
        f"{what}: Graphviz `dot` was not found when this report was built. To get the "
        f"pictures, {INSTALL_HINT} and build again; the DOT sources are in diagrams/."
    )


def _portable(diagnostic: Diagnostic) -> Diagnostic:
    """A warning as the report shows it: its spec file by name, not by the folder it was built
    from (the page holds no absolute path, and the same spec gives the same bytes anywhere)."""
    location = diagnostic.location
    if location is None:
        return diagnostic
    return dataclasses.replace(
        diagnostic, location=dataclasses.replace(location, file=PurePath(location.file).name)
    )


def context(fabric: Fabric) -> dict[str, Any]:
    data = summary(fabric)
    sections, missing, linked = figures(fabric)
    warnings = [_portable(d).render() for d in (*fabric.loaded.warnings, *fabric.warnings)]
    return {
        "name": data["name"],
        "description": data["description"],
        "spec": fabric.loaded.path.name,
        "version": __version__,
        "key_figures": key_figures(fabric, data),
        "networks": network_rows(data),
        "analysis": analysis_section(fabric),
        "warnings": warnings,
        "sections": sections,
        "missing": missing,
        "missing_reason": missing_reason(fabric, missing) if missing else "",
        "linked": [{"name": d.name, "title": d.title} for d in linked],
        "cables": cable_table(fabric),
        "cable_lengths": length_tables(fabric),
        "power": power_rows(fabric),
        "cooling": cooling_rows(fabric),
        "power_open": len(fabric.racks) <= POWER_TABLE_OPEN,
        "bom": bom_sections(fabric),
    }


def emit(fabric: Fabric) -> list[Artifact]:
    page = environment().get_template("report/index.html.j2").render(context(fabric))
    return [(PATH, page)]
