"""Emit stage, configs: SONiC config_db.json of a routed RoCE switch.

Consumes a switch of an ethernet compute or storage network whose network asks for os: sonic, the
ConfigContext (ports, far ends, QoS plan) and the cabling plan's cable lengths; produces the
config_db tables as a dict (serialized with json by the caller): DEVICE_METADATA (with the HWSKU
the port plan chooses, see fabricc/catalog/sonic.py, and a MAC), VERSIONS (the spec's SONiC
release), PORT and BREAKOUT_CFG for every port of the platform, LOOPBACK_INTERFACE, INTERFACE
(host /31s; fabric links numbered or IPv6 link-local only for BGP unnumbered),
MGMT_PORT/MGMT_INTERFACE, the lossless RoCE tables
(DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE,
PFC_PRIORITY_TO_PRIORITY_GROUP_MAP, PORT_QOS_MAP, WRED_PROFILE, SCHEDULER, QUEUE), SONiC's dynamic
buffer model as the SKU's templates generate it (BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG with the
lossless PG's headroom left to buffermgrd, BUFFER_QUEUE, BUFFER_PORT_INGRESS/EGRESS_PROFILE_LIST,
CABLE_LENGTH from the cabling plan, DEFAULT_LOSSLESS_BUFFER_PARAMETER, LOSSLESS_TRAFFIC_PATTERN) and
the PFC watchdog (PFC_WD). A SKU of SONiC's traditional buffer model (the Broadcom ones) gets its
template's BUFFER_POOL and BUFFER_PROFILE as written, PG 0 and the queues as buffers_config.j2
renders them, and on each lossless port the lossless PG's profile that buffermgrd makes from the
SKU's pg_profile_lookup.ini for the port's speed and CABLE_LENGTH (the cabling plan's length
rounded up to the table's next cable length, which buffermgrd looks up exactly).

Routing: docker_routing_config_mode is split-unified. In that mode the bgp container's
docker_init.sh keeps /etc/frr/frr.conf (the shipped file) and `vtysh -b` loads it as written;
in `unified` it would render its own frr.conf from CONFIG_DB instead. No BGP_NEIGHBOR table is
written, so bgpcfgd adds no sessions of its own beside those of frr.conf.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any

from fabricc.catalog.ports import is_mgmt_port
from fabricc.catalog.sonic import Sku, StaticBuffers, cable_metres, sonic_releases
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.index import End, point_to_point
from fabricc.emit.configs.qos import DSCPS, PRIORITIES, QosPlan
from fabricc.errors import DesignError, error
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device
from fabricc.spec.yamlsource import format_path
from fabricc.synth.mgmtnet import mgmt_subnet

MAP = "ROCE"  # name of every QoS map
WRED = "ROCE_LOSSLESS"
SCHEDULERS = {"roce": "ROCE_DWRR", "cnp": "CNP_STRICT", "default": "DEFAULT_DWRR"}
CABLE_PROFILE = "AZURE"  # the CABLE_LENGTH key SONiC's buffer templates and buffermgrd read
ROUTING_MODE = "split-unified"  # frr.conf used as shipped (see the module docstring)
# Dynamic buffer model as the SKU's buffers_dynamic.json.j2 renders it: the shared Mellanox buffer
# objects (sonic-buildimage device/mellanox/x86_64-mlnx_msn2700-r0/ACS-MSN2700/
# buffers_defaults_objects.j2 with dynamic_mode; Mellanox-SN2700-D48C8's for SKUs with one ingress
# pool) through files/build_templates/buffers_config.j2. Pools have no size but
# egress_lossless_pool (the SKU's buffers_defaults_t1.j2); the lossless PG names no profile
# ("NULL"), so buffermgrd computes its headroom from port speed and CABLE_LENGTH.
POOLS = {
    "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic"},
    "ingress_lossy_pool": {"type": "ingress", "mode": "dynamic"},
    "egress_lossless_pool": {"type": "egress", "mode": "dynamic"},
    "egress_lossy_pool": {"type": "egress", "mode": "dynamic"},
}
PROFILES = {
    "ingress_lossless_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "7"},
    "ingress_lossy_profile": {"pool": "ingress_lossy_pool", "size": "0", "dynamic_th": "3"},
    "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0", "dynamic_th": "7"},
    "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "9216", "dynamic_th": "7"},
    "q_lossy_profile": {"pool": "egress_lossy_pool", "size": "0", "dynamic_th": "3"},
}
INGRESS_PROFILES = "ingress_lossless_profile,ingress_lossy_profile"
EGRESS_PROFILES = "egress_lossless_profile,egress_lossy_profile"
DYNAMIC_PG = "NULL"
# buffers_config.j2 (dynamic_mode) defaults for the headroom inputs; the traffic pattern as
# sonic-utilities scripts/db_migrator.py writes it when it moves a switch to the dynamic model
LOSSLESS_DEFAULTS = {"default_dynamic_th": "0"}
TRAFFIC_PATTERN = {"mtu": "1024", "small_packet_percentage": "100"}
# PFC watchdog: `pfcwd start_default` values (detect and restore 200 ms, drop, poll 200 ms).
PFC_WD = {"action": "drop", "detection_time": "200", "restoration_time": "200"}
PFC_WD_POLL_MS = "200"
TEMPLATE_QUEUES = 7  # buffers_config.j2 gives queues 0-6 a profile (3-4 lossless), not 7
DEVICE_TYPES = {"leaf": "BackEndToRRouter", "spine": "BackEndLeafRouter", "core": "SpineRouter"}


def _fec(speed_mbps: int, lanes: int) -> str | None:
    """portconfig.py (sonic-config-engine): RS-FEC where a lane runs 50G or more, else unset."""
    return "rs" if speed_mbps // lanes >= 50000 else None


def _mac(fabric: str, name: str) -> str:
    """A locally administered unicast MAC, stable per fabric and switch name (SONiC's own comes
    from the switch's EEPROM when DEVICE_METADATA has none)."""
    digest = hashlib.sha256(f"{fabric}/{name}".encode()).digest()
    octets = [(digest[0] & 0xFC) | 0x02, *digest[1:6]]
    return ":".join(f"{o:02x}" for o in octets)


def config_db(ctx: ConfigContext, device: Device) -> dict[str, Any]:
    sonic = ctx.sonic(device)
    model = ctx.switch_model(device)
    assert device.network is not None and device.loopback is not None
    spec = ctx.fabric.loaded.networks[device.network].spec
    mtu = str(spec.mtu)
    used: dict[str, End] = {}
    for end in ctx.ends(device.name):
        if not is_mgmt_port(model, end.port):
            used[ctx.port_name(device.name, end.port)] = end

    cage_ports = {port.name for port in sonic.by_cage.values()}
    ports: dict[str, dict[str, str]] = {}
    breakouts: dict[str, dict[str, str]] = {}
    for port in sonic.ports:
        if port.master:
            breakouts[port.name] = {"brkout_mode": port.mode}
        found = used.get(port.name)
        speed = port.speed if found is None else found.link.speed * 1000
        lanes = len(port.lanes.split(","))
        entry = {
            "admin_status": "up" if found is not None else "down",
            "alias": port.alias,
            "index": str(port.index),
            "lanes": port.lanes,
            "speed": str(speed),
            "mtu": mtu,
        }
        fec = _fec(speed, lanes)
        if fec is not None:
            entry["fec"] = fec
        if sonic.sku.autoneg is not None and port.name in cage_ports:
            entry["autoneg"] = sonic.sku.autoneg
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
                "platform": sonic.platform.platform,
                "hwsku": sonic.sku.name,
                "mac": _mac(ctx.fabric.name, device.name),
                "type": DEVICE_TYPES[device.role],
                "bgp_asn": str(device.asn),
                "docker_routing_config_mode": ROUTING_MODE,
                "buffer_model": "dynamic" if sonic.sku.static is None else "traditional",
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
    lengths = _cable_lengths(used, list(ports), sonic.sku.default_cable)
    if sonic.sku.static is None:
        tables.update(buffer_tables(plan, sonic.sku, list(ports), fabric_ports))
    else:
        speeds = {name: int(entry["speed"]) for name, entry in ports.items()}
        try:
            lengths = headroom_lengths(sonic.sku.static, speeds, lengths, fabric_ports)
        except ValueError as exc:
            path = (*ctx.fabric.loaded.networks[device.network].path, "os")
            raise DesignError(
                [
                    error(
                        f"{device.name} ({sonic.sku.name}): {exc}",
                        path=format_path(path),
                        location=ctx.fabric.loaded.source.value(path),
                        hint="shorter links, or a SKU whose pg_profile_lookup.ini covers them",
                    )
                ]
            ) from None
        tables.update(static_buffer_tables(plan, sonic.sku.static, speeds, lengths, fabric_ports))
    tables["CABLE_LENGTH"] = {CABLE_PROFILE: lengths}
    tables["VERSIONS"] = {"DATABASE": {"VERSION": sonic_releases()[spec.sonic_release]}}
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
            # qos_config.j2 (require_global_dscp_to_tc_map): the switch-wide DSCP map
            "global": {"dscp_to_tc_map": MAP},
            **{
                port: {
                    "dscp_to_tc_map": MAP,
                    "tc_to_pg_map": MAP,
                    "tc_to_queue_map": MAP,
                    "pfc_to_pg_map": MAP,
                    "pfc_to_queue_map": MAP,
                    "pfc_enable": str(plan.pfc_priority),
                    "pfcwd_sw_enable": str(plan.pfc_priority),
                }
                for port in ports
            },
        },
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: {str(p): str(p) for p in PRIORITIES}},
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {MAP: {str(plan.pfc_priority): str(lossless)}},
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


def buffer_tables(
    plan: QosPlan, sku: Sku, ports: list[str], lossless_ports: list[str]
) -> dict[str, Any]:
    """The SKU's buffer template in dynamic mode, on every port (buffers_config.j2 gives inactive
    ports the same objects): PG 0 lossy, the lossless class's PG (TC_TO_PRIORITY_GROUP_MAP maps it
    to PG = class) headroom by buffermgrd, its queue lossless, the other queues q_lossy_profile.
    PFC watchdog on every lossless port."""
    lossless = plan.traffic_class(plan.pfc_priority)
    lossy_queues = _ranges([q for q in PRIORITIES if q != lossless])
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    for port in ports:
        pgs[f"{port}|0"] = {"profile": "ingress_lossy_profile"}
        pgs[f"{port}|{lossless}"] = {"profile": DYNAMIC_PG}
        queues[f"{port}|{lossless}"] = {"profile": "egress_lossless_profile"}
        for key in lossy_queues:
            queues[f"{port}|{key}"] = {"profile": "q_lossy_profile"}
    watchdog: dict[str, dict[str, str]] = {port: dict(PFC_WD) for port in lossless_ports}
    watchdog["GLOBAL"] = {"POLL_INTERVAL": PFC_WD_POLL_MS}
    pools = {name: dict(fields) for name, fields in POOLS.items()}
    pools["egress_lossless_pool"]["size"] = sku.egress_lossless_pool
    profiles = {name: dict(fields) for name, fields in PROFILES.items()}
    ingress = INGRESS_PROFILES
    if not sku.lossy_ingress_pool:  # Mellanox-SN2700-D48C8's objects: one ingress pool
        del pools["ingress_lossy_pool"]
        profiles["ingress_lossy_profile"]["pool"] = "ingress_lossless_pool"
        ingress = "ingress_lossless_profile"
    return {
        "BUFFER_POOL": pools,
        "BUFFER_PROFILE": profiles,
        "BUFFER_PG": pgs,
        "BUFFER_QUEUE": queues,
        "BUFFER_PORT_INGRESS_PROFILE_LIST": {p: {"profile_list": ingress} for p in ports},
        "BUFFER_PORT_EGRESS_PROFILE_LIST": {p: {"profile_list": EGRESS_PROFILES} for p in ports},
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {CABLE_PROFILE: dict(LOSSLESS_DEFAULTS)},
        "LOSSLESS_TRAFFIC_PATTERN": {CABLE_PROFILE: dict(TRAFFIC_PATTERN)},
        "PFC_WD": watchdog,
    }


def headroom_lengths(
    static: StaticBuffers,
    speeds: dict[str, int],
    lengths: dict[str, str],
    lossless_ports: list[str],
) -> dict[str, str]:
    """CABLE_LENGTH of a traditional-model SKU: a lossless port's cable rounded up to the next
    length its pg_profile_lookup.ini lists for the port's speed; ValueError where none does."""
    out = dict(lengths)
    for port in lossless_ports:
        metres = cable_metres(lengths[port])
        row = static.cable_row(speeds[port], metres)
        if row is None:
            listed = sorted({f"{m}m" for s, m in static.headroom if s == speeds[port]})
            raise ValueError(
                f"{port} runs {speeds[port] // 1000}G over {metres} m, and the SKU's "
                f"pg_profile_lookup.ini has lossless headroom at that speed for "
                f"{', '.join(listed) or 'no cable length'}"
            )
        out[port] = f"{row}m"
    return out


def static_buffer_tables(
    plan: QosPlan,
    static: StaticBuffers,
    speeds: dict[str, int],
    lengths: dict[str, str],
    lossless_ports: list[str],
) -> dict[str, Any]:
    """The traditional model as buffers_config.j2 renders the SKU's buffers_defaults_t1.j2 on
    every port (no DEVICE_NEIGHBOR: all ports active): PG 0 ingress_lossy_profile, the lossless
    class's queue egress_lossless_profile, queues 0-6 else egress_lossy_profile; and on each
    lossless port the lossless class's PG with the profile buffermgrd makes for its speed and
    cable (pg_lossless_<speed>_<cable>_profile from pg_profile_lookup.ini), written here so the
    switch is lossless from its first boot."""
    lossless = plan.traffic_class(plan.pfc_priority)
    lossy_queues = _ranges([q for q in PRIORITIES if q != lossless and q < TEMPLATE_QUEUES])
    profiles = {name: dict(fields) for name, fields in static.profiles.items()}
    pgs: dict[str, dict[str, str]] = {}
    queues: dict[str, dict[str, str]] = {}
    for port in speeds:
        pgs[f"{port}|0"] = {"profile": "ingress_lossy_profile"}
        queues[f"{port}|{lossless}"] = {"profile": "egress_lossless_profile"}
        for key in lossy_queues:
            queues[f"{port}|{key}"] = {"profile": "egress_lossy_profile"}
    for port in lossless_ports:
        cable = lengths[port]
        row = static.headroom[(speeds[port], cable_metres(cable))]
        name = f"pg_lossless_{speeds[port]}_{cable}_profile"
        profiles[name] = {
            "pool": "ingress_lossless_pool",
            "size": row.size,
            "xon": row.xon,
            "xoff": row.xoff,
            "xon_offset": row.xon_offset,
            "dynamic_th": row.threshold,
        }
        pgs[f"{port}|{lossless}"] = {"profile": name}
    watchdog: dict[str, dict[str, str]] = {port: dict(PFC_WD) for port in lossless_ports}
    watchdog["GLOBAL"] = {"POLL_INTERVAL": PFC_WD_POLL_MS}
    return {
        "BUFFER_POOL": {name: dict(fields) for name, fields in static.pools.items()},
        "BUFFER_PROFILE": dict(sorted(profiles.items())),
        "BUFFER_PG": pgs,
        "BUFFER_QUEUE": queues,
        "PFC_WD": watchdog,
    }


def _cable_lengths(used: dict[str, End], ports: list[str], default: str) -> dict[str, str]:
    """Every port's cable length: the cabling plan's, else the SKU template's default_cable."""
    lengths: dict[str, str] = {}
    for port in ports:
        end = used.get(port)
        cable = end.link.cable if end is not None else None
        lengths[port] = default if cable is None else f"{math.ceil(cable.length_m)}m"
    return lengths
