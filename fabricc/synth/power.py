"""Synthesis view: the power facts of every device and rack, derived from the finished design.

Consumes the placed Fabric IR (devices with their catalog power, racks with their devices) and
the catalog's `physical` data (PSUs, inlet, weight; `assumed_physical` where an entry has none);
produces each device's Physical facts and each rack's device power (the sum of its devices'
catalog maximum). Read by the power check (checks/power.py), the BOM (synth/bom.py: a cord
per power supply), the capacity analysis and the rack diagrams and report, so that each layer
reads the same numbers from below rather than from another.
"""

from __future__ import annotations

from fabricc.catalog.models import Physical, physical_of
from fabricc.ir import Device, Fabric, Rack


def physical(fabric: Fabric, device: Device) -> Physical | None:
    """PSUs, inlet and weight of a device; None for PDUs and power shelves (wired to the feed).
    Asked per device by the power check and the BOM, so kept per (kind, model) for the build."""
    known: dict[tuple[str, str], Physical | None] = fabric.derived("power.physical", dict)
    key = (device.kind, device.model)
    if key not in known:
        known[key] = physical_of(fabric.loaded.catalog.catalog, device.kind, device.model)
    return known[key]


def rack_device_power_w(fabric: Fabric, rack: Rack) -> int:
    """The power of a rack's devices, each at its catalog maximum (W)."""
    return sum(fabric.devices[name].power_w for name in rack.devices)
