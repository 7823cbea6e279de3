"""Emit stage, provisioning: an Ansible inventory of every device of the design.

Consumes the Fabric IR; produces provisioning/ansible/inventory.yaml (the YAML inventory format):
every device under all.hosts with its host vars - model, rack and U, scalable unit, NVLink domain,
addresses (`ansible_host` is the in-band address of a node, the management address of anything
else; a node's management address is its BMC), switch loopback and ASN, and for GPU hosts their
compute rails (port, RDMA device, leaf and leaf port, address) - and groups by kind (nodes,
switches, pdus, ...), by role (the node kind, or <network>_<tier> for switches), by network, by
rack (rack_<name>), by scalable unit (su<n>) and by NVLink domain (nvlink_<name>). Group names
keep to letters, digits and underscores, as Ansible expects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from fabricc.emit import Artifact
from fabricc.emit.jsontext import json_flow
from fabricc.emit.provisioning.common import (
    compute_networks,
    host_links,
    nvlink_domain_of,
    port_devices,
)
from fabricc.ir import EXTERNAL, Device, Fabric

KIND_GROUPS = {
    "node": "nodes",
    "tray": "nodes",
    "switch": "switches",
    "nvlink-switch": "nvlink_switches",
    "pdu": "pdus",
    "power-shelf": "power_shelves",
}


def group_name(*parts: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", "_".join(parts).lower())


def rails(fabric: Fabric) -> dict[str, list[dict[str, object]]]:
    """GPU host -> its compute rails, in link order."""
    devices = fabric.devices
    of_port = port_devices(fabric)
    out: dict[str, list[dict[str, object]]] = {}
    for network in compute_networks(fabric):
        for link in host_links(fabric, network):
            rdma, netdev = of_port[devices[link.a].model, link.a_port]
            # keys in this order, each only when it has a value: no dict of Nones to filter
            rail: dict[str, object] = {"network": network}
            if link.rail is not None:
                rail["rail"] = link.rail + 1
            if link.plane is not None:
                rail["plane"] = link.plane + 1
            rail["port"] = link.a_port
            if rdma is not None:
                rail["rdma_device"] = rdma
            if netdev is not None:
                rail["netdev"] = netdev
            rail["leaf"] = link.b
            rail["leaf_port"] = link.b_port
            rail["speed_gbps"] = link.speed
            if link.a_ip:
                rail["address"] = f"{link.a_ip}/31"
            if link.b_ip is not None:
                rail["gateway"] = link.b_ip
            out.setdefault(link.a, []).append(rail)
    return out


def host_vars(
    fabric: Fabric, device: Device, domain: str | None, host_rails: list[dict[str, object]]
) -> dict[str, object]:
    node = device.kind in ("node", "tray")
    found: dict[str, object | None] = {
        "ansible_host": device.inband_ip if node else device.mgmt_ip,
        "kind": device.kind,
        "role": device.role,
        "model": device.model,
        "network": device.network,
        "rack": device.rack,
        "u": device.u,
        "su": fabric.su_label(device.su),
        "nvlink_domain": domain,
        "bmc_address": device.mgmt_ip if node else None,
        "mgmt_address": None if node else device.mgmt_ip,
        "inband_address": device.inband_ip,
        "loopback": device.loopback,
        "asn": device.asn,
        "rails": host_rails or None,
    }
    return {k: v for k, v in found.items() if v is not None}


def groups(fabric: Fabric, domains: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    named: dict[tuple[str, ...], str] = {}  # group names repeat: one regex per distinct name

    def name_of(*parts: str) -> str:
        found = named.get(parts)
        if found is None:
            found = named[parts] = group_name(*parts)
        return found

    for device in fabric.devices.values():
        if device.kind == EXTERNAL:  # the site's network: nothing Ansible manages
            continue
        names = [KIND_GROUPS.get(device.kind) or name_of(device.kind)]
        if device.kind == "switch" and device.network is not None:
            names += [
                name_of(device.network, device.role),
                name_of("network", device.network),
            ]
        else:
            names.append(name_of(device.role))
        if device.rack is not None:
            names.append(name_of("rack", device.rack))
        if device.su is not None:
            names.append(f"su{fabric.su_label(device.su)}")
        if device.name in domains:
            names.append(name_of("nvlink", domains[device.name]))
        for name in dict.fromkeys(names):
            out.setdefault(name, []).append(device.name)
    return dict(sorted(out.items()))


def inventory(fabric: Fabric) -> dict[str, Any]:
    domains = nvlink_domain_of(fabric)
    host_rails = rails(fabric)
    hosts = {
        d.name: host_vars(fabric, d, domains.get(d.name), host_rails.get(d.name, []))
        for d in fabric.devices.values()
        if d.kind != EXTERNAL
    }
    children = {
        name: {"hosts": dict.fromkeys(members)} for name, members in groups(fabric, domains).items()
    }
    return {"all": {"vars": {"fabricc_design": fabric.name}, "hosts": hosts, "children": children}}


def yaml_text(data: dict[str, Any]) -> str:
    """The inventory as YAML, written directly: a 100k-GPU inventory has millions of scalars,
    too many for PyYAML's representer. Scalars are JSON (valid YAML), each rail one flow mapping;
    yaml.safe_load gives back `data`."""
    top = data["all"]
    lines = ["all:", "  vars:"]
    lines += [f"    {key}: {_json(value)}" for key, value in top["vars"].items()]
    lines.append("  hosts:")
    quoted = _quoted
    for host, values in top["hosts"].items():
        lines.append(f"    {quoted(host)}:")
        for key, value in values.items():
            kind = type(value)  # _json inline: a call per value is felt at 100k hosts
            if kind is str:
                lines.append(f"      {key}: {quoted(value)}")
            elif kind is int:
                lines.append(f"      {key}: {value}")
            elif kind is list:
                lines.append(f"      {key}:")
                lines += [f"      - {json_flow(item)}" for item in value]
            else:
                lines.append(f"      {key}: {json_flow(value)}")
    lines.append("  children:")
    for group, entry in top["children"].items():
        lines += [f"    {group}:", "      hosts:"]
        lines += [f"        {_quoted(member)}:" for member in entry["hosts"]]
    return "\n".join(lines) + "\n"


# json.dumps of a str is this C function's answer (ensure_ascii); called directly, without
# dumps' per-call setup, for the million names and addresses of a large inventory.
_quoted: Callable[[str], str] = json.encoder.encode_basestring_ascii


def _json(value: object) -> str:
    if type(value) is str:
        return _quoted(value)
    if type(value) is int:
        return str(value)
    return json_flow(value)


def emit(fabric: Fabric) -> list[Artifact]:
    header = f"# Ansible inventory of {fabric.name}, generated by fabricc.\n"
    return [("provisioning/ansible/inventory.yaml", header + yaml_text(inventory(fabric)))]
