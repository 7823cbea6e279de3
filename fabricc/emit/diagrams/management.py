"""Diagram `management`: the out-of-band network - who manages which racks, and its uplinks.

Consumes the Fabric IR; produces a Diagram laid out by `dot` (it is small by construction):
the switches the OOB access switches uplink to, the access switches, and under each the racks
whose BMCs, switch management ports and PDUs it serves (as rack ranges with port counts). More
than 12 access switches are grouped by row, more than 8 rows collapse into one '...' box, and
more than 6 uplink targets are grouped by network and tier.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise

from fabricc.emit.diagrams import style
from fabricc.emit.diagrams.dot import Graph, Html
from fabricc.emit.diagrams.groups import Group, elide, group_by
from fabricc.emit.diagrams.model import RANKED, Diagram
from fabricc.emit.diagrams.ranked import cell, ranked_graph
from fabricc.ir import MGMT, UPLINK, Fabric, NetworkTopology

SWITCHES_SHOWN = 12
ROWS_SHOWN = 8
TARGETS_SHOWN = 6
RANGES_SHOWN = 40  # characters of rack ranges in one box
KIND_WORDS = {"node": "BMC", "tray": "BMC", "switch": "switch", "pdu": "PDU"}


@dataclass(slots=True)
class _Access:
    """What one access switch serves, and where it uplinks."""

    racks: list[str] = field(default_factory=list)
    ports: Counter[str] = field(default_factory=Counter)  # BMC / switch / PDU -> count
    uplinks: Counter[str] = field(default_factory=Counter)  # target switch -> links


def rack_ranges(fabric: Fabric, racks: list[str]) -> str:
    """Runs of neighbouring racks in one row, such as B01–B06, C01, in layout order."""
    indices = sorted({fabric.rack_by_name[r].index for r in racks})
    runs: list[list[int]] = []
    for i in indices:
        last = runs[-1][-1] if runs else None
        if last is not None and i == last + 1 and fabric.racks[i].row == fabric.racks[last].row:
            runs[-1].append(i)
        else:
            runs.append([i])
    names = [
        fabric.racks[run[0]].name
        if len(run) == 1
        else f"{fabric.racks[run[0]].name}–{fabric.racks[run[-1]].name}"
        for run in runs
    ]
    text = ", ".join(names)
    return text if len(text) <= RANGES_SHOWN else text[: RANGES_SHOWN - 2].rsplit(",", 1)[0] + ", …"


def _survey(fabric: Fabric, oob: NetworkTopology) -> dict[str, _Access]:
    devices = fabric.devices
    access = {name: _Access() for name in oob.switches.get("leaf", [])}
    for link in fabric.links_of(oob.name):
        if link.kind == MGMT and link.b in access:
            device = devices[link.a]
            if device.rack is not None:
                access[link.b].racks.append(device.rack)
            access[link.b].ports[KIND_WORDS.get(device.kind, device.kind)] += 1
        elif link.kind == UPLINK and link.a in access:
            access[link.a].uplinks[link.b] += 1
    return access


def _switch_groups(fabric: Fabric, names: list[str]) -> list[Group]:
    if len(names) <= SWITCHES_SHOWN:
        return [Group(name, [name]) for name in names]
    devices = fabric.devices

    def row(name: str) -> int:
        rack = devices[name].rack
        return fabric.rack_by_name[rack].row if rack is not None else -1

    return elide(group_by(names, row), ROWS_SHOWN)


def _row_letter(fabric: Fabric, row: int) -> str:
    for rack in fabric.racks:
        if rack.row == row:
            return rack.name.rstrip("0123456789") or str(row + 1)
    return str(row + 1)


def _access_boxes(
    graph: Graph, fabric: Fabric, groups: list[Group], access: dict[str, _Access]
) -> tuple[list[str], list[str], list[str]]:
    """One box per access switch (or row of them) and one box for the racks it serves."""
    devices = fabric.devices
    tone = style.network_tone("oob")
    switch_ids: list[str] = []
    rack_ids: list[str] = []
    shown: list[str] = []
    for index, group in enumerate(groups):
        members = group.members
        model = devices[members[0]].model.upper()
        if len(members) == 1 and not group.is_ellipsis:
            title, sub = members[0], model
            shown.append(members[0])
        elif group.is_ellipsis:
            title, sub = f"⋯ {group.hidden} more rows", f"{len(members)} × {model}"
        else:
            key = group.key
            row = key if isinstance(key, int) else -1
            title, sub = f"Row {_row_letter(fabric, row)}", f"{len(members)} × {model}"
        switch_id, rack_id = f"oob{index}", f"racks{index}"
        switch_ids.append(switch_id)
        rack_ids.append(rack_id)
        graph.node(
            switch_id,
            label=Html(f"{cell(title, 9, bold=True)}<BR/>{cell(sub, 7.5, style.MUTED)}"),
            fillcolor=tone.fill,
            color=tone.stroke,
            style="rounded,filled,dashed" if group.is_ellipsis else "rounded,filled",
        )
        racks = [r for m in members for r in access[m].racks]
        ports: Counter[str] = Counter()
        for m in members:
            ports.update(access[m].ports)
        detail = ", ".join(f"{style.count(n)} {kind}" for kind, n in sorted(ports.items()))
        ranges = rack_ranges(fabric, racks) if racks else "-"
        graph.node(
            rack_id,
            label=Html(
                f"{cell('racks ' + ranges, 8, bold=True)}<BR/>{cell(detail, 7.5, style.MUTED)}"
            ),
            fillcolor=style.PAPER,
            color=style.HAIRLINE,
        )
        graph.edge(
            switch_id,
            rack_id,
            label=f" {style.count(sum(ports.values()))} × 1G",
            fontsize="7.5",
            fontcolor=style.MUTED,
            fontname=style.FONT,
            color=style.FAINT,
        )
    return switch_ids, rack_ids, shown


def _uplink_boxes(
    graph: Graph, fabric: Fabric, groups: list[Group], access: dict[str, _Access]
) -> tuple[list[str], list[str]]:
    """The switches the access switches uplink to - one by one, or one box per tier."""
    devices = fabric.devices
    targets: Counter[str] = Counter()
    for entry in access.values():
        targets.update(entry.uplinks)
    individual = len(targets) <= TARGETS_SHOWN
    box_of: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    for target in targets:
        device = devices[target]
        box = target if individual else f"up-{device.network}-{device.role}"
        box_of[target] = box
        members.setdefault(box, []).append(target)
    for box, names in members.items():
        device = devices[names[0]]
        tone = style.TIER.get(device.role, style.OTHER)
        where = f"{device.network} {device.role}"
        title = box if individual else f"{where}s"
        sub = (
            f"{where} · {device.model.upper()}"
            if individual
            else f"{len(names)} × {device.model.upper()}"
        )
        graph.node(
            box,
            label=Html(f"{cell(title, 9, bold=True)}<BR/>{cell(sub, 7.5, style.MUTED)}"),
            fillcolor=tone.fill,
            color=tone.stroke,
        )
    for index, group in enumerate(groups):
        per: Counter[str] = Counter()
        for m in group.members:
            for target, n in access[m].uplinks.items():
                per[box_of[target]] += n
        for box, n in per.items():
            graph.edge(
                box, f"oob{index}", color=style.UPLINK, penwidth="1.2", tooltip=f"{n} uplinks"
            )
    boxes = list(members)
    return boxes, (boxes if individual else [])


def management(fabric: Fabric) -> Diagram | None:
    oob = next((t for t in fabric.networks.values() if t.role == "oob"), None)
    if oob is None or not oob.switches.get("leaf"):
        return None
    access = _survey(fabric, oob)
    names = list(access)
    ports = sum(sum(entry.ports.values()) for entry in access.values())
    title = f"{oob.name} network · out-of-band management"
    graph = ranked_graph(
        "management",
        title,
        f"{style.plural(len(names), 'access switch', 'access switches')} · "
        f"{style.count(ports)} management ports · {style.plural(len(fabric.racks), 'rack')}",
    )
    groups = _switch_groups(fabric, names)
    switch_ids, rack_ids, shown = _access_boxes(graph, fabric, groups, access)
    upper, named = _uplink_boxes(graph, fabric, groups, access)
    # Flat invisible edges keep each rank in layout order (dot would reorder it otherwise).
    for ids in (upper, switch_ids, rack_ids):
        for a, b in pairwise(ids):
            graph.edge(a, b, style="invis")
        graph.same_rank(ids)
    uplinked = sum(sum(entry.uplinks.values()) for entry in access.values())
    targets = sorted({t for entry in access.values() for t in entry.uplinks})
    caption = (
        f"The out-of-band network: {style.plural(len(names), 'access switch', 'access switches')}"
        + (" serves" if len(names) == 1 else " serve")
        + " the BMCs, switch management ports and PDUs of neighbouring racks"
        + f" ({style.count(ports)} ports)"
        + (
            f", and uplink to {', '.join(targets[:4])}{' …' if len(targets) > 4 else ''}"
            f" ({style.plural(uplinked, 'link')})."
            if targets
            else "."
        )
    )
    return Diagram(
        "management", title, caption, "management", RANKED, graph.source(), (*shown, *named)
    )
