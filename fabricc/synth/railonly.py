"""Synthesis pass 2, rail-only family: one leaf per rail and plane, no spines.

Consumes a ResolvedNetwork and the node plans; produces the rail leaves and the node links of a
rail-only network (Wang et al. 2023, "How to Build Low-cost Networks for Large Language Models
(without Sacrificing Performance)"): NIC k of every node, of every scalable unit, goes to the
rail-k leaf, at the port of the node's position in the network; nodes with fewer ports than
rails (appliances) take the rails in turn (first_rails). Traffic between rails crosses
the nodes' NVLink domain first (NCCL PXN), so every rail's nodes must fit one leaf's ports: the
limit is the leaf's port count at the node speed, and a larger design is an error naming it.
"""

from __future__ import annotations

from fabricc.catalog.models import switch_key
from fabricc.spec.topology import RAIL_ONLY
from fabricc.synth.family import FamilyBuilder, Host


def first_rails(hosts: list[Host], rails: int) -> list[int]:
    """The rail of each host's first port: 0 for a node with a port per rail (port k on rail
    k); a narrower node (an appliance: a UFM with one port) starts where the previous narrow
    one stopped, so that such nodes spread over the rails - every rail is a subnet of its own,
    and each needs its subnet-manager host."""
    result = []
    turn = 0
    for host in hosts:
        ports = len(host.attachment.ports)
        if ports >= rails:
            result.append(0)
            continue
        result.append(turn % rails)
        turn += ports
    return result


class RailOnlyBuilder(FamilyBuilder):
    family = RAIL_ONLY

    def build(self) -> None:
        speed = self.endpoint_speed()
        if speed is None:
            return
        ports, breakout = self.ports_at(self.leaf_model, speed)
        hosts = self.hosts()
        rails = self.rails()
        first = first_rails(hosts, rails)
        per_rail = [0] * rails
        for host, start in zip(hosts, first, strict=True):
            for k in range(len(host.attachment.ports)):
                per_rail[(start + k) % rails] += 1
        if max(per_rail) > ports:
            rail = per_rail.index(max(per_rail))
            self.fail(
                f"rail-only puts every node of a rail on one leaf: rail {rail + 1} has "
                f"{per_rail[rail]} node ports, more than the {ports} ports of a "
                f"{switch_key(self.catalog, self.leaf_model)} at {speed}G",
                (*self.net.path, "topology"),
                f"at most {ports} nodes per rail; use a larger leaf, fewer nodes, or topology: "
                "fat-tree (spines join the rails' leaves)",
            )
            return
        leaves = [
            [self.new_switch("leaf", rail=rail, plane=plane) for rail in range(rails)]
            for plane in range(self.spec.planes)
        ]
        for plane in range(self.spec.planes):
            position = [0] * rails
            for host, start in zip(hosts, first, strict=True):
                for k in range(len(host.attachment.ports)):
                    rail = (start + k) % rails
                    leaf = leaves[plane][rail]
                    self.host_link(host, rail, plane, leaf, position[rail], breakout, port=k)
                    position[rail] += 1
        self.topology.tiers = 1
        self.leaf_class(ports, 0, speed, rail=True)
