"""Emitter `inventory`: every device with its place and addresses, for people and for NetBox.

Consumes the Fabric IR; produces inventory/devices.csv (hostname, kind, role, model and part
number, rack and U, unit/rail/plane/pod, management and in-band addresses, loopback, ASN). The
NetBox import (every device, PDUs included) is part of provisioning/netbox/.
"""

from __future__ import annotations

from fabricc.emit import Artifact
from fabricc.emit.tables import Cell, csv_text
from fabricc.ir import EXTERNAL, Device, Fabric, one_based

HEADER = (
    "name",
    "kind",
    "role",
    "model",
    "part_number",
    "group",
    "network",
    "rack",
    "u",
    "height_u",
    "power_w",
    "scalable_unit",
    "rail",
    "plane",
    "pod",
    "mgmt_ip",
    "inband_ip",
    "loopback",
    "asn",
)


def ordering(fabric: Fabric, device: Device) -> tuple[str, str]:
    """(part number, vendor) of a device from the catalog."""
    catalog = fabric.loaded.catalog.catalog
    if device.kind == EXTERNAL:  # the site's own equipment: nothing to order
        return "", "generic"
    if device.kind == "switch":
        switch = catalog.switches[device.model]
        return switch.part_number, switch.vendor
    if device.model in catalog.nodes:
        node = catalog.nodes[device.model]
        return node.part_number, node.vendor
    return catalog.parts[device.model].part_number, "generic"


def rows(fabric: Fabric) -> list[tuple[Cell, ...]]:
    return [
        (
            d.name,
            d.kind,
            d.role,
            d.model,
            ordering(fabric, d)[0],
            d.group,
            d.network,
            d.rack,
            d.u,
            d.height_u,
            d.power_w,
            fabric.su_label(d.su),
            one_based(d.rail),
            one_based(d.plane),
            one_based(d.pod),
            d.mgmt_ip,
            d.inband_ip,
            d.loopback,
            d.asn,
        )
        for d in fabric.devices.values()
    ]


def emit(fabric: Fabric) -> list[Artifact]:
    return [("inventory/devices.csv", csv_text(HEADER, rows(fabric)))]
