"""Emitter `provisioning`: the feeds of the tools that provision a cluster.

Consumes the Fabric IR; produces OUT/provisioning/, one folder per consumer, each from its own
module: slurm/ (topology and nodes), k8s/ (NVIDIA Network Operator objects and node labels),
ansible/ (inventory), kea/ (DHCPv4 with ZTP), ztp/ (the switches' ZTP files), netplan/ (the
hosts' in-band bonds), netbox/ (a complete import set), imex/ (the IMEX nodes file of each
multi-node NVLink domain).
"""

from __future__ import annotations

from fabricc.emit import Artifact
from fabricc.ir import Fabric


def emit(fabric: Fabric) -> list[Artifact]:
    """Every feed but NetBox's (a unit of its own in a large build: fabricc.build.FORK_UNITS)."""
    from fabricc.emit.provisioning import ansible, imex, k8s, kea, netplan, slurm, ztp

    artifacts: list[Artifact] = []
    for module in (slurm, k8s, ansible, kea, ztp, netplan, imex):
        artifacts += module.emit(fabric)
    return artifacts


def emit_netbox(fabric: Fabric) -> list[Artifact]:
    """NetBox's import set but its cables (emitter `netbox`, written to provisioning/netbox/)."""
    from fabricc.emit.provisioning import netbox

    return netbox.emit(fabric)


def emit_netbox_cables(fabric: Fabric) -> list[Artifact]:
    """NetBox's cables (emitter `netbox-cables`): the one table of the set that reads the
    cable selection."""
    from fabricc.emit.provisioning import netbox

    return netbox.emit_cables(fabric)
