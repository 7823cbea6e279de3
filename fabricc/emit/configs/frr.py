"""Emit stage, configs: the FRR BGP underlay (frr.conf) of a routed RoCE switch.

Consumes a switch of an ethernet compute or storage network (loopback, ASN, link ends from the
index) and the ConfigContext; produces an FrrConfig and its text from templates/frr/frr.conf.j2
(the per-interface, per-neighbor and per-network lines formatted by frr_text).
eBGP per RFC 7938: one peer group, every switch-to-switch link a neighbor - by interface (RFC 5549
unnumbered) unless addressing.p2p numbered the link -, the loopback and the host /31s announced
with `network`, ECMP over all equal paths. SONiC (docker_routing_config_mode split-unified) and Cumulus
(traditional mode, or as reference for what NVUE generates) run the same file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.index import point_to_point
from fabricc.emit.templating import render
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device

PEER_GROUP = "FABRIC"
# FRR's datacenter profile timers, written out so that every switch states them.
KEEPALIVE_S = 3
HOLD_S = 9
CONNECT_RETRY_S = 5
MAXIMUM_PATHS = 64  # ECMP width; FRR builds of Debian and SONiC support 64 next hops
LOOPBACK = {"sonic": "Loopback0", "cumulus": "lo"}
SWITCH_LINKS = (LEAF_SPINE, SPINE_CORE)


@dataclass(slots=True)
class FrrInterface:
    name: str
    description: str
    addresses: list[str] = field(default_factory=list)  # with prefix length


@dataclass(slots=True)
class FrrNeighbor:
    peer: str  # interface name (unnumbered) or the far end's address
    interface: bool
    description: str  # far end and its ASN


@dataclass(slots=True)
class FrrConfig:
    hostname: str
    design: str
    asn: int
    router_id: str
    peer_group: str
    keepalive: int
    hold: int
    connect_retry: int
    maximum_paths: int
    interfaces: list[FrrInterface]
    neighbors: list[FrrNeighbor]
    networks_v4: list[str]
    networks_v6: list[str]


def frr_config(ctx: ConfigContext, device: Device) -> FrrConfig:
    os = ctx.os_of(device)
    assert device.loopback is not None and device.asn is not None
    loopback = FrrInterface(LOOPBACK[os], "router id and BGP next hop", [f"{device.loopback}/32"])
    networks_v4 = [f"{device.loopback}/32"]
    networks_v6: list[str] = []
    if device.loopback_v6 is not None:
        loopback.addresses.append(f"{device.loopback_v6}/128")
        networks_v6.append(f"{device.loopback_v6}/128")
    interfaces = [loopback]
    neighbors: list[FrrNeighbor] = []
    for end in ctx.ends(device.name):
        if end.link.network != device.network:
            continue
        name = ctx.port_name(device.name, end.port)
        description = ctx.far_end(end)
        if end.kind == ENDPOINT_LEAF and not end.upward:
            interface = FrrInterface(name, description)
            if end.local_ip is not None:
                address, network = point_to_point(end.local_ip)
                interface.addresses.append(address)
                networks_v4.append(network)
            interfaces.append(interface)
        elif end.kind in SWITCH_LINKS:
            interface = FrrInterface(name, description)
            far = ctx.devices[end.far]
            if end.local_ip is not None and end.far_ip is not None:
                interface.addresses.append(f"{end.local_ip}/31")
                neighbors.append(FrrNeighbor(end.far_ip, False, f"{description} AS{far.asn}"))
            else:
                neighbors.append(FrrNeighbor(name, True, f"{description} AS{far.asn}"))
            interfaces.append(interface)
    return FrrConfig(
        hostname=device.name,
        design=ctx.fabric.name,
        asn=device.asn,
        router_id=device.loopback,
        peer_group=PEER_GROUP,
        keepalive=KEEPALIVE_S,
        hold=HOLD_S,
        connect_retry=CONNECT_RETRY_S,
        maximum_paths=MAXIMUM_PATHS,
        interfaces=interfaces,
        neighbors=neighbors,
        networks_v4=networks_v4,
        networks_v6=networks_v6,
    )


def frr_text(config: FrrConfig) -> str:
    """templates/frr/frr.conf.j2 around the lines a spine repeats hundreds of times (interfaces,
    neighbors, networks), formatted here in one pass rather than by Jinja2 loops."""
    group = config.peer_group
    interfaces: list[str] = []
    append = interfaces.append
    for interface in config.interfaces:
        append(f"interface {interface.name}\n description {interface.description}\n")
        for address in interface.addresses:
            append(f" {'ipv6' if ':' in address else 'ip'} address {address}\n")
        append("exit\n!\n")
    neighbors = "".join(
        [
            f" neighbor {n.peer} interface peer-group {group}\n"
            f" neighbor {n.peer} description {n.description}\n"
            if n.interface
            else f" neighbor {n.peer} peer-group {group}\n"
            f" neighbor {n.peer} description {n.description}\n"
            for n in config.neighbors
        ]
    )
    return render(
        "frr/frr.conf.j2",
        frr=config,
        interfaces="".join(interfaces),
        neighbors=neighbors,
        networks_v4="".join([f"  network {network}\n" for network in config.networks_v4]),
    )
