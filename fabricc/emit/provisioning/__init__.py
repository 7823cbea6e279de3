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
    from fabricc.emit.provisioning import ansible, imex, k8s, kea, netbox, netplan, slurm, ztp

    artifacts: list[Artifact] = []
    for module in (slurm, k8s, ansible, kea, ztp, netplan, netbox, imex):
        artifacts += module.emit(fabric)
    return artifacts
