"""Diagram `overview-<network>`: one network's tiers, top to bottom, readable at any scale.

Consumes the Fabric IR; produces a pinned Diagram. A tier of at most 8 switches is drawn
switch by switch; a bigger one is drawn as groups (a scalable unit's leaves, a pod's
spines, a core group), and beyond 6 groups the middle ones collapse into one '...' box, so a
65,536-GPU fabric gives the same handful of boxes as a small one. Nodes are grouped by the
boxes they attach to. Lines carry link count x speed and the bandwidth they add up to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable
from itertools import pairwise

from fabricc.emit.diagrams import facts, style
from fabricc.emit.diagrams.groups import (
    Bundle,
    Group,
    bundle,
    elide,
    group_by,
    ordinal_range,
    unit_numbers,
)
from fabricc.emit.diagrams.layout import Box, Frame, Row, Scene, between
from fabricc.emit.diagrams.model import PINNED, Diagram
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, PEER, SITE, SPINE_CORE, Fabric, NetworkTopology

SWITCHES_SHOWN = 8  # a tier up to this size (all planes) is drawn switch by switch
GROUPS_SHOWN = 6  # groups per tier and plane before the middle ones collapse
NODES_SHOWN = 8  # endpoints drawn one by one up to this many
NODE_BOXES = 12  # endpoint groups before they are merged by node group alone
LABELLED = 12  # line labels per tier pair; above that the gutter gives the total
TIERS = ("core", "spine", "leaf")
TIER_NAMES = {"core": "CORE", "spine": "SPINE", "leaf": "LEAF"}
PLURALS = {"core": "cores", "spine": "spines", "leaf": "leaves"}


def bundle_text(item: Bundle) -> str:
    text = style.links_label(item.links, dict(item.speeds))
    return f"{text}\n{style.bandwidth(item.gbps)}" if item.links > 1 else text


class _Overview:
    def __init__(self, fabric: Fabric, topology: NetworkTopology) -> None:
        self.fabric = fabric
        self.topology = topology
        self.devices = fabric.devices
        self.links = list(fabric.links_of(topology.name))
        self.spine_pods = facts.spine_pods(fabric, topology) if topology.tiers == 3 else {}
        self.pod_spines = {pod: spine for spine, pod in reversed(self.spine_pods.items())}
        self.pods = facts.leaf_pods(fabric, topology) if topology.tiers == 3 else {}
        self.classes = facts.leaf_classes(topology)
        self.railed = facts.rail_optimized_classes(topology)
        self.box_of: dict[str, str] = {}
        self.shown: list[str] = []  # devices drawn by name
        self.anchors: dict[str, list[str]] = {}

    # -- switches -------------------------------------------------------------------------

    def key(self, tier: str) -> Callable[[str], Hashable]:
        devices, topology = self.devices, self.topology
        if tier == "core":
            per = topology.cores_per_group
            return lambda s: ("group", devices[s].index // per) if per else ("all",)
        if tier == "spine":
            pods = self.spine_pods
            return lambda s: ("pod", pods.get(s)) if topology.tiers == 3 else ("all",)

        def leaf_key(s: str) -> Hashable:
            if s in self.pods:
                return ("pod", self.pods[s])
            if devices[s].su is not None and topology.sus:
                return ("su", devices[s].su)
            return ("class", self.classes.get(s, "leaf"))

        return leaf_key

    def is_rail_leaf(self, name: str) -> bool:
        return self.classes.get(name) in self.railed and self.devices[name].rail is not None

    def switch_box(self, tier: str, plane: int, index: int, group: Group) -> Box:
        members = group.members
        first = self.devices[members[0]]
        models = Counter(facts.model_name(self.fabric, self.devices[m]) for m in members)
        model = models.most_common(1)[0][0]
        tone = style.TIER[tier]
        if len(members) == 1 and not group.is_ellipsis and group.key == members[0]:
            self.shown.append(first.name)
            lines = [model]
            if tier == "leaf" and self.is_rail_leaf(first.name):
                tone = style.Tone(style.rail_tint(first.rail), style.rail_hex(first.rail))
                lines.append(f"rail {facts.one_based(first.rail)}")
            return Box(first.name, first.name, tone, tuple(lines), tooltip=first.name)
        pips = tuple(
            style.rail_hex(self.devices[m].rail)
            if tier == "leaf" and self.is_rail_leaf(m)
            else tone.stroke
            for m in members
        )
        title = self.group_title(tier, group)
        summary = (f"{style.count(len(members))} × {model}",)
        box_id = f"{tier}-p{plane}-g{index}"
        tooltip = f"{title}: {', '.join(members[:6])}{' …' if len(members) > 6 else ''}"
        if group.is_ellipsis:
            return Box(box_id, title, tone, summary, dashed=True, tooltip=tooltip)
        return Box(box_id, title, tone, summary, pips=pips, tooltip=tooltip)

    def group_title(self, tier: str, group: Group) -> str:
        key = group.first_key if group.is_ellipsis else group.key
        assert isinstance(key, tuple)
        kind = key[0]
        if group.is_ellipsis:
            assert isinstance(group.last_key, tuple)
            first, last = key[1], group.last_key[1]
            unit = {"su": "SU", "pod": "Pods", "group": "Core groups"}.get(kind, "")
            if kind == "su" and isinstance(first, int) and isinstance(last, int):
                labels = sorted(self.fabric.su_label(su) for su in range(first, last + 1))
                return f"⋯ {unit} {unit_numbers(labels)}"
            if kind == "pod" and isinstance(first, int) and isinstance(last, int):
                ends = [self.devices[self.pod_spines[p]] for p in (first, last)]
                if ends[0].series == ends[1].series:  # pods count within their leaf class
                    pods = ordinal_range((ends[0].pod or 0) + 1, (ends[1].pod or 0) + 1)
                    return f"⋯ {ends[0].series + ' pods' if ends[0].series else 'Pods'} {pods}"
                return f"⋯ {group.hidden} more"
            if isinstance(first, int) and isinstance(last, int):
                return f"⋯ {unit} {ordinal_range(first + 1, last + 1)}"
            return f"⋯ {group.hidden} more"
        if kind == "su":
            return f"SU {self.fabric.su_label(key[1])} leaves"
        if kind == "pod":
            label = facts.pod_label(self.devices[self.pod_spines[key[1]]])
            return f"{label} {'leaves' if tier == 'leaf' else 'spines'}"
        if kind == "group":
            return f"Core group {key[1] + 1}"
        if kind == "class":
            return f"{key[1]} leaves"
        return {"spine": "Spines", "core": "Core"}.get(tier, "Leaves")

    def site_row(self, scene: Scene) -> Row | None:
        """The site network the top tier's border links go to (not part of the design)."""
        far = sorted({link.b for link in self.links if link.kind == SITE})
        network = self.fabric.loaded.networks.get(self.topology.name)
        if not far or network is None:
            return None
        handoff = network.spec.site_uplinks.handoff
        boxes = []
        for name in far:
            box = Box(name, name, style.OTHER, ("site network", handoff), dashed=True, tooltip=name)
            self.box_of[name] = box.id
            boxes.append(box)
        return scene.add_row("SITE", "not in this design", boxes)

    def switch_rows(self, scene: Scene) -> dict[str, Row]:
        topology = self.topology
        rows: dict[str, Row] = {}
        site = self.site_row(scene)
        if site is not None:
            rows["site"] = site
        for tier in TIERS:
            names = topology.switches.get(tier, [])
            if not names:
                continue
            boxes: list[Box] = []
            one_by_one = len(names) <= SWITCHES_SHOWN  # all planes together
            for plane in range(topology.planes):
                members = [s for s in names if (self.devices[s].plane or 0) == plane]
                if one_by_one:
                    groups = [Group(s, [s]) for s in members]
                else:
                    groups = elide(group_by(members, self.key(tier)), GROUPS_SHOWN)
                aligned = tier == "leaf" or (tier == "spine" and topology.tiers == 3)
                for index, group in enumerate(groups):
                    box = self.switch_box(tier, plane, index, group)
                    box.panel = plane
                    box.column = index if aligned else None
                    for member in group.members:
                        self.box_of[member] = box.id
                    boxes.append(box)
            tallest = max(b.height for b in boxes)
            for box in boxes:
                box.height = tallest
            models = Counter(facts.model_name(self.fabric, self.devices[s]) for s in names)
            detail = " + ".join(f"{style.count(n)} × {m}" for m, n in sorted(models.items()))
            rows[tier] = scene.add_row(TIER_NAMES[tier], detail, boxes)
        return rows

    # -- endpoints ------------------------------------------------------------------------

    def endpoint_row(self, scene: Scene) -> Row | None:
        attached: dict[str, list[str]] = {}
        for link in self.links:
            if link.kind == ENDPOINT_LEAF:
                leaf_box = self.box_of.get(link.b)
                targets = attached.setdefault(link.a, [])
                if leaf_box is not None and leaf_box not in targets:
                    targets.append(leaf_box)
        if not attached:
            return None
        devices = self.devices
        boxes: list[Box] = []
        anchors: dict[str, list[str]] = {}
        if len(attached) <= NODES_SHOWN:
            for name in attached:
                device = devices[name]
                kind = facts.node_kind(self.fabric, device)
                boxes.append(
                    Box(
                        name,
                        name,
                        style.node_tone(kind),
                        (facts.model_name(self.fabric, device),),
                        tooltip=name,
                        panel=None,
                    )
                )
                self.shown.append(name)
                self.box_of[name] = name
                anchors[name] = attached[name]
        else:

            def by_boxes(name: str) -> Hashable:
                return (tuple(attached[name]), devices[name].group or devices[name].kind)

            groups = group_by(attached, by_boxes)
            if len(groups) > NODE_BOXES:
                groups = group_by(attached, lambda n: devices[n].group or devices[n].kind)
            for index, group in enumerate(groups):
                box = self.endpoint_box(index, group)
                box.panel = None
                boxes.append(box)
                reach: list[str] = []
                for member in group.members:
                    self.box_of[member] = box.id
                    reach += [t for t in attached[member] if t not in reach]
                anchors[box.id] = reach
        self.anchors = anchors
        groups_count = len({devices[n].group for n in attached})
        detail = f"{style.count(len(attached))} in {style.plural(groups_count, 'group')}"
        return scene.add_row("NODES", detail, boxes)

    def endpoint_box(self, index: int, group: Group) -> Box:
        devices = self.devices
        first = devices[group.members[0]]
        kind = facts.node_kind(self.fabric, first)
        tone = style.node_tone(kind)
        models = Counter(facts.model_name(self.fabric, devices[m]) for m in group.members)
        lines = [" + ".join(f"{style.count(n)} × {m}" for m, n in sorted(models.items()))]
        gpus = sum(facts.gpus(self.fabric, devices[m]) for m in group.members)
        sus = {su for m in group.members if (su := devices[m].su) is not None}
        where = f"SU {unit_numbers(sorted(map(self.fabric.su_label, sus)))}" if sus else ""
        extra = " · ".join(
            part for part in (where, f"{style.count(gpus)} GPUs" if gpus else "") if part
        )
        if extra:
            lines.append(extra)
        box_id = f"nodes-{index}"
        return Box(
            box_id,
            first.group or kind,
            tone,
            tuple(lines),
            pips=tuple(tone.stroke for _ in group.members),
            tooltip=f"{first.group}: {group.members[0]} … {group.members[-1]}",
        )

    # -- assembly -------------------------------------------------------------------------

    def build(self) -> Diagram:
        topology = self.topology
        name = f"overview-{topology.name}"
        scene = Scene(name, f"{topology.name} network", self.subtitle())
        rows = self.switch_rows(scene)
        nodes = self.endpoint_row(scene)
        ordered = [rows[t] for t in ("site", *TIERS) if t in rows] + ([nodes] if nodes else [])
        scene.rows = ordered
        scene.place()
        if nodes is not None:
            scene.settle(nodes, self.anchors)
        frames = []
        if topology.planes > 1:
            for plane in range(topology.planes):
                members = [b for row in rows.values() for b in row.boxes if b.panel == plane]
                frames.append(Frame(f"Plane {plane + 1}", members))
        boxes = {box.id: box for row in ordered for box in row.boxes}
        for a, b in self.peer_pairs():
            if a in boxes and b in boxes:
                frames.append(Frame("MLAG pair", [boxes[a], boxes[b]], pad=8))
        scene.draw_frames(frames)
        scene.draw_boxes()
        bundles = bundle(self.links, self.box_of)
        tiers_of = {box.id: row.name for row in ordered for box in row.boxes}
        each = self.draw_links(scene, bundles, tiers_of)
        notes = []
        for upper, lower in pairwise(ordered):
            pair = frozenset((upper.name, lower.name))
            totals = [x for x in bundles if {tiers_of[x.a], tiers_of[x.b]} == pair]
            links = sum(x.links for x in totals)
            speeds: Counter[int] = Counter()
            for x in totals:
                speeds.update(x.speeds)
            if links:
                lines = [
                    style.links_label(links, dict(speeds)),
                    style.bandwidth(sum(x.gbps for x in totals)),
                ]
                if pair in each:
                    lines.append(each[pair])
                notes.append((between(upper, lower), lines))
        scene.gutter(notes)
        scene.legend(self.legend(), y=scene.bottom + 30)
        return Diagram(
            name,
            f"{topology.name} network",
            self.caption(),
            "overview" if topology.role == "compute" else "management",
            PINNED,
            scene.source(),
            tuple(self.shown),
        )

    def draw_links(
        self, scene: Scene, bundles: list[Bundle], tiers_of: dict[str, str]
    ) -> dict[frozenset[str], str]:
        """Draw every bundle. Lines between two tiers are labelled when they differ and are
        few; when they are all alike, the returned note ("each line ...") goes in the gutter."""
        pairs: dict[frozenset[str], list[Bundle]] = {}
        for item in bundles:
            pairs.setdefault(frozenset((tiers_of[item.a], tiers_of[item.b])), []).append(item)
        each: dict[frozenset[str], str] = {}
        for pair, items in pairs.items():
            uniform = len({(b.links, tuple(b.speeds)) for b in items}) == 1
            labelled = len(items) == 1 or (not uniform and len(items) <= LABELLED)
            if uniform and not labelled:
                first = items[0]
                each[pair] = "each line " + style.links_label(first.links, dict(first.speeds))
            for item in items:
                self.draw_link(scene, item, labelled)
        return each

    def draw_link(self, scene: Scene, item: Bundle, labelled: bool) -> None:
        peer = item.kinds.get(PEER, 0) == item.links
        railed = item.kinds.get(ENDPOINT_LEAF) and self.topology.rail_optimized
        rail = item.rail if railed else None
        if peer:
            colour = style.PEER_LINK
        else:
            colour = style.rail_hex(rail) if rail is not None else style.LINK
            if not labelled:
                colour += "b0"  # a dense mesh: lighter lines, so that boxes and labels lead
        text = bundle_text(item)
        scene.link(
            item.a,
            item.b,
            colour=colour,
            width=style.line_width(item.links),
            label=text if labelled and not peer else None,
            tooltip=f"{item.a} – {item.b}: {text.replace(chr(10), ', ')}"
            + (" (peer link)" if peer else ""),
            style_="dashed" if peer else "",
        )

    def peer_pairs(self) -> list[tuple[str, str]]:
        pairs: list[tuple[str, str]] = []
        for link in self.links:
            if link.kind == PEER and (link.a, link.b) not in pairs:
                pairs.append((link.a, link.b))
        return pairs

    def legend(self) -> list[tuple[str, str]]:
        entries = [(style.TIER[t].stroke, t) for t in TIERS if self.topology.switches.get(t)]
        rails = sorted(
            {
                self.devices[s].rail
                for s in self.topology.switches.get("leaf", [])
                if self.is_rail_leaf(s) and self.devices[s].rail is not None
            },
            key=lambda r: r if r is not None else -1,
        )
        entries += [(style.rail_hex(r), f"rail {facts.one_based(r)}") for r in rails]
        return entries

    def subtitle(self) -> str:
        t = self.topology
        parts = [t.fabric, f"{t.tiers}-tier" if t.tiers > 1 else "single tier"]
        if t.planes > 1:
            parts.append(f"{t.planes} planes")
        if t.rail_optimized:
            parts.append("rail-optimized")
        if t.dual_homed:
            parts.append("dual-homed (MLAG)")
        network = self.fabric.loaded.networks.get(t.name)
        if network is not None and network.spec.spread_ports:
            parts.append("ports spread over leaf pairs")
        if t.sus:
            parts.append(style.plural(t.sus, "scalable unit"))
        if t.pods and t.tiers == 3:
            parts.append(style.plural(t.pods, "pod"))
        parts.append(f"oversubscription {t.oversubscription[0]}:{t.oversubscription[1]}")
        return " · ".join(parts)

    def caption(self) -> str:
        t = self.topology
        counts = Counter(link.kind for link in self.links)
        tiers = ", ".join(
            style.plural(len(t.switches[tier]), tier, PLURALS[tier])
            for tier in ("leaf", "spine", "core")
            if t.switches.get(tier)
        )
        up = counts.get(LEAF_SPINE, 0) + counts.get(SPINE_CORE, 0)
        text = (
            f"The {t.name} network ({self.subtitle()}): {tiers}; "
            f"{style.count(counts.get(ENDPOINT_LEAF, 0))} node links and {style.count(up)} "
            "switch-to-switch links"
            + (
                f"; {style.count(counts[SITE])} border links to the site network."
                if counts.get(SITE)
                else "."
            )
        )
        if len(self.shown) < len(self.box_of):
            text += (
                " Where a tier is large, a box stands for a group of switches or nodes (one square"
                " each); line labels give link count × speed and the bandwidth they carry."
            )
        return text


def overview(fabric: Fabric, network: str) -> Diagram:
    return _Overview(fabric, fabric.networks[network]).build()
