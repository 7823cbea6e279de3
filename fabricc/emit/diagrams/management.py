"""Diagram `management`: the out-of-band network - who manages which racks, and its uplinks.

Consumes the Fabric IR; produces a Diagram laid out by `dot` (it is small by construction):
the switches the OOB access switches uplink to, the access switches, and under each the racks
whose BMCs, switch management ports and PDUs it serves (as rack ranges with port counts). More
than 12 access switches are grouped by row, and more than 8 rows collapse into one '...' box.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise

from fabricc.emit.diagrams import style
from fabricc.emit.diagrams.dot import Html
from fabricc.emit.diagrams.groups import Group, elide, group_by
from fabricc.emit.diagrams.model import RANKED, Diagram
from fabricc.emit.diagrams.ranked import cell, ranked_graph
from fabricc.ir import MGMT, UPLINK, Fabric

SWITCHES_SHOWN = 12
ROWS_SHOWN = 8
KIND_WORDS = {"node": "BMC", "tray": "BMC", "switch": "switch", "pdu": "PDU"}


def rack_ranges(fabric: Fabric, racks: list[str]) -> str:
    """Runs of neighbouring racks, such as B01-B06, C01, in layout order."""
    indices = sorted(fabric.rack_by_name[r].index for r in set(racks))
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1 and fabric.racks[i].row == fabric.racks[runs[-1][-1]].row:
            runs[-1].append(i)
        else:
            runs.append([i])
    parts = [
        fabric.racks[run[0]].name
        if len(run) == 1
        else f"{fabric.racks[run[0]].name}–{fabric.racks[run[-1]].name}"
        for run in runs
    ]
    return ", ".join(parts)


def management(fabric: Fabric) -> Diagram | None:
    oob = next((t for t in fabric.networks.values() if t.role == "oob"), None)
    if oob is None or not oob.switches.get("leaf"):
        return None
    devices = fabric.devices
    access = oob.switches["leaf"]
    served: dict[str, list[str]] = {name: [] for name in access}
    kinds: dict[str, Counter[str]] = {name: Counter() for name in access}
    uplinks: dict[str, Counter[str]] = {name: Counter() for name in access}
    for link in fabric.links_of(oob.name):
        if link.kind == MGMT and link.b in served:
            rack = devices[link.a].rack
            if rack is not None:
                served[link.b].append(rack)
            kinds[link.b][KIND_WORDS.get(devices[link.a].kind, devices[link.a].kind)] += 1
        elif link.kind == UPLINK and link.a in uplinks:
            uplinks[link.a][link.b] += 1
    name = "management"
    ports = sum(sum(c.values()) for c in kinds.values())
    graph = ranked_graph(
        name,
        f"{oob.name} network · out-of-band management",
        f"{style.plural(len(access), 'access switch', 'access switches')} · "
        f"{style.count(ports)} management ports · {len(fabric.racks)} racks",
    )
    if len(access) <= SWITCHES_SHOWN:
        groups = [Group(s, [s]) for s in access]
    else:
        groups = elide(
            group_by(
                access,
                lambda s: fabric.rack_by_name[devices[s].rack or ""].row if devices[s].rack else -1,
            ),
            ROWS_SHOWN,
        )
    shown: list[str] = []
    tone = style.network_tone("oob")
    targets: Counter[str] = Counter()
    switch_ids: list[str] = []
    rack_ids: list[str] = []
    for index, group in enumerate(groups):
        members = group.members
        racks = [r for m in members for r in served[m]]
        counts: Counter[str] = Counter()
        for m in members:
            counts.update(kinds[m])
        model = devices[members[0]].model.upper()
        if len(members) == 1 and not group.is_ellipsis:
            title = members[0]
            shown.append(members[0])
            sub = model
        elif group.is_ellipsis:
            title = f"⋯ {group.hidden} more rows"
            sub = f"{len(members)} × {model}"
        else:
            row = group.key
            title = (
                f"Row {fabric.racks[[r.row for r in fabric.racks].index(row)].name[0]}"
                if isinstance(row, int) and row >= 0
                else "access"
            )
            sub = f"{len(members)} × {model}"
        node_id = f"oob{index}"
        switch_ids.append(node_id)
        graph.node(
            node_id,
            label=Html(f"{cell(title, 9, bold=True)}<BR/>{cell(sub, 7.5, style.MUTED)}"),
            fillcolor=tone.fill,
            color=tone.stroke,
            style="rounded,filled,dashed" if group.is_ellipsis else "rounded,filled",
        )
        rack_id = f"racks{index}"
        rack_ids.append(rack_id)
        detail = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
        ranges = rack_ranges(fabric, racks) if racks else "-"
        if len(ranges) > 40:
            ranges = ranges[:38].rsplit(",", 1)[0] + ", …"
        graph.node(
            rack_id,
            label=Html(
                f"{cell('racks ' + ranges, 8, bold=True)}<BR/>{cell(detail, 7.5, style.MUTED)}"
            ),
            fillcolor=style.PAPER,
            color=style.HAIRLINE,
            shape="box",
            style="rounded,filled",
        )
        graph.edge(
            node_id,
            rack_id,
            label=f" {sum(counts.values())} × 1G",
            fontsize="7.5",
            fontcolor=style.MUTED,
            fontname=style.FONT,
            color=style.FAINT,
        )
        for m in members:
            targets.update(uplinks[m])
    upper_ids: list[str] = []
    if targets:
        upper = list(targets)
        for target in upper:
            device = devices[target]
            tier_tone = style.TIER.get(device.role, style.OTHER)
            upper_ids.append(target)
            shown.append(target)
            graph.node(
                target,
                label=Html(
                    f"{cell(target, 9, bold=True)}<BR/>"
                    f"{cell(f'{device.network} {device.role} · {device.model.upper()}', 7.5, style.MUTED)}"
                ),
                fillcolor=tier_tone.fill,
                color=tier_tone.stroke,
            )
        for index, group in enumerate(groups):
            per: Counter[str] = Counter()
            for m in group.members:
                per.update(uplinks[m])
            for target, n in per.items():
                graph.edge(
                    target,
                    f"oob{index}",
                    color=style.UPLINK,
                    penwidth="1.2",
                    tooltip=f"{n} uplinks",
                )
    # Flat invisible edges keep each rank in layout order (dot would reorder it otherwise).
    for ids in (upper_ids, switch_ids, rack_ids):
        for a, b in pairwise(ids):
            graph.edge(a, b, style="invis")
        graph.same_rank(ids)
    uplinked = sum(sum(c.values()) for c in uplinks.values())
    caption = (
        f"The out-of-band network: {style.plural(len(access), 'access switch', 'access switches')}"
        + (" serves" if len(access) == 1 else " serve")
        + " the BMCs, switch management ports and PDUs of neighbouring racks"
        f" ({style.count(ports)} ports)"
        + (
            f", and uplink to {', '.join(upper_ids[:4])}{' …' if len(upper_ids) > 4 else ''}"
            f" ({uplinked} links)."
            if upper_ids
            else "."
        )
    )
    return Diagram(
        name, graph_title(oob.name), caption, "management", RANKED, graph.source(), tuple(shown)
    )


def graph_title(network: str) -> str:
    return f"{network} network · out-of-band management"
