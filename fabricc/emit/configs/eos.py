"""Emit stage, configs: the AVD structured configuration of a routed RoCE switch on Arista EOS.

Consumes a switch of an ethernet compute or storage network whose network asks for os: eos, and
the ConfigContext (ports as EOS names them, far ends, addresses, ASNs, the QoS plan); produces
the switch's structured configuration - the data model of Arista AVD's eos_cli_config_gen, which
pyavd validates and renders into EOS CLI (fabricc/emit/configs/avd.py) - as a dict:
hostname, the multi-agent routing model, Loopback0, every cabled fabric port routed (host /31s;
switch links numbered /31s, or IPv6-enabled for BGP unnumbered, RFC 5549, with
`ip routing ipv6 interfaces`), Management1 in VRF MGMT with its default route, LLDP, the RoCE
QoS (DSCP -> traffic class maps, one QoS profile on every fabric port: DSCP trust, PFC no-drop on
the RoCE priority with the PFC watchdog, ECN on the RoCE queue, CNP strict priority, DWRR for the
rest) and eBGP per RFC 7938 (one peer group, a neighbour per switch link by address or by
interface with the far end's ASN, ECMP over every neighbour).

Same design, same dict: everything is taken in port order from the link index.
"""

from __future__ import annotations

from typing import Any

from fabricc.catalog.ports import is_mgmt_port, split_port
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.frr import HOLD_S, KEEPALIVE_S
from fabricc.emit.configs.index import End, point_to_point
from fabricc.emit.configs.ports import eos_lanes
from fabricc.emit.configs.qos import DSCPS, QosPlan
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device
from fabricc.synth.mgmtnet import mgmt_subnet

PEER_GROUP = "FABRIC"
QOS_PROFILE = "ROCE"
MGMT_VRF = "MGMT"
LOOPBACK = "Loopback0"
# EOS limits the routes a BGP neighbour may send to 12,000 by default (EOS User Manual,
# "neighbor maximum-routes"); a spine learns every leaf's host /31s, so the limit is lifted
UNLIMITED_ROUTES = 0
# PFC watchdog (EOS User Manual, "priority-flow-control pause watchdog"): stop a queue paused
# for 200 ms by dropping, recover after 200 ms - the values of the SONiC emitter's PFC_WD
PFC_WATCHDOG = {"action": "drop", "timeout": "0.2", "recovery_time": "0.2"}
DSCPS_PER_LINE = 8  # `qos map dscp <list> to traffic-class N`: eight DSCPs per command line
SWITCH_LINKS = (LEAF_SPINE, SPINE_CORE)


def structured_config(ctx: ConfigContext, device: Device) -> dict[str, Any]:
    assert device.network is not None and device.loopback is not None
    assert device.asn is not None
    spec = ctx.fabric.loaded.networks[device.network].spec
    plan = ctx.qos(device.network)
    mtu = spec.port_mtu  # the network's mtu, capped at EOS's 9214 (hosts use the same)
    model = ctx.switch_model(device)
    ways = ctx.cage_ways(device)

    interfaces: list[dict[str, Any]] = []
    numbered: list[dict[str, Any]] = []
    unnumbered: list[dict[str, Any]] = []
    networks = [f"{device.loopback}/32"]
    for end in ctx.ends(device.name):
        if end.link.network != device.network or is_mgmt_port(model, end.port):
            continue
        host = end.kind == ENDPOINT_LEAF and not end.upward
        if not host and end.kind not in SWITCH_LINKS:
            continue
        name = ctx.port_name(device.name, end.port)
        cage, _ = split_port(end.port)
        lanes = eos_lanes(model, end.port, ways.get(cage, 1))
        interface: dict[str, Any] = {
            "name": name,
            "description": ctx.far_end(end),
            "shutdown": False,
            "speed": f"{end.link.speed}g-{lanes}",
            "mtu": mtu,
            "switchport": {"enabled": False},
        }
        if host:
            if end.local_ip is not None:
                address, network = point_to_point(end.local_ip)
                interface["ip_address"] = address
                networks.append(network)
        else:
            far = ctx.devices[end.far]
            if end.local_ip is not None and end.far_ip is not None:
                interface["ip_address"] = f"{end.local_ip}/31"
                numbered.append(_neighbor(end, far, ctx.far_end(end)))
            else:
                interface["ipv6_enable"] = True
                unnumbered.append(
                    {"name": name, "peer_group": PEER_GROUP, "remote_as": str(far.asn)}
                )
        interface["service_profile"] = QOS_PROFILE
        interfaces.append(interface)

    loopback: dict[str, Any] = {
        "name": LOOPBACK,
        "description": "router id and BGP next hop",
        "ip_address": f"{device.loopback}/32",
    }
    if device.loopback_v6 is not None:
        loopback["ipv6_address"] = f"{device.loopback_v6}/128"

    config: dict[str, Any] = {
        "hostname": device.name,
        # RFC 5549 next hops and `neighbor interface` need the multi-agent routing model
        "service_routing_protocols_model": "multi-agent",
        "ip_routing": True,
    }
    if unnumbered:
        config["ip_routing_ipv6_interfaces"] = True
    if device.loopback_v6 is not None:
        config["ipv6_unicast_routing"] = True
    config.update(_management(ctx, device))
    config["lldp"] = {"run": True}
    config.update(_qos(plan))
    config["loopback_interfaces"] = [loopback]
    config["ethernet_interfaces"] = interfaces
    config["router_bgp"] = _bgp(device, numbered, unnumbered, networks)
    return config


def _neighbor(end: End, far: Device, description: str) -> dict[str, Any]:
    return {
        "ip_address": end.far_ip,
        "peer_group": PEER_GROUP,
        "remote_as": str(far.asn),
        "description": f"{description} AS{far.asn}",
    }


def _bgp(
    device: Device,
    numbered: list[dict[str, Any]],
    unnumbered: list[dict[str, Any]],
    networks: list[str],
) -> dict[str, Any]:
    """eBGP per RFC 7938 as the FRR emitter writes it (fabricc/emit/configs/frr.py: one peer
    group, its timers, the loopback and host /31s announced): every neighbour can be an
    equal-cost next hop, so the ECMP width is the number of neighbours."""
    assert device.asn is not None and device.loopback is not None
    width = max(1, len(numbered) + len(unnumbered))
    family: dict[str, Any] = {"name": PEER_GROUP, "activate": True}
    if unnumbered:
        # IPv4 routes over the IPv6 link-local next hop of an unnumbered link (RFC 5549)
        family["next_hop"] = {"address_family_ipv6": {"enabled": True, "originate": True}}
    bgp: dict[str, Any] = {
        "as": str(device.asn),
        "router_id": device.loopback,
        "bgp": {"default": {"ipv4_unicast": False}},
        "timers": {"keepalive_time": KEEPALIVE_S, "hold_time": HOLD_S},
        "maximum_paths": {"paths": width, "ecmp": width},
        "peer_groups": [
            {
                "name": PEER_GROUP,
                "description": "switch-to-switch eBGP sessions",
                "send_community": "all",
                "maximum_routes": UNLIMITED_ROUTES,
                "timers": f"{KEEPALIVE_S} {HOLD_S}",
            }
        ],
    }
    if numbered:
        bgp["neighbors"] = numbered
    if unnumbered:
        bgp["neighbor_interfaces"] = unnumbered
    bgp["address_family_ipv4"] = {
        "peer_groups": [family],
        "networks": [{"prefix": prefix} for prefix in networks],
    }
    if device.loopback_v6 is not None:
        bgp["address_family_ipv6"] = {
            "peer_groups": [{"name": PEER_GROUP, "activate": True}],
            "networks": [{"prefix": f"{device.loopback_v6}/128"}],
        }
    return bgp


def _qos(plan: QosPlan) -> dict[str, Any]:
    """The lossless RoCE plan (fabricc/emit/configs/qos.py) in EOS terms, as the Broadcom/Arista
    "Lossless Network for AI/ML/Storage/HPC with RDMA" deployment guide (January 2024,
    "Deploying RoCE on Arista Switches") configures it: DSCPs mapped to traffic classes
    (`qos map dscp ... to traffic-class`; RoCE and CNP their own, the rest class 0), and a QoS
    profile on every fabric port with `qos trust dscp`, `priority-flow-control on` and
    `priority-flow-control priority <RoCE> no-drop`, ECN marking on the RoCE tx-queue
    (`random-detect ecn minimum-threshold ... maximum-threshold ... max-mark-probability`),
    the CNP tx-queue strict priority and the RoCE and default queues round robin
    (`no priority`, `bandwidth percent`; EOS tx-queues are strict priority by default)."""
    by_class: dict[int, list[int]] = {}
    for dscp in DSCPS:
        by_class.setdefault(plan.traffic_class(plan.dscp_priority(dscp)), []).append(dscp)
    lines: list[str] = []
    for traffic_class, dscps in sorted(by_class.items()):
        for start in range(0, len(dscps), DSCPS_PER_LINE):
            chunk = " ".join(str(d) for d in dscps[start : start + DSCPS_PER_LINE])
            lines.append(f"{chunk} to traffic-class {traffic_class}")
    roce = plan.traffic_class(plan.roce_priority)
    cnp = plan.traffic_class(plan.cnp_priority)
    queues = [
        {
            "id": plan.default_class,
            "priority": "no priority",
            "bandwidth_percent": plan.default_weight,
        },
        {
            "id": roce,
            "priority": "no priority",
            "bandwidth_percent": plan.roce_weight,
            "random_detect": {
                "ecn": {
                    "threshold": {
                        "units": "kbytes",
                        "min": plan.ecn_min_kb,
                        "max": plan.ecn_max_kb,
                        "max_probability": plan.ecn_probability,
                    }
                }
            },
        },
        {"id": cnp, "priority": "priority strict"},
    ]
    return {
        "qos": {"map": {"dscp": lines}},
        "priority_flow_control": {"watchdog": dict(PFC_WATCHDOG)},
        "qos_profiles": [
            {
                "name": QOS_PROFILE,
                "trust": "dscp",
                "tx_queues": sorted(queues, key=lambda q: int(q["id"])),
                "priority_flow_control": {
                    "enabled": True,
                    "watchdog": {"enabled": True},
                    "priorities": [{"priority": plan.pfc_priority, "no_drop": True}],
                },
            }
        ],
    }


def _management(ctx: ConfigContext, device: Device) -> dict[str, Any]:
    """Management1 in VRF MGMT with the switch's OOB address and its default route there, so
    that data-plane routes never carry management traffic (and ZTP's DHCP lease is replaced by
    the same address)."""
    model = ctx.switch_model(device)
    cabled = [e for e in ctx.ends(device.name) if is_mgmt_port(model, e.port)]
    vrfs = {"vrfs": [{"name": MGMT_VRF, "ip_routing": False}]}
    if device.mgmt_ip is None or not cabled:
        return vrfs
    port = cabled[0].port
    prefixlen, gateway = mgmt_subnet(ctx.fabric, device.name)
    return {
        **vrfs,
        "management_interfaces": [
            {
                "name": port,
                "description": ctx.far_end(cabled[0]),
                "shutdown": False,
                "vrf": MGMT_VRF,
                "ip_address": f"{device.mgmt_ip}/{prefixlen}",
                "type": "oob",
            }
        ],
        "static_routes": [{"vrf": MGMT_VRF, "prefix": "0.0.0.0/0", "next_hop": gateway}],
    }
