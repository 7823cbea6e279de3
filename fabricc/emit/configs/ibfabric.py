"""Emit helper (configs): an InfiniBand network as OpenSM and ibsim see it - one subnet per plane.

Consumes the Fabric IR of infiniband networks, the link index and the GUID mappings
(checks/guids.py); produces IbSubnets: IB nodes (switches, and one single-port CA per node port:
"dgx001/OSFP4/P2") with GUIDs, port-numbered links (QM9700 "c/s" is IB port 2*(c-1)+s), the
top-tier root switches, the compute nodes' CA ports, the subnet-manager nodes, and the routing
engine: the spec's, or for 'auto' ftree when the subnet is a symmetric fat-tree and updn
otherwise.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fabricc.catalog.models import PortSpec
from fabricc.checks.guids import guid_mappings
from fabricc.checks.subnet_managers import subnet_name, subnet_rails
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.guids import ca_port_guid, switch_guid
from fabricc.emit.configs.ports import ib_port, ib_port_count
from fabricc.errors import DesignError, error
from fabricc.ir import ENDPOINT_LEAF, Device, Fabric
from fabricc.spec.routing import FAMILY_ENGINES
from fabricc.spec.topology import TORUS
from fabricc.spec.yamlsource import format_path

TIER_ORDER = ("leaf", "spine", "core")
COMPUTE_KINDS = ("gpu-node", "compute-tray")  # CAs of these nodes are ftree compute nodes


@dataclass(slots=True)
class IbNode:
    name: str  # switch hostname, or "<device>/<node port>" for a CA
    switch: bool
    device: str
    tier: str  # leaf, spine, core; the node group for CAs
    guid: int  # switch: node GUID; CA: port GUID
    port_count: int
    links: dict[int, tuple[str, int]] = field(default_factory=dict)  # port -> (far node, far port)
    compute: bool = False
    sm: bool = False

    @property
    def node_guid(self) -> int:
        """ibsim derives a CA's port GUID as node GUID + port number."""
        return self.guid if self.switch else self.guid - 1


@dataclass(slots=True)
class IbSubnet:
    network: str
    plane: int | None  # None when the network has one plane
    folder: str  # output folder under configs/
    engine: str
    engine_reason: str
    nodes: dict[str, IbNode] = field(
        default_factory=dict
    )  # CAs first (SM node first), then switches
    roots: list[IbNode] = field(default_factory=list)
    rail: int | None = None  # rail-only networks: one subnet per rail (and plane)

    @property
    def cas(self) -> list[IbNode]:
        return [n for n in self.nodes.values() if not n.switch]

    @property
    def switches(self) -> list[IbNode]:
        return [n for n in self.nodes.values() if n.switch]


def ib_networks(fabric: Fabric) -> list[str]:
    """The InfiniBand networks the design builds, in spec order."""
    return [
        name
        for name, network in fabric.loaded.networks.items()
        if network.fabric == "infiniband" and name in fabric.networks
    ]


def build_subnets(ctx: ConfigContext) -> list[IbSubnet]:
    fabric = ctx.fabric
    names = ib_networks(fabric)
    mappings = guid_mappings(fabric)
    ordinals = _node_ordinals(ctx)
    groups = {group: i for i, group in enumerate(fabric.loaded.spec.nodes)}
    networks = {name: i for i, name in enumerate(fabric.loaded.networks)}
    subnets: list[IbSubnet] = []
    for name in names:
        subnets.extend(
            _subnets(ctx, name, networks[name], groups, ordinals, mappings.get(name, {}))
        )
    return subnets


def _node_ordinals(ctx: ConfigContext) -> dict[str, int]:
    """0-based position of every node or tray within its group, in synthesis order."""
    counters: Counter[str] = Counter()
    ordinals: dict[str, int] = {}
    for device in ctx.fabric.devices.values():
        if device.kind in ("node", "tray") and device.group is not None:
            ordinals[device.name] = counters[device.group]
            counters[device.group] += 1
    return ordinals


def _subnets(
    ctx: ConfigContext,
    name: str,
    ordinal: int,
    groups: dict[str, int],
    ordinals: dict[str, int],
    mapping: dict[str, int],
) -> list[IbSubnet]:
    fabric = ctx.fabric
    resolved = fabric.loaded.networks[name]
    topology = fabric.networks[name]
    sm_groups = set(resolved.spec.subnet_manager.sm_nodes)
    planes = topology.planes
    rails = subnet_rails(topology)
    subnets = [
        IbSubnet(
            network=name,
            plane=plane if planes > 1 else None,
            folder=subnet_name(name, plane if planes > 1 else None, rail if rails > 1 else None)
            + "-sm",
            engine="",
            engine_reason="",
            rail=rail if rails > 1 else None,
        )
        for plane in range(planes)
        for rail in range(rails)
    ]

    def subnet_of(device: Device) -> IbSubnet:
        return subnets[(device.plane or 0) * rails + (device.rail or 0 if rails > 1 else 0)]

    def guid(node: str, default: int) -> int:
        return mapping.get(node, default)

    # IB port numbers per (switch model, port name) and node port ordinals per (node model,
    # port name): asked per link end, answered once per model and port.
    numbers: dict[tuple[str, str], int] = {}

    def port_number(device: Device, port: str) -> int:
        key = (device.model, port)
        number = numbers.get(key)
        if number is None:
            number = numbers[key] = ib_port(ctx.switch_model(device), port)
        return number

    switches: dict[str, IbNode] = {}

    def placeholder_error(exc: ValueError) -> DesignError:
        path = (*resolved.path, "subnet_manager", "guids")
        return DesignError(
            [error(str(exc), path=format_path(path), location=fabric.loaded.source.value(path))]
        )

    series: dict[str | None, int] = {}  # leaf classes in order, the network's first 0
    for tier in TIER_ORDER:
        for switch_name in topology.switches.get(tier, []):
            device = fabric.devices[switch_name]
            try:
                placeholder = switch_guid(
                    ordinal,
                    tier,
                    series.setdefault(device.series, len(series)),
                    device.plane or 0,
                    device.index,
                )
            except ValueError as exc:
                raise placeholder_error(exc) from None
            switches[switch_name] = IbNode(
                name=switch_name,
                switch=True,
                device=switch_name,
                tier=tier,
                guid=guid(switch_name, placeholder),
                port_count=ib_port_count(ctx.switch_model(device)),
            )
    # CAs in link order, subnet-manager nodes first so that ibsim attaches the SM to one of them
    devices = fabric.devices
    catalog_nodes = ctx.catalog.nodes
    endpoint_links = [link for link in fabric.links_of(name) if link.kind == ENDPOINT_LEAF]
    endpoint_links.sort(key=lambda link: devices[link.a].group not in sm_groups)
    # per host model and port: its ordinal and plane in the model, and whether a compute CA
    ports: dict[tuple[str, str], tuple[int, int, bool]] = {}
    for link in endpoint_links:
        host = devices[link.a]
        leaf = devices[link.b]
        group = host.group
        assert group is not None
        host_port = link.a_port
        found = ports.get((host.model, host_port))
        if found is None:
            model = catalog_nodes[host.model]
            base, plane_index = _base_port(model.ports, host_port)
            found = (base, plane_index, model.kind in COMPUTE_KINDS)
            ports[host.model, host_port] = found
        base, plane_index, compute = found
        node = f"{link.a}/{host_port}"  # checks/guids.py ca_name(), inline
        try:
            default = ca_port_guid(ordinal, groups[group], ordinals[host.name], base, plane_index)
        except ValueError as exc:
            raise placeholder_error(exc) from None
        ca = IbNode(
            name=node,
            switch=False,
            device=host.name,
            tier=group,
            guid=mapping.get(node, default),
            port_count=1,
            links={},
            compute=compute,
            sm=group in sm_groups,
        )
        leaf_port = numbers.get((leaf.model, link.b_port)) or port_number(leaf, link.b_port)
        ca.links[1] = (leaf.name, leaf_port)
        switches[leaf.name].links[leaf_port] = (node, 1)
        subnet_of(leaf).nodes[node] = ca
    for switch in switches.values():
        subnet_of(fabric.devices[switch.name]).nodes[switch.name] = switch
    for link in fabric.links_of(name):
        if link.kind == ENDPOINT_LEAF:
            continue
        a, b = devices[link.a], devices[link.b]
        # port_number's cache inline (a port numbered 0 would only be asked again)
        a_port = numbers.get((a.model, link.a_port)) or port_number(a, link.a_port)
        b_port = numbers.get((b.model, link.b_port)) or port_number(b, link.b_port)
        switches[link.a].links[a_port] = (link.b, b_port)
        switches[link.b].links[b_port] = (link.a, a_port)
    top = topology.top_tier
    forced = resolved.spec.subnet_manager.routing_engine
    for subnet in subnets:
        # A torus has one tier: up/down (updn) needs one root to rank the rings, the origin
        # switch (torus-2QoS's seed); every switch as a root leaves updn no ranking at all.
        subnet.roots = (
            subnet.switches[:1]
            if topology.topology == TORUS
            else [n for n in subnet.switches if n.tier == top]
        )
        _check_unique(ctx, name, subnet)
        symmetric, reason = _symmetric_fat_tree(subnet, topology.tiers)
        family = FAMILY_ENGINES.get(topology.topology)
        if forced != "auto":
            subnet.engine, subnet.engine_reason = forced, "set by subnet_manager.routing_engine"
        elif family is not None:
            subnet.engine, subnet.engine_reason = family
        elif symmetric:
            subnet.engine, subnet.engine_reason = "ftree", reason
        else:
            subnet.engine, subnet.engine_reason = "updn", reason
    return subnets


def _base_port(ports: list[PortSpec], port: str) -> tuple[int, int]:
    """Ordinal of a node port in its model, and the plane of a split port ("NIC0/2" -> 1)."""
    names = [p.name for p in ports]
    if port in names:
        return names.index(port), 0
    base, _, sub = port.rpartition("/")
    return names.index(base), int(sub) - 1


def _check_unique(ctx: ConfigContext, network: str, subnet: IbSubnet) -> None:
    seen: dict[int, str] = {}
    for node in subnet.nodes.values():
        other = seen.get(node.guid)
        if other is not None:
            path = (*ctx.fabric.loaded.networks[network].path, "subnet_manager", "guids")
            raise DesignError(
                [
                    error(
                        f"GUID 0x{node.guid:016x} is used by both {other!r} and {node.name!r}",
                        path=format_path(path),
                        location=ctx.fabric.loaded.source.value(path),
                    )
                ]
            )
        seen[node.guid] = node.name


def _symmetric_fat_tree(subnet: IbSubnet, tiers: int) -> tuple[bool, str]:
    """A fat-tree OpenSM's ftree accepts: CAs only on leaves, and at every tier each switch has
    the same number of links to each switch above it, equal across the tier."""
    if tiers < 2:
        return False, "a single switch tier is not a tree"
    for ca in subnet.cas:
        far, _ = ca.links[1]
        if subnet.nodes[far].tier != "leaf":
            return False, f"{ca.name} is not cabled to a leaf"
    order = {tier: i for i, tier in enumerate(TIER_ORDER)}
    for lower in TIER_ORDER[: tiers - 1]:
        shapes: set[tuple[int, int]] = set()
        above = {s.name for s in subnet.switches if order[s.tier] > order[lower]}
        for switch in (s for s in subnet.switches if s.tier == lower):
            up = Counter(far for far, _ in switch.links.values() if far in above)
            counts = set(up.values())
            if len(counts) != 1:
                return False, f"{switch.name} has unequal link counts to the tier above"
            shapes.add((len(up), counts.pop()))
        if len(shapes) > 1:
            return False, f"{lower} switches differ in how they connect to the tier above"
    return True, "symmetric fat-tree: every switch has equal links to each switch above it"
