"""Emit stage, configs: SONiC config_db.json of a routed RoCE switch.

Consumes a switch of an ethernet compute or storage network whose network asks for os: sonic, the
ConfigContext (ports, far ends, QoS plan) and the cabling plan's cable lengths; produces the
config_db tables as a dict (serialized with json by the caller): DEVICE_METADATA, PORT and
BREAKOUT_CFG for every cage, LOOPBACK_INTERFACE, INTERFACE (host /31s; fabric links numbered or
IPv6 link-local only for BGP unnumbered), BGP_NEIGHBOR, MGMT_PORT/MGMT_INTERFACE, the lossless
RoCE tables (DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, PORT_QOS_MAP, WRED_PROFILE,
SCHEDULER, QUEUE) and CABLE_LENGTH, from which SONiC's dynamic buffer model sizes the lossless
headroom. The BGP sessions themselves come from frr.conf (docker_routing_config_mode unified).
"""

from __future__ import annotations

import ipaddress
import math
from typing import Any

from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.frr import HOLD_S, KEEPALIVE_S
from fabricc.emit.configs.index import End
from fabricc.emit.configs.ports import cage_group, is_mgmt_port, sonic_port
from fabricc.emit.configs.qos import DSCPS, PRIORITIES, QosPlan
from fabricc.errors import DesignError, error
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device

MAP = "ROCE"  # name of every QoS map
WRED = "ROCE_LOSSLESS"
SCHEDULERS = {"roce": "ROCE_DWRR", "cnp": "CNP_STRICT", "default": "DEFAULT_DWRR"}
CABLE_PROFILE = "AZURE"  # the CABLE_LENGTH key SONiC's buffer templates and buffermgrd read
DEVICE_TYPES = {"leaf": "BackEndToRRouter", "spine": "BackEndLeafRouter", "core": "SpineRouter"}


def _fec(speed_gbps: int) -> str:
    """RS-FEC for 25G lanes and up (RS-528 NRZ, RS-544 PAM4), none below."""
    return "rs" if speed_gbps >= 25 else "none"


def config_db(ctx: ConfigContext, device: Device) -> dict[str, Any]:
    platform = ctx.sonic_platform(device)
    model = ctx.switch_model(device)
    assert device.network is not None and device.loopback is not None
    mtu = str(ctx.fabric.loaded.networks[device.network].spec.mtu)
    ways = ctx.cage_ways(device)
    used: dict[str, End] = {}
    for end in ctx.ends(device.name):
        if not is_mgmt_port(model, end.port):
            used[ctx.port_name(device.name, end.port)] = end

    ports: dict[str, dict[str, str]] = {}
    breakouts: dict[str, dict[str, str]] = {}
    for cage in range(1, model.cages + 1):
        split = ways.get(cage, 1)
        mode = platform.breakout_modes.get(split)
        if mode is None:
            raise DesignError(
                [error(f"{device.name}: SONiC {platform.model} has no {split}-way breakout mode")]
            )
        speed = cage_group(model, cage).cage_speed // split
        for sub in range(1, split + 1):
            port = sonic_port(platform, cage, sub if split > 1 else None, split)
            if sub == 1:
                breakouts[port.name] = {"brkout_mode": mode}
            found = used.get(port.name)
            entry = {
                "admin_status": "up" if found is not None else "down",
                "alias": port.alias,
                "index": str(port.index),
                "lanes": port.lanes,
                "speed": str(speed * 1000),
                "mtu": mtu,
                "fec": _fec(speed // len(port.lanes.split(","))),
            }
            if found is not None:
                entry["description"] = ctx.far_end(found)
            ports[port.name] = entry

    interfaces: dict[str, dict[str, str]] = {}
    neighbors: dict[str, dict[str, str]] = {}
    fabric_ports: list[str] = []
    for name, end in used.items():
        if end.link.network != device.network:
            continue
        if end.kind == ENDPOINT_LEAF and not end.upward:
            fabric_ports.append(name)
            interfaces[name] = {}
            if end.local_ip is not None:
                interfaces[f"{name}|{ipaddress.ip_interface(f'{end.local_ip}/31')}"] = {}
        elif end.kind in (LEAF_SPINE, SPINE_CORE):
            fabric_ports.append(name)
            far = ctx.devices[end.far]
            neighbor = {
                "admin_status": "up",
                "asn": str(far.asn),
                "name": end.far,
                "holdtime": str(HOLD_S),
                "keepalive": str(KEEPALIVE_S),
            }
            if end.local_ip is not None and end.far_ip is not None:
                interfaces[name] = {}
                interfaces[f"{name}|{end.local_ip}/31"] = {}
                neighbors[end.far_ip] = {**neighbor, "local_addr": end.local_ip}
            else:
                interfaces[name] = {"ipv6_use_link_local_only": "enable"}
                neighbors[name] = neighbor

    loopbacks: dict[str, dict[str, str]] = {"Loopback0": {}, f"Loopback0|{device.loopback}/32": {}}
    if device.loopback_v6 is not None:
        loopbacks[f"Loopback0|{device.loopback_v6}/128"] = {}

    plan = ctx.qos(device.network)
    tables: dict[str, Any] = {
        "DEVICE_METADATA": {
            "localhost": {
                "hostname": device.name,
                "platform": platform.platform,
                "hwsku": platform.hwsku,
                "type": DEVICE_TYPES[device.role],
                "bgp_asn": str(device.asn),
                "docker_routing_config_mode": "unified",
                "buffer_model": "dynamic",
                "default_bgp_status": "up",
            }
        },
        "BREAKOUT_CFG": breakouts,
        "PORT": ports,
        "LOOPBACK_INTERFACE": loopbacks,
        "INTERFACE": interfaces,
        "BGP_NEIGHBOR": neighbors,
    }
    tables.update(_management(ctx, device))
    tables.update(_qos_tables(plan, fabric_ports))
    tables["CABLE_LENGTH"] = {CABLE_PROFILE: _cable_lengths(used, fabric_ports)}
    return tables


def _management(ctx: ConfigContext, device: Device) -> dict[str, Any]:
    model = ctx.switch_model(device)
    cabled = [e for e in ctx.ends(device.name) if is_mgmt_port(model, e.port)]
    if device.mgmt_ip is None or not cabled:
        return {}
    port = cabled[0].port
    oob = ipaddress.ip_network(ctx.fabric.loaded.spec.addressing.oob)
    gateway = str(next(oob.hosts()))
    return {
        "MGMT_PORT": {
            port: {"admin_status": "up", "alias": port, "description": ctx.far_end(cabled[0])}
        },
        "MGMT_INTERFACE": {f"{port}|{device.mgmt_ip}/{oob.prefixlen}": {"gwaddr": gateway}},
    }


def _qos_tables(plan: QosPlan, ports: list[str]) -> dict[str, Any]:
    lossless = plan.traffic_class(plan.pfc_priority)
    cnp = plan.traffic_class(plan.cnp_priority)
    roce = plan.traffic_class(plan.roce_priority)
    threshold = {
        f"{color}_{key}": str(value)
        for color in ("green", "yellow", "red")
        for key, value in (
            ("min_threshold", plan.ecn_min_bytes),
            ("max_threshold", plan.ecn_max_bytes),
            ("drop_probability", plan.ecn_probability),
        )
    }
    queues: dict[str, dict[str, str]] = {}
    for port in ports:
        queues[f"{port}|{plan.default_class}"] = {"scheduler": SCHEDULERS["default"]}
        queues[f"{port}|{roce}"] = {"scheduler": SCHEDULERS["roce"], "wred_profile": WRED}
        queues[f"{port}|{cnp}"] = {"scheduler": SCHEDULERS["cnp"]}
    return {
        "DSCP_TO_TC_MAP": {
            MAP: {str(d): str(plan.traffic_class(plan.dscp_priority(d))) for d in DSCPS}
        },
        "TC_TO_PRIORITY_GROUP_MAP": {
            MAP: {str(tc): str(tc if tc == lossless else 0) for tc in PRIORITIES}
        },
        "TC_TO_QUEUE_MAP": {MAP: {str(tc): str(tc) for tc in PRIORITIES}},
        "PORT_QOS_MAP": {
            port: {
                "dscp_to_tc_map": MAP,
                "tc_to_pg_map": MAP,
                "tc_to_queue_map": MAP,
                "pfc_enable": str(plan.pfc_priority),
            }
            for port in ports
        },
        "WRED_PROFILE": {
            WRED: {
                "ecn": "ecn_all",
                "wred_green_enable": "true",
                "wred_yellow_enable": "true",
                "wred_red_enable": "true",
                **threshold,
            }
        },
        "SCHEDULER": {
            SCHEDULERS["default"]: {"type": "DWRR", "weight": str(plan.default_weight)},
            SCHEDULERS["roce"]: {"type": "DWRR", "weight": str(plan.roce_weight)},
            SCHEDULERS["cnp"]: {"type": "STRICT"},
        },
        "QUEUE": queues,
    }


def _cable_lengths(used: dict[str, End], ports: list[str]) -> dict[str, str]:
    lengths: dict[str, str] = {}
    for port in ports:
        cable = used[port].link.cable
        if cable is not None:
            lengths[port] = f"{math.ceil(cable.length_m)}m"
    return lengths
