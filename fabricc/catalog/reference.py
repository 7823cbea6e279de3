"""The catalog reference (Markdown) generated from the built-in catalog, kept in docs/.

Consumes the built-in catalog files (fabricc/catalog/data, as loaded and validated by
fabricc.catalog.loader); produces one Markdown page: per section (nodes, switches, transceivers,
cables, parts, host topologies, default switches) every entry with its part number, ports and
every `source` it gives. scripts/regen.py writes it to docs/reference/catalog.md and a test
fails when that file is stale.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from fabricc.catalog.assumed import assumed_records, record_for
from fabricc.catalog.loader import load_catalog
from fabricc.catalog.models import (
    CableModel,
    Catalog,
    NodeModel,
    PartModel,
    PortSpec,
    SwitchModel,
    TransceiverModel,
)

PAGE = "docs/reference/catalog.md"

_INTRO = """\
# Catalog reference

Generated from the built-in catalog (`fabricc/catalog/data/*.yaml`) by `python scripts/regen.py`;
do not edit. Every entry names its public source (a reference architecture and table, an NVIDIA
documentation page, a datasheet) or says `assumed: ...` where a value is not published; such
values are marked in the BOM too. A spec replaces or adds entries with a
[site catalog](../getting-started.md#a-site-catalog).
"""


class _Code(str):
    """A catalog key, shown as code (keys are held to fabricc.patterns.KEY)."""


def _cell(value: object) -> str:
    """A Markdown table cell: one line, no HTML, no column breaks, no emphasis."""
    if isinstance(value, _Code):
        return f"`{value}`"
    text = " ".join(str(value).split())
    for plain, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("|", "\\|")):
        text = text.replace(plain, escaped)
    return text.replace("*", "\\*").replace("`", "\\`")


def _row(*cells: object) -> str:
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def _table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    names = list(header)
    return [
        "| " + " | ".join(names) + " |",
        "|" + "---|" * len(names),
        *(_row(*row) for row in rows),
    ]


def _sources(data: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """(where, text) of every `source` or `*_source` value in an entry, in document order."""
    if isinstance(data, dict):
        for key, value in data.items():
            inner = f"{where}.{key}" if where else str(key)
            if key == "source" or str(key).endswith("_source"):
                if value:
                    yield (where or "entry", str(value))
            else:
                yield from _sources(value, inner)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _sources(value, f"{where}[{index}]")


def _source_lines(entry: Any) -> list[str]:
    seen: set[str] = set()
    lines: list[str] = []
    for where, text in _sources(entry.model_dump()):
        if text in seen:
            continue
        seen.add(text)
        lines.append(f"- {_cell(where)}: {_cell(text)}")
    return lines


def _speeds(speeds: Iterable[int]) -> str:
    return "/".join(str(s) for s in speeds) + "G"


def _ports(ports: list[PortSpec]) -> list[str]:
    return _table(
        ["port", "cage", "form", "speeds", "breakouts", "role", "fabrics", "GPU", "RDMA device"],
        (
            [
                p.name,
                p.cage,
                p.form,
                _speeds(p.speeds),
                "/".join(str(b) for b in p.breakouts),
                p.role,
                ", ".join(p.protocols),
                "" if p.gpu is None else p.gpu,
                ", ".join(leg.rdma_device for leg in p.leg_devices)
                if p.leg_devices
                else p.rdma_device or "",
            ]
            for p in ports
        ),
    )


def _port_cables(ports: list[PortSpec]) -> list[str]:
    """A line naming the cable the vendor's design orders per port (PortSpec.cable), if any."""
    by_family: dict[str, list[str]] = {}
    for port in ports:
        if port.cable is not None:
            by_family.setdefault(port.cable.family, []).append(port.name)
    if not by_family:
        return []
    named = "; ".join(
        f"{_cell(', '.join(names))}: `{family}`" for family, names in by_family.items()
    )
    return ["", f"Cables the vendor's reference design orders (taken where they fit): {named}"]


def _node(key: str, node: NodeModel) -> list[str]:
    facts = [
        f"{node.vendor} {node.kind}, part number {node.part_number}, {node.height_u}U, "
        f"{node.power_w} W maximum"
    ]
    if node.gpu is not None:
        facts.append(
            f"{node.gpus} x {node.gpu.model} ({node.gpu.memory_gb} GB, "
            f"{node.gpu.nvlink_links} NVLink links)"
        )
    if node.rack_scale is not None:
        members = ", ".join(f"{len(m.u)} x {m.model}" for m in node.rack_scale.members)
        facts.append(f"rack-scale: {members}")
    lines = [f"### `{key}`", "", _cell(node.description), "", "; ".join(_cell(f) for f in facts)]
    if node.ports:
        lines += ["", *_ports(node.ports), *_port_cables(node.ports)]
    return [*lines, "", "Sources:", "", *_source_lines(node), ""]


def _switch(key: str, switch: SwitchModel) -> list[str]:
    groups = "; ".join(
        f"{g.count} x {g.form} {g.cage_speed}G cages ({g.lane_speed}G lanes, breakouts "
        f"{'/'.join(str(b) for b in g.breakouts)}{', uplinks only' if g.use == 'uplink' else ''})"
        for g in switch.port_groups
    )
    features = [f for f, on in (("adaptive routing", switch.adaptive_routing),) if on]
    if switch.sharp:
        features.append("SHARP")
    facts = (
        f"{switch.vendor} {switch.asic}, {switch.fabric}, part number {switch.part_number}, "
        f"{switch.height_u}U, {switch.power_w} W maximum"
        + (f"; {', '.join(features)}" if features else "")
    )
    lines = [f"### `{key}`", "", _cell(switch.description), "", _cell(facts), "", _cell(groups)]
    if switch.mgmt_ports:
        lines += ["", *_ports(switch.mgmt_ports)]
    return [*lines, "", "Sources:", "", *_source_lines(switch), ""]


def _transceivers(entries: dict[str, TransceiverModel]) -> list[str]:
    return _table(
        [
            "key",
            "part number",
            "description",
            "form",
            "ports x speed",
            "lanes",
            "media",
            "reach",
            "source",
        ],
        (
            [
                _Code(key),
                t.part_number or "",
                t.description,
                t.form,
                f"{t.ports} x {t.speed}G",
                f"{t.lane_speed}G",
                t.media,
                f"{t.reach_m:g} m",
                t.source,
            ]
            for key, t in entries.items()
        ),
    )


def _lower_rates(cable: CableModel) -> str:
    """The lower rates a cable also runs at (also_runs; their sources are in the source cell)."""
    rates = ", ".join(f"{r.speed}G ({r.lane_speed}G lanes)" for r in cable.also_runs)
    return f"; also {rates}" if rates else ""


def _cables(entries: dict[str, CableModel]) -> list[str]:
    return _table(
        ["key", "description", "kind", "ends", "lengths (m: OPN (ordering number))", "source"],
        (
            [
                _Code(key),
                c.description,
                f"{c.kind}, {c.media}" + (f", {c.speed}G" if c.speed else "") + _lower_rates(c),
                f"{c.a_form} to {c.legs} x {c.b_form}",
                ", ".join(
                    f"{length:g}: {part}"
                    + (f" ({c.ordering[length]})" if length in c.ordering else "")
                    for length, part in sorted(c.lengths.items())
                ),
                " ".join([c.source, *(f"Also {r.speed}G: {r.source}" for r in c.also_runs)]),
            ]
            for key, c in entries.items()
        ),
    )


def _parts(entries: dict[str, PartModel]) -> list[str]:
    return _table(
        ["key", "category", "description", "part number", "source"],
        (
            [_Code(k), p.category, p.description, p.part_number, p.source]
            for k, p in entries.items()
        ),
    )


def page(catalog: Catalog | None = None) -> str:
    """The catalog reference page for `catalog` (default: the built-in catalog)."""
    if catalog is None:
        catalog = load_catalog().catalog
    lines = [_INTRO, "## Nodes", ""]
    for key, node in catalog.nodes.items():
        lines += _node(key, node)
    lines += ["## Switches", ""]
    for key, switch in catalog.switches.items():
        lines += _switch(key, switch)
    lines += ["## Transceivers", "", *_transceivers(catalog.transceivers), ""]
    lines += ["## Cables", "", *_cables(catalog.cables), ""]
    lines += ["## Parts", "", *_parts(catalog.parts), ""]
    lines += [
        "## Host topologies",
        "",
        "CPU, PCIe and NVLink data of the NCCL topology files, per node model "
        "([NCCL topology files](../nccl.md#correcting-the-hardware-data)).",
        "",
    ]
    for key, topology in catalog.host_topologies.items():
        lines += [f"### `{key}`", "", "Sources:", "", *_source_lines(topology), ""]
    if catalog.default_switches is not None:
        defaults = catalog.default_switches
        lines += [
            "## Default switches",
            "",
            *_table(
                ["fabric or role", "switch"],
                [
                    ["infiniband", _Code(defaults.infiniband)],
                    *([f"ethernet {role}", _Code(key)] for role, key in defaults.ethernet.items()),
                ],
            ),
            "",
        ]
    lines += _assumed(catalog)
    return "\n".join(lines).rstrip("\n") + "\n"


def assumed_values(catalog: Catalog) -> list[tuple[str, str, str, str]]:
    """(section, entry, where, source text) of every source that says a value is assumed, in
    catalog order: what no public document read for the catalog gives."""
    sections: list[tuple[str, dict[str, Any]]] = [
        ("nodes", dict(catalog.nodes)),
        ("switches", dict(catalog.switches)),
        ("transceivers", dict(catalog.transceivers)),
        ("cables", dict(catalog.cables)),
        ("parts", dict(catalog.parts)),
        ("host_topologies", dict(catalog.host_topologies)),
    ]
    out: list[tuple[str, str, str, str]] = []
    for section, entries in sections:
        for key, entry in entries.items():
            seen: set[str] = set()
            for where, text in _sources(entry.model_dump()):
                if "assumed" in text.lower() and text not in seen:
                    seen.add(text)
                    out.append((section, key, where, text))
    return out


def _assumed(catalog: Catalog) -> list[str]:
    rows = assumed_values(catalog)
    records = [record_for(section, key, where) for section, key, where, _ in rows]
    reasons = assumed_records().reasons
    counts = Counter(r.reason for r in records if r is not None)
    return [
        "## Assumed values",
        "",
        f"{len(rows)} sources name a value no public document read for the catalog gives; "
        "each says which value, and the record beside it (`fabricc/catalog/assumed.yaml`) why "
        "it stays assumed and what was searched for it. Replace them in "
        "a [site catalog](../getting-started.md#a-site-catalog) with the figures of your "
        "hardware.",
        "",
        *_table(
            ["reason", "values", "meaning"],
            ([reason, counts.get(reason, 0), text] for reason, text in reasons.items()),
        ),
        "",
        *_table(
            ["section", "entry", "where", "source", "reason", "searched"],
            (
                [
                    section,
                    _Code(key),
                    where,
                    text,
                    record.reason if record else "",
                    record.searched if record else "",
                ]
                for (section, key, where, text), record in zip(rows, records, strict=True)
            ),
        ),
        "",
    ]
