"""Synthesis rule: where an in-band network routes at its leaves, and the leaves' subnets.

Consumes the wired Fabric IR (an in-band network's topology, its peer, endpoint and
switch-to-switch links); produces, for an in-band network whose top tier is more spines than
one MLAG pair (more than two; two where the hosts are single-homed, so the spines are no pair)
or a core tier, its leaf groups (an MLAG pair, or a lone leaf) with the hosts cabled to each
and the subnet each group is the gateway of, its spines by pod and every switch's routed ports.
Bridged, such a network would be loop-free over one MLAG spine pair only and spanning tree
would block every uplink to the other spines (or cores); routed at the leaves (VRR on the pair,
BGP unnumbered on every leaf-spine and spine-core link, each leaf its own ASN, as the Cumulus
Linux "BGP Configuration Example" of its reference topology configures MLAG leaf pairs under
BGP unnumbered spines) every uplink carries traffic. A core tier makes it a 3-tier Clos routed
as RFC 7938 section 5.2 numbers one (synth/mgmtnet.py: the spines of a pod one ASN, the cores
one). One spine, or a pair of two: the network bridges up to it (synth/fattree.py,
emit/configs/mgmt.py) and this module returns nothing for it. Used by synth/addressing.py
(host addresses inside their group's subnet) and synth/mgmtnet.py (gateways, ASNs).

Every group gets a subnet of the same size, aligned, in leaf order from the in-band pool's
start: the network address, the VRR virtual gateway (first host), one address per host of the
largest group, one real address per leaf from the subnet's end, the broadcast address.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, PEER, SPINE_CORE, Fabric

MAX_BRIDGED_SPINES = 2  # one MLAG spine pair
SUBNET_OVERHEAD = 5  # network, VRR gateway, two leaf addresses, broadcast


@dataclass(frozen=True, slots=True)
class LeafGroup:
    leaves: tuple[str, ...]  # an MLAG pair (primary first) or a lone leaf
    hosts: tuple[str, ...]  # in cabling order
    subnet: ipaddress.IPv4Network

    @property
    def gateway(self) -> str:
        return str(self.subnet.network_address + 1)

    def host_address(self, index: int) -> str:
        return str(self.subnet.network_address + 2 + index)

    def leaf_address(self, leaf: str) -> str:
        k = self.leaves.index(leaf)
        return str(self.subnet.broadcast_address - 1 - k)


def routes_at_leaves(fabric: Fabric, network: str) -> bool:
    """An Ethernet in-band network with a core tier, or whose spines are more than one MLAG
    pair can bridge: more than two, or two that are no MLAG pair (single-homed hosts:
    synth/fattree.py pairs the spines of dual-homed networks only)."""
    loaded = fabric.loaded.networks.get(network)
    topology = fabric.networks.get(network)
    if loaded is None or topology is None:
        return False
    if loaded.spec.role != "inband" or loaded.fabric != "ethernet":
        return False
    if topology.top_tier == "core":
        return True
    if topology.top_tier != "spine":
        return False
    spines = len(topology.switches.get("spine", []))
    return spines > MAX_BRIDGED_SPINES or (spines == 2 and not loaded.spec.dual_homed)


def leaf_groups(fabric: Fabric, network: str) -> list[LeafGroup] | None:
    """The network's leaf groups and their subnets; None where it bridges up to its top tier
    or where the in-band pool is too small for the groups (addressing reports that)."""
    if not routes_at_leaves(fabric, network):
        return None
    return fabric.derived(f"inbandleaves:{network}", lambda: _groups(fabric, network))


def _groups(fabric: Fabric, network: str) -> list[LeafGroup] | None:
    topology = fabric.networks[network]
    peer: dict[str, str] = {}
    hosts: dict[str, list[str]] = {}
    for link in fabric.links_of(network):
        if link.kind == PEER:
            peer.setdefault(link.a, link.b)
            peer.setdefault(link.b, link.a)
        elif link.kind == ENDPOINT_LEAF:
            hosts.setdefault(link.b, []).append(link.a)
    members: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    seen: set[str] = set()
    for leaf in topology.switches.get("leaf", []):
        if leaf in seen:
            continue
        pair: tuple[str, ...] = (leaf, peer[leaf]) if leaf in peer else (leaf,)
        seen.update(pair)
        members.append((pair, tuple(dict.fromkeys(h for m in pair for h in hosts.get(m, [])))))
    largest = max((len(h) for _, h in members), default=0)
    bits = (largest + SUBNET_OVERHEAD - 1).bit_length()
    pool = ipaddress.IPv4Network(fabric.loaded.spec.addressing.inband)
    if 32 - bits < pool.prefixlen:
        return None
    subnets = pool.subnets(new_prefix=32 - bits)
    groups = []
    for pair, cabled in members:
        subnet = next(subnets, None)
        if subnet is None:
            return None
        groups.append(LeafGroup(pair, cabled, subnet))
    return groups


def routed_ports(fabric: Fabric, network: str) -> dict[str, list[str]]:
    """Each switch's ports on the network's leaf-spine and spine-core links, both ends: the
    routed ports (BGP unnumbered) where the network routes at its leaves."""
    out: dict[str, list[str]] = {}
    for link in fabric.links_of(network):
        if link.kind in (LEAF_SPINE, SPINE_CORE):
            out.setdefault(link.a, []).append(link.a_port)
            out.setdefault(link.b, []).append(link.b_port)
    return out


def spine_pods(fabric: Fabric, network: str) -> list[tuple[str, ...]]:
    """The spines of a network with a core tier by pod (a plane's spine-leaf group of one leaf
    class), in spine order; none without a core tier (the spines are its top tier)."""
    topology = fabric.networks[network]
    if topology.top_tier != "core":
        return []
    pods: dict[tuple[int | None, str | None, int | None], list[str]] = {}
    for spine in topology.switches.get("spine", []):
        device = fabric.devices[spine]
        pods.setdefault((device.plane, device.series, device.pod), []).append(spine)
    return [tuple(members) for members in pods.values()]


def loopback_switches(fabric: Fabric, network: str) -> list[str]:
    """The switches whose own addresses (loopbacks) count down from the in-band pool's last
    host: the top tier first (as where the network bridges), then the spines under a core tier,
    then the leaves - a leaf's loopback is its MLAG peer's backup IP, reached over the routed
    uplinks, not the peer link (Cumulus Linux "Multi-Chassis Link Aggregation - MLAG", Backup
    IP)."""
    topology = fabric.networks[network]
    top = topology.top_tier
    if top is None:
        return []
    below = topology.switches.get("spine", []) if top == "core" else []
    leaves = topology.switches.get("leaf", []) if top != "leaf" else []
    return [*topology.switches[top], *below, *leaves]
