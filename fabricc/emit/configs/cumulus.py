"""Emit stage, configs: NVIDIA Cumulus Linux NVUE startup.yaml of a routed RoCE switch.

Consumes a switch of an ethernet compute or storage network with os: cumulus, the ConfigContext
and the QoS plan; produces the NVUE `set` tree (structured config, rendered by nvue_text):
system, management interface, breakouts, host /31s, loopback, router bgp with unnumbered (or
numbered) neighbors in one peer group, adaptive routing (Spectrum-X: on every switch-to-switch
port that features.link_routes_adaptively names, and globally where one is), and lossless RoCE
- `qos roce` plus every value it implies written out (trust, DSCP -> switch priority, PFC, ECN
thresholds, egress queues and scheduler). Keys are inserted in the order the file lists them;
nvue_text writes the tree as YAML into templates/cumulus/startup.yaml.j2. The helpers at the top
are shared with the management switch builder.
"""

from __future__ import annotations

import math
from typing import Any

from fabricc.catalog.ports import cage_group, mgmt_port_names, split_port
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.features import link_routes_adaptively
from fabricc.emit.configs.frr import (
    CONNECT_RETRY_S,
    HOLD_S,
    KEEPALIVE_S,
    MAXIMUM_PATHS,
    PEER_GROUP,
)
from fabricc.emit.configs.index import End, point_to_point
from fabricc.emit.configs.nvue_release import Nvue
from fabricc.emit.configs.ports import cumulus_cage, cumulus_name
from fabricc.emit.configs.qos import DSCPS, PRIORITIES, QosPlan
from fabricc.emit.templating import SharedTrees, render_framed, yaml_block
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device
from fabricc.spec.models import CUMULUS_RELEASE
from fabricc.synth.mgmtnet import mgmt_subnet

MGMT_VRF = "mgmt"

Tree = dict[str, Any]
PFC_CABLE_DEFAULT_M = 100  # NVUE's PFC cable-length default (`nv show qos roce`: cable-length 100)
NVUE_KB = 1000  # bytes per KB of the spec's ECN thresholds in NVUE (150 KB = 150000 bytes)


def nvue_text(
    device: Device,
    design: str,
    tree: Tree,
    shared: SharedTrees | None = None,
    release: str = CUMULUS_RELEASE,
) -> str:
    """The NVUE `set` tree as startup.yaml (templates/cumulus/startup.yaml.j2 around the tree's
    YAML, in the tree's key order; the tests check that it reads back as exactly this tree).
    `shared`: the subtrees other switches' trees hold too (ConfigContext.shared); `release`: the
    Cumulus Linux release whose object model the tree follows, named in the header."""
    body = yaml_block(tree, 4, shared)
    return render_framed(
        "cumulus/startup.yaml.j2",
        {"design": design, "release": release},
        hostname=device.name,
        body=body,
    )


def mgmt_port_end(ctx: ConfigContext, device: Device) -> End | None:
    names = mgmt_port_names(ctx.switch_model(device))
    return next((e for e in ctx.ends(device.name) if e.port in names), None)


def nvue_model(ctx: ConfigContext, device: Device) -> Nvue:
    """The NVUE object model of the Cumulus Linux release the switch's network runs."""
    network = device.network
    assert network is not None
    return ctx.fabric.derived(
        f"nvue.{network}", lambda: Nvue(ctx.fabric.loaded.networks[network].spec.nvue_release)
    )


def eth0(ctx: ConfigContext, device: Device, end: End) -> Tree:
    tree: Tree = {"type": "eth", "description": ctx.far_end(end)}
    if device.mgmt_ip is not None:
        prefixlen, gateway = mgmt_subnet(ctx.fabric, device.name)
        prefix = f"{device.mgmt_ip}/{prefixlen}"
        tree.update(nvue_model(ctx, device).management(prefix, gateway, MGMT_VRF))
    return tree


def breakouts(ctx: ConfigContext, device: Device) -> Tree:
    """Parent interfaces of split cages: `nv set interface swpN link breakout <k>x` (one
    shared object per split, never changed: spelled once for every switch)."""
    tree: Tree = {}
    for cage, ways in sorted(ctx.cage_ways(device).items()):
        if ways > 1:
            key = ("breakout", ways)
            parent = ctx.subtrees.get(key)
            if parent is None:
                parent = {"type": "swp", "link": {"breakout": {f"{ways}x": {}}}}
                parent = ctx.subtrees[key] = ctx.shared.share(parent)
            tree[cumulus_cage(cage)] = parent
    return tree


def swp(ctx: ConfigContext, device: Device, end: End, mtu: int) -> Tree:
    port = ("port", device.model, end.port, end.link.speed, mtu)
    link = ctx.subtrees.get(port)  # the port's link subtree, found once per model and port
    if link is None:
        cage, sub = split_port(end.port)
        model = ctx.switch_model(device)
        speed = end.link.speed if sub else cage_group(model, cage).cage_speed
        key = ("link", mtu, speed)
        link = ctx.subtrees.get(key)
        if link is None:  # one object per MTU and speed, shared by the ports (never changed)
            link = {"mtu": mtu, "speed": f"{speed}G", "state": {"up": {}}}
            link = ctx.subtrees[key] = ctx.shared.share(link)
        ctx.subtrees[port] = link
    return {"type": "swp", "description": ctx.far_end(end), "link": link}


def roce_tree(ctx: ConfigContext, device: Device) -> Tree:
    assert device.network is not None and device.loopback is not None
    network = ctx.fabric.loaded.networks[device.network]
    mtu = network.spec.mtu
    nvue = nvue_model(ctx, device)
    interfaces: Tree = {}
    loopback = [f"{device.loopback}/32"]
    if device.loopback_v6 is not None:
        loopback.append(f"{device.loopback_v6}/128")
    interfaces["lo"] = {"type": "loopback", **nvue.addresses(loopback)}
    mgmt = mgmt_port_end(ctx, device)
    if mgmt is not None:
        interfaces["eth0"] = eth0(ctx, device, mgmt)
    interfaces.update(breakouts(ctx, device))

    networks: Tree = {f"{device.loopback}/32": {}}
    neighbors: Tree = {}
    model = ctx.switch_model(device)
    mgmt_ports = mgmt_port_names(model)
    routed_adaptively = False  # some switch-to-switch port runs adaptive routing
    port_routing = ctx.subtrees.get(("adaptive-routing", nvue))
    if port_routing is None:  # shared by every switch-to-switch port (never changed)
        port_routing = {"adaptive-routing": nvue.enabled}
        port_routing = ctx.subtrees[("adaptive-routing", nvue)] = ctx.shared.share(port_routing)
    watchdog = ctx.subtrees.get(("pfc-watchdog",))
    if watchdog is None:  # every RoCE port (NVUE reference: interface qos pfc-watchdog state)
        watchdog = {"pfc-watchdog": {"state": "enable"}}
        watchdog = ctx.subtrees[("pfc-watchdog",)] = ctx.shared.share(watchdog)
    longest = 0.0  # the longest cable on the switch's RoCE ports, m
    for end in ctx.ends(device.name):
        link = end.link
        if end.port in mgmt_ports or link.network != device.network:
            continue
        name = cumulus_name(end.port)
        kind = link.kind
        cable = link.cable
        if cable is not None and cable.length_m > longest:
            longest = cable.length_m
        if kind == ENDPOINT_LEAF and not end.upward:
            entry = swp(ctx, device, end, mtu)
            if end.local_ip is not None:
                address, prefix = point_to_point(end.local_ip)
                # nvue.addresses([address]), without a list and a dict per port
                entry[nvue.family(address)] = {"address": {address: {}}}
                networks[prefix] = {}
            entry["qos"] = watchdog
            interfaces[name] = entry
        elif kind in (LEAF_SPINE, SPINE_CORE):
            entry = swp(ctx, device, end, mtu)
            far = ctx.devices[end.far]
            description = f"{ctx.far_end(end)} AS{far.asn}"
            if end.local_ip is not None and end.far_ip is not None:
                address = f"{end.local_ip}/31"
                entry[nvue.family(address)] = {"address": {address: {}}}
                neighbors[end.far_ip] = {
                    "type": "numbered",
                    "peer-group": PEER_GROUP,
                    "description": description,
                }
            else:
                neighbors[name] = {
                    "type": "unnumbered",
                    "peer-group": PEER_GROUP,
                    "description": description,
                }
            if link_routes_adaptively(ctx.fabric, link):
                entry["router"] = port_routing
                routed_adaptively = True
            entry["qos"] = watchdog
            interfaces[name] = entry

    address_families: Tree = {
        "ipv4-unicast": {
            **nvue.enabled,
            "network": networks,
            "multipaths": {"ebgp": MAXIMUM_PATHS},
        }
    }
    if device.loopback_v6 is not None:
        address_families["ipv6-unicast"] = {
            **nvue.enabled,
            "network": {f"{device.loopback_v6}/128": {}},
            "multipaths": {"ebgp": MAXIMUM_PATHS},
        }
    router: Tree = {
        "bgp": {**nvue.enabled, "autonomous-system": device.asn, "router-id": device.loopback}
    }
    if routed_adaptively:
        router["adaptive-routing"] = nvue.enabled
    return {
        "system": {"hostname": device.name},
        "interface": interfaces,
        "router": router,
        "vrf": {
            "default": {
                "router": {
                    "bgp": {
                        **nvue.enabled,
                        "address-family": address_families,
                        "path-selection": {"multipath": {"aspath-ignore": nvue.on}},
                        "peer-group": {
                            PEER_GROUP: {
                                "remote-as": "external",
                                "timers": {
                                    "keepalive": KEEPALIVE_S,
                                    "hold": HOLD_S,
                                    "connection-retry": CONNECT_RETRY_S,
                                },
                            }
                        },
                        "neighbor": neighbors,
                    }
                }
            }
        },
        "qos": _qos(ctx, device.network, nvue, math.ceil(longest) or PFC_CABLE_DEFAULT_M),
    }


def _qos(ctx: ConfigContext, network: str, nvue: Nvue, cable_m: int) -> Tree:
    """The network's QoS section: one object for the switches with the same longest cable
    (never changed)."""
    key = ("qos", network, cable_m)
    tree = ctx.subtrees.get(key)
    if tree is None:
        tree = ctx.shared.share(qos_tree(ctx.qos(network), nvue, cable_m))
        ctx.subtrees[key] = tree
    return tree


def qos_tree(plan: QosPlan, nvue: Nvue, cable_m: int = PFC_CABLE_DEFAULT_M) -> Tree:
    """`nv set qos roce` and, explicitly, every value it stands for (Cumulus Linux "RDMA over
    Converged Ethernet - RoCE", Default RoCE Configuration); PFC headroom for `cable_m`, the
    longest planned cable on the switch (NVUE's default assumes 100 m); ECN thresholds in
    bytes as NVUE takes them, KB read as 1000 bytes (150 KB: "the system-level ECN minimum
    threshold value intended for programming is 150,000 bytes" on Spectrum-4, same page)."""
    roce = plan.traffic_class(plan.roce_priority)
    cnp = plan.traffic_class(plan.cnp_priority)
    return {
        "roce": {**nvue.enabled, "mode": "lossless"},
        "mapping": {
            "default-global": {
                "trust": "both",
                "pcp": {str(p): {"switch-priority": p} for p in PRIORITIES},
                # all 64: unlisted DSCPs would default to DSCP >> 3 and 24-31 land on priority 3
                "dscp": {str(d): {"switch-priority": plan.dscp_priority(d)} for d in DSCPS},
            }
        },
        "pfc": {
            "default-global": {
                "switch-priority": {str(plan.pfc_priority): {}},
                "cable-length": cable_m,
                "tx": "enable",
                "rx": "enable",
            }
        },
        "congestion-control": {
            "default-global": {
                "traffic-class": {
                    str(roce): {
                        "ecn": "enable",
                        "red": "disable",
                        "min-threshold": plan.ecn_min_kb * NVUE_KB,
                        "max-threshold": plan.ecn_max_kb * NVUE_KB,
                        "probability": plan.ecn_probability,
                    }
                }
            }
        },
        "egress-queue-mapping": {
            "default-global": {
                "switch-priority": {
                    str(p): {"traffic-class": plan.traffic_class(p)} for p in PRIORITIES
                }
            }
        },
        "egress-scheduler": {
            "default-global": {
                "traffic-class": {
                    str(plan.default_class): {"mode": "dwrr", "bw-percent": plan.default_weight},
                    str(roce): {"mode": "dwrr", "bw-percent": plan.roce_weight},
                    str(cnp): {"mode": "strict"},
                }
            }
        },
    }
