"""Emit stage, configs: NVUE startup.yaml of the management switches (in-band and out-of-band).

Consumes the switches of inband and oob networks (os: cumulus), the ConfigContext, the cabling
plan and the management routing plan (synth/mgmtnet.py); produces per switch an NVUE `set` tree.
The in-band network is layer 2 up to its top tier: one access VLAN (network.vlan, default 10),
hosts on LACP bonds split over an MLAG leaf pair (or on access ports), switch-to-switch cables
bundled into one bond per far switch or far MLAG pair (a leaf pair's uplinks to the spine pair:
one bond; the spine pair's links to a leaf pair: one bond), so RSTP (root: the top tier) blocks
none of them; the top tier owns the in-band gateway (an SVI with VRR) and routes. Where the
in-band top tier is more than two spines, or cores, the network routes at its leaves instead
(synth/inbandleaves.py): every leaf pair is bridged only to its hosts and owns its subnet's
gateway (VRR), every leaf-spine and spine-core link is a routed port with BGP unnumbered at
both ends, each spine (and core) has a loopback and no in-band SVI; each leaf of an MLAG pair
has a loopback too, routes across the peer link (BGP unnumbered on peerlink.4094) and backs up
on its peer's loopback (Cumulus Linux "Multi-Chassis Link Aggregation - MLAG": Peer Link
Routing, Backup IP). Every OOB
access switch is the router of its own subnet: its devices on access ports of its VLAN (default
20), the gateway address on that VLAN's SVI, a DHCP relay towards the provisioning server and
BGP unnumbered on its uplinks into the in-band top tier. Every port is described with its far
end. Switches with a cabled management port keep it in the mgmt VRF, its gateway the access
switch it is cabled to. Keys are inserted in the order startup.yaml lists them (type,
description, vlan, link, bond, ip, bridge).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.catalog.ports import mgmt_port_names
from fabricc.emit.configs.context import MANAGEMENT_ROLES, ConfigContext
from fabricc.emit.configs.cumulus import (
    Tree,
    breakouts,
    eth0,
    mgmt_port_end,
    nvue_model,
    swp,
)
from fabricc.emit.configs.frr import MAXIMUM_PATHS
from fabricc.emit.configs.index import End
from fabricc.emit.configs.nvue_release import Nvue
from fabricc.emit.configs.ports import cumulus_name
from fabricc.errors import DesignError, error
from fabricc.ir import (
    ENDPOINT_LEAF,
    LEAF_SPINE,
    MGMT,
    PEER,
    SITE,
    SPINE_CORE,
    UPLINK,
    Device,
    Fabric,
)
from fabricc.spec.yamlsource import format_path
from fabricc.synth.mgmtnet import management_net, mgmt_subnet

DEFAULT_VLANS = {"inband": 10, "oob": 20}
ETH0_MTU = 1500
BRIDGE = "br_default"
MLAG_MAC_BASE = 0x443839FF0000  # 44:38:39:ff:00:00/16, the range Cumulus reserves for MLAG
UPLINK_MLAG_ID_BASE = 1000  # host bonds are numbered from 1, uplink bonds from here
# RSTP bridge priorities: the first top-tier switch is the root, the others its backups; access
# switches that only uplink into another network must never become root.
STP_ROOT, STP_BACKUP, STP_DEFAULT, STP_EDGE = 4096, 8192, 32768, 61440
MLAG_PRIORITY = (1000, 2000)  # primary, secondary
# Seconds a restarting peer keeps its MLAG bonds down while it learns the fabric: Cumulus Linux
# "Multi-Chassis Link Aggregation - MLAG" (init-delay, default 180 s) recommends 300 s at scale.
MLAG_INIT_DELAY_S = 300
RELAY_SERVER_GROUP = "provisioning"  # the one DHCP server group of an access switch (5.14+)
# the top tier's inbound policy towards the tier below it (a route map and its two lists; NVUE
# names start with a letter: Cumulus Linux "Route Filtering and Redistribution")
VALLEY_MAP, VALLEY_PREFIXES, VALLEY_OWN_AS = "MGMT-VALLEY-IN", "MGMT-VALLEY", "MGMT-OWN-AS"


def network_vlan(fabric: Fabric, network: str) -> int:
    spec = fabric.loaded.networks[network].spec
    return spec.vlan if spec.vlan is not None else DEFAULT_VLANS[spec.role]


def check_vlans(fabric: Fabric) -> None:
    """Management networks bridged together by uplinks need distinct VLANs."""
    seen: dict[int, str] = {}
    problems = []
    for name, network in fabric.loaded.networks.items():
        if network.spec.role not in MANAGEMENT_ROLES or network.fabric != "ethernet":
            continue
        vlan = network_vlan(fabric, name)
        if vlan in seen:
            path = (*network.path, "vlan")
            problems.append(
                error(
                    f"VLAN {vlan} is used by networks {seen[vlan]!r} and {name!r}",
                    path=format_path(path),
                    location=fabric.loaded.source.value(path),
                    hint="give every management network its own vlan",
                )
            )
        seen[vlan] = name
    if problems:
        raise DesignError(problems)


@dataclass(slots=True)
class Pair:
    """An MLAG leaf pair: the two leaves joined by peer links."""

    primary: str
    secondary: str
    ordinal: int  # design-wide, in network and pair order
    peer_ports: dict[str, list[str]] = field(default_factory=dict)
    host_ids: dict[str, int] = field(default_factory=dict)  # host -> MLAG id
    # far switch (the primary of a far MLAG pair) -> MLAG id of the bond towards it
    uplink_ids: dict[str, int] = field(default_factory=dict)
    downlink_ids: dict[str, int] = field(default_factory=dict)


class ManagementPlan:
    """MLAG pairs (leaf pairs, an in-band spine pair) and their bond ids, computed once for all
    management networks. Between two pairs one bond on each side: every leaf pair's uplinks to
    the spine pair are one MLAG bond, the spine pair's links to a leaf pair one - so no
    switch-to-switch link of the network is left for spanning tree to block."""

    def __init__(self, ctx: ConfigContext) -> None:
        self.ctx = ctx
        self.pair_of: dict[str, Pair] = {}
        pairs: list[Pair] = []
        ordinal = 0
        for name, network in ctx.fabric.loaded.networks.items():
            topology = ctx.fabric.networks.get(name)
            if network.spec.role not in MANAGEMENT_ROLES or topology is None:
                continue
            for switch in [*topology.switches.get("leaf", []), *topology.switches.get("spine", [])]:
                if switch in self.pair_of:
                    continue
                peers = [e for e in ctx.ends(switch) if e.kind == PEER]
                if not peers:
                    continue
                pair = Pair(switch, peers[0].far, ordinal)
                ordinal += 1
                self.pair_of[switch] = self.pair_of[peers[0].far] = pair
                pairs.append(pair)
        for pair in pairs:
            self._number(pair)

    def group(self, far: str) -> str:
        """The far end of a bond: the primary of the far switch's MLAG pair, or the switch."""
        pair = self.pair_of.get(far)
        return pair.primary if pair is not None else far

    def _number(self, pair: Pair) -> None:
        ctx = self.ctx
        for member in (pair.primary, pair.secondary):
            for end in ctx.ends(member):
                if end.kind == PEER:
                    pair.peer_ports.setdefault(member, []).append(end.port)
                elif end.kind == ENDPOINT_LEAF and not end.upward:
                    pair.host_ids.setdefault(end.far, len(pair.host_ids) + 1)
                elif end.link.network != ctx.devices[member].network or end.kind in (UPLINK, SITE):
                    continue
                elif end.upward:
                    pair.uplink_ids.setdefault(
                        self.group(end.far), UPLINK_MLAG_ID_BASE + len(pair.uplink_ids) + 1
                    )
                else:
                    pair.downlink_ids.setdefault(
                        self.group(end.far), UPLINK_MLAG_ID_BASE + len(pair.downlink_ids) + 1
                    )

    def mac(self, pair: Pair) -> str:
        value = MLAG_MAC_BASE + pair.ordinal + 1
        return ":".join(f"{(value >> shift) & 0xFF:02x}" for shift in range(40, -8, -8))


def management_tree(ctx: ConfigContext, plan: ManagementPlan, device: Device) -> Tree:
    assert device.network is not None
    fabric = ctx.fabric
    network = fabric.loaded.networks[device.network]
    mtu = network.spec.mtu
    nvue = nvue_model(ctx, device)
    vlan = network_vlan(fabric, device.network)
    vlans = {vlan}
    mgmt_ports = mgmt_port_names(ctx.switch_model(device))
    pair = plan.pair_of.get(device.name)
    interfaces: Tree = {}
    net = management_net(fabric)
    access = net.subnets.get(device.name)
    # where the in-band top tier is more than two spines or cores, the leaves route (their
    # groups' gateways) and the spines and cores only route between them and the access switches
    routed = net.inband.leaves if net.inband is not None else {}
    own = routed.get(device.name)
    top = net.inband if net.inband is not None and device.name in net.inband.real else None
    pod_spine = net.inband.spines.get(device.name) if net.inband is not None else None
    gateway = top if top is not None and not routed else None
    loopback = (
        pod_spine.loopback
        if pod_spine is not None
        else top.real[device.name]
        if top is not None and routed
        else None
    )
    routed_network = net.inband.network if net.inband is not None and routed else None
    # the in-band top tier, which the access switches route into
    routers = set(net.inband.real) if net.inband is not None else set()
    neighbors: Tree = {}
    # a top-tier switch of a routed network that access switches uplink into: accepts the OOB
    # subnets and the tier's loopbacks through the tier below with its own ASN once
    valley = net.inband.valley if net.inband is not None and top is not None and routed else ()
    valley_session = _valley_session(nvue) if valley else {}
    mgmt = mgmt_port_end(ctx, device)
    if mgmt is not None:
        interfaces["eth0"] = eth0(ctx, device, mgmt)
    interfaces.update(breakouts(ctx, device))

    # Subtrees that many ports and bonds repeat, one object each (never changed): yaml_block
    # spells a shared subtree once
    edge = {"access": vlan, "stp": {"admin-edge": nvue.on, "bpdu-guard": nvue.on}}
    bridge = {"domain": {BRIDGE: edge}}  # access ports and host bonds
    bond_link = {"mtu": mtu}
    trunk: Tree = {"domain": {BRIDGE: {}}}  # switch-to-switch bonds
    host_bonds: dict[str, list[End]] = {}
    relayed: list[str] = []  # its ports to management trees' roots
    extra: list[str] = []  # prefixes it announces besides its own (and its loopback)
    switch_bonds: dict[tuple[bool, str], list[End]] = {}
    for end in ctx.ends(device.name):
        if end.port in mgmt_ports:
            continue
        name = cumulus_name(end.port)
        root_link = net.root_links.get(end.far) if end.kind == MGMT else None
        if root_link is not None and root_link.switch == device.name:
            # a management tree's root (synth/rootlinks.py): a routed /31 at 1GbE (a 1000BASE-T
            # module in a cage adapter), this switch the router and DHCP relay of it
            interfaces[name] = {
                "type": "swp",
                "description": ctx.far_end(end),
                # the root's eth0 MTU (1500, Linux's Ethernet default), not the fabric's
                "link": {"mtu": ETH0_MTU, "speed": "1G", "state": {"up": {}}},
                **nvue.addresses([f"{root_link.relay}/31"]),
            }
            relayed.append(name)
            extra.append(str(root_link.network))
        elif end.kind in (ENDPOINT_LEAF, MGMT) and not end.upward:
            if pair is not None and end.kind == ENDPOINT_LEAF:
                host_bonds.setdefault(end.far, []).append(end)
                interfaces[name] = swp(ctx, device, end, mtu)
            else:
                interfaces[name] = {**swp(ctx, device, end, mtu), "bridge": bridge}
        elif end.kind == PEER:
            interfaces[name] = swp(ctx, device, end, mtu)
        elif end.kind == SITE:
            # a border link: a routed port and an eBGP session with the site network
            interfaces[name], key, session = site_port(ctx, device, end, mtu, nvue)
            neighbors[key] = session
        elif (
            (end.kind == UPLINK and (end.far if end.upward else device.name) in routers)
            or (end.link.network == routed_network and end.kind in (LEAF_SPINE, SPINE_CORE))
            or (end.kind == UPLINK and access is not None and end.far in net.subnets)
        ):
            # routed, BGP unnumbered: an access switch's uplink into the in-band top tier, a
            # leaf-spine or spine-core link of an in-band network routed at its leaves, or a
            # link of an OOB network's management tree (synth/oob.py connect_tree)
            interfaces[name] = swp(ctx, device, end, mtu)
            neighbors[name] = {"type": "unnumbered", "remote-as": "external"}
            if valley and end.kind in (LEAF_SPINE, SPINE_CORE):
                # the top tier's session with the tier below it: the valley paths
                neighbors[name]["address-family"] = valley_session
        elif end.kind == UPLINK and end.upward:
            # this switch uplinks into another network: its own VLAN, untagged
            interfaces[name] = {
                **swp(ctx, device, end, mtu),
                "bridge": {"domain": {BRIDGE: {"access": vlan}}},
            }
        elif end.kind == UPLINK and not end.upward:
            # another network's switch uplinks here: its VLAN, untagged, on this port
            far_vlan = network_vlan(fabric, end.link.network)
            vlans.add(far_vlan)
            interfaces[name] = {
                **swp(ctx, device, end, mtu),
                "bridge": {"domain": {BRIDGE: {"access": far_vlan}}},
            }
        else:
            switch_bonds.setdefault((end.upward, plan.group(end.far)), []).append(end)
            interfaces[name] = swp(ctx, device, end, mtu)

    for host, ends in host_bonds.items():
        assert pair is not None
        mlag_id = pair.host_ids[host]
        interfaces[f"bond{mlag_id}"] = {
            "type": "bond",
            "description": host,
            "link": bond_link,
            "bond": {
                "member": {cumulus_name(e.port): {} for e in ends},
                "mlag": {"id": mlag_id},
                "lacp-bypass": nvue.on,
            },
            "bridge": bridge,
        }
    counters = {True: 0, False: 0}
    for (upward, group), ends in switch_bonds.items():
        counters[upward] += 1
        name = f"{'uplink' if upward else 'downlink'}{counters[upward]}"
        bond: Tree = {"member": {cumulus_name(e.port): {} for e in ends}}
        ids = (pair.uplink_ids if upward else pair.downlink_ids) if pair is not None else {}
        if group in ids:
            bond["mlag"] = {"id": ids[group]}
        far_pair = plan.pair_of.get(group)
        description = f"{far_pair.primary}+{far_pair.secondary}" if far_pair is not None else group
        interfaces[name] = {
            "type": "bond",
            "description": description,
            "link": bond_link,
            "bond": bond,
            "bridge": trunk,
        }
    if pair is not None:
        interfaces["peerlink"] = {
            "type": "peerlink",
            "description": pair.secondary if device.name == pair.primary else pair.primary,
            "bond": {"member": {cumulus_name(p): {} for p in pair.peer_ports[device.name]}},
        }

    tree: Tree = {"system": {"hostname": device.name}}
    routes: Tree = {}
    announce = ""  # the prefix this switch routes for (BGP)
    router_id = None
    if access is not None:
        # the router of its subnet: the gateway of every device cabled to it
        interfaces[f"vlan{vlan}"] = {
            "type": "svi",
            "vlan": vlan,
            **nvue.addresses([f"{access.gateway}/{access.network.prefixlen}"]),
        }
        announce, router_id = str(access.network), access.gateway
        if access.server_port is not None and access.server_link is not None:
            # the root of a management tree that uplinks nowhere: the provisioning server on a
            # routed port of its own, announced to the tree
            interfaces[cumulus_name(access.server_port)] = {
                "type": "swp",
                "description": f"provisioning server {net.server}",
                "link": {"mtu": mtu, "speed": f"{_cage_speed(ctx, device)}G", "state": {"up": {}}},
                **nvue.addresses([str(access.server_link)]),
            }
            extra.append(str(access.server_link.network))
    elif mgmt is None and device.mgmt_ip is not None:
        prefixlen, via = mgmt_subnet(fabric, device.name)
        interfaces[f"vlan{vlan}"] = {
            "type": "svi",
            "vlan": vlan,
            **nvue.addresses([f"{device.mgmt_ip}/{prefixlen}"]),
        }
        routes = {"0.0.0.0/0": {"via": {via: {}}}}
    if gateway is not None:
        # the in-band hosts' gateway: VRR, the same virtual address and MAC on the whole tier, as
        # the DGX BasePOD deployment guide configures its SN4600C pair ("Network Deployment")
        prefixlen = gateway.prefix.prefixlen
        interfaces[f"vlan{vlan}"] = {
            "type": "svi",
            "vlan": vlan,
            **nvue.vrr(
                f"{gateway.real[device.name]}/{prefixlen}",
                f"{gateway.virtual}/{prefixlen}",
                gateway.vlan_mac,
            ),
        }
        announce, router_id = str(gateway.prefix), gateway.real[device.name]
        if pair is not None and neighbors:
            # an MLAG spine pair that routes (the access switches' uplinks, the site's border
            # links): Peer Link Routing across the peer link as on routed leaves, iBGP here (the
            # tier shares its ASN) with next hop self, so that the pair's peer can resolve the
            # routes its peer learned over BGP unnumbered on its own ports
            neighbors["peerlink.4094"] = {
                "type": "unnumbered",
                "remote-as": "internal",
                "address-family": {"ipv4-unicast": {"nexthop-setting": "self"}},
            }
    if own is not None and net.inband is not None:
        # the gateway of its leaf group's subnet: VRR on both MLAG peers, as on the spine pair
        prefixlen = own.subnet.prefixlen
        interfaces[f"vlan{vlan}"] = {
            "type": "svi",
            "vlan": vlan,
            **nvue.vrr(
                f"{own.real}/{prefixlen}", f"{own.virtual}/{prefixlen}", net.inband.vlan_mac
            ),
        }
        announce, router_id = str(own.subnet), own.real
        if own.loopback:
            # its own /32: what its MLAG peer's backup IP names, reached over the routed uplinks
            interfaces["lo"] = {"type": "loopback", **nvue.addresses([f"{own.loopback}/32"])}
            extra.append(f"{own.loopback}/32")
            router_id = own.loopback
        if pair is not None and neighbors:
            # Peer Link Routing (Cumulus Linux "Multi-Chassis Link Aggregation - MLAG"): a
            # routed adjacency across the peer link, so that a leaf whose uplinks are all down
            # still routes its hosts' traffic through its peer; each leaf has its own ASN
            neighbors["peerlink.4094"] = {"type": "unnumbered", "remote-as": "external"}
    elif loopback is not None:
        # a spine or core of a network routed at its leaves: its own address on the loopback
        interfaces["lo"] = {"type": "loopback", **nvue.addresses([f"{loopback}/32"])}
        announce, router_id = f"{loopback}/32", loopback
    tree["interface"] = interfaces
    if pair is not None:
        peer = pair.secondary if device.name == pair.primary else pair.primary
        mlag: Tree = {
            **nvue.enabled,
            "mac-address": plan.mac(pair),
            "peer-ip": "linklocal",
            "priority": MLAG_PRIORITY[0 if device.name == pair.primary else 1],
            "init-delay": MLAG_INIT_DELAY_S,
        }
        peer_own = routed.get(peer)
        peer_ip = ctx.devices[peer].mgmt_ip
        if peer_own is not None and peer_own.loopback:
            # routed uplinks: the backup IP is the peer's loopback in the default VRF (Cumulus
            # Linux "Multi-Chassis Link Aggregation - MLAG", Backup IP: the loopback where the
            # uplinks are routed), not its eth0 behind an OOB network that may itself run over
            # these spines
            mlag["backup"] = {peer_own.loopback: {"vrf": "default"}}
        elif peer_ip is not None:
            mlag["backup"] = {peer_ip: {"vrf": "mgmt"}}
        tree["mlag"] = mlag
    if pair is not None or any("bridge" in entry for entry in interfaces.values()):
        # (a spine of leaves that route bridges nothing)
        tree["bridge"] = {
            "domain": {
                BRIDGE: {
                    "vlan": {str(v): {} for v in sorted(vlans)},
                    "stp": {"priority": _stp_priority(ctx, device)},
                }
            }
        }
    if access is not None and access.relays:
        uplinks = [cumulus_name(port) for port in access.uplinks]
        tree["service"] = {
            "dhcp-relay": {"default": _relay([f"vlan{vlan}"], uplinks, net.server, nvue)}
        }
    elif relayed:
        # towards the server: its in-band SVI where it owns the gateway, its routed ports
        upstream = [f"vlan{vlan}"] * (gateway is not None or own is not None) + [
            n for n in neighbors if n.startswith("swp")
        ]
        tree["service"] = {"dhcp-relay": {"default": _relay(relayed, upstream, net.server, nvue)}}
    if neighbors and router_id is not None:
        uplink_neighbors = [n for n in neighbors if n != "peerlink.4094"]
        asn = (
            access.asn
            if access is not None
            else own.asn
            if own is not None
            else pod_spine.asn
            if pod_spine is not None
            else top.asn
            if top is not None
            else None
        )
        router: Tree = {"bgp": {**nvue.enabled, "autonomous-system": asn, "router-id": router_id}}
        if valley and asn is not None:
            router["policy"] = _valley_policy(valley, asn)
        tree["router"] = router
        routes_bgp: Tree = {
            **nvue.enabled,
            "address-family": {
                "ipv4-unicast": {
                    **nvue.enabled,
                    "network": {prefix: {} for prefix in [announce, *extra]},
                    # a path per uplink, up to the ECMP width FRR builds support (the peer
                    # link's path is one AS longer: never one of them)
                    "multipaths": {"ebgp": min(len(uplink_neighbors), MAXIMUM_PATHS)},
                }
            },
            "neighbor": neighbors,
        }
        tree["vrf"] = {"default": {"router": {"bgp": routes_bgp}}}
    elif routes:
        tree["vrf"] = {"default": {"router": {"static": routes}}}
    return tree


def _valley_session(nvue: Nvue) -> Tree:
    """The top tier's session with a leaf (or a pod's spine): a path with the tier's own ASN in
    it once is accepted (Cumulus Linux "Border Gateway Protocol - BGP": allow-my-asn, FRR's
    `allowas-in 1`), and the inbound route map keeps it for the valley prefixes only."""
    return {
        "ipv4-unicast": {
            "aspath": {"allow-my-asn": {**nvue.enabled, "occurrences": 1}},
            "policy": {"inbound": {"route-map": VALLEY_MAP}},
        }
    }


def _valley_policy(valley: tuple[str, ...], asn: int) -> Tree:
    """The route map of the top tier's sessions with the tier below (Cumulus Linux "Route
    Filtering and Redistribution"): permit the valley prefixes (the OOB pool's subnets and the
    tier's loopbacks, any length to /32), deny any other path that carries the tier's own ASN
    (RFC 7938 section 5.2.1: no valley path for a leaf's prefix, so no path hunting), permit
    the rest."""
    rules: Tree = {}
    for k, prefix in enumerate(valley):
        bound: Tree = {"max-prefix-len": 32} if not prefix.endswith("/32") else {}
        rules[str(10 * (k + 1))] = {"action": "permit", "match": {prefix: bound}}
    return {
        "as-path-list": {
            VALLEY_OWN_AS: {"rule": {"10": {"action": "permit", "aspath-exp": f"_{asn}_"}}}
        },
        "prefix-list": {VALLEY_PREFIXES: {"type": "ipv4", "rule": rules}},
        "route-map": {
            VALLEY_MAP: {
                "rule": {
                    "10": {"match": {"ip-prefix-list": VALLEY_PREFIXES}, "action": {"permit": {}}},
                    "20": {"match": {"as-path-list": VALLEY_OWN_AS}, "action": {"deny": {}}},
                    "30": {"action": {"permit": {}}},
                }
            }
        },
    }


def site_port(
    ctx: ConfigContext, device: Device, end: End, mtu: int, nvue: Nvue
) -> tuple[Tree, str, Tree]:
    """A border link's port, the BGP neighbor key and its session: numbered over the link's
    /31 where site_uplinks.addresses gives one (the site end's address is the neighbor), else
    unnumbered on the port (RFC 5549, as the fabric's own links); `remote-as` the site's
    peer_asn, else `external` (FRR and NVUE: any AS but this switch's own), so the session
    comes up with whatever AS the site runs until it is pinned."""
    link = end.link
    site = ctx.fabric.loaded.networks[link.network].spec.site_uplinks
    remote: int | str = site.peer_asn if site.peer_asn is not None else "external"
    port = swp(ctx, device, end, mtu)
    if link.a_ip is not None and link.b_ip is not None:
        return (
            {**port, **nvue.addresses([f"{link.a_ip}/31"])},
            link.b_ip,
            {"type": "numbered", "remote-as": remote, "description": ctx.far_end(end)},
        )
    name = cumulus_name(end.port)
    return port, name, {"type": "unnumbered", "remote-as": remote}


def _relay(downstream: list[str], upstream: list[str], server: str, nvue: Nvue) -> Tree:
    """A DHCP relay from the `downstream` interfaces to the provisioning server over the
    `upstream` ones, adding option 82 with the switch port a request came in on as circuit-id
    (Cumulus Linux "DHCP Relays": use-pif-circuit-id; without it the circuit-id is the SVI's
    name) - what Kea's reservations match: an access switch's from its SVI over its uplinks, an
    in-band switch's from its routed ports to management trees' roots (synth/rootlinks.py) over
    its SVI and routed ports. Up to 5.13 the relay is an interface list and a server list; from
    5.14 a server group (the server, the upstream interfaces) that each downstream interface
    names."""
    agent = {**nvue.enabled, "use-pif-circuit-id": nvue.enabled}
    ups: Tree = {name: {} for name in upstream}
    if nvue.relay_server_groups:
        return {
            "server-group": {
                RELAY_SERVER_GROUP: {"server": {server: {}}, "upstream-interface": ups}
            },
            "downstream-interface": {
                name: {"server-group-name": RELAY_SERVER_GROUP} for name in downstream
            },
            "agent": agent,
        }
    return {
        "interface": {**{name: {} for name in downstream}, **ups},
        "server": {server: {}},
        "agent": agent,
    }


def _cage_speed(ctx: ConfigContext, device: Device) -> int:
    """The speed of the switch's uplink cages (its provisioning server port is one)."""
    groups = [g for g in ctx.switch_model(device).port_groups if g.use == "uplink"]
    return groups[0].cage_speed if groups else 1


def _stp_priority(ctx: ConfigContext, device: Device) -> int:
    assert device.network is not None
    topology = ctx.fabric.networks[device.network]
    network = ctx.fabric.loaded.networks[device.network].spec
    top = topology.top_tier
    if network.uplink_to is not None:
        return STP_EDGE
    if device.role == top and device.name == topology.switches[top][0]:
        return STP_ROOT
    if device.role == top and any(e.kind == PEER for e in ctx.ends(device.name)):
        return STP_ROOT  # an MLAG pair is one bridge: the same priority on both peers
    if device.role == top:
        return STP_BACKUP
    return STP_DEFAULT
