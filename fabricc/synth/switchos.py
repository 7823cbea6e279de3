"""Derived view: which switches fabricc writes configs for.

Consumes a switch device of the Fabric IR and its catalog model; produces whether the model names
an operating system fabricc can write (catalog operating_systems, SwitchModel.runs). A switch of a
model that names none gets no config, ZTP or DHCP-boot files: the design check warns about it
(fabricc/checks/switch_os.py), and a model that does not run its network's os is an error there.
"""

from __future__ import annotations

from fabricc.ir import Device, Fabric


def has_config(fabric: Fabric, device: Device) -> bool:
    return bool(fabric.loaded.catalog.catalog.switches[device.model].runs())
