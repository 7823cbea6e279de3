"""Emit stage, configs: SONiC config_db.json of a routed RoCE switch.

Consumes a switch of an ethernet compute or storage network whose network asks for os: sonic, the
ConfigContext (ports, far ends, QoS plan) and the cabling plan's cable lengths; produces the
config_db tables as a dict (serialized with json by the caller): DEVICE_METADATA, PORT and
BREAKOUT_CFG for every cage, LOOPBACK_INTERFACE, INTERFACE (host /31s; fabric links numbered or
IPv6 link-local only for BGP unnumbered), MGMT_PORT/MGMT_INTERFACE, the lossless RoCE tables
(DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, PORT_QOS_MAP, WRED_PROFILE, SCHEDULER,
QUEUE), the inputs of SONiC's dynamic buffer model (BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG with the
lossless PG's headroom left to buffermgrd, BUFFER_QUEUE, CABLE_LENGTH from the cabling plan,
DEFAULT_LOSSLESS_BUFFER_PARAMETER, LOSSLESS_TRAFFIC_PATTERN) and the PFC watchdog (PFC_WD).

Routing: docker_routing_config_mode is split-unified. In that mode the bgp container's
docker_init.sh keeps /etc/frr/frr.conf (the shipped file) and `vtysh -b` loads it as written;
in `unified` it would render its own frr.conf from CONFIG_DB instead. No BGP_NEIGHBOR table is
written, so bgpcfgd adds no sessions of its own beside those of frr.conf.
"""

from __future__ import annotations

import math
from typing import Any

from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.index import End, point_to_point
from fabricc.emit.configs.ports import cage_group, is_mgmt_port, sonic_port
from fabricc.emit.configs.qos import DSCPS, PRIORITIES, QosPlan
from fabricc.errors import DesignError, error
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device
from fabricc.synth.mgmtnet import mgmt_subnet

MAP = "ROCE"  # name of every QoS map
WRED = "ROCE_LOSSLESS"
SCHEDULERS = {"roce": "ROCE_DWRR", "cnp": "CNP_STRICT", "default": "DEFAULT_DWRR"}
CABLE_PROFILE = "AZURE"  # the CABLE_LENGTH key SONiC's buffer templates and buffermgrd read
ROUTING_MODE = "split-unified"  # frr.conf used as shipped (see the module docstring)
# Dynamic buffer model (sonic-buildimage files/build_templates/buffers_config.j2, dynamic_mode):
# the lossless PG names no profile ("NULL"), so buffermgrd computes its headroom from port speed
# and CABLE_LENGTH; pool sizes are the platform's (left out, so `config load` keeps them).
POOLS = {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
    "egress_lossless_pool": {"type": "egress", "mode": "dynamic"},
    "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
}
PROFILES = {
    "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
    "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
    "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
}
DYNAMIC_PG = "NULL"
# SONiC's defaults for the dynamic model's headroom inputs (buffers_config.j2).
LOSSLESS_DEFAULTS = {"default_dynamic_th": "0"}
TRAFFIC_PATTERN = {"mtu": "1024", "small_packet_percentage": "50"}
# PFC watchdog: `pfcwd start_default` values (detect and restore 200 ms, drop, poll 200 ms).
PFC_WD = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
PFC_WD_POLL_MS = "200"
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
    fabric_ports: list[str] = []
    for name, end in used.items():
        if end.link.network != device.network:
            continue
        if end.kind == ENDPOINT_LEAF and not end.upward:
            fabric_ports.append(name)
            interfaces[name] = {}
            if end.local_ip is not None:
                interfaces[f"{name}|{point_to_point(end.local_ip)[0]}"] = {}
        elif end.kind in (LEAF_SPINE, SPINE_CORE):
            fabric_ports.append(name)
            if end.local_ip is not None and end.far_ip is not None:
                interfaces[name] = {}
                interfaces[f"{name}|{end.local_ip}/31"] = {}
            else:
                interfaces[name] = {"ipv6_use_link_local_only": "enable"}

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
                "docker_routing_config_mode": ROUTING_MODE,
                "buffer_model": "dynamic",
                "default_bgp_status": "up",
                "default_pfcwd_status": "enable",
            }
        },
        "BREAKOUT_CFG": breakouts,
        "PORT": ports,
        "LOOPBACK_INTERFACE": loopbacks,
        "INTERFACE": interfaces,
    }
    tables.update(_management(ctx, device))
    tables.update(_qos_tables(plan, fabric_ports))
    tables.update(_buffer_tables(plan, fabric_ports))
    tables["CABLE_LENGTH"] = {CABLE_PROFILE: _cable_lengths(used, fabric_ports)}
    return tables


def _management(ctx: ConfigContext, device: Device) -> dict[str, Any]:
    model = ctx.switch_model(device)
    cabled = [e for e in ctx.ends(device.name) if is_mgmt_port(model, e.port)]
    if device.mgmt_ip is None or not cabled:
        return {}
    port = cabled[0].port
    prefixlen, gateway = mgmt_subnet(ctx.fabric, device.name)
    return {
        "MGMT_PORT": {
            port: {"admin_status": "up", "alias": port, "description": ctx.far_end(cabled[0])}
        },
        "MGMT_INTERFACE": {f"{port}|{device.mgmt_ip}/{prefixlen}": {"gwaddr": gateway}},
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


def _ranges(values: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 7] -> ["0-2", "4-5", "7"], the key form of BUFFER_QUEUE and BUFFER_PG."""
    out: list[str] = []
    start = prev = values[0]
    for value in [*values[1:], -2]:
        if value != prev + 1:
            out.append(str(start) if start == prev else f"{start}-{prev}")
            start = value
        prev = value
    return out


def _buffer_tables(plan: QosPlan, ports: list[str]) -> dict[str, Any]:
    """Lossless buffers for the PFC priority: its PG (TC_TO_PRIORITY_GROUP_MAP maps the lossless
    class to PG = class, everything else to PG 0) gets dynamic headroom, its queue the lossless
    egress profile; the other queues are lossy. PFC watchdog on every lossless port."""
    lossless = plan.traffic_class(plan.pfc_priority)
    lossy_queues = _ranges([q for q in PRIORITIES if q != lossless])
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    for port in ports:
        pgs[f"{port}|0"] = {"profile": "ingress_lossy_profile"}
        pgs[f"{port}|{lossless}"] = {"profile": DYNAMIC_PG}
        queues[f"{port}|{lossless}"] = {"profile": "egress_lossless_profile"}
        for key in lossy_queues:
            queues[f"{port}|{key}"] = {"profile": "egress_lossy_profile"}
    watchdog: dict[str, dict[str, str]] = {port: dict(PFC_WD) for port in ports}
    watchdog["GLOBAL"] = {"POLL_INTERVAL": PFC_WD_POLL_MS}
    return {
        "BUFFER_POOL": {name: dict(fields) for name, fields in POOLS.items()},
        "BUFFER_PROFILE": {name: dict(fields) for name, fields in PROFILES.items()},
        "BUFFER_PG": pgs,
        "BUFFER_QUEUE": queues,
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {CABLE_PROFILE: dict(LOSSLESS_DEFAULTS)},
        "LOSSLESS_TRAFFIC_PATTERN": {CABLE_PROFILE: dict(TRAFFIC_PATTERN)},
        "PFC_WD": watchdog,
    }


def _cable_lengths(used: dict[str, End], ports: list[str]) -> dict[str, str]:
    lengths: dict[str, str] = {}
    for port in ports:
        cable = used[port].link.cable
        if cable is not None:
            lengths[port] = f"{math.ceil(cable.length_m)}m"
    return lengths
