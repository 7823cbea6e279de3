"""Verification: the planned cables of each network, as discovery tools name their ends.

Consumes the Fabric IR (and, for InfiniBand, the subnets the OpenSM/ibsim emitters derive: node
GUIDs and port numbers); produces one Scope per InfiniBand subnet (a network, or one plane of it)
and per Ethernet network, holding the planned cables with their expected rate ("4xNDR" as
ibnetdiscover prints it, "400G" for Ethernet) and the lookups that turn discovered names back into
IR ports.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.catalog.ports import split_port
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.ibfabric import build_subnets
from fabricc.emit.configs.ports import ib_port
from fabricc.ir import EXTERNAL, Fabric, Link
from fabricc.verify.model import PlannedCable, Port

# InfiniBand lane rates in Gb/s and the names ibnetdiscover gives them
IB_LANES = {2: "SDR", 5: "DDR", 10: "QDR", 14: "FDR", 25: "EDR", 50: "HDR", 100: "NDR", 200: "XDR"}


@dataclass(slots=True)
class Scope:
    name: str  # network, or network-planeN for one plane of a multi-plane InfiniBand network
    network: str
    fabric: str  # infiniband | ethernet
    cables: list[PlannedCable] = field(default_factory=list)
    ib_nodes: dict[int, Port | str] = field(default_factory=dict)  # node GUID -> CA port | switch
    ib_names: dict[str, Port | str] = field(default_factory=dict)  # IB node name -> same
    ib_ports: dict[tuple[str, int], str] = field(default_factory=dict)  # switch, IB port -> IR
    aliases: dict[tuple[str, str], str] = field(default_factory=dict)  # device, OS name -> IR

    @property
    def ports(self) -> frozenset[Port]:
        return frozenset(end for c in self.cables for end in (c.a, c.b))


def cable_id(link: Link) -> str:
    """The cable ID of a link; a leg of a multi-link cable (twin-port DAC, splitter) adds /leg."""
    cable = link.cable
    if cable is None:
        return f"{link.a}:{link.a_port}>{link.b}:{link.b_port}"
    return f"{cable.id}/{link.leg + 1}" if cable.links > 1 else cable.id


def _lane_speed(fabric: Fabric, link: Link) -> int:
    catalog = fabric.loaded.catalog.catalog
    for name, port in ((link.b, link.b_port), (link.a, link.a_port)):
        device = fabric.devices[name]
        if device.kind == "switch" and device.model in catalog.switches:
            try:
                cage, _ = split_port(port)
            except ValueError:
                continue
            group = catalog.switches[device.model].group_of_cage(cage)
            if group is not None:
                return group.lane_speed
    return 100


def ib_rate(fabric: Fabric, link: Link) -> str:
    lane = _lane_speed(fabric, link)
    name = IB_LANES.get(lane, f"{lane}G")
    return f"{max(1, link.speed // lane)}x{name}"


def scopes(fabric: Fabric) -> list[Scope]:
    ctx = ConfigContext(fabric)  # indexes every Ethernet link: built once for all networks
    found = _ib_scopes(ctx)
    for name, network in fabric.loaded.networks.items():
        if network.fabric == "infiniband":
            continue
        found.append(_ethernet_scope(ctx, name))
    return found


def _ib_scopes(ctx: ConfigContext) -> list[Scope]:
    fabric = ctx.fabric
    result: list[Scope] = []
    for subnet in build_subnets(ctx):
        name = subnet.folder.removesuffix("-sm")  # network[-plane<n>][-rail<n>]
        scope = Scope(name, subnet.network, "infiniband")
        for node in subnet.nodes.values():
            target: Port | str = (
                node.device if node.switch else (node.device, node.name[len(node.device) + 1 :])
            )
            scope.ib_nodes[node.node_guid] = target
            scope.ib_names[node.name] = target
        switches = {n.name for n in subnet.switches}
        for link in fabric.links_of(subnet.network):
            if link.b not in switches:
                continue
            for device, port in ((link.a, link.a_port), (link.b, link.b_port)):
                if device in switches:
                    model = ctx.switch_model(fabric.devices[device])
                    scope.ib_ports[(device, ib_port(model, port))] = port
            scope.cables.append(
                PlannedCable(
                    cable_id(link),
                    (link.a, link.a_port),
                    (link.b, link.b_port),
                    ib_rate(fabric, link),
                )
            )
        result.append(scope)
    return result


def _ethernet_scope(ctx: ConfigContext, name: str) -> Scope:
    fabric = ctx.fabric
    catalog = fabric.loaded.catalog.catalog
    scope = Scope(name, name, "ethernet")
    for link in fabric.links_of(name):
        for device_name, port in ((link.a, link.a_port), (link.b, link.b_port)):
            device = fabric.devices[device_name]
            names = {port}
            if device.kind == "switch":
                names.add(ctx.port_name(device_name, port))
            elif device.model in catalog.nodes:
                spec = next((p for p in catalog.nodes[device.model].ports if p.name == port), None)
                if spec is not None and spec.netdev:
                    names.add(spec.netdev)
            for alias in names:
                scope.aliases[(device_name, alias)] = port
        scope.cables.append(
            PlannedCable(
                cable_id(link),
                (link.a, link.a_port),
                (link.b, link.b_port),
                f"{link.speed}G",
                external=fabric.devices[link.b].kind == EXTERNAL,
            )
        )
    return scope
