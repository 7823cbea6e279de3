"""Diagram `su-<network>-<n>`: one scalable unit in detail - its nodes, rail leaves and uplinks.

Consumes the Fabric IR; produces pinned Diagrams, one per distinct SU shape (the first SU of
each shape stands for the others, so a 256-SU fabric gives one or two diagrams, not 256).
Columns run left to right - nodes with their NICs, the unit's leaves, the spines they uplink to
- so that 32 nodes stay legible at report width. Every node line has its rail's colour.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from itertools import pairwise

from fabricc.emit.diagrams import facts, style
from fabricc.emit.diagrams.groups import Group, bundle, elide, group_by, unit_numbers
from fabricc.emit.diagrams.layout import Box, Frame, Row, Scene
from fabricc.emit.diagrams.model import PINNED, Diagram
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, Fabric, Link, NetworkTopology

NODES_SHOWN = 48  # endpoints drawn one by one; beyond, one box per rack-scale system or rack
SPINES_SHOWN = 24  # spines drawn one by one; beyond, one box per pod
SHAPES_SHOWN = 4  # distinct SU shapes drawn per network
COLUMN_GAP = 300.0
NODE_PITCH = 21.0
BAND_GAP = 1.2  # extra pitches between the planes of a column


def _stack(boxes: list[Box], x: float, height: float, bands: list[int] | None = None) -> None:
    """Spread boxes evenly over `height`, centred on x; a change of band (a plane) leaves an
    extra gap so that each band's frame stays clear of the next."""
    bands = bands or [0] * len(boxes)
    breaks = sum(1 for a, b in pairwise(bands) if a != b)
    pitch = height / max(len(boxes) + BAND_GAP * breaks, 1)
    y = pitch / 2
    for index, box in enumerate(boxes):
        if index and bands[index] != bands[index - 1]:
            y += BAND_GAP * pitch
        box.x, box.y = x, y
        y += pitch


class _Unit:
    def __init__(
        self,
        fabric: Fabric,
        topology: NetworkTopology,
        su: int,
        leaves: list[str],
        links: list[Link],
    ) -> None:
        self.fabric = fabric
        self.topology = topology
        self.su = su
        self.devices = fabric.devices
        self.leaves = leaves
        self.links = links
        self.nodes = list(
            dict.fromkeys(link.a for link in self.links if link.kind == ENDPOINT_LEAF)
        )
        self.spines = list(dict.fromkeys(link.b for link in self.links if link.kind == LEAF_SPINE))
        self.box_of: dict[str, str] = {}
        self.shown: list[str] = []

    def signature(self) -> Hashable:
        groups = Counter((self.devices[n].group, self.devices[n].model) for n in self.nodes)
        per_leaf = Counter(link.b for link in self.links if link.kind == ENDPOINT_LEAF)
        return (
            tuple(sorted((str(g), m, c) for (g, m), c in groups.items())),
            len(self.leaves),
            tuple(sorted(per_leaf.values())),
            len(self.spines),
        )

    # -- boxes ----------------------------------------------------------------------------

    def node_boxes(self) -> list[Box]:
        devices = self.devices
        rails: dict[str, list[int | None]] = {}
        for link in self.links:
            if link.kind == ENDPOINT_LEAF:
                entry = rails.setdefault(link.a, [])
                if link.rail not in entry:
                    entry.append(link.rail)
        boxes: list[Box] = []
        if len(self.nodes) <= NODES_SHOWN:
            for name in self.nodes:
                device = devices[name]
                tone = style.node_tone(facts.node_kind(self.fabric, device))
                node_rails = sorted(rails[name], key=lambda r: -1 if r is None else r)
                boxes.append(
                    Box(
                        name,
                        name,
                        tone,
                        pips=tuple(style.rail_hex(r) for r in node_rails),
                        inline=True,
                        tooltip=f"{name} ({device.model})",
                    )
                )
                self.box_of[name] = name
                self.shown.append(name)
            return boxes

        def system(name: str) -> Hashable:
            device = devices[name]
            return device.system or device.rack or name

        groups = elide(group_by(self.nodes, system), NODES_SHOWN)
        for index, group in enumerate(groups):
            first = devices[group.members[0]]
            tone = style.node_tone(facts.node_kind(self.fabric, first))
            group_rails = sorted(
                {r for m in group.members for r in rails[m]}, key=lambda r: -1 if r is None else r
            )
            count = len(group.members)
            if group.is_ellipsis:
                title = f"⋯ {group.hidden} more ({count})"
            elif first.system is not None:
                title = f"{group.key} · {style.plural(count, 'tray')}"
            else:
                title = f"rack {group.key} · {count} {first.group or first.kind}"
            box = Box(
                f"n{index}",
                title,
                tone,
                pips=tuple(style.rail_hex(r) for r in group_rails),
                inline=True,
                dashed=group.is_ellipsis,
                tooltip=f"{group.members[0]} … {group.members[-1]}",
            )
            boxes.append(box)
            for member in group.members:
                self.box_of[member] = box.id
        return boxes

    def leaf_boxes(self) -> list[Box]:
        boxes = []
        order = sorted(
            self.leaves,
            key=lambda n: (self.devices[n].plane or 0, self.devices[n].rail or 0, n),
        )
        for name in order:
            device = self.devices[name]
            rail = device.rail
            lines = [f"{facts.model_name(self.fabric, device)} · rail {facts.one_based(rail)}"]
            if self.topology.planes > 1:
                lines[0] += f" · plane {facts.one_based(device.plane)}"
            boxes.append(
                Box(
                    name,
                    name,
                    style.Tone(style.rail_tint(rail), style.rail_hex(rail)),
                    tuple(lines),
                    tooltip=name,
                )
            )
            self.box_of[name] = name
            self.shown.append(name)
        return boxes

    def spine_boxes(self) -> list[Box]:
        devices = self.devices
        tone = style.TIER["spine"]
        boxes = []
        if len(self.spines) <= SPINES_SHOWN:
            for name in self.spines:
                boxes.append(
                    Box(
                        name,
                        name,
                        tone,
                        (facts.model_name(self.fabric, devices[name]),),
                        tooltip=name,
                    )
                )
                self.box_of[name] = name
                self.shown.append(name)
            return boxes
        groups: list[Group] = group_by(
            self.spines, lambda n: (devices[n].plane or 0, devices[n].pod)
        )
        for index, group in enumerate(groups):
            plane, pod = group.key if isinstance(group.key, tuple) else (0, None)
            first = devices[group.members[0]]
            title = f"{facts.pod_label(first)} spines" if isinstance(pod, int) else "Spines"
            if self.topology.planes > 1:
                title = f"Plane {plane + 1} · {title.lower()}"
            model = facts.model_name(self.fabric, devices[group.members[0]])
            box = Box(
                f"s{index}",
                title,
                tone,
                (f"{style.count(len(group.members))} × {model}",),
                pips=tuple(tone.stroke for _ in group.members),
            )
            boxes.append(box)
            for member in group.members:
                self.box_of[member] = box.id
        return boxes

    # -- assembly -------------------------------------------------------------------------

    def build(self, same_as: list[int]) -> Diagram:
        topology = self.topology
        number = self.fabric.su_label(self.su)
        name = f"su-{topology.name}-{number}"
        others = _numbers(sorted(self.fabric.su_label(s) for s in same_as if s != self.su))
        title = f"{topology.name} network · scalable unit {number}"
        parts = [self.node_detail(), f"{len(self.leaves)} leaves", f"{len(self.spines)} spines"]
        scene = Scene(name, title, " · ".join(parts + ([f"same as {others}"] if others else [])))
        nodes, leaves, spines = self.node_boxes(), self.leaf_boxes(), self.spine_boxes()
        rows = [
            Row("NODES", self.node_detail(), nodes),
            Row("LEAVES", self.leaf_detail(), leaves),
            Row("SPINES", self.spine_detail(), spines),
        ]
        height, xs = self.place(rows)
        scene.adopt(rows)
        if topology.planes > 1:
            scene.draw_frames(
                [
                    Frame(
                        f"Plane {plane + 1}",
                        [b for b in leaves if (self.devices[b.id].plane or 0) == plane],
                        pad=10,
                    )
                    for plane in range(topology.planes)
                ]
            )
        for box in [*nodes, *leaves, *spines]:
            scene.draw_box(box)
        self.draw_links(scene)
        for row, x in zip(rows, xs, strict=True):
            if row.boxes:
                lines = [row.name, row.detail]
                scene.text(x, -34, lines, size=9, colour=style.MUTED, bold_first=True)
        notes = [((xs[0] + xs[1]) / 2, self.node_note())]
        if spines:
            notes.append(((xs[1] + xs[2]) / 2, self.uplink_note()))
        for x, lines in notes:
            scene.text(x, height + 22, lines, size=8, colour=style.MUTED)
        rails = sorted({self.devices[n].rail or 0 for n in self.leaves})
        scene.legend([(style.rail_hex(r), f"rail {r + 1}") for r in rails], y=height + 52)
        caption = (
            f"Scalable unit {number} of the {topology.name} network"
            + (
                f" ({others} {'is' if others.startswith('SU ') else 'are'} wired alike)"
                if others
                else ""
            )
            + f": {self.node_detail()} on {len(self.leaves)} rail leaves; NIC i of every node "
            "goes to the rail-i leaf (one colour per rail), and every leaf uplinks to the spines "
            "on the right."
        )
        return Diagram(name, title, caption, "su", PINNED, scene.source(), tuple(self.shown))

    def place(self, rows: list[Row]) -> tuple[float, tuple[float, float, float]]:
        """Three columns left to right, each spread over the height of the tallest; leaves and
        spines in bands by plane."""
        nodes, leaves, spines = (row.boxes for row in rows)
        height = max(len(nodes) * NODE_PITCH, len(leaves) * 44.0, len(spines) * 34.0)
        node_x = max(b.width for b in nodes) / 2
        leaf_x = node_x + max(b.width for b in nodes) / 2 + COLUMN_GAP
        spine_x = leaf_x + COLUMN_GAP * 0.8 + max(b.width for b in leaves)
        _stack(nodes, node_x, height)
        for boxes, x in ((leaves, leaf_x), (spines, spine_x)):
            _stack(boxes, x, height, [self.plane_of(b.id) for b in boxes])
        return height, (node_x, leaf_x, spine_x)

    def plane_of(self, box: str) -> int:
        device = self.devices.get(box)
        return (device.plane or 0) if device is not None else 0

    def draw_links(self, scene: Scene) -> None:
        """Node links in their rail's colour, uplinks thin and grey; east side to west side."""
        for item in bundle(self.links, self.box_of):
            text = f"{item.a} – {item.b}: {style.links_label(item.links, dict(item.speeds))}"
            if item.kinds.get(ENDPOINT_LEAF):
                width = 0.7 if item.links == 1 else style.line_width(item.links)
                colour = style.rail_hex(item.rail)
            else:
                width, colour = 0.6, style.LINK
            scene.link(
                item.a,
                item.b,
                colour=colour,
                width=width,
                tooltip=text,
                tailport="e",
                headport="w",
            )

    def node_detail(self) -> str:
        groups = Counter(self.devices[n].group or self.devices[n].kind for n in self.nodes)
        return " + ".join(f"{style.count(c)} {g}" for g, c in groups.items())

    def leaf_detail(self) -> str:
        models = Counter(facts.model_name(self.fabric, self.devices[n]) for n in self.leaves)
        return " + ".join(f"{c} × {m}" for m, c in models.items())

    def spine_detail(self) -> str:
        models = Counter(facts.model_name(self.fabric, self.devices[n]) for n in self.spines)
        return " + ".join(f"{c} × {m}" for m, c in models.items())

    def uplink_note(self) -> list[str]:
        per_pair = Counter((link.a, link.b) for link in self.links if link.kind == LEAF_SPINE)
        speeds = Counter(link.speed for link in self.links if link.kind == LEAF_SPINE)
        total = sum(per_pair.values())
        lines = [f"{style.links_label(total, dict(speeds))} uplinks"]
        counts = set(per_pair.values())
        if len(counts) == 1:
            spines_per_leaf = Counter(a for a, _ in per_pair)
            reach = set(spines_per_leaf.values())
            if len(reach) == 1:
                lines.append(f"each leaf: {counts.pop()} to each of {reach.pop()} spines")
        if self.topology.tiers == 3:
            lines.append("spines uplink to the core (see overview)")
        return lines

    def node_note(self) -> list[str]:
        speeds = Counter(link.speed for link in self.links if link.kind == ENDPOINT_LEAF)
        total = sum(speeds.values())
        gbps = sum(s * c for s, c in speeds.items())
        return [
            f"{style.links_label(total, dict(speeds))} node links",
            style.bandwidth(gbps),
        ]


def _numbers(units: list[int]) -> str:
    """SU 2, SUs 2–4, SUs 2, 5, 9, or SUs 2, 3, … (254 units) for a long irregular list."""
    if not units:
        return ""
    return f"{'SU' if len(units) == 1 else 'SUs'} {unit_numbers(units)}"


def _units(fabric: Fabric, network: str) -> dict[int, _Unit]:
    """Every scalable unit of a network that has rail leaves and nodes, by SU index."""
    topology = fabric.networks[network]
    devices = fabric.devices
    classes = facts.leaf_classes(topology)
    railed = facts.rail_optimized_classes(topology)
    leaves: dict[int, list[str]] = {}
    su_of: dict[str, int] = {}
    for name in topology.switches.get("leaf", []):
        su = devices[name].su
        if su is not None and classes.get(name) in railed:
            leaves.setdefault(su, []).append(name)
            su_of[name] = su
    links: dict[int, list[Link]] = {}
    for link in fabric.links_of(network):
        end = link.b if link.kind == ENDPOINT_LEAF else link.a if link.kind == LEAF_SPINE else None
        if end is not None and end in su_of:
            links.setdefault(su_of[end], []).append(link)
    units: dict[int, _Unit] = {}
    for su in sorted(leaves):
        unit = _Unit(fabric, topology, su, leaves[su], links.get(su, []))
        if unit.nodes:
            units[su] = unit
    return units


def _shapes(units: dict[int, _Unit]) -> list[list[int]]:
    shapes: dict[Hashable, list[int]] = {}
    for su, unit in units.items():
        shapes.setdefault(unit.signature(), []).append(su)
    return list(shapes.values())


def su_shapes(fabric: Fabric, network: str) -> list[list[int]]:
    """SU indices grouped by shape (node groups and counts, leaves, links per leaf, spines)."""
    if not fabric.networks[network].sus:
        return []
    return _shapes(_units(fabric, network))


def su_diagrams(fabric: Fabric, network: str) -> list[Diagram]:
    """One diagram per distinct SU shape (at most SHAPES_SHOWN) of a network with SUs."""
    if not fabric.networks[network].sus:
        return []
    units = _units(fabric, network)
    return [units[members[0]].build(members) for members in _shapes(units)[:SHAPES_SHOWN]]
