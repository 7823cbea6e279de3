"""Synthesis pass 2: one network -> leaf, spine and core switches and every link between them.

Consumes a ResolvedNetwork and the node plans (endpoints with scalable unit and slot); produces
switch devices, links and a NetworkTopology. The rules, none of them special cases:

* Leaves: rail-optimized groups get, per scalable unit and plane, one leaf per rail (more if a
  unit has more nodes than a leaf has endpoint ports); NIC k of every node of the unit goes to the
  rail-k leaf, at the port of its slot. Other groups are packed top-of-rack style (dual-homed: a
  leaf pair per group of nodes, port k of a node to leaf k mod 2). Partial units are cabled as
  full ones: the leaves and their uplinks exist, the node slots stay empty.
* Symmetric tiers: every leaf connects to every spine of its tree with the same number of links,
  so the spine count S is the smallest divisor of the leaf uplink count (at least 2) that gives
  every spine enough ports (sizing.py). (RA-11333 Table 4: 3 SU need 16 spines, not 12.) Fewest
  tiers first, then the fastest switch links: a slower breakout may keep a fabric at 2 tiers.
* 3 tiers: blocks. Leaves and spines form spine-leaf groups (pods) of whole scalable units, or
  the written shape (spine_leaf_groups, core_groups); spine j of every pod connects to core group
  j, again with equal link counts. Every leaf class (storage arrays at 1:1 beside DGX at 4:3, a
  second GPU group) gets spine-leaf groups of its own - pods counted within the class, spines a
  name series of their own - under the shared core, the first class on the cores' ports from
  the first up, the second from the last down, so that either grows without moving the other.
* Guests: uplinks from other networks (uplink_to) take ports of the top tier; they are reserved
  before that tier is sized, so it grows (more switches, or a tier) instead of running out.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from fabricc.catalog.models import SwitchModel, switch_key
from fabricc.errors import Diagnostic
from fabricc.ir import (
    ENDPOINT_LEAF,
    LEAF_SPINE,
    PEER,
    SPINE_CORE,
    Fabric,
    LeafClass,
    Link,
)
from fabricc.spec.resolve import (
    PEER_LINK_CAGES,
    Attachment,
    LeafBudget,
    ResolvedNetwork,
    general_cages,
    leaf_budget,
    switch_port_speeds,
)
from fabricc.spec.yamlsource import DataPath
from fabricc.synth.builder import NetworkBuilder
from fabricc.synth.inbandleaves import MAX_BRIDGED_SPINES
from fabricc.synth.naming import port_index, switch_port
from fabricc.synth.nodes import Endpoint, GroupPlan
from fabricc.synth.portbook import PortBook
from fabricc.synth.sizing import (
    MIN_SPINES,
    Guests,
    LeafRow,
    TreeWidth,
    fits,
    pack_groups,
    ports_needed,
    spare_uplinks,
    symmetric_width,
    tree_width,
)
from fabricc.synth.switches import Place, add_switch


@dataclass(slots=True)
class _Class:
    name: str
    rail: bool
    attachments: list[Attachment]
    budget: LeafBudget
    plans: list[GroupPlan]
    path: DataPath
    leaves_per_rail: int = 1  # rail classes: leaves per rail per unit
    rails: int = 0
    nodes_per_leaf: int = 0  # top-of-rack classes
    # top-of-rack classes: leaves one node's ports alternate over (2: an MLAG pair with
    # dual_homed, or a routed pair with spread_ports)
    width: int = 1
    leaf_count: int = 0  # per plane
    su_offset: int = 0  # first network-wide unit index of this class
    sus: int = 0
    leaves: list[list[str]] = field(default_factory=list)  # per plane


class FatTreeBuilder(NetworkBuilder):
    def __init__(
        self,
        fabric: Fabric,
        network: ResolvedNetwork,
        plans: dict[str, GroupPlan],
        book: PortBook,
        problems: list[Diagnostic],
        guests: Guests | None = None,
    ) -> None:
        super().__init__(fabric, network, plans, book, problems, dual_homed=network.spec.dual_homed)
        self.guests = guests
        # with an earlier build kept, the switch-to-switch links wait for _place_kept_uplinks
        self.deferred: list[tuple[Link, int, int]] | None = [] if fabric.loaded.kept else None

    # -- planning ------------------------------------------------------------------------------

    def _classes(self, with_uplinks: bool) -> list[_Class]:
        classes: list[_Class] = []
        shared: dict[int, _Class] = {}
        for attachment in self.net.attachments:
            if attachment.reserved:
                continue
            plan = self.plans[attachment.group]
            override = (
                attachment.leaf_downlinks is not None
                or attachment.oversubscription != self.net.oversubscription
            )
            rail = self.net.rail_optimized and plan.in_units
            budget = leaf_budget(
                self.leaf_model,
                attachment.speed,
                self.net.fabric_speed,
                attachment.oversubscription,
                downlinks=attachment.leaf_downlinks,
                dual_homed=self.spec.dual_homed,
                has_uplinks=with_uplinks,
            )
            if rail or override:
                classes.append(
                    _Class(attachment.group, rail, [attachment], budget, [plan], attachment.path)
                )
                continue
            existing = shared.get(attachment.speed)
            if existing is None:
                existing = _Class(
                    f"shared-{attachment.speed}g", False, [], budget, [], self.net.path
                )
                shared[attachment.speed] = existing
                classes.append(existing)
            existing.attachments.append(attachment)
            existing.plans.append(plan)
        su_offset = 0
        for cls in classes:
            if cls.budget.down_ports < 1:
                self.fail(
                    f"the {switch_key(self.catalog, self.leaf_model)} leaf has no endpoint ports left at "
                    f"{cls.attachments[0].oversubscription[0]}:{cls.attachments[0].oversubscription[1]}",
                    (*self.net.path, "oversubscription"),
                )
                continue
            if cls.rail:
                plan = cls.plans[0]
                cls.rails = len(cls.attachments[0].ports)
                cls.leaves_per_rail = -(-plan.slots_per_su // cls.budget.down_ports)
                cls.sus = plan.sus
                cls.su_offset = plan.su_offset
                su_offset += plan.sus
                cls.leaf_count = cls.sus * cls.rails * cls.leaves_per_rail
            else:
                per_node = max(len(a.ports) for a in cls.attachments)
                spread = self.spec.spread_ports and per_node >= 2
                cls.width = 2 if self.spec.dual_homed or spread else 1
                cls.nodes_per_leaf = cls.budget.down_ports // -(-per_node // cls.width)
                nodes = sum(len(self.plans[a.group].endpoints) for a in cls.attachments)
                cls.leaf_count = (
                    cls.width * -(-nodes // cls.nodes_per_leaf) if cls.nodes_per_leaf else 0
                )
                if cls.nodes_per_leaf == 0:
                    self.fail(
                        f"a node of {cls.attachments[0].group!r} has {per_node} ports for this network, "
                        f"more than a leaf's {cls.budget.down_ports} endpoint ports",
                        cls.path,
                    )
        self.topology.sus = su_offset
        return classes

    def _two_tier_width(self) -> int | None:
        """Spines per plane of a 2-tier tree at the network's fabric speed, or None if two tiers
        cannot connect every leaf (a dry run: builds nothing, reports nothing)."""
        problems, self.problems = self.problems, []
        try:
            classes = self._classes(with_uplinks=True)
            if self.problems or not classes:
                return None
            width = self._two_tier(classes, self._target_leaves(classes, quiet=True))
            return width.switches if width is not None else None
        finally:
            self.problems = problems

    def _rows(self, classes: list[_Class], target: list[int]) -> list[LeafRow]:
        """Each class as the spines see it: leaves (with the units to come), uplinks per leaf,
        and the free ports a leaf could add as uplinks."""
        cages = general_cages(self.leaf_model)
        return [
            LeafRow(target[i], c.budget.up_ports, spare_uplinks(c.budget, cages))
            for i, c in enumerate(classes)
        ]

    def _two_tier(self, classes: list[_Class], target: list[int]) -> TreeWidth | None:
        """The spine tier of a symmetric 2-tier tree over these leaves (sizing.tree_width), or
        None. A written spine count must spread every leaf's own uplinks evenly and fit."""
        spine_model = self.catalog.switches[self.net.switch_models["spine"]]
        breakout = switch_port_speeds(spine_model)[self.net.fabric_speed]
        cages = general_cages(spine_model) * breakout
        guests = self._guest_ports(spine_model, 1)
        rows = self._rows(classes, target)
        wanted = self.spec.spines
        if wanted is None:
            # more spines than one pair route at the leaves and need no peer link: size without
            # one first, and keep its ports only where that gives a pair
            width = tree_width(rows, cages, breakout, guests, MIN_SPINES)
            if width is None or not self._spine_peer_ports(breakout, width.switches):
                return width
            return tree_width(
                rows, cages - self._spine_peer_ports(breakout, 2), breakout, guests, MIN_SPINES
            )
        own = [(r.leaves, r.uplinks) for r in rows]
        if fits(own, wanted, cages - self._spine_peer_ports(breakout, wanted), breakout, guests):
            return TreeWidth(wanted, tuple(r.uplinks for r in rows))
        return None

    def _choose_fabric_speed(self) -> None:
        """Fewest tiers first, then the fastest switch links: when two tiers (with the written
        spine count, if any) do not fit at the fastest common speed, the radix after breakout
        may (an SN5600 is 64 x 800G or 128 x 400G). Switch links never run slower than the
        endpoints' links."""
        if self.spec.tiers not in ("auto", 2) or self._shaped() is not None:
            return
        if "spine" not in self.net.switch_models or not self.net.attachments:
            return
        if self._two_tier_width() is not None:
            return
        spine_model = self.catalog.switches[self.net.switch_models["spine"]]
        common = set(switch_port_speeds(self.leaf_model)) & set(switch_port_speeds(spine_model))
        floor = max(a.speed for a in self.net.attachments)
        original = self.net
        for speed in sorted(common, reverse=True):
            if floor <= speed < original.fabric_speed:
                self.net = dataclasses.replace(original, fabric_speed=speed)
                if self._two_tier_width() is not None:
                    return
        self.net = original

    def build(self) -> None:
        tiers = self.spec.tiers
        if tiers != 1:
            self._choose_fabric_speed()
        classes = self._classes(with_uplinks=tiers != 1)
        if any(p.severity.value == "error" for p in self.problems):
            return
        total_leaves = sum(c.leaf_count for c in classes)
        if tiers == "auto":
            # One leaf (or MLAG pair) needs no spines. If other networks uplink into this one,
            # its uplink ports stay free for them, so the budget keeps them.
            targeted = any(
                n.spec.uplink_to == self.net.name for n in self.fabric.loaded.networks.values()
            )
            single = classes if targeted else self._classes(with_uplinks=False)
            fits_one = len(single) == 1 and single[0].leaf_count <= (
                2 if self.spec.dual_homed else 1
            )
            if fits_one:
                classes, tiers = single, 1
        if not classes or total_leaves == 0:
            self.fail(
                "no node is attached to this network, so it has no leaves",
                self.net.path,
                "attach a node group that fills scalable units (appliances on reserved slots "
                "alone do not), or remove the network",
            )
            return
        self.topology.leaf_classes = [
            LeafClass(
                name=c.name,
                groups=[a.group for a in c.attachments],
                down_ports=c.budget.down_ports,
                up_ports=c.budget.up_ports,
                down_speed=c.budget.down_speed,
                up_speed=c.budget.up_speed,
                rail_optimized=c.rail,
            )
            for c in classes
        ]
        self._check_ratio(classes)
        for plane in range(self.spec.planes):
            for number, cls in enumerate(classes):
                cls.leaves.append(self._make_leaves(cls, plane, first=number == 0))
        for index, cls in enumerate(classes):
            self.topology.leaf_classes[index].leaves = [n for plane in cls.leaves for n in plane]
        self._wire_endpoints(classes)
        self._wire_reserved(classes)
        if self.spec.dual_homed:
            self._peer_links(classes)
        if tiers == 1:
            self._check_single_tier(classes)
            self.topology.tiers = 1
            self.topology.switches = {"leaf": [n for c in classes for p in c.leaves for n in p]}
            return
        self._upper_tiers(classes, tiers)
        if self.deferred:
            self._place_kept_uplinks(self.deferred)
        if self.spec.role == "inband" and self.spec.dual_homed and self.topology.tiers == 2:
            self._spine_pair(self.topology.switches.get("spine", []))

    def _check_single_tier(self, classes: list[_Class]) -> None:
        """Without spines, endpoints reach each other only through one leaf (or MLAG pair) per
        rail and plane; more leaves would be islands unless the network uplinks elsewhere."""
        if self.spec.uplink_to is not None:
            return
        allowed = 2 if self.spec.dual_homed else 1
        for plane in range(self.spec.planes):
            per_rail = Counter(
                self.fabric.devices[name].rail
                for cls in classes
                for name in cls.leaves[plane]
                if name in self.fabric.devices
            )
            if per_rail and max(per_rail.values()) > allowed:
                rail, count = max(per_rail.items(), key=lambda item: (item[1], -(item[0] or 0)))
                where = f"rail {rail + 1}" if rail is not None else "the endpoints"
                if self.spec.planes > 1:
                    where += f" of plane {plane + 1}"
                self.fail(
                    f"tiers: 1 leaves {count} leaves serving {where} unconnected: without "
                    f"spines, nodes on different leaves cannot reach each other",
                    (*self.net.path, "tiers"),
                    "use tiers: auto (or 2), or set uplink_to to connect the leaves elsewhere"
                    + (
                        " (spread_ports puts each node on two leaves, which only spines join)"
                        if self.spec.spread_ports
                        else ""
                    ),
                )
                return
            if len(per_rail) > 1:
                # one leaf per rail: each rail is an island (bisection 0 between rails); that
                # is a design of its own, which the spec names (topology: rail-only)
                on = f" of plane {plane + 1}" if self.spec.planes > 1 else ""
                self.fail(
                    f"tiers: 1 leaves the {len(per_rail)} leaves{on} unconnected to each other: "
                    "without spines a GPU reaches only the nodes on its own leaf (rail), and "
                    "the network's bisection is 0",
                    (*self.net.path, "tiers"),
                    "use tiers: auto (or 2); for one leaf per rail and no spines by design, "
                    "write topology: rail-only instead of tiers: 1",
                )
                return

    def _check_ratio(self, classes: list[_Class]) -> None:
        for cls in classes:
            b = cls.budget
            if b.up_ports == 0:
                continue
            a_ratio, b_ratio = cls.attachments[0].oversubscription
            down_bw = b.down_ports * b.down_speed
            up_bw = b.up_ports * b.up_speed
            if down_bw * b_ratio != up_bw * a_ratio:
                g = math.gcd(down_bw, up_bw)
                self.warn(
                    f"leaves of {cls.name!r} are {down_bw // g}:{up_bw // g} oversubscribed "
                    f"({b.down_ports}x{b.down_speed}G down, {b.up_ports}x{b.up_speed}G up), not "
                    f"{a_ratio}:{b_ratio} as asked",
                    cls.path if cls.path != self.net.path else (*self.net.path, "oversubscription"),
                    "whole ports cannot give the exact ratio; adjust leaf_downlinks",
                )

    # -- leaves and endpoint links ---------------------------------------------------------------

    def _new_switch(
        self,
        role: str,
        model: str,
        series: str | None = None,
        group: str | None = None,
        **fields: int | None,
    ) -> str:
        return add_switch(
            self.fabric,
            self.topology,
            self.net,
            self.counts,
            role,
            model,
            Place(**fields),
            series=series,
            group=group,
        )

    def _make_leaves(self, cls: _Class, plane: int, first: bool) -> list[str]:
        """The leaves of one class in one plane; every class after the network's first is a
        name series of its own (synth/switches.py), so that each grows without renaming another."""
        model = self.net.switch_models["leaf"]
        group = cls.attachments[0].group
        series = None if first else group
        names: list[str] = []
        if cls.rail:
            for su in range(cls.sus):
                for rail in range(cls.rails):
                    for _ in range(cls.leaves_per_rail):
                        names.append(
                            self._new_switch(
                                "leaf",
                                model,
                                series,
                                group,
                                su=cls.su_offset + su,
                                rail=rail,
                                plane=plane,
                            )
                        )
            return names
        for _ in range(cls.leaf_count):
            names.append(self._new_switch("leaf", model, series, group, plane=plane))
        return names

    def _endpoint_port(self, attachment: Attachment, rail: int, plane: int) -> str:
        port = attachment.ports[rail]
        return f"{port}/{plane + 1}" if attachment.breakout > 1 else port

    def _link(self, link: Link) -> bool:
        """Add `link` if both its ports are free (True), else report it."""
        taken = self.book.take_link(link)
        if taken is not None:
            device, port = taken
            self.fail(f"port {port} of {device} would be used twice", self.net.path)
            return False
        self.fabric.links.append(link)
        return True

    def _uplink(self, link: Link, breakout: int, ports: int) -> None:
        """A leaf-spine or spine-core link, whose upper end is one of the first `ports` ports
        of its switch (`breakout` per cage); with an earlier build kept, held back until every
        such link is known (_place_kept_uplinks)."""
        if self.deferred is None:
            self._link(link)
        else:
            self.deferred.append((link, breakout, ports))

    def _place_kept_uplinks(self, deferred: list[tuple[Link, int, int]]) -> None:
        """With an earlier build kept (`build --keep`): a leaf-spine or spine-core link that
        the earlier build cabled between the same two switches from the same lower port keeps
        its upper port; the others take the port the rules give where it is free, else the
        next free one of the upper switch's region. So growth moves no installed cable even
        where the rules alone would (the ports of a third leaf class when the second grows)."""
        places = self.fabric.loaded.kept
        kept = {  # (switch, port) -> the upper end the earlier build cabled it to
            (name, port): (upper, upper_port)
            for name in {link.a for link, _, _ in deferred}
            if name in places
            for port, upper, upper_port in places[name].uplinks
        }
        held: dict[str, set[str]] = {}
        wanted: list[str | None] = []
        indices: dict[tuple[str, int], int | None] = {}  # port_index, once per name and breakout
        for link, breakout, ports in deferred:
            old = kept.get((link.a, link.a_port))
            if old is None or old[0] != link.b:
                wanted.append(None)
                continue
            port = old[1]
            index = indices.get((port, breakout), -1)
            if index == -1:
                index = indices[(port, breakout)] = port_index(port, breakout)
            taken = held.get(link.b)
            if taken is None:
                taken = held[link.b] = set()
            if index is None or index >= ports or port in taken:
                wanted.append(None)
                continue
            taken.add(port)
            wanted.append(port)
        placed: dict[tuple[str, str], tuple[str, str]] = {}  # lower end -> upper end, as cabled
        for (link, breakout, ports), chosen in zip(deferred, wanted, strict=True):
            if chosen is None:
                taken = held.setdefault(link.b, set())
                chosen = link.b_port
                start = port_index(chosen, breakout) or 0
                for step in range(ports):
                    if chosen not in taken:
                        break
                    chosen = switch_port(0, (start + step + 1) % ports, breakout)
                taken.add(chosen)
            if chosen != link.b_port:
                link = dataclasses.replace(link, b_port=chosen)
            if self._link(link):
                placed[(link.a, link.a_port)] = (link.b, chosen)
        self._report_rewiring(kept, placed)

    def _report_rewiring(
        self,
        earlier: dict[tuple[str, str], tuple[str, str]],
        placed: dict[tuple[str, str], tuple[str, str]],
    ) -> None:
        """Growth in place that moves installed switch-to-switch cables says so at build time:
        how many, why (the upper tier was sized for the earlier build's units) and how to avoid
        it (spines_for_sus for the final size). `earlier`: the upper end the earlier build
        cabled each lower port of this build's switches to; `placed`: the same as cabled now
        (every leaf-spine and spine-core link of the network is deferred: _uplink)."""
        spines = set(self.topology.switches.get("spine", []))
        moved: Counter[str] = Counter()
        uppers: dict[str, set[str]] = {}
        for key, upper in earlier.items():  # counts and sets: their order is none of theirs
            tier = "core" if key[0] in spines else "spine"
            uppers.setdefault(tier, set()).add(upper[0])
            if placed.get(key) != upper:
                moved[tier] += 1
        if not moved:
            return
        shape = [
            f"{tier}s {len(uppers[tier])} -> {len(self.topology.switches.get(tier, []))}"
            for tier in ("spine", "core")
            if tier in uppers and len(uppers[tier]) != len(self.topology.switches.get(tier, []))
        ]
        cables = " and ".join(
            f"{moved[tier]} of {sum(1 for k in earlier if (k[0] in spines) == (tier == 'core'))}"
            f" installed {kind} cables"
            for tier, kind in (("spine", LEAF_SPINE), ("core", SPINE_CORE))
            if moved[tier]
        )
        why = f"{', '.join(shape)}: " if shape else ""
        self.warn(
            f"growing in place rewires the earlier build: {why}{cables} are re-terminated or "
            "removed, because its upper tier was sized for its own units",
            self.net.path,
            f"to grow without recabling, give the first build spines_for_sus: {self.topology.sus}"
            " (the final number of units) on this network; `fabricc diff OLD NEW -o DIR` "
            "writes the work order (keep a copy of the earlier build folder for it)",
        )

    def _wire_endpoints(self, classes: list[_Class]) -> None:
        for cls in classes:
            b = cls.budget
            for plane in range(self.spec.planes):
                leaves = cls.leaves[plane]
                if cls.rail:
                    attachment = cls.attachments[0]
                    plan = cls.plans[0]
                    # per rail, the host port of this plane (the same for every endpoint)
                    host_ports = [
                        self._endpoint_port(attachment, rail, plane) for rail in range(cls.rails)
                    ]
                    network, speed = self.net.name, attachment.speed
                    for endpoint in plan.endpoints:
                        k, port_index = divmod(endpoint.slot, b.down_ports)
                        leaf_port = switch_port(0, port_index, b.down_breakout)
                        for rail in range(cls.rails):
                            assert endpoint.su is not None
                            unit = endpoint.su - cls.su_offset
                            leaf = leaves[(unit * cls.rails + rail) * cls.leaves_per_rail + k]
                            # positional: Link's field order (network, kind, a, a_port, b,
                            # b_port, speed, rail, plane) - keywords cost 3x at 100k GPUs
                            self._link(
                                Link(
                                    network,
                                    ENDPOINT_LEAF,
                                    endpoint.device,
                                    host_ports[rail],
                                    leaf,
                                    leaf_port,
                                    speed,
                                    rail,
                                    plane,
                                )
                            )
                    continue
                self._wire_top_of_rack(cls, plane, leaves)

    def _top_of_rack_order(self, cls: _Class) -> list[tuple[Attachment, Endpoint]]:
        """The order in which a top-of-rack class fills its leaves. Groups built in units (the
        ones that grow) after the others, so that growth appends. The leaves belong to no unit
        (they sit in central racks): which units a leaf serves changes as the groups before it
        grow, and a leaf must not change racks. With an earlier build kept (`build --keep`),
        its endpoints first, in the order they filled the leaves there, so that more nodes of a
        group before them move none: the new ones fill on after them."""
        attachments = sorted(cls.attachments, key=lambda a: self.plans[a.group].in_units)
        order = [(a, e) for a in attachments for e in self.plans[a.group].endpoints]
        kept = self.fabric.loaded.kept
        if not kept:
            return order
        network = self.net.name
        new = 1 << 62  # after every earlier rank, whatever the network's endpoints were

        def rank(item: tuple[Attachment, Endpoint]) -> int:
            place = kept.get(item[1].device)
            return next((r for n, r in place.ranks if n == network), new) if place else new

        return sorted(order, key=rank)  # stable: the new ones in the order above

    def _wire_top_of_rack(self, cls: _Class, plane: int, leaves: list[str]) -> None:
        b = cls.budget
        for position, (attachment, endpoint) in enumerate(self._top_of_rack_order(cls)):
            slot_group, slot = divmod(position, cls.nodes_per_leaf)
            ports = len(attachment.ports)
            width = cls.width
            for k in range(ports):
                # port k of a node on leaf k mod width of its pair (or its one leaf)
                leaf = leaves[width * slot_group + k % width]
                port_index = slot * -(-ports // width) + k // width
                self._link(  # positional, as in _wire_endpoints
                    Link(
                        self.net.name,
                        ENDPOINT_LEAF,
                        endpoint.device,
                        self._endpoint_port(attachment, k, plane),
                        leaf,
                        switch_port(0, port_index, b.down_breakout),
                        attachment.speed,
                        None,
                        plane,
                    )
                )

    def _wire_reserved(self, classes: list[_Class]) -> None:
        reserved = [a for a in self.net.attachments if a.reserved]
        if not reserved:
            return
        rail_classes = [c for c in classes if c.rail]
        if not rail_classes:
            self.fail(
                "reserved ports need a rail-optimized group on this network",
                (*self.net.path, "reserved_slots"),
            )
            return
        cls = rail_classes[0]
        plan = cls.plans[0]
        # Reserved slots are the last leaf ports of the first unit: a node-sized group gave up
        # those slots (plan.reserved), a rack-scale group must leave them spare.
        capacity = cls.leaves_per_rail * cls.budget.down_ports
        wanted = self.spec.reserved_slots
        occupied = max((e.slot for e in plan.endpoints if e.su == plan.su_offset), default=-1)
        if capacity - wanted <= occupied:
            self.fail(
                f"the first unit's leaves have no {wanted} spare slot(s) for appliances",
                (*self.net.path, "reserved_slots"),
                "lower su_size or use leaves with more ports",
            )
            return
        slots = range(capacity - wanted, capacity)
        spots = [
            (slot, rail, plane)
            for slot in slots
            for rail in range(cls.rails)
            for plane in range(self.spec.planes)
        ]
        needed = sum(len(self.plans[a.group].endpoints) * len(a.ports) for a in reserved)
        if needed > len(spots):
            self.fail(
                f"appliances need {needed} reserved leaf ports, but {wanted} reserved slot(s) "
                f"give {len(spots)}",
                (*self.net.path, "reserved_slots"),
                f"raise reserved_slots to {-(-needed // (cls.rails * self.spec.planes))}",
            )
            return
        b = cls.budget
        spot = iter(spots)
        for attachment in reserved:
            for endpoint in self.plans[attachment.group].endpoints:
                for port in attachment.ports:
                    slot, rail, plane = next(spot)
                    k, port_index = divmod(slot, b.down_ports)
                    leaf = cls.leaves[plane][rail * cls.leaves_per_rail + k]
                    self._link(
                        Link(
                            network=self.net.name,
                            kind=ENDPOINT_LEAF,
                            a=endpoint.device,
                            a_port=port,
                            b=leaf,
                            b_port=switch_port(0, port_index, b.down_breakout),
                            speed=attachment.speed,
                            rail=rail,
                            plane=plane,
                        )
                    )

    def _peer_links(self, classes: list[_Class]) -> None:
        for cls in classes:
            for plane_leaves in cls.leaves:
                for pair in range(0, len(plane_leaves) - 1, 2):
                    self._peer_link(self.leaf_model, plane_leaves[pair], plane_leaves[pair + 1])

    def _peer_link(self, model: SwitchModel, a: str, b: str) -> None:
        """The peer link of an MLAG pair of `model` switches: their last PEER_LINK_CAGES cages,
        port for port, at the fabric speed."""
        speed = self.net.fabric_speed
        breakout = switch_port_speeds(model)[speed]
        first_cage = general_cages(model) - PEER_LINK_CAGES
        for index in range(PEER_LINK_CAGES * breakout):
            port = switch_port(first_cage, index, breakout)
            self._link(Link(self.net.name, PEER, a, port, b, port, speed))

    def _spine_peer_ports(self, breakout: int, spines: int) -> int:
        """Spine ports the sizing leaves free for a peer link: a dual-homed in-band network
        bridges its VLAN up to an MLAG spine pair (emit/configs/mgmt.py), whose peer link takes
        the spines' last cages, as on the leaves. More spines route at the leaves
        (synth/inbandleaves.py) and keep every cage."""
        if self.spec.role == "inband" and self.spec.dual_homed and spines <= MAX_BRIDGED_SPINES:
            return PEER_LINK_CAGES * breakout
        return 0

    def _spine_pair(self, spines: list[str]) -> None:
        """The peer link of an in-band network's MLAG spine pair (its last cages). Bridged
        loop-free only over one pair: with more spines the network routes at its leaves
        instead (synth/inbandleaves.py) and its spines need no peer link."""
        if len(spines) == 2:
            model = self.catalog.switches[self.net.switch_models["spine"]]
            self._peer_link(model, spines[0], spines[1])

    # -- spines and cores ------------------------------------------------------------------------

    def _upper_tiers(self, classes: list[_Class], tiers: int | str) -> None:
        spine_model = self.catalog.switches[self.net.switch_models["spine"]]
        spine_breakout = switch_port_speeds(spine_model)[self.net.fabric_speed]
        spine_ports = general_cages(spine_model) * spine_breakout
        target = self._target_leaves(classes)
        uplinks = [(target[i], c.budget.up_ports) for i, c in enumerate(classes)]
        shaped = self._shaped()
        if shaped is not None:
            if tiers == 2:
                self.fail(
                    "a written spine-leaf or core group shape needs a core tier",
                    (*self.net.path, *shaped),
                    "use 'tiers: 3' or 'auto'",
                )
                return
            tiers = 3
        width = self._two_tier(classes, target) if tiers != 3 else None
        if self.spec.spines is not None and tiers != 3 and width is None:
            free = spine_ports - self._spine_peer_ports(spine_breakout, self.spec.spines)
            self._explicit_spines(uplinks, spine_model, spine_breakout, free)
            return
        if tiers == 2 or (tiers == "auto" and width is not None):
            if width is None:
                self.fail(
                    f"{sum(t for t, _ in uplinks)} leaves{self._guest_text()} need more spine "
                    f"ports than a {switch_key(self.catalog, spine_model)} has ({spine_ports}) in a symmetric "
                    "2-tier tree",
                    (*self.net.path, "tiers"),
                    "use 'tiers: 3' (or 'auto'), or a switch with more ports",
                )
                return
            self._appliance_leaf_cost(classes, target, width.switches)
            self._raise_uplinks(classes, width)
            self.topology.tiers = 2
            self.topology.spines_per_pod = width.switches
            self.topology.pods = 1
            for plane in range(self.spec.planes):
                leaves = [(leaf, c) for c in classes for leaf in c.leaves[plane]]
                spines = [
                    self._new_switch("spine", self.net.switch_models["spine"], plane=plane)
                    for _ in range(width.switches)
                ]
                self._connect(leaves, spines, LEAF_SPINE, spine_breakout, spine_ports)
            return
        self._three_tiers(classes, spine_model, spine_breakout, spine_ports)

    def _appliance_leaf_cost(self, classes: list[_Class], target: list[int], spines: int) -> None:
        """Appliances (UFM, management servers) that get leaves of their own beside a
        rail-optimized GPU class cost those leaves and often more spines; RA-11333 puts them on
        reserved leaf ports instead. Say what it costs and how to avoid it."""
        own = [
            c
            for c in classes
            if not c.rail
            and all(not p.in_units and p.model.kind in ("appliance", "server") for p in c.plans)
        ]
        rail = next((c for c in classes if c.rail), None)
        if not own or rail is None or self.spec.role != "compute":
            return
        rest = [i for i, c in enumerate(classes) if c not in own]
        without = self._two_tier([classes[i] for i in rest], [target[i] for i in rest])
        leaves = sum(c.leaf_count for c in own) * self.spec.planes
        groups = sorted({a.group for c in own for a in c.attachments})
        ports = sum(
            len(self.plans[a.group].endpoints) * len(a.ports) for c in own for a in c.attachments
        )
        cost = f"{leaves} leaf switch(es) of their own"
        if without is not None and without.switches < spines:
            cost += (
                f" and {spines - without.switches} more spine(s) per plane "
                f"({without.switches} -> {spines}, to give every leaf the same links to every "
                "spine)"
            )
        slots = -(-ports // (rail.rails * self.spec.planes))
        plan = rail.plans[0]
        fits = rail.sus * plan.su_size - slots
        if plan.rack_scale:
            hint = (
                f"RA-11333 puts UFM on reserved leaf ports instead: set reserved_slots: {slots} "
                f"on this network and endpoints: {{{groups[0]}: {{reserved: true}}}} (the first "
                "unit's leaves need that many spare ports: a smaller su_size leaves them)"
            )
        else:
            hint = (
                "RA-11333 puts UFM on leaf ports the first unit reserves, as fabricc does by "
                f"default where that adds no unit: with up to {fits} {plan.name} nodes they "
                f"keep {rail.sus} unit(s) and take no switch of their own"
            )
        self.warn(
            f"the {ports} {self.spec.role} port(s) of {', '.join(map(repr, groups))} cost {cost}",
            self.net.path,
            hint,
        )

    def _raise_uplinks(self, classes: list[_Class], width: TreeWidth) -> None:
        """Leaves of a class that reach every spine only with more uplinks than their ratio
        needs (sizing.tree_width) take them from their free ports; the leaf class says so."""
        for index, (cls, up) in enumerate(zip(classes, width.uplinks, strict=True)):
            if up != cls.budget.up_ports:
                cls.budget = dataclasses.replace(cls.budget, up_ports=up)
                self.topology.leaf_classes[index].up_ports = up

    def _shaped(self) -> tuple[str, str] | None:
        """The first written block shape key (which makes the fabric 3-tier), if any."""
        for block in ("spine_leaf_groups", "core_groups"):
            shape = getattr(self.spec, block)
            for key, value in shape.model_dump().items():
                if value is not None:
                    return block, key
        return None

    def _guest_ports(
        self, model: SwitchModel, per_width: int, speed: int | None = None
    ) -> Callable[[int], int]:
        """Ports per top-tier switch (at `speed`, default the leaf-spine speed) taken by guests
        when the tier has `width * per_width` switches in each plane."""
        guests = self.guests
        planes = self.spec.planes
        speed = speed or self.net.fabric_speed
        if guests is None:
            return lambda _: 0
        return lambda width: guests.ports(model, speed, width * per_width * planes)

    def _guest_text(self) -> str:
        g = self.guests
        if g is None or g.links == 0:
            return ""
        return f" and {g.links} uplinks from other networks ({g.speed}G)"

    def _explicit_spines(
        self, uplinks: list[tuple[int, int]], model: SwitchModel, breakout: int, ports: int
    ) -> None:
        """Say why a written spine count does not fit (sizing.fits said it does not)."""
        wanted = self.spec.spines
        assert wanted is not None
        path = (*self.net.path, "spines")
        bad = sorted({u for _, u in uplinks if u % wanted})
        if bad:
            self.fail(
                f"{wanted} spines do not divide the leaf uplinks ({', '.join(map(str, bad))}), so "
                "leaves could not reach every spine with the same number of links",
                path,
                "pick a divisor of the uplink count",
            )
            return
        needed = ports_needed(uplinks, wanted, breakout, self._guest_ports(model, 1))
        self.fail(
            f"{wanted} spines would need {needed} ports each{self._guest_text()}; they have {ports}",
            path,
        )

    def _target_leaves(self, classes: list[_Class], *, quiet: bool = False) -> list[int]:
        """Leaves per class that the spines are sized for (spines_for_sus adds future units
        shaped like the last rail-wired group's)."""
        target = self.spec.spines_for_sus
        present = self.topology.sus
        if target is not None and target < present and not quiet:
            self.fail(
                f"spines_for_sus is {target}, but the design already has {present} units",
                (*self.net.path, "spines_for_sus"),
                f"set spines_for_sus to {present} or more (the size to grow to), or remove it",
            )
        extra = max(0, (target or 0) - present)
        rail = [c for c in classes if c.rail]
        last = rail[-1] if rail else None
        return [
            c.leaf_count + (extra * c.rails * c.leaves_per_rail if c is last else 0)
            for c in classes
        ]

    def _connect(
        self,
        lower: list[tuple[str, _Class]],
        upper: list[str],
        kind: str,
        upper_breakout: int,
        upper_ports: int,
    ) -> None:
        """Spread each lower switch's uplinks evenly over `upper`, cage-aligned, in order: the
        first leaf class from the upper switches' first port up, the classes after it from
        their last down-facing port (of `upper_ports`) down, so that each class grows into the
        free ports between them without moving the other's cables."""
        first = lower[0][1] if lower else None
        rising = falling = 0
        for name, cls in lower:
            up = cls.budget.up_ports
            per = up // len(upper)
            b = cls.budget
            if cls is first:
                offset = rising
                rising += per
            else:
                falling += per
                offset = upper_ports - falling
            # the upper ends' ports are the same on every upper switch
            top_ports = [switch_port(0, offset + j, upper_breakout) for j in range(per)]
            network, speed = self.net.name, self.net.fabric_speed
            plane = self.fabric.devices[name].plane
            for s, top in enumerate(upper):
                for j in range(per):
                    self._uplink(  # positional, as in _wire_endpoints
                        Link(
                            network,
                            kind,
                            name,
                            switch_port(b.down_cages, s * per + j, b.up_breakout),
                            top,
                            top_ports[j],
                            speed,
                            None,
                            plane,
                        ),
                        upper_breakout,
                        upper_ports,
                    )

    def _units(self, cls: _Class, plane: int) -> list[list[tuple[str, _Class]]]:
        """The building blocks of a class's spine-leaf groups: the leaves of one scalable unit
        for rail-wired classes, one leaf (or MLAG pair) for top-of-rack ones; in a stable order."""
        leaves = cls.leaves[plane]
        if not cls.rail:
            step = cls.width
            return [
                [(leaf, cls) for leaf in leaves[i : i + step]] for i in range(0, len(leaves), step)
            ]
        by_su: dict[tuple[int, int], list[tuple[str, _Class]]] = {}
        split = self.spec.spine_leaf_groups.per_su or 1
        # leaves of a unit are in (rail, k) order; with per_su groups, the k-th leaves of every
        # rail (the ones serving the same nodes) stay together
        for index, leaf in enumerate(leaves):
            su = self.fabric.devices[leaf].su
            assert su is not None
            chunk = (index % cls.leaves_per_rail) * split // cls.leaves_per_rail
            by_su.setdefault((su, chunk), []).append((leaf, cls))
        return [by_su[su] for su in sorted(by_su)]

    def _pods(
        self, units: list[list[tuple[str, _Class]]], max_leaves: int
    ) -> list[list[tuple[str, _Class]]]:
        """Consecutive units packed into spine-leaf groups (sizing.pack_groups); pod_sus caps
        the scalable units of a rail-wired class per group, per_su gives every unit part a
        group of its own."""
        rail = bool(units) and units[0][0][1].rail
        return pack_groups(
            units,
            max_leaves,
            units_per_group=self.spec.pod_sus if rail else None,
            one_per_group=self.spec.spine_leaf_groups.per_su is not None,
        )

    def _three_tiers(
        self, classes: list[_Class], spine_model: SwitchModel, spine_breakout: int, spine_ports: int
    ) -> None:
        """Every leaf class gets spine-leaf groups (pods) of its own, its spines a name series of
        their own, like its leaves; every group hangs under one shared core: spine j of every
        group joins core group j. On the cores the first class's groups take ports from the
        first up, later classes' from the last down, so each class grows (spines_for_sus sizes
        the core for the last rail-wired class's future units) without moving another's cables."""
        path = (*self.net.path, "tiers")
        half = spine_ports // 2  # spines are non-blocking: half the ports down, half up
        rail = [c for c in classes if c.rail]
        blocks: list[_Block] = []
        for number, cls in enumerate(classes):
            series = None if number == 0 else cls.attachments[0].group
            block = self._block(
                cls, half, spine_breakout, path, series, reserve=bool(rail) and cls is rail[-1]
            )
            if block is None:
                return
            blocks.append(block)
        if sum(b.target for b in blocks) == 1:
            # Spine j of every group joins core group j: with one group (and none reserved to
            # come) each core meets a single spine, and no path between two leaves crosses it.
            # A warning, not an error: a fabric may be started on three tiers and grow.
            block = blocks[0]
            self.warn(
                f"tiers: 3 builds one spine-leaf group here ({len(block.pods[0][0])} leaves "
                f"under {block.width} spines): each core joins one spine over "
                f"{block.spine_up} parallel links and carries no traffic, since every path "
                "between two leaves turns at the spines",
                path,
                "use tiers: 2 (the same leaves and spines without the cores), split the units "
                "into several spine-leaf groups (pod_sus: 1, or spine_leaf_groups.per_su), or "
                "size the core for the groups to come (spines_for_sus)",
            )
        core_model = self.catalog.switches[self.net.switch_models["core"]]
        # spine-core links run at the speed spine and core share, which may be faster than the
        # leaf-spine links: a spine's uplinks carry its downlinks' bandwidth in fewer ports
        core_speed = self.net.core_speed or self.net.fabric_speed
        core_breakout = switch_port_speeds(core_model)[core_speed]
        spine_up_breakout = switch_port_speeds(spine_model)[core_speed]
        core_ports = general_cages(core_model) * core_breakout
        groups = max(b.width for b in blocks)
        spine_up = {id(b): -(-b.spine_up * self.net.fabric_speed // core_speed) for b in blocks}
        group_uplinks = [(b.target, spine_up[id(b)]) for b in blocks]
        guest_ports = self._guest_ports(core_model, groups, core_speed)
        # Where the classes' spine uplinks share no divisor that fits a core (17 storage leaves
        # under 16 spines give each spine 17 uplinks, beside 32 from a GPU group's spines), a
        # spine may run better than non-blocking: its free ports add uplinks (sizing.tree_width).
        spine_cages = general_cages(spine_model)
        rows = [
            LeafRow(
                b.target,
                spine_up[id(b)],
                max(
                    0,
                    (spine_cages - -(-b.spine_up // spine_breakout)) * spine_up_breakout
                    - spine_up[id(b)],
                ),
            )
            for b in blocks
        ]
        width = tree_width(rows, core_ports, core_breakout, guest_ports)
        group_size = None if width is None else width.switches
        fixed = self.spec.core_groups.cores
        if width is not None and fixed is None:
            spine_up = {id(b): up for b, up in zip(blocks, width.uplinks, strict=True)}
        if fixed is not None:
            needed = ports_needed(group_uplinks, fixed, core_breakout, guest_ports)
            if not fits(group_uplinks, fixed, core_ports, core_breakout, guest_ports):
                self.fail(
                    f"{fixed} cores per group do not fit: spines have "
                    f"{', '.join(sorted({str(u) for _, u in group_uplinks}))} uplinks to spread "
                    f"evenly, and each core would need {needed} of its {core_ports} ports",
                    (*self.net.path, "core_groups", "cores"),
                    "pick a divisor of the spine uplinks that gives every core enough ports",
                )
                return
            group_size = fixed
        if group_size is None:
            self.fail(
                f"{sum(b.target for b in blocks)} spine-leaf groups{self._guest_text()} need more "
                f"core ports than a {switch_key(self.catalog, core_model)} has",
                path,
                "the fabric exceeds three tiers of this switch",
            )
            return
        self.topology.tiers = 3
        self.topology.pods = sum(len(b.pods[0]) for b in blocks)
        self.topology.spines_per_pod = blocks[0].width
        self.topology.core_groups = groups
        self.topology.cores_per_group = group_size
        for plane in range(self.spec.planes):
            cores = [
                [
                    self._new_switch("core", self.net.switch_models["core"], plane=plane)
                    for _ in range(group_size)
                ]
                for _ in range(groups)
            ]
            rising = [0] * groups  # next free down port of each core group's cores, from below
            falling = [0] * groups  # ports taken from the top
            for number, block in enumerate(blocks):
                per = spine_up[id(block)] // group_size
                spine_down_cages = -(-block.spine_up // spine_breakout)
                # a spine's up ports, the same on every spine of the block
                spine_ups = [
                    switch_port(spine_down_cages, u, spine_up_breakout)
                    for u in range(group_size * per)
                ]
                network, speed = self.net.name, core_speed
                group = block.leaf_class.attachments[0].group
                for pod, members in enumerate(block.pods[plane]):  # counted within the class
                    for leaf, _ in members:
                        self.fabric.devices[leaf].pod = pod
                    spines = [
                        self._new_switch(
                            "spine",
                            self.net.switch_models["spine"],
                            block.series,
                            group if block.series else None,
                            plane=plane,
                            pod=pod,
                        )
                        for _ in range(block.width)
                    ]
                    self._connect(
                        members,
                        spines,
                        LEAF_SPINE,
                        spine_breakout,
                        spine_down_cages * spine_breakout,
                    )
                    for j, spine in enumerate(spines):
                        if number == 0:
                            first = rising[j]
                            rising[j] += per
                        else:
                            falling[j] += per
                            first = core_ports - falling[j]
                        core_downs = [switch_port(0, first + k, core_breakout) for k in range(per)]
                        for c, core in enumerate(cores[j]):
                            for k in range(per):
                                self._uplink(  # positional, as in _wire_endpoints
                                    Link(
                                        network,
                                        SPINE_CORE,
                                        spine,
                                        spine_ups[c * per + k],
                                        core,
                                        core_downs[k],
                                        speed,
                                        None,
                                        plane,
                                    ),
                                    core_breakout,
                                    core_ports,
                                )

    def _block(
        self,
        cls: _Class,
        half: int,
        breakout: int,
        path: DataPath,
        series: str | None,
        *,
        reserve: bool,
    ) -> _Block | None:
        """The spine-leaf groups of one leaf class: its units packed into groups, the group's
        spine count by the symmetric rule, and (`reserve`: spines_for_sus) the groups the core
        is sized for."""
        up = cls.budget.up_ports
        split = self.spec.spine_leaf_groups.per_su
        if split and cls.rail and cls.leaves_per_rail % split:
            self.fail(
                f"a unit has {cls.leaves_per_rail} leaves per rail, which do not split "
                f"into {split} spine-leaf groups",
                (*self.net.path, "spine_leaf_groups", "per_su"),
                "per_su must divide the leaves per rail (set by leaf_downlinks)",
            )
            return None
        plane_units = [self._units(cls, plane) for plane in range(self.spec.planes)]
        largest_unit = max(len(u) for u in plane_units[0])
        max_leaves = half
        if self.spec.pod_sus is not None:  # top-of-rack classes: leaves (or pairs) per group
            max_leaves = min(half, self.spec.pod_sus * largest_unit)
        if largest_unit > max_leaves:
            self.fail(
                f"one unit has {largest_unit} leaves, more than a spine-leaf group can take ({max_leaves})",
                (*self.net.path, "pod_sus"),
            )
            return None
        pods_per_plane = [self._pods(units, max_leaves) for units in plane_units]
        pod_leaves = max(len(pod) for pods in pods_per_plane for pod in pods)
        # units (or with per_su, unit parts) a full group takes
        per_pod = 1 if split else max_leaves // largest_unit
        grow_to = self.spec.spines_for_sus
        if grow_to is not None and cls.rail and not split:
            # A fabric sized for growth builds every group's spines for a full group (as many
            # units as fit, or as the fabric grows to), so units joining a group take spine
            # ports kept for them and no spine's uplinks move.
            pod_leaves = max(pod_leaves, min(per_pod, grow_to) * largest_unit)
        shape = self.spec.spine_leaf_groups
        shape_path = (*self.net.path, "spine_leaf_groups")
        if shape.leaves is not None and shape.leaves != pod_leaves:
            self.fail(
                f"spine-leaf groups get {pod_leaves} leaves, not {shape.leaves}",
                (*shape_path, "leaves"),
                "leaves per group = leaves per unit / per_su; a unit's leaves per rail follow "
                "from leaf_downlinks",
            )
            return None
        width = symmetric_width([(pod_leaves, up)], half, breakout, minimum=MIN_SPINES)
        spines = shape.spines if shape.spines is not None else self.spec.spines
        if spines is not None:
            if not fits([(pod_leaves, up)], spines, half, breakout):
                self.fail(
                    f"{spines} spines per group do not fit: leaves have {up} uplinks to "
                    f"spread evenly, and a spine has {half} ports down",
                    (*shape_path, "spines") if shape.spines else (*self.net.path, "spines"),
                    "pick a divisor of the leaf uplinks that gives every spine enough ports",
                )
                return None
            width = spines
        if width is None:
            self.fail(
                f"a spine-leaf group of {pod_leaves} leaves needs more spine ports than {half} down",
                path,
            )
            return None
        present = len(pods_per_plane[0])
        target = present
        if reserve and grow_to is not None:
            # the units to come fill pods like the present ones: per_pod units (or unit parts)
            extra = max(0, grow_to - self.topology.sus)
            target = max(present, -(-(cls.sus + extra) * (split or 1) // per_pod))
        # every spine gets as many uplinks as down ports
        return _Block(cls, series, pods_per_plane, width, pod_leaves * up // width, target)


@dataclass(frozen=True, slots=True)
class _Block:
    """The spine-leaf groups of one leaf class in a 3-tier fabric."""

    leaf_class: _Class
    series: str | None  # the spines' name series (None: the network's first class)
    pods: list[list[list[tuple[str, _Class]]]]  # per plane: groups of (leaf, class)
    width: int  # spines per group
    spine_up: int  # uplinks of each spine
    target: int  # groups the core is sized for (spines_for_sus adds future ones)


__all__ = ["Endpoint", "FatTreeBuilder"]
