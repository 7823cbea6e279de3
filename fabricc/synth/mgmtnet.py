"""Synthesis view: how the management networks route, derived from the finished design.

Consumes the addressed Fabric IR (access switches, management cables, in-band networks and
addresses); produces the ManagementNet the config and provisioning emitters share:
  * every out-of-band access switch is the router of its own subnet (its block of the OOB pool,
    synth/addressing.py), its address the gateway of the devices cabled to it, and a DHCP relay
    for them (option 82, circuit-id: the port a request came in on, as Cumulus's
    use-pif-circuit-id names it); the addresses after its ports are a pool for devices the
    design does not know (a crash cart);
  * the top tier of an in-band network owns its gateway: the in-band pool's first host as a VRR
    virtual address, each switch of the tier a real address from the pool's end;
  * where that top tier is more than two spines, or cores (synth/inbandleaves.py), the leaves
    route instead: every leaf group (an MLAG pair) the VRR gateway of its own subnet, BGP
    unnumbered on every leaf-spine and spine-core link, the spines (and cores) routing between
    them, their own addresses from the pool's end their loopbacks (then the leaves': each its
    MLAG peer's backup IP). ASNs as RFC 7938 section
    5.2 numbers a Clos: each leaf its own (after the access switches'), the top tier one (the
    cores, or the spines of a 2-tier network), under cores the spines of each pod one (after
    the leaves') - so a route never goes down into a pod and up again, nor up to a core and
    down to another core (AS-path loop detection), the path hunting the Cumulus Linux auto BGP
    rule (all spines one ASN) avoids in two tiers;
  * access switches that uplink into that tier route: BGP unnumbered on the uplinks (the
    in-band top tier one private ASN, each access switch its own; RFC 6996 range), each
    announcing its subnet, the top tier the in-band pool; where the OOB network uplinks
    nowhere, its access switches route the same way over their management tree's uplink
    cages (synth/oob.py connect_tree);
  * the provisioning server (Kea, the HTTP server of the ZTP files) is the first server node on
    an in-band network (its in-band address), else the OOB pool's last address: a server the
    site provides, on a routed /30 of the port the first management tree's root keeps for it,
    announced to the tree (and the in-band network); an access switch relays only where its
    uplinks lead to the server;
  * a management tree's root whose network uplinks into an in-band network has its management
    port on a routed /31 of an in-band switch (synth/rootlinks.py: a top-tier switch its
    uplinks reach, else a routed leaf within a patch cord): that switch is the link's router
    and DHCP relay (RootLink), and the root provisions itself by DHCP once it routes to the
    server;
  * the seed switches: those whose own DHCP request could only reach the server through a
    switch still unconfigured - the roots of the access switches' management trees that have
    no such link (every other access switch's management port is on a relayed port of
    another), the in-band top-tier switches the bring-up cannot do without (_top_seeds) and
    the in-band leaves the server hangs off - which are bootstrapped first (ZTP from a USB
    drive).
"""

from __future__ import annotations

import functools
import ipaddress
from dataclasses import dataclass, field, replace

from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, MGMT, SPINE_CORE, UPLINK, Fabric
from fabricc.synth.addressing import oob_gateways, oob_stride
from fabricc.synth.inbandleaves import (
    leaf_groups,
    loopback_switches,
    routed_ports,
    spine_pods,
)
from fabricc.synth.oob import access_ports, server_cage, tree_order, uplink_cage

MGMT_ASN = 4_290_000_000  # RFC 6996 private 4-byte ASN: the in-band top tier; access switches after
VRR_MAC_BASE = 0x00005E000100  # RFC 5798 VRRP MAC 00:00:5e:00:01:<VRID>, as Cumulus VRR shows


@dataclass(frozen=True, slots=True)
class AccessSubnet:
    """An access switch's subnet: it is the gateway and the DHCP relay of its devices."""

    switch: str
    network: ipaddress.IPv4Network
    gateway: str  # the switch's own address (the subnet's first host)
    pool: tuple[str, str] | None  # addresses after the last port, for unknown devices
    asn: int | None  # where it routes (into the in-band top tier, or in its management tree)
    uplinks: tuple[str, ...] = ()  # its own ports towards the provisioning server
    # the management tree's root where its network uplinks nowhere: its port to the provisioning
    # server (the first of `uplinks`) and its own address there
    server_port: str | None = None
    server_link: ipaddress.IPv4Interface | None = None
    reaches_server: bool = True  # its uplinks lead to the provisioning server

    @property
    def relays(self) -> bool:
        """Whether it relays DHCP: a relay needs an upstream interface toward the server
        (Cumulus Linux "DHCP Relays": a server group has at least one upstream and one
        downstream interface) - its uplinks, on a routed path to the server; without one no
        request of its devices reaches Kea."""
        return bool(self.uplinks) and self.reaches_server


@dataclass(frozen=True, slots=True)
class RootLink:
    """A management tree's root whose management port is cabled to an in-band top-tier switch
    (synth/rootlinks.py): a routed /31, that switch its router and DHCP relay."""

    switch: str  # the top-tier switch
    port: str  # its port (the relay's circuit-id)
    network: ipaddress.IPv4Network
    relay: str  # the top-tier end's address (giaddr, the root's gateway)
    address: str  # the root's management address


@dataclass(frozen=True, slots=True)
class LeafGateway:
    """A leaf of an in-band network routed at its leaves: with its MLAG peer the gateway (VRR)
    of its group's subnet, BGP unnumbered on its uplinks to the spines."""

    subnet: ipaddress.IPv4Network
    virtual: str  # the group's gateway (VRR, the same on both peers)
    real: str  # this leaf's own address in the subnet
    asn: int
    uplinks: tuple[str, ...]  # its ports towards the spines
    loopback: str = ""  # its own /32 from the in-band pool's end: its MLAG peer's backup IP


@dataclass(frozen=True, slots=True)
class PodSpine:
    """A spine of an in-band network with a core tier: routes between its pod's leaves and the
    cores, BGP unnumbered on all its links, the ASN its pod shares."""

    loopback: str  # its own address from the in-band pool's end
    asn: int
    pod: int  # the pod's place in the network (synth/inbandleaves.spine_pods)
    ports: tuple[str, ...]  # towards the leaves and the cores


@dataclass(frozen=True, slots=True)
class InbandGateway:
    network: str  # in-band network name
    prefix: ipaddress.IPv4Network
    virtual: str  # the gateway hosts use (VRR) where the top tier owns it
    real: dict[str, str]  # top-tier switch -> its own address (its loopback where leaves route)
    vlan_mac: str  # VRR virtual MAC
    asn: int
    # where the top tier is more than two spines or cores, every leaf routes
    # (synth/inbandleaves.py), and under cores every spine
    leaves: dict[str, LeafGateway] = field(default_factory=dict)
    spines: dict[str, PodSpine] = field(default_factory=dict)
    host_prefixlen: int = 0  # the leaf groups' subnets' length, where leaves route
    # where leaves route and access switches uplink into the top tier: the prefixes the top
    # tier accepts from the tier below it with its own ASN in the path once (a valley path:
    # the OOB pool and the top tier's loopbacks, summarised), each `le 32`; empty elsewhere
    valley: tuple[str, ...] = ()

    def host_gateway(self, address: str) -> tuple[int, str]:
        """The prefix length and gateway of a host's in-band address: its leaf group's subnet
        and VRR address where leaves route, else the pool and the top tier's VRR address."""
        if not self.leaves:
            return self.prefix.prefixlen, self.virtual
        # the subnet's first address by a mask on the dotted quad's integer (asked per host; the
        # IR's IPv4 addresses are canonical: a network parsed from text each time was most of
        # NetBox's addresses at scale)
        a, b, c, d = map(int, address.split("."))
        mask = 0xFFFFFFFF << (32 - self.host_prefixlen)
        return self.host_prefixlen, _dotted(((a << 24 | b << 16 | c << 8 | d) & mask) + 1)


@dataclass(slots=True)
class ManagementNet:
    subnets: dict[str, AccessSubnet] = field(default_factory=dict)
    served_by: dict[str, str] = field(default_factory=dict)  # managed device -> access switch
    inband: InbandGateway | None = None
    server: str = ""  # provisioning server address
    server_device: str | None = None  # the node that serves, if the design has one
    seeds: list[str] = field(default_factory=list)
    # a management tree's root -> its link to the in-band top tier (provisioned by DHCP there)
    root_links: dict[str, RootLink] = field(default_factory=dict)

    def relayed_roots(self, switch: str) -> list[RootLink]:
        """The root links a top-tier switch is the router and DHCP relay of, in root order."""
        return [link for link in self.root_links.values() if link.switch == switch]

    def port_address(self, switch: str, port: str) -> str:
        """The address of the device cabled to an access port: the switch's own + the port."""
        # (asked per management cable: the gateway parsed once per switch, the sum spelled
        # without an IPv4Address)
        return _dotted(_address_value(self.subnets[switch].gateway) + int(port))

    def subnet_of(self, device: str) -> AccessSubnet | None:
        """The subnet a device's management address is in: its access switch's (an access
        switch's own management port is cabled to its parent in the management tree; the
        tree's root is managed on its own subnet)."""
        switch = self.served_by.get(device) or (device if device in self.subnets else None)
        return self.subnets.get(switch) if switch is not None else None


@functools.lru_cache(maxsize=1 << 12)  # per access switch's gateway
def _address_value(address: str) -> int:
    return int(ipaddress.IPv4Address(address))


def _dotted(value: int) -> str:
    """An IPv4 address's integer in dotted-quad form, as str(IPv4Address(value)) spells it."""
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"{value} is past the IPv4 address space")
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def mgmt_subnet(fabric: Fabric, device: str) -> tuple[int, str]:
    """The prefix length and gateway of a device's management address: the subnet of the access
    switch it is cabled to (or that it is), that switch its router; the whole OOB pool and its
    first host for a device no access switch serves."""
    net = management_net(fabric)
    root = net.root_links.get(device)
    if root is not None:  # on its /31 to the in-band top tier, that switch its router
        return root.network.prefixlen, root.relay
    subnet = net.subnet_of(device)
    if subnet is not None:
        return subnet.network.prefixlen, subnet.gateway
    pool = ipaddress.ip_network(fabric.loaded.spec.addressing.oob)
    return pool.prefixlen, str(next(pool.hosts()))


def management_net(fabric: Fabric) -> ManagementNet:
    return fabric.derived("mgmtnet", lambda: _compute(fabric))


def _compute(fabric: Fabric) -> ManagementNet:
    plan = ManagementNet()
    devices = fabric.devices
    catalog = fabric.loaded.catalog.catalog
    inband = _inband_gateway(fabric)
    plan.inband = inband
    tops = set(inband.real) if inband is not None else set()
    access = {
        s
        for name, network in fabric.loaded.networks.items()
        if network.spec.role == "oob" and name in fabric.networks
        for s in fabric.networks[name].switches.get("leaf", [])
    }
    uplinks_of: dict[str, list[str]] = {}  # one pass over the links, not one per switch
    into_top = False  # an access switch uplinks into the in-band top tier
    for link in fabric.links:
        # into the in-band top tier, or to its parent in its management tree (synth/oob.py)
        if link.kind == UPLINK and (link.b in tops or (link.a in access and link.b in access)):
            uplinks_of.setdefault(link.a, []).append(link.a_port)
            into_top = into_top or (link.b in tops and link.a in access)
    plan.server, plan.server_device = _server(fabric)
    gateways = oob_gateways(fabric)
    number = 0
    server_taken = False
    for name, network in fabric.loaded.networks.items():
        topology = fabric.networks.get(name)
        if network.spec.role != "oob" or topology is None:
            continue
        switches = [s for s in topology.switches.get("leaf", []) if devices[s].mgmt_ip]
        if not switches:
            continue
        stride = oob_stride(fabric, switches)
        prefixlen = 32 - (stride.bit_length() - 1)
        root, server_port, server_link = _server_port(
            fabric, name, switches, plan, prefixlen, server_taken
        )
        server_taken = server_taken or server_port is not None
        # the tree reaches the server through the in-band network it uplinks into, or through
        # its root's server port
        reaches = network.spec.uplink_to is not None or server_port is not None
        for switch in switches:
            address = ipaddress.IPv4Address(gateways.get(switch) or devices[switch].mgmt_ip)
            subnet = ipaddress.IPv4Network(f"{address}/{prefixlen}", strict=False)
            ports = access_ports(catalog.switches[devices[switch].model])
            first_free = int(address) + ports + 1
            last = int(subnet.broadcast_address) - 1
            pool = (
                (str(ipaddress.IPv4Address(first_free)), str(ipaddress.IPv4Address(last)))
                if first_free <= last
                else None
            )
            uplinks = tuple(uplinks_of.get(switch, ()))
            port = server_port if switch == root else None
            if port is not None:
                uplinks = (port, *uplinks)
            number += 1
            plan.subnets[switch] = AccessSubnet(
                switch,
                subnet,
                str(address),
                pool,
                MGMT_ASN + number if uplinks or switch == root else None,
                uplinks,
                port,
                server_link if port is not None else None,
                reaches,
            )
    if inband is not None:
        plan.inband = _routed_leaves(fabric, inband, number)
        if into_top and plan.inband.leaves:
            plan.inband = replace(plan.inband, valley=_valley(fabric, plan.inband))
    for link in fabric.links:
        if link.kind == MGMT and link.b in plan.subnets:
            plan.served_by[link.a] = link.b
        elif (
            link.kind == MGMT
            and link.a in plan.subnets
            and (link.b in tops or (plan.inband is not None and link.b in plan.inband.leaves))
            and link.a_ip is not None
            and link.b_ip is not None
            and plan.subnets[link.a].server_port is None
        ):
            # a tree's root on the in-band top tier or a routed in-band leaf (synth/rootlinks.py;
            # not the root that holds the site's server: the tier reaches the server through it)
            plan.root_links[link.a] = RootLink(
                link.b,
                link.b_port,
                ipaddress.IPv4Network(f"{link.b_ip}/31"),
                link.b_ip,
                link.a_ip,
            )
    plan.seeds = _seeds(fabric, plan)
    return plan


def _server_port(
    fabric: Fabric,
    network: str,
    switches: list[str],
    plan: ManagementNet,
    prefixlen: int,
    taken: bool,
) -> tuple[str, str | None, ipaddress.IPv4Interface | None]:
    """The root of a network's management tree (synth/oob.py tree_order) and, where the
    provisioning server is the site's (no server node of the design), the root's port to that
    server - the uplink cage synth/oob.py keeps (server_cage) - and the root's own
    address there: a /30 with the server's address (the OOB pool's last host), routed and
    announced to the tree. None where another network's root has the server already, or where
    the /30 would overlap an access switch's subnet (a full pool)."""
    root = tree_order(fabric, switches)[0]
    resolved = fabric.loaded.networks[network]
    if plan.server_device is not None or taken:
        return root, None, None
    model = fabric.loaded.catalog.catalog.switches[fabric.devices[root].model]
    port = uplink_cage(model, server_cage(resolved))
    server = ipaddress.IPv4Address(plan.server)
    link = ipaddress.IPv4Interface(f"{server - 1}/30")
    if port is None or link.network.broadcast_address == server - 1 or server not in link.network:
        return root, None, None
    for gateway in oob_gateways(fabric).values():
        subnet = ipaddress.IPv4Network(f"{gateway}/{prefixlen}", strict=False)
        if subnet.overlaps(link.network):
            return root, None, None
    return root, port, link


def _inband_gateway(fabric: Fabric) -> InbandGateway | None:
    for name, network in fabric.loaded.networks.items():
        topology = fabric.networks.get(name)
        if network.spec.role != "inband" or network.fabric != "ethernet" or topology is None:
            continue
        top = topology.top_tier
        if top is None:
            continue
        prefix = ipaddress.IPv4Network(fabric.loaded.spec.addressing.inband)
        end = int(prefix.broadcast_address)
        # the pool's first host is the virtual gateway (addressing leaves it free); the real
        # addresses count down from its last host, where no node group's part reaches (the
        # top tier's first, the spines' under a core tier after them: _routed_leaves)
        real = {
            switch: str(ipaddress.IPv4Address(end - 1 - k))
            for k, switch in enumerate(topology.switches[top])
        }
        mac = VRR_MAC_BASE + 1
        return InbandGateway(
            name,
            prefix,
            str(prefix.network_address + 1),
            real,
            ":".join(f"{(mac >> shift) & 0xFF:02x}" for shift in range(40, -8, -8)),
            MGMT_ASN,
        )
    return None


def _routed_leaves(fabric: Fabric, inband: InbandGateway, number: int) -> InbandGateway:
    """Where the in-band network routes at its leaves: each leaf's gateway, ASN (numbered after
    the access switches') and uplinks; under a core tier each spine's loopback (after the
    cores' at the pool's end), its pod's ASN (numbered after the leaves') and ports."""
    groups = leaf_groups(fabric, inband.network)
    if not groups:
        return inband
    uplinks = routed_ports(fabric, inband.network)
    end = int(inband.prefix.broadcast_address)
    place = {s: k for k, s in enumerate(loopback_switches(fabric, inband.network))}
    leaves: dict[str, LeafGateway] = {}
    for group in groups:
        for leaf in group.leaves:
            number += 1
            leaves[leaf] = LeafGateway(
                group.subnet,
                group.gateway,
                group.leaf_address(leaf),
                MGMT_ASN + number,
                tuple(uplinks.get(leaf, ())),
                str(ipaddress.IPv4Address(end - 1 - place[leaf])),
            )
    spines: dict[str, PodSpine] = {}
    for pod, members in enumerate(spine_pods(fabric, inband.network)):
        number += 1
        for spine in members:
            spines[spine] = PodSpine(
                str(ipaddress.IPv4Address(end - 1 - place[spine])),
                MGMT_ASN + number,
                pod,
                tuple(uplinks.get(spine, ())),
            )
    return replace(inband, leaves=leaves, spines=spines, host_prefixlen=groups[0].subnet.prefixlen)


def _valley(fabric: Fabric, inband: InbandGateway) -> tuple[str, ...]:
    """The prefixes the in-band top tier must learn through the tier below it although the
    path carries the tier's own ASN: the OOB pool's subnets (an access switch's subnet reaches
    the top-tier switches it is not cabled to only down through a leaf or pod spine and up
    again) and the tier's own loopbacks (which an access switch reaches the same way); the
    loopbacks count down from the in-band pool's end, so a few summaries cover them."""
    values = sorted(int(ipaddress.IPv4Address(a)) for a in inband.real.values())
    loopbacks = ipaddress.summarize_address_range(
        ipaddress.IPv4Address(values[0]), ipaddress.IPv4Address(values[-1])
    )
    if values[-1] - values[0] + 1 != len(values):  # not one run: each its own /32
        loopbacks = iter(ipaddress.IPv4Network(v) for v in values)
    pool = ipaddress.IPv4Network(fabric.loaded.spec.addressing.oob)
    return (str(pool), *(str(n) for n in loopbacks))


def _server(fabric: Fabric) -> tuple[str, str | None]:
    catalog = fabric.loaded.catalog.catalog
    for device in fabric.devices.values():
        if (
            device.kind == "node"
            and device.inband_ip is not None
            and catalog.nodes[device.model].kind == "server"
        ):
            return device.inband_ip, device.name
    pool = ipaddress.ip_network(fabric.loaded.spec.addressing.oob)
    return str(pool.broadcast_address - 1), None


def _seeds(fabric: Fabric, plan: ManagementNet) -> list[str]:
    """Switches to bootstrap by hand (ZTP-USB), in order: the access switches whose management
    port is cabled to no relay (the roots of the management trees, synth/oob.py, without a
    link to the in-band network, synth/rootlinks.py),
    the in-band top-tier switches the rest need and, under a core tier, the spines above the
    server's leaves those need (the relays' path down from the cores: _top_seeds), the in-band
    leaves the provisioning server is cabled to; last, every Ethernet switch (an access switch
    too) managed through an access switch that has no path to the provisioning server (it
    cannot relay), since no DHCP request of theirs reaches Kea. Every other switch provisions
    itself by DHCP through its access switch's relay, once that relay and one top-tier switch
    it uplinks into (routing to the server) are up."""
    seeds = [s for s in plan.subnets if s not in plan.served_by and s not in plan.root_links]
    if plan.inband is not None:
        leaves: list[str] = []
        via: dict[str, set[str]] = {}  # core -> the spines above the server's leaves under it
        if plan.server_device is not None:
            network = plan.inband.network
            links = fabric.links_by_network().get(network, [])
            leaves = sorted(
                {
                    link.b
                    for link in links
                    if link.kind == ENDPOINT_LEAF and link.a == plan.server_device
                }
            )
            above = {link.b for link in links if link.kind == LEAF_SPINE and link.a in leaves}
            for link in links:
                if link.kind == SPINE_CORE and link.a in above and link.b in plan.inband.real:
                    via.setdefault(link.b, set()).add(link.a)
            if via:  # a core tier: every core, cabled to such a spine or not
                via = {top: via.get(top, set()) for top in plan.inband.real}
        seeds += _top_seeds(fabric, plan, [*seeds, *leaves], via)
        seeds += leaves
    stranded = {s for s, access in plan.subnets.items() if not access.relays}
    if stranded:
        networks = fabric.loaded.networks
        for device in fabric.devices.values():
            resolved = networks.get(device.network) if device.network is not None else None
            if (
                device.kind == "switch"
                and plan.served_by.get(device.name) in stranded
                and resolved is not None
                and resolved.fabric == "ethernet"
            ):
                seeds.append(device.name)
    return list(dict.fromkeys(seeds))


def _top_seeds(
    fabric: Fabric, plan: ManagementNet, others: list[str], via: dict[str, set[str]]
) -> list[str]:
    """The in-band top-tier switches (and under a core tier the spines above the provisioning
    server's leaves) to bootstrap from USB, in the order to bring them up.

    A relay reaches the provisioning server through the top tier it uplinks into, so a switch
    (a top-tier one too) provisions itself by DHCP once its access switch is up and one of that
    access switch's uplinks ends on a top-tier switch that routes to the server: one that is up
    and, under a core tier, cabled to a spine above the server's leaves that is up (`via`: core
    -> those spines; BGP unnumbered all the way). An access switch itself is up once its parent
    in the management tree (synth/oob.py) is up and relays, or it is a root. Bring-up runs in
    rounds of DHCP from the seeds (_rounds); where it stalls, the top-tier switch that unlocks
    the most is seeded - the one the stalled access switches (up, no uplink's end routing) that
    manage the most switches still down uplink into, the first in the tier's order on a tie -
    with, where it has none up, the first spine above the server's leaves it is cabled to, and
    the rounds go on (a management tree's root cabled to a top-tier switch, synth/rootlinks.py,
    counts towards that switch with the switches it manages). Where the access switches uplink
    nowhere (their own tree routes them) or a switch of these is managed through none, all of them are seeded."""
    assert plan.inband is not None
    tops = list(plan.inband.real)
    spines = sorted({spine for ends in via.values() for spine in ends})
    uplinks = _uplink_targets(fabric, plan, set(tops))
    if not uplinks or any(s not in plan.served_by for s in [*tops, *spines]):
        return [*tops, *[s for s in plan.inband.spines if s in spines]]
    seeded: list[str] = []
    up = set(others)
    place = {top: k for k, top in enumerate(tops)}
    bringup = _Bringup.of(fabric, plan, uplinks, via)
    while True:
        up = _rounds(bringup, up)
        if all(s in up for s in [*tops, *spines]):
            return seeded
        waiting: dict[str, int] = {}  # access switch -> the switches it manages, not up
        for device, access in bringup.managed:
            if device not in up:
                waiting[access] = waiting.get(access, 0) + 1
        stalled: dict[str, int] = {}
        for switch, targets in uplinks.items():
            if switch in up and not any(_routes(t, up, via) for t in targets):
                for target in targets:
                    stalled[target] = stalled.get(target, 0) + waiting.get(switch, 0)
        for root, link in plan.root_links.items():
            if root not in up:  # a root on it comes up by DHCP once it routes
                stalled[link.switch] = stalled.get(link.switch, 0) + 1 + waiting.get(root, 0)
        best = min(
            (top for top in tops if not _routes(top, up, via)),
            key=lambda top: (-stalled.get(top, 0), place[top]),
        )
        for switch in [best, *sorted(via.get(best, ()))[:1]]:
            if switch not in up:
                seeded.append(switch)
                up.add(switch)


@dataclass(frozen=True, slots=True)
class _Above:
    """The in-band tiers above each leaf and spine (leaf -> its spines, spine -> its cores), and
    below each spine and core (what its coming up may let route)."""

    up: dict[str, tuple[str, ...]]
    below: dict[str, tuple[str, ...]]


def _above(fabric: Fabric, plan: ManagementNet) -> _Above:
    def compute() -> _Above:
        up: dict[str, list[str]] = {}
        below: dict[str, list[str]] = {}
        if plan.inband is not None and plan.root_links:
            for link in fabric.links_of(plan.inband.network):
                if link.kind in (LEAF_SPINE, SPINE_CORE):
                    up.setdefault(link.a, []).append(link.b)
                    below.setdefault(link.b, []).append(link.a)
        # a core's coming up may let a leaf two tiers down route
        for spine, leaves in list(below.items()):
            for core in up.get(spine, ()):
                below.setdefault(core, []).extend(leaves)
        return _Above(
            {k: tuple(dict.fromkeys(v)) for k, v in up.items()},
            {k: tuple(dict.fromkeys(v)) for k, v in below.items()},
        )

    return fabric.derived("mgmtnet.above", compute)


def _leaf_routes(leaf: str, up: set[str], via: dict[str, set[str]], above: _Above) -> bool:
    """Whether a routed in-band leaf relays a request to the provisioning server: it is up and
    so is a spine above it that routes - a top-tier one (_routes), or under a core tier one
    with a core above it that routes (the path through the cores, as the access switches'
    relays take: a spine straight down to the server's leaves is not counted)."""
    if leaf not in up:
        return False
    for spine in above.up.get(leaf, ()):
        if spine not in up:
            continue
        if _routes(spine, up, via) and spine not in above.up:
            return True
        if any(_routes(core, up, via) for core in above.up.get(spine, ())):
            return True
    return False


def _routes(top: str, up: set[str], via: dict[str, set[str]]) -> bool:
    """Whether a top-tier switch routes a relayed request to the provisioning server: it is up
    and, under a core tier, so is one of the spines above the server's leaves it is cabled to."""
    return top in up and (top not in via or any(spine in up for spine in via[top]))


def _uplink_targets(
    fabric: Fabric, plan: ManagementNet, tops: set[str]
) -> dict[str, tuple[str, ...]]:
    """Access switch -> the top-tier switches its uplinks end on (none: not listed)."""
    targets: dict[str, list[str]] = {}
    for link in fabric.links:
        if link.kind == UPLINK and link.a in plan.subnets and link.b in tops:
            targets.setdefault(link.a, []).append(link.b)
    return {switch: tuple(dict.fromkeys(ends)) for switch, ends in targets.items()}


@dataclass(frozen=True, slots=True)
class _Bringup:
    """What every round of _rounds reads and no round changes, made once per plan: the
    switches managed through an access switch (with it), the access switches uplinking into
    each top-tier switch, the cores above each spine of the provisioning server's leaves and
    the in-band tiers (_above)."""

    plan: ManagementNet
    uplinks: dict[str, tuple[str, ...]]
    via: dict[str, set[str]]
    managed: list[tuple[str, str]]  # (switch, its access switch)
    by_target: dict[str, list[str]]
    over: dict[str, list[str]]
    above: _Above

    @staticmethod
    def of(
        fabric: Fabric,
        plan: ManagementNet,
        uplinks: dict[str, tuple[str, ...]],
        via: dict[str, set[str]],
    ) -> _Bringup:
        devices = fabric.devices
        managed = [(d, a) for d, a in plan.served_by.items() if devices[d].kind == "switch"]
        by_target: dict[str, list[str]] = {}
        for switch, targets in uplinks.items():
            for target in targets:
                by_target.setdefault(target, []).append(switch)
        over: dict[str, list[str]] = {}  # spine above the server's leaves -> the cores above it
        for top, spines in via.items():
            for spine in spines:
                over.setdefault(spine, []).append(top)
        return _Bringup(plan, uplinks, via, managed, by_target, over, _above(fabric, plan))


def _rounds(bringup: _Bringup, up: set[str]) -> set[str]:
    """Every device up after rounds of DHCP from `up`: a switch managed through an access
    switch comes up once that access switch is up and one of its uplinks' ends routes to the
    provisioning server (_routes); a management tree's root cabled to a top-tier switch
    (synth/rootlinks.py) once that switch routes to the server. What comes up only adds to
    what may come up next, so the order the rounds take changes nothing of the result."""
    plan, uplinks, via = bringup.plan, bringup.uplinks, bringup.via
    by_target, over, above = bringup.by_target, bringup.over, bringup.above
    up = set(up)
    hanging: dict[str, list[str]] = {}  # top-tier switch -> the roots on it, not up
    for root, link in plan.root_links.items():
        if root not in up:
            hanging.setdefault(link.switch, []).append(root)
    waiting: dict[str, list[str]] = {}  # access switch -> the switches it manages, not up
    for device, access in bringup.managed:
        if device not in up:
            waiting.setdefault(access, []).append(device)

    def relays(switch: str) -> bool:
        return switch in up and any(_routes(t, up, via) for t in uplinks.get(switch, ()))

    def wake(devices: list[str]) -> list[str]:
        """The roots that come up now that `devices` are: on a switch that routes to the
        server (a top-tier switch, _routes; a routed in-band leaf, _leaf_routes)."""
        woken: list[str] = []
        for device in devices:
            for relay in [device, *over.get(device, []), *above.below.get(device, ())]:
                if relay in hanging and (
                    _routes(relay, up, via) or _leaf_routes(relay, up, via, above)
                ):
                    woken += [root for root in hanging.pop(relay) if root not in up]
        up.update(woken)
        return woken

    ready = [s for s in waiting if relays(s)]
    # a root's relay wakes it only once up itself (_routes, _leaf_routes): those up of them
    woken = wake(sorted(relay for relay in hanging if relay in up))
    while True:
        ready += [s for s in woken if relays(s)]
        while ready:
            switch = ready.pop()
            for device in waiting.pop(switch, []):
                if device in up:
                    continue
                up.add(device)
                lit = [device] if device in waiting else []
                lit += wake([device])
                for top in [device, *over.get(device, [])]:
                    lit += [s for s in by_target.get(top, []) if s in waiting]
                ready += [s for s in lit if relays(s)]
        # a relay that routes now through a switch whose coming up wake did not follow (a
        # spine above the server's leaves, for a leaf two tiers below a core over it)
        woken = wake(sorted(hanging))
        if not woken:
            return up
