"""Diagram `planes-<network>`: how one node's NIC ports fan out over the planes and rails.

Consumes the Fabric IR; produces a pinned Diagram for every network with more than one plane.
Each plane is a panel (its spines over its rail leaves, one column per rail, the same columns in
every plane); below them, one representative node with each NIC port labelled and wired to the
leaf of its rail in its plane. Every other node of the network is wired the same way.
"""

from __future__ import annotations

from fabricc.emit.diagrams import facts, style
from fabricc.emit.diagrams.dot import Html, html_escape
from fabricc.emit.diagrams.groups import bundle
from fabricc.emit.diagrams.layout import Box, Frame, Scene, between
from fabricc.emit.diagrams.model import PINNED, Diagram
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, Fabric, Link

SPINES_SHOWN = 8
PORT_WIDTH = 52.0


def _node_box(name: str, model: str, links: list[Link], tone: style.Tone) -> Box:
    cells = []
    for index, link in enumerate(links):
        colour = style.rail_tint(link.rail, 0.45)
        cells.append(
            f'<TD PORT="p{index}" FIXEDSIZE="TRUE" WIDTH="{PORT_WIDTH - 4:g}" HEIGHT="26" '
            f'BGCOLOR="{colour}" COLOR="{style.rail_hex(link.rail)}" BORDER="1">'
            f'<FONT POINT-SIZE="7.5">{html_escape(link.a_port)}<BR/>'
            f"P{facts.one_based(link.plane)} · R{facts.one_based(link.rail)}</FONT></TD>"
        )
    width = max(len(links) * PORT_WIDTH + 16, style.text_width(name, 10, True) + 40)
    label = Html(
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="4" CELLPADDING="0">'
        f'<TR><TD COLSPAN="{len(links)}"><B>{html_escape(name)}</B> '
        f'<FONT POINT-SIZE="8" COLOR="{style.MUTED}">{html_escape(model)}</FONT></TD></TR>'
        f"<TR>{''.join(cells)}</TR></TABLE>"
    )
    return Box(name, name, tone, html=label, width=width, height=58, panel=None, tooltip=name)


def _per_plane(links: list[Link], plane: int) -> list[str]:
    mine = [link for link in links if (link.plane or 0) == plane]
    speeds = {link.speed: 1 for link in mine}
    return [style.links_label(len(mine), speeds), f"to plane {plane + 1}"]


def planes(fabric: Fabric, network: str) -> Diagram | None:
    topology = fabric.networks[network]
    if topology.planes < 2:
        return None
    devices = fabric.devices
    links = list(fabric.links_of(network))
    endpoint = [link for link in links if link.kind == ENDPOINT_LEAF and link.plane is not None]
    if not endpoint:
        return None
    node = endpoint[0].a
    node_links = sorted(
        (link for link in endpoint if link.a == node),
        key=lambda link: (link.rail if link.rail is not None else -1, link.plane or 0),
    )
    leaves_used = {link.b for link in node_links}
    name = f"planes-{network}"
    others = len({link.a for link in endpoint}) - 1
    scene = Scene(
        name,
        f"{network} network · planes and rails",
        f"{topology.planes} planes · NIC ports of {node} and the leaves they reach"
        + (f" · {others} more nodes wired the same way" if others else ""),
    )
    box_of: dict[str, str] = {}
    shown: list[str] = []
    # Two planes: a butterfly, plane 1 above the node and plane 2 below it, rails in columns.
    # More planes: panels side by side above the node.
    butterfly = topology.planes == 2
    spine_rows: list[list[Box]] = []
    leaf_rows: list[list[Box]] = []
    frames: list[Frame] = []
    for plane in range(topology.planes):
        panel = 0 if butterfly else plane
        spines = [s for s in topology.switches.get("spine", []) if devices[s].plane == plane]
        leaves = [s for s in topology.switches.get("leaf", []) if devices[s].plane == plane]
        leaves = [s for s in leaves if s in leaves_used] or leaves[:8]
        spine_boxes: list[Box] = []
        if len(spines) <= SPINES_SHOWN:
            for spine in spines:
                spine_boxes.append(
                    Box(
                        spine,
                        spine,
                        style.TIER["spine"],
                        (facts.model_name(fabric, devices[spine]),),
                        panel=panel,
                    )
                )
                box_of[spine] = spine
                shown.append(spine)
        elif spines:
            model = facts.model_name(fabric, devices[spines[0]])
            spine_boxes.append(
                Box(
                    f"spines-p{plane}",
                    f"Plane {plane + 1} spines",
                    style.TIER["spine"],
                    (f"{style.count(len(spines))} × {model}",),
                    pips=tuple(style.TIER["spine"].stroke for _ in spines),
                    panel=panel,
                )
            )
            for spine in spines:
                box_of[spine] = spine_boxes[-1].id
        leaf_boxes: list[Box] = []
        for leaf in leaves:
            device = devices[leaf]
            leaf_boxes.append(
                Box(
                    leaf,
                    leaf,
                    style.Tone(style.rail_tint(device.rail), style.rail_hex(device.rail)),
                    (f"rail {facts.one_based(device.rail)}",),
                    panel=panel,
                    column=device.rail or 0,
                )
            )
            box_of[leaf] = leaf
            shown.append(leaf)
        spine_rows.append(spine_boxes)
        leaf_rows.append(leaf_boxes)
        frames.append(Frame(f"Plane {plane + 1}", spine_boxes + leaf_boxes))
    device = devices[node]
    tone = style.node_tone(facts.node_kind(fabric, device))
    node_box = _node_box(node, device.model, node_links, tone)
    shown.append(node)
    if butterfly:
        top_spines = scene.add_row("SPINE", "plane 1", spine_rows[0])
        top_leaves = scene.add_row("LEAF", "plane 1", leaf_rows[0])
        node_row = scene.add_row("NODE", node, [node_box])
        low_leaves = scene.add_row("LEAF", "plane 2", leaf_rows[1])
        scene.add_row("SPINE", "plane 2", spine_rows[1])
        scene.place(row_gaps=[70.0, 90.0, 90.0, 70.0])
        notes = [
            (between(top_spines, top_leaves), ["every leaf to every", "spine of its plane"]),
            (between(top_leaves, node_row), _per_plane(node_links, 0)),
            (between(node_row, low_leaves), _per_plane(node_links, 1)),
        ]
    else:
        spine_row = scene.add_row("SPINE", "", [b for row in spine_rows for b in row])
        leaf_row = scene.add_row("LEAF", "", [b for row in leaf_rows for b in row])
        node_row = scene.add_row("NODE", node, [node_box])
        scene.place(row_gaps=[70.0, 110.0])
        notes = [
            (between(spine_row, leaf_row), ["every leaf to every", "spine of its plane"]),
            (between(leaf_row, node_row), [f"{len(node_links)} NIC ports"]),
        ]
    scene.draw_frames(frames)
    scene.draw_boxes()
    uplinks = [
        link for link in links if link.kind == LEAF_SPINE and link.a in box_of and link.b in box_of
    ]
    for item in bundle(uplinks, box_of):
        scene.link(
            item.a,
            item.b,
            width=0.6,
            tooltip=f"{item.a} – {item.b}: {style.links_label(item.links, dict(item.speeds))}",
        )
    for index, link in enumerate(node_links):
        side = "s" if butterfly and (link.plane or 0) == 1 else "n"
        scene.link(
            node,
            link.b,
            colour=style.rail_hex(link.rail),
            width=1.4,
            tailport=f"p{index}:{side}",
            tooltip=f"{node}:{link.a_port} – {link.b}:{link.b_port} ({style.speed(link.speed)})",
        )
    scene.gutter(notes)
    rails = sorted({link.rail for link in node_links if link.rail is not None})
    scene.legend([(style.rail_hex(r), f"rail {r + 1}") for r in rails], y=scene.bottom + 30)
    caption = (
        f"The {network} network has {topology.planes} independent planes. Each NIC port of "
        f"{node} ({len(node_links)} ports) goes to the leaf of its rail in its plane; the planes "
        "share no switch, so a plane can fail or be upgraded on its own."
    )
    return Diagram(name, scene.title, caption, "planes", PINNED, scene.source(), tuple(shown))
