"""Emit stage, provisioning: the by-hand instructions of seeds.txt.

Consumes the Fabric IR and its ManagementNet (synth/mgmtnet.py): the Ethernet switches fabricc
writes no config for (their model names no operating system). Produces their lines of seeds.txt,
one a switch, tab-separated: the switch, `by hand`, then one field per thing to set, each the
same fact the NVUE emitter (emit/configs/mgmt.py management_tree) configures on an access switch
that has an OS - its management address, its subnet's gateway on the VLAN of its access ports,
the DHCP relay, the provisioning server's routed port, BGP unnumbered on its uplinks (its ASN,
each neighbour's) and the prefixes it announces. Ports are named as cabling/cables.csv names
them. The twin (fabricc/twin/byhand.py) reads these lines back.
"""

from __future__ import annotations

from fabricc.emit.configs.mgmt import network_vlan
from fabricc.ir import MGMT, UPLINK, Fabric
from fabricc.synth.mgmtnet import ManagementNet
from fabricc.synth.switchos import has_config

HEADER = [
    "# Switches fabricc writes no config for (their model names no operating system): configure",
    "# them by hand, as the design configures the access switches that have one, before the",
    "# switches behind them boot. One line a switch, tab-separated: the switch, `by hand`, then",
    "# what to set (ports as cabling/cables.csv names them):",
    "#   management address A         its own address, on its management port",
    "#   gateway G/N on VLAN V, access ports P   the router of its subnet: G on the VLAN's SVI,",
    "#                                the ports its devices are cabled to untagged in VLAN V",
    "#   DHCP relay to S from VLAN V, upstream P   option 82 circuit-id: the access port's name",
    "#   server port P address A/N    a routed port to the provisioning server",
    "#   BGP AS X router-id R unnumbered P>NEIGHBOUR/AS ...   eBGP unnumbered on its uplinks",
    "#   announce PREFIX ...          the prefixes it originates",
]


def _ports(ports: list[str]) -> str:
    """Cabling port names, in number order, runs of consecutive cages as `first-last`."""

    def key(port: str) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else 0 for part in port.split("/"))

    ordered = sorted(set(ports), key=key)
    runs: list[list[str]] = []
    for port in ordered:
        if (
            runs
            and port.isdigit()
            and runs[-1][-1].isdigit()
            and int(port) == int(runs[-1][-1]) + 1
        ):
            runs[-1].append(port)
        else:
            runs.append([port])
    return ",".join(run[0] if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def by_hand_lines(fabric: Fabric, net: ManagementNet) -> list[str]:
    """seeds.txt's by-hand section (empty where every Ethernet switch has a config)."""
    manual = [
        d
        for _, d in sorted(fabric.devices.items())
        if d.kind == "switch"
        and d.network is not None
        and fabric.loaded.networks[d.network].fabric == "ethernet"
        and not has_config(fabric, d)
    ]
    if not manual:
        return []
    names = {d.name for d in manual}
    access_ports: dict[str, list[str]] = {}
    uplinks: dict[str, list[tuple[str, str]]] = {}  # switch -> (its port, far switch)
    tops = set(net.inband.real) if net.inband is not None else set()
    for link in fabric.links:
        if link.kind == MGMT and link.b in names:
            access_ports.setdefault(link.b, []).append(link.b_port)
        elif link.kind == UPLINK:
            # routed as management_tree routes them: into the in-band top tier, or a cable of
            # the management tree between two access switches
            if link.a in names and (link.b in tops or link.b in net.subnets):
                uplinks.setdefault(link.a, []).append((link.a_port, link.b))
            if link.b in names and link.a in net.subnets:
                uplinks.setdefault(link.b, []).append((link.b_port, link.a))
    lines = list(HEADER)
    for device in manual:
        fields = [device.name, "by hand"]
        fields.append(f"management address {device.mgmt_ip or 'none'}")
        access = net.subnets.get(device.name)
        if access is not None:
            assert device.network is not None
            vlan = network_vlan(fabric, device.network)
            ports = _ports(access_ports.get(device.name, []))
            fields.append(
                f"gateway {access.gateway}/{access.network.prefixlen} on VLAN {vlan}, "
                f"access ports {ports or 'none'}"
            )
            if access.relays:
                upstream = _ports(list(access.uplinks))
                fields.append(
                    f"DHCP relay to {net.server.split('/')[0]} from VLAN {vlan}, "
                    f"upstream {upstream}"
                )
            announce = [str(access.network)]
            if access.server_port is not None and access.server_link is not None:
                fields.append(f"server port {access.server_port} address {access.server_link}")
                announce.append(str(access.server_link.network))
            neighbours = sorted(uplinks.get(device.name, []))
            if neighbours and access.asn is not None:
                peers = " ".join(f"{port}>{far}/{_asn(net, far)}" for port, far in neighbours)
                fields.append(f"BGP AS {access.asn} router-id {access.gateway} unnumbered {peers}")
                fields.append("announce " + " ".join(announce))
        lines.append("\t".join(fields))
    return lines


def _asn(net: ManagementNet, far: str) -> str:
    """The neighbour's ASN as the design numbers it (`external` where it has none of ours)."""
    access = net.subnets.get(far)
    if access is not None and access.asn is not None:
        return str(access.asn)
    inband = net.inband
    if inband is not None:
        if far in inband.spines:
            return str(inband.spines[far].asn)
        if far in inband.real:
            return str(inband.asn)
    return "external"
