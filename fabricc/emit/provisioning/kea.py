"""Emit stage, provisioning: DHCPv4 for the out-of-band network, with zero-touch provisioning.

Consumes the management routing plan (synth/mgmtnet.py: each access switch the router and DHCP
relay of its own subnet), the management cables of the Fabric IR and the switch configs fabricc
writes; produces provisioning/kea/kea-dhcp4.conf for the provisioning server: one subnet per
access switch (Kea picks it by the relay's address, giaddr), its router the access switch, a
pool of the addresses after its ports (devices the design does not know), and per management
cable a reservation of the device's address keyed by the circuit-id the relay adds - the access
port the request came in on, as the relay names it (Cumulus with use-pif-circuit-id: `swp9`) -
so the port a device is cabled to decides its address and a replaced BMC or switch needs no MAC
address entered anywhere; and per management tree root cabled to the in-band top tier
(synth/rootlinks.py) the /31 of that link, the root reserved by the top-tier port's circuit-id.
Switches whose config fabricc writes get their ZTP options: SONiC option 67 (the ztp.json
URL), EOS option 67 (its ZTP boot script's URL) and Cumulus option 239 (the ZTP script URL),
all on the provisioning server. Every request arrives relayed, so Kea
listens on UDP sockets (Kea ARM, "Interface Configuration": dhcp-socket-type udp for relayed
traffic).
"""

from __future__ import annotations

from fabricc.emit import Artifact
from fabricc.emit.configs.ports import cumulus_name
from fabricc.emit.provisioning.ztp import SwitchZtp, ztp_plan
from fabricc.emit.tables import json_text
from fabricc.ir import MGMT, Fabric, Link
from fabricc.synth.mgmtnet import management_net

# SONiC ZTP and EOS ZTP read the URL of their file from option 67, boot-file-name
BOOT_FILE_OSES = ("sonic", "eos")
ZTP_URL_OPTION = 239  # site-specific option: SONiC's provisioning script, Cumulus's ZTP script


def circuit_id(fabric: Fabric, switch: str, port: str) -> str:
    """The circuit-id the access switch's relay adds for a request from `port`: the port as its
    OS names it (Cumulus Linux "DHCP Relays", use-pif-circuit-id: the physical port, swp9)."""
    device = fabric.devices[switch]
    network = fabric.loaded.networks[device.network] if device.network else None
    return cumulus_name(port) if network is not None and network.spec.os == "cumulus" else port


def reservations(fabric: Fabric, switch: str, links: list[Link]) -> list[dict[str, object]]:
    """The reservations of one access switch's subnet: one per management cable to it."""
    plan = ztp_plan(fabric)
    net = management_net(fabric)
    out: list[dict[str, object]] = []
    for link in links:
        device = fabric.devices[link.a]
        if device.mgmt_ip is None:
            continue
        # the port decides the address; a device's first management port holds its own address
        # (mgmt_ip), another one (an NVLink switch tray's ComE2 and BMC) is named by its port
        address = net.port_address(link.b, link.b_port)
        first = address == device.mgmt_ip
        suffix = "-bmc" if device.kind in ("node", "tray") else ""
        hostname = device.name + (suffix if first else f"-{link.a_port.lower()}")
        ztp = plan.switches.get(device.name) if first else None
        out.append(_reservation(fabric, link.b, link.b_port, address, hostname, ztp))
    return out


def _reservation(
    fabric: Fabric, switch: str, port: str, address: str, hostname: str, ztp: SwitchZtp | None
) -> dict[str, object]:
    """A reservation of `address` for the request the relay on `switch` marks with `port`'s
    circuit-id, with the device's ZTP option where fabricc writes its config."""
    entry: dict[str, object] = {
        "circuit-id": f"'{circuit_id(fabric, switch, port)}'",
        "ip-address": address,
        "hostname": hostname,
    }
    if ztp is not None:
        entry["option-data"] = [_ztp_option(ztp.os, ztp.url)]
    return entry


def subnets(fabric: Fabric) -> list[dict[str, object]]:
    cables: dict[str, list[Link]] = {}  # access switch -> its management cables, in link order
    for name, network in fabric.loaded.networks.items():
        if network.spec.role == "oob":  # the management cables are its links (synth/oob.py)
            for link in fabric.links_of(name):
                if link.kind == MGMT:
                    cables.setdefault(link.b, []).append(link)
    out: list[dict[str, object]] = []
    for number, access in enumerate(management_net(fabric).subnets.values(), 1):
        subnet: dict[str, object] = {
            "id": number,
            "subnet": str(access.network),
            "comment": f"{access.switch}: its devices, "
            + ("relayed by it" if access.relays else "no relay (it has no uplink)"),
            "option-data": [{"name": "routers", "data": access.gateway}],
        }
        if access.pool is not None:
            subnet["pools"] = [{"pool": f"{access.pool[0]} - {access.pool[1]}"}]
        subnet["reservations"] = reservations(fabric, access.switch, cables.get(access.switch, []))
        out.append(subnet)
    net = management_net(fabric)
    plan = ztp_plan(fabric)
    for root, rl in net.root_links.items():
        # a management tree's root on an in-band top-tier switch (synth/rootlinks.py): the /31
        # that switch relays from, the root reserved by the circuit-id of that switch's port
        entry = _reservation(fabric, rl.switch, rl.port, rl.address, root, plan.switches.get(root))
        out.append(
            {
                "id": len(out) + 1,
                "subnet": str(rl.network),
                "comment": f"{root}: its management port, relayed by {rl.switch}",
                "option-data": [{"name": "routers", "data": rl.relay}],
                "reservations": [entry],
            }
        )
    return out


def _ztp_option(os: str, url: str) -> dict[str, object]:
    if os in BOOT_FILE_OSES:
        return {"name": "boot-file-name", "data": url}
    return {"name": "ztp-url", "code": ZTP_URL_OPTION, "data": url}


def config(fabric: Fabric) -> dict[str, object]:
    return {
        "Dhcp4": {
            "interfaces-config": {"interfaces": ["*"], "dhcp-socket-type": "udp"},
            "lease-database": {"type": "memfile", "lfc-interval": 3600},
            "valid-lifetime": 86400,
            "host-reservation-identifiers": ["circuit-id"],
            "option-def": [
                {"name": "ztp-url", "code": ZTP_URL_OPTION, "type": "string", "space": "dhcp4"}
            ],
            "subnet4": subnets(fabric),
            "loggers": [
                {"name": "kea-dhcp4", "severity": "INFO", "output_options": [{"output": "stdout"}]}
            ],
        }
    }


def emit(fabric: Fabric) -> list[Artifact]:
    if not management_net(fabric).subnets:
        return []
    return [("provisioning/kea/kea-dhcp4.conf", json_text(config(fabric)))]
