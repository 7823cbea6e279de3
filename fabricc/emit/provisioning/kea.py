"""Emit stage, provisioning: DHCPv4 for the out-of-band network, with zero-touch provisioning.

Consumes the OOB pool (addressing.oob), the management cables of the Fabric IR and the switch
configs fabricc writes; produces provisioning/kea/kea-dhcp4.conf: one subnet (the OOB pool, its
first host the router), and per management cable a reservation of the device's address keyed by
the DHCP relay agent's circuit-id `<access switch>:<port>` - the port a device is cabled to
decides its address, so a replaced BMC or switch needs no MAC address entered anywhere. The
access switch's port is named as its OS names it (swp9 on Cumulus). Switches whose config fabricc
writes get their ZTP options: SONiC option 67 (the ztp.json URL) and Cumulus option 239 (the ZTP
script URL), both on the provisioning server (provisioning.ztp).
"""

from __future__ import annotations

import ipaddress

from fabricc.emit import Artifact
from fabricc.emit.configs.ports import cumulus_name
from fabricc.emit.provisioning.ztp import ztp_plan
from fabricc.emit.tables import json_text
from fabricc.ir import MGMT, Fabric

ZTP_URL_OPTION = 239  # site-specific option: SONiC's provisioning script, Cumulus's ZTP script


def circuit_id(fabric: Fabric, switch: str, port: str) -> str:
    device = fabric.devices[switch]
    network = fabric.loaded.networks[device.network] if device.network else None
    name = cumulus_name(port) if network is not None and network.spec.os == "cumulus" else port
    return f"{switch}:{name}"


def reservations(fabric: Fabric) -> list[dict[str, object]]:
    plan = ztp_plan(fabric)
    out: list[dict[str, object]] = []
    for link in fabric.links:
        if link.kind != MGMT:
            continue
        device = fabric.devices[link.a]
        if device.mgmt_ip is None:
            continue
        entry: dict[str, object] = {
            "circuit-id": f"'{circuit_id(fabric, link.b, link.b_port)}'",
            "ip-address": device.mgmt_ip,
            "hostname": device.name + ("-bmc" if device.kind in ("node", "tray") else ""),
        }
        ztp = plan.switches.get(device.name)
        if ztp is not None:
            option = (
                {"name": "boot-file-name", "data": ztp.url}
                if ztp.os == "sonic"
                else {"name": "ztp-url", "code": ZTP_URL_OPTION, "data": ztp.url}
            )
            entry["option-data"] = [option]
        out.append(entry)
    return out


def config(fabric: Fabric) -> dict[str, object]:
    pool = ipaddress.ip_network(fabric.loaded.spec.addressing.oob)
    gateway = str(next(pool.hosts()))
    return {
        "Dhcp4": {
            "interfaces-config": {"interfaces": ["*"]},
            "lease-database": {"type": "memfile", "lfc-interval": 3600},
            "valid-lifetime": 86400,
            "host-reservation-identifiers": ["circuit-id"],
            "option-def": [
                {"name": "ztp-url", "code": ZTP_URL_OPTION, "type": "string", "space": "dhcp4"}
            ],
            "subnet4": [
                {
                    "id": 1,
                    "subnet": str(pool),
                    "option-data": [{"name": "routers", "data": gateway}],
                    "reservations": reservations(fabric),
                }
            ],
            "loggers": [
                {"name": "kea-dhcp4", "severity": "INFO", "output_options": [{"output": "stdout"}]}
            ],
        }
    }


def emit(fabric: Fabric) -> list[Artifact]:
    if not any(link.kind == MGMT for link in fabric.links):
        return []
    return [("provisioning/kea/kea-dhcp4.conf", json_text(config(fabric)))]
