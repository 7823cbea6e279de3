"""Synthesis pass 2, dragonfly-plus family: groups of leaves and spines, spines joined between groups.

Consumes a ResolvedNetwork (groups, global_links) and the node plans; produces leaves, spines,
their links and the global links of a Dragonfly+ (Shpiner et al. 2017, "Dragonfly+: Low Cost
Topology for Scaling Datacenters"). The rules, as pure functions of the radix (`shape`):

* Nodes are spread evenly over the G groups in spec order (ceil(nodes / G) per group; a last,
  partial group is cabled as a full one). Inside a group, leaves are packed as in the fat-tree:
  rail-optimized networks give rail k its own leaves (ceil(n / p) per rail), others pack node
  ports in order.
* Leaf radix k splits into p endpoint ports and s uplinks at the network's oversubscription.
  Inside a group, every leaf reaches every spine with s / a links (a 2-tier fat-tree), where the
  spine count a is the fewest (at least 2) dividing s that keep each spine's down ports within
  half its radix; each spine's remaining h ports are global.
* Global links: every pair of groups is joined by g links (`global_links`, default the most the
  group's a * h global ports allow), spread round-robin over the spines of each group. So G
  groups need (G - 1) * g <= a * h: at most a * h / g + 1 groups. With one link per pair this
  is Kim et al.'s dragonfly bound (2008): a group of a routers with h global ports each joins
  a * h + 1 groups, N = a p (a h + 1) hosts when every router carries p hosts; in Dragonfly+
  the L leaves carry the hosts, N = L p (a h + 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.catalog.models import switch_key
from fabricc.ir import GLOBAL, LEAF_SPINE
from fabricc.spec.resolve import LeafBudget, leaf_budget
from fabricc.spec.topology import DRAGONFLY_PLUS
from fabricc.synth.family import FamilyBuilder, Host
from fabricc.synth.naming import switch_port
from fabricc.synth.sizing import MIN_SPINES, symmetric_width


@dataclass(frozen=True, slots=True)
class GroupShape:
    """One dragonfly-plus group, from the radix."""

    nodes: int  # nodes per group
    leaves: int  # L
    down: int  # p: endpoint ports per leaf
    up: int  # s: uplinks per leaf
    spines: int  # a: spines per group
    spine_down: int  # ports of a spine towards its leaves (L * s / a)
    global_ports: int  # h: ports of a spine left for global links

    @property
    def group_global_ports(self) -> int:
        return self.spines * self.global_ports

    def max_groups(self, links_per_pair: int) -> int:
        """Groups that the global ports can join all-to-all with `links_per_pair` links each."""
        return self.group_global_ports // links_per_pair + 1

    def hosts(self, groups: int) -> int:
        """Endpoint ports of the whole network (per plane) at `groups` groups: L p G."""
        return self.leaves * self.down * groups


def group_shape(
    nodes: int,
    rails: int,
    rail_optimized: bool,
    down: int,
    up: int,
    spine_ports: int,
    spine_breakout: int,
) -> GroupShape | None:
    """The shape of a group of `nodes` nodes with `rails` ports each, or None when the spines
    cannot serve the group's leaves within half their radix."""
    leaves = rails * -(-nodes // down) if rail_optimized else -(-(nodes * rails) // down)
    width = symmetric_width([(leaves, up)], spine_ports // 2, spine_breakout, minimum=MIN_SPINES)
    if width is None:
        return None
    spine_down = leaves * (up // width)
    down_cages = -(-spine_down // spine_breakout)
    return GroupShape(
        nodes, leaves, down, up, width, spine_down, spine_ports - down_cages * spine_breakout
    )


class DragonflyBuilder(FamilyBuilder):
    family = DRAGONFLY_PLUS

    def build(self) -> None:
        speed = self.endpoint_speed()
        if speed is None:
            return
        groups = self.spec.groups
        assert groups is not None  # spec.topology requires it
        first = self.net.attachments[0]
        budget = leaf_budget(
            self.leaf_model,
            speed,
            self.net.fabric_speed,
            first.oversubscription,
            downlinks=first.leaf_downlinks,
            dual_homed=False,
            has_uplinks=True,
        )
        path = (*self.net.path, "groups")
        if budget.down_ports < 1 or budget.up_ports < 1:
            self.fail(
                f"a {switch_key(self.catalog, self.leaf_model)} leaf at {speed}G has no port left for "
                f"{'nodes' if budget.down_ports < 1 else 'spines'}",
                (*self.net.path, "oversubscription"),
            )
            return
        spine_model = self.catalog.switches[self.net.switch_models["spine"]]
        spine_ports, spine_breakout = self.ports_at(spine_model, self.net.fabric_speed)
        hosts = self.hosts()
        rails = self.rails()
        per_group = -(-len(hosts) // groups)
        rail = self.net.rail_optimized
        shape = group_shape(
            per_group, rails, rail, budget.down_ports, budget.up_ports, spine_ports, spine_breakout
        )
        leaf_ports, _ = self.ports_at(self.leaf_model, self.net.fabric_speed)
        radix = (
            f"dragonfly-plus with leaf radix {leaf_ports} ({budget.down_ports} down, "
            f"{budget.up_ports} up) and spine radix {spine_ports}"
        )
        if shape is None:
            self.fail(
                f"{radix}: a group of {per_group} nodes has more leaves than its spines can "
                f"serve with half their ports",
                path,
                "use more groups (fewer nodes per group) or a larger spine",
            )
            return
        links = self.spec.global_links
        if groups > 1:
            allowed = shape.max_groups(links or 1)
            if groups > allowed:
                self.fail(
                    f"{radix} ({shape.spines} spines of {shape.global_ports} global ports per "
                    f"group, {links or 1} link{'s' if (links or 1) > 1 else ''} per group pair) "
                    f"allows at most {allowed} groups; asked {groups}",
                    path,
                    f"use at most {allowed} groups"
                    + (", or fewer global_links" if links and links > 1 else "")
                    + ", or switches with more ports",
                )
                return
            if links is None:
                links = shape.group_global_ports // (groups - 1)
        if (groups - 1) * per_group >= len(hosts):
            used = -(-len(hosts) // per_group)
            self.fail(
                f"{len(hosts)} nodes spread over {groups} groups ({per_group} per group) leave "
                f"the last {groups - used} without a node",
                path,
                f"use at most {used} groups, or more nodes",
            )
            return
        self.topology.tiers = 2
        self.topology.pods = groups
        self.topology.spines_per_pod = shape.spines
        self.topology.global_links = links or 0
        for plane in range(self.spec.planes):
            self._plane(plane, groups, shape, hosts, links or 0, budget, spine_breakout)
        self.leaf_class(budget.down_ports, budget.up_ports, speed, rail)

    def _plane(
        self,
        plane: int,
        groups: int,
        shape: GroupShape,
        hosts: list[Host],
        links: int,
        budget: LeafBudget,
        spine_breakout: int,
    ) -> None:
        rail = self.net.rail_optimized
        per_rail = shape.leaves // self.rails() if rail else shape.leaves
        leaves: list[list[str]] = []
        spines: list[list[str]] = []
        for group in range(groups):
            su = self.unit_of(hosts, group * shape.nodes)
            leaves.append(
                [
                    self.new_switch(
                        "leaf", pod=group, plane=plane, su=su, rail=i // per_rail if rail else None
                    )
                    for i in range(shape.leaves)
                ]
            )
            spines.append(
                [
                    self.new_switch("spine", pod=group, plane=plane, su=su)
                    for _ in range(shape.spines)
                ]
            )
        leaf_breakout = budget.down_breakout
        for number, host in enumerate(hosts):
            group, local = divmod(number, shape.nodes)
            for k in range(len(host.attachment.ports)):
                if rail:
                    at, port = k * per_rail + local // shape.down, local % shape.down
                else:
                    at, port = divmod(local * self.rails() + k, shape.down)
                self.host_link(host, k, plane, leaves[group][at], port, leaf_breakout)
        per = shape.up // shape.spines
        for group in range(groups):
            for i, leaf in enumerate(leaves[group]):
                for m, spine in enumerate(spines[group]):
                    for t in range(per):
                        self.switch_link(
                            LEAF_SPINE,
                            leaf,
                            switch_port(budget.down_cages, m * per + t, budget.up_breakout),
                            spine,
                            switch_port(0, i * per + t, spine_breakout),
                            plane,
                        )
        down_cages = -(-shape.spine_down // spine_breakout)

        def end(group: int, peer: int, link: int) -> tuple[str, str]:
            # the peer's position among the group's other groups, then round-robin over spines
            slot = (peer if peer < group else peer - 1) * links + link
            spine, index = slot % shape.spines, slot // shape.spines
            return spines[group][spine], switch_port(down_cages, index, spine_breakout)

        for group in range(groups):
            for peer in range(group + 1, groups):
                for link in range(links):
                    a, a_port = end(group, peer, link)
                    b, b_port = end(peer, group, link)
                    self.switch_link(GLOBAL, a, a_port, b, b_port, plane)
