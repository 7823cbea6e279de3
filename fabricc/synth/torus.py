"""Synthesis pass 2, torus family: switches on a 2D or 3D torus, nodes on every switch.

Consumes a ResolvedNetwork (dimensions) and the node plans; produces one switch per coordinate
(role leaf: it carries nodes; Device.coordinates holds its place, which the torus-2QoS seed and
the topology diagram read), the node links and the torus links. The rules:

* Switch i sits at (x, y, z) with x fastest: i = x + X (y + Y z). Nodes are spread evenly in
  spec order, ceil(nodes / switches) per switch, every port of a node on the same switch.
* Every switch links to its + neighbour in each dimension, the last one wrapping to the first,
  with w parallel links; its - ports take the links of its - neighbour. A dimension of size 1
  has no links. A dimension of size 2 keeps both: the + link and the wrap-around link join the
  same two switches, so the pair gets 2w parallel links and every switch uses its ports the
  same way in every dimension (as a 2-ring of a 3D torus machine is cabled).
* w: with the default oversubscription, as many links per direction as the ports left after
  the nodes allow; with an explicit one, the fewest that carry the nodes' bandwidth at that
  ratio. Too few ports for one link per direction is an error naming the limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fabricc.catalog.models import switch_key
from fabricc.ir import TORUS
from fabricc.spec.resolve import general_cages, switch_port_speeds
from fabricc.spec.topology import TORUS as FAMILY
from fabricc.synth.family import FamilyBuilder
from fabricc.synth.naming import switch_port


def coordinates(index: int, dimensions: tuple[int, ...]) -> tuple[int, ...]:
    """Coordinates of switch `index`, x fastest."""
    result = []
    for size in dimensions:
        index, c = divmod(index, size)
        result.append(c)
    return tuple(result)


def switch_index(coords: tuple[int, ...], dimensions: tuple[int, ...]) -> int:
    index = 0
    for c, size in zip(reversed(coords), reversed(dimensions), strict=True):
        index = index * size + c
    return index


def shifted(
    coords: tuple[int, ...], dimensions: tuple[int, ...], dim: int, step: int
) -> tuple[int, ...]:
    """The coordinates `step` (+1 or -1) along dimension `dim` from `coords`, wrapping around."""
    moved = list(coords)
    moved[dim] = (moved[dim] + step) % dimensions[dim]
    return tuple(moved)


def neighbour(index: int, dimensions: tuple[int, ...], dim: int, step: int) -> int:
    """The switch `step` (+1 or -1) along dimension `dim`, wrapping around."""
    return switch_index(shifted(coordinates(index, dimensions), dimensions, dim, step), dimensions)


@dataclass(frozen=True, slots=True)
class TorusShape:
    switches: int
    nodes_per_switch: int
    node_ports: int  # per switch
    node_cages: int
    active: tuple[int, ...]  # dimensions with links (size >= 2)
    width: int  # w: links per direction
    free_ports: int  # ports at fabric speed left after the nodes

    def torus_links(self) -> int:
        """Links of one plane: S switches x active dimensions x w (each switch owns its +)."""
        return self.switches * len(self.active) * self.width


class TorusBuilder(FamilyBuilder):
    family = FAMILY

    def build(self) -> None:
        speed = self.endpoint_speed()
        if speed is None:
            return
        assert self.spec.dimensions is not None  # spec.topology requires it
        dims = tuple(self.spec.dimensions)
        hosts = self.hosts()
        rails = self.rails()
        switches = math.prod(dims)
        per_switch = -(-len(hosts) // switches)
        model = self.leaf_model
        host_breakout = switch_port_speeds(model)[speed]
        fabric_breakout = switch_port_speeds(model)[self.net.fabric_speed]
        node_ports = per_switch * rails
        node_cages = -(-node_ports // host_breakout)
        free = (general_cages(model) - node_cages) * fabric_breakout
        active = tuple(i for i, size in enumerate(dims) if size >= 2)
        directions = 2 * len(active)
        path = (*self.net.path, "dimensions")
        width = 0
        if directions:
            if "oversubscription" in self.spec.model_fields_set:
                a, b = self.net.oversubscription
                wanted = node_ports * speed * b
                width = max(1, -(-wanted // (a * directions * self.net.fabric_speed)))
            else:
                width = free // directions
            if width < 1 or width * directions > free:
                self.fail(
                    f"a torus of {' x '.join(map(str, dims))} switches puts {per_switch} nodes "
                    f"({node_ports} ports at {speed}G) on each {switch_key(self.catalog, model)}; it has "
                    f"{max(free, 0)} ports at {self.net.fabric_speed}G left, and "
                    f"{directions} torus directions need {directions * max(width, 1)}",
                    path,
                    "use more switches (larger dimensions), fewer nodes, or a lower "
                    "oversubscription demand",
                )
                return
        shape = TorusShape(
            switches, per_switch, node_ports, node_cages, active, width, max(free, 0)
        )
        self.topology.tiers = 1
        self.topology.rail_optimized = False  # every port of a node lands on one switch
        self.topology.dimensions = dims
        for plane in range(self.spec.planes):
            self._plane(plane, dims, shape, host_breakout, fabric_breakout)
        self.leaf_class(node_ports, directions * width, speed, rail=False)

    def _plane(
        self,
        plane: int,
        dims: tuple[int, ...],
        shape: TorusShape,
        host_breakout: int,
        fabric_breakout: int,
    ) -> None:
        hosts = self.hosts()
        names = [
            self.new_switch(
                "leaf",
                coordinates(index, dims),
                plane=plane,
                su=self.unit_of(hosts, index * shape.nodes_per_switch),
            )
            for index in range(shape.switches)
        ]
        rails = self.rails()
        for number, host in enumerate(hosts):
            switch, slot = divmod(number, shape.nodes_per_switch)
            for k in range(len(host.attachment.ports)):
                self.host_link(host, k, plane, names[switch], slot * rails + k, host_breakout)

        def port(direction: int, link: int) -> str:
            return switch_port(shape.node_cages, direction * shape.width + link, fabric_breakout)

        for index, name in enumerate(names):
            for order, dim in enumerate(shape.active):
                peer = names[neighbour(index, dims, dim, +1)]
                for link in range(shape.width):
                    self.switch_link(
                        TORUS, name, port(2 * order, link), peer, port(2 * order + 1, link), plane
                    )
