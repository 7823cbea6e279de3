"""Analysis, part 1: the link graph of one network plane, with endpoints contracted into switches.

Consumes the links of one network of the Fabric IR; produces a PlaneGraph per plane: switches as
integer nodes, parallel links merged into one weighted edge (link count and Gb/s), and every
endpoint port (a host NIC, an appliance port, a BMC, a switch management port) as an Attachment
to the switch it lands on. A 65k-GPU compute plane is then ~6,000 nodes instead of ~70,000.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, MGMT, SPINE_CORE, UPLINK, Fabric

ENDPOINT_KINDS = (ENDPOINT_LEAF, MGMT)
# Link kinds whose `a` end is the lower tier: they count as uplinks of `a` and downlinks of `b`.
TIERED_KINDS = (LEAF_SPINE, SPINE_CORE, UPLINK)


class Attachment(NamedTuple):
    """One endpoint port: `device` (host or foreign switch) reaches `switch` at `gbps`. A named
    tuple: a plane has one per endpoint port (100k and more at 100k GPUs), and a tuple is made
    several times faster than a frozen dataclass."""

    device: str
    port: str
    switch: int  # node index in the plane graph
    gbps: int
    order: int  # position of the device in the design (stable), for splits
    rail: int | None


@dataclass(slots=True)
class PlaneGraph:
    network: str
    plane: int
    names: list[str] = field(default_factory=list)  # node index -> switch name
    roles: list[str] = field(default_factory=list)  # tier, or "<network>:<tier>" for guests
    adjacency: list[dict[int, tuple[int, int]]] = field(default_factory=list)  # v -> (links, gbps)
    attachments: list[Attachment] = field(default_factory=list)

    def endpoint_gbps(self) -> int:
        return sum(a.gbps for a in self.attachments)

    def attached(self) -> list[int]:
        """Endpoint Gb/s per node."""
        per = [0] * len(self.names)
        for attachment in self.attachments:
            per[attachment.switch] += attachment.gbps
        return per


class _Builder:
    def __init__(self, fabric: Fabric, network: str, plane: int) -> None:
        self.fabric = fabric
        self.graph = PlaneGraph(network, plane)
        self.index: dict[str, int] = {}

    def node(self, name: str) -> int:
        found = self.index.get(name)
        if found is not None:
            return found
        device = self.fabric.devices[name]
        number = len(self.graph.names)
        self.index[name] = number
        self.graph.names.append(name)
        own = device.network == self.graph.network
        self.graph.roles.append(device.role if own else f"{device.network}:{device.role}")
        self.graph.adjacency.append({})
        return number

    def edge(self, a: str, b: str, gbps: int) -> None:
        index = self.index
        u = index.get(a)
        if u is None:
            u = self.node(a)
        v = index.get(b)
        if v is None:
            v = self.node(b)
        if u == v:
            return
        adjacency = self.graph.adjacency
        near = adjacency[u]
        found = near.get(v)
        merged = (1, gbps) if found is None else (found[0] + 1, found[1] + gbps)
        near[v] = merged
        adjacency[v][u] = merged


def plane_graphs(fabric: Fabric, network: str) -> list[PlaneGraph]:
    """One graph per plane of `network`, in plane order. Links without a plane (MLAG peer links,
    out-of-band copper) belong to plane 0. A network whose top tier uplinks into another
    (out-of-band into in-band) reaches its other switches through that network's switches, so
    their switch-to-switch links join plane 0 as transit."""
    order = fabric.derived(
        "analysis_device_order", lambda: {n: i for i, n in enumerate(fabric.devices)}
    )
    builders: dict[int, _Builder] = {}
    for link in fabric.links_of(network):
        plane = link.plane or 0
        builder = builders.get(plane)
        if builder is None:
            builder = builders[plane] = _Builder(fabric, network, plane)
        if link.kind in ENDPOINT_KINDS:
            switch = builder.node(link.b)
            builder.graph.attachments.append(
                Attachment(link.a, link.a_port, switch, link.speed, order[link.a], link.rail)
            )
        else:
            builder.edge(link.a, link.b, link.speed)
    resolved = fabric.loaded.networks.get(network)
    host = resolved.spec.uplink_to if resolved is not None else None
    if host is not None and 0 in builders:
        for link in fabric.links_of(host):
            if link.kind not in ENDPOINT_KINDS and link.kind != UPLINK:
                builders[0].edge(link.a, link.b, link.speed)
    return [builders[plane].graph for plane in sorted(builders)]
