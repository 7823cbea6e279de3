"""Emit stage, configs: NVUE startup.yaml of the management switches (in-band and out-of-band).

Consumes the switches of inband and oob networks (os: cumulus), the ConfigContext and the cabling
plan; produces per switch an NVUE `set` tree. Management networks are layer 2 up to their top
tier: one access VLAN per network (network.vlan, default 10 for inband and 20 for oob), hosts on
access ports - or, where the network is dual-homed, on LACP bonds split over an MLAG leaf pair
joined by the peer links the IR already has -, switch-to-switch cables bundled into bonds per far
switch (per far leaf pair on the upper side) that trunk the VLANs, uplinks from another network
(oob -> inband spines) carrying that network's VLAN, and RSTP with the first top-tier switch as
root. Every port is described with its far end. Management addresses come from the OOB pool: on
eth0 in the mgmt VRF where the switch's own management port is cabled, otherwise (OOB access
switches) on the access VLAN's SVI with a default route to the pool's gateway. Keys are inserted
in the order startup.yaml lists them (type, description, vlan, link, bond, ip, bridge).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.emit.configs.context import MANAGEMENT_ROLES, ConfigContext
from fabricc.emit.configs.cumulus import (
    Tree,
    breakouts,
    eth0,
    mgmt_port_end,
    nvue_model,
    oob_gateway,
    swp,
)
from fabricc.emit.configs.index import End
from fabricc.emit.configs.ports import cumulus_name, mgmt_port_names
from fabricc.errors import DesignError, error
from fabricc.ir import ENDPOINT_LEAF, MGMT, PEER, UPLINK, Device, Fabric
from fabricc.spec.yamlsource import format_path

DEFAULT_VLANS = {"inband": 10, "oob": 20}
BRIDGE = "br_default"
MLAG_MAC_BASE = 0x443839FF0000  # 44:38:39:ff:00:00/16, the range Cumulus reserves for MLAG
UPLINK_MLAG_ID_BASE = 1000  # host bonds are numbered from 1, uplink bonds from here
# RSTP bridge priorities: the first top-tier switch is the root, the others its backups; access
# switches that only uplink into another network must never become root.
STP_ROOT, STP_BACKUP, STP_DEFAULT, STP_EDGE = 4096, 8192, 32768, 61440
MLAG_PRIORITY = (1000, 2000)  # primary, secondary


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
    uplink_ids: dict[str, int] = field(default_factory=dict)  # far switch -> MLAG id


class ManagementPlan:
    """MLAG pairs and their bond ids, computed once for all management networks."""

    def __init__(self, ctx: ConfigContext) -> None:
        self.ctx = ctx
        self.pair_of: dict[str, Pair] = {}
        ordinal = 0
        for name, network in ctx.fabric.loaded.networks.items():
            topology = ctx.fabric.networks.get(name)
            if network.spec.role not in MANAGEMENT_ROLES or topology is None:
                continue
            for leaf in topology.switches.get("leaf", []):
                if leaf in self.pair_of:
                    continue
                peers = [e for e in ctx.ends(leaf) if e.kind == PEER]
                if not peers:
                    continue
                pair = Pair(leaf, peers[0].far, ordinal)
                ordinal += 1
                self.pair_of[leaf] = self.pair_of[peers[0].far] = pair
                self._number(pair)

    def _number(self, pair: Pair) -> None:
        ctx = self.ctx
        for member in (pair.primary, pair.secondary):
            for end in ctx.ends(member):
                if end.kind == PEER:
                    pair.peer_ports.setdefault(member, []).append(end.port)
                elif end.kind == ENDPOINT_LEAF and not end.upward:
                    pair.host_ids.setdefault(end.far, len(pair.host_ids) + 1)
                elif end.upward and end.link.network == ctx.devices[member].network:
                    pair.uplink_ids.setdefault(
                        end.far, UPLINK_MLAG_ID_BASE + len(pair.uplink_ids) + 1
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
    mgmt = mgmt_port_end(ctx, device)
    if mgmt is not None:
        interfaces["eth0"] = eth0(ctx, device, mgmt)
    interfaces.update(breakouts(ctx, device))

    # Subtrees that many ports and bonds repeat, one object each (never changed): yaml_block
    # spells a shared subtree once
    access = {"access": vlan, "stp": {"admin-edge": nvue.on, "bpdu-guard": nvue.on}}
    bridge = {"domain": {BRIDGE: access}}  # access ports and host bonds
    bond_link = {"mtu": mtu}
    trunk: Tree = {"domain": {BRIDGE: {}}}  # switch-to-switch bonds
    host_bonds: dict[str, list[End]] = {}
    switch_bonds: dict[tuple[bool, str], list[End]] = {}
    for end in ctx.ends(device.name):
        if end.port in mgmt_ports:
            continue
        name = cumulus_name(end.port)
        if end.kind in (ENDPOINT_LEAF, MGMT) and not end.upward:
            if pair is not None and end.kind == ENDPOINT_LEAF:
                host_bonds.setdefault(end.far, []).append(end)
                interfaces[name] = swp(ctx, device, end, mtu)
            else:
                interfaces[name] = {**swp(ctx, device, end, mtu), "bridge": bridge}
        elif end.kind == PEER:
            interfaces[name] = swp(ctx, device, end, mtu)
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
            far_pair = plan.pair_of.get(end.far)
            group = far_pair.primary if far_pair is not None and not end.upward else end.far
            switch_bonds.setdefault((end.upward, group), []).append(end)
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
        if upward and pair is not None and group in pair.uplink_ids:
            bond["mlag"] = {"id": pair.uplink_ids[group]}
        far_pair = plan.pair_of.get(group) if not upward else None
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
    if mgmt is None and device.mgmt_ip is not None:
        pool, gateway = oob_gateway(ctx)
        interfaces[f"vlan{vlan}"] = {
            "type": "svi",
            "vlan": vlan,
            **nvue.addresses([f"{device.mgmt_ip}/{pool.prefixlen}"]),
        }
        routes = {"0.0.0.0/0": {"via": {gateway: {}}}}
    tree["interface"] = interfaces
    if pair is not None:
        peer = pair.secondary if device.name == pair.primary else pair.primary
        mlag: Tree = {
            **nvue.enabled,
            "mac-address": plan.mac(pair),
            "peer-ip": "linklocal",
            "priority": MLAG_PRIORITY[0 if device.name == pair.primary else 1],
        }
        peer_ip = ctx.devices[peer].mgmt_ip
        if peer_ip is not None:
            mlag["backup"] = {peer_ip: {"vrf": "mgmt"}}
        tree["mlag"] = mlag
    tree["bridge"] = {
        "domain": {
            BRIDGE: {
                "vlan": {str(v): {} for v in sorted(vlans)},
                "stp": {"priority": _stp_priority(ctx, device)},
            }
        }
    }
    if routes:
        tree["vrf"] = {"default": {"router": {"static": routes}}}
    return tree


def _stp_priority(ctx: ConfigContext, device: Device) -> int:
    assert device.network is not None
    topology = ctx.fabric.networks[device.network]
    network = ctx.fabric.loaded.networks[device.network].spec
    top = topology.top_tier
    if network.uplink_to is not None:
        return STP_EDGE
    if device.role == top and device.name == topology.switches[top][0]:
        return STP_ROOT
    if device.role == top:
        return STP_BACKUP
    return STP_DEFAULT
