"""Emitter `configs`: switch, subnet-manager and host configs that provisioning systems load.

Consumes the Fabric IR; produces, under configs/:
  <switch>/config_db.json + frr.conf    RoCE switches of networks with os: sonic
  <switch>/startup.yaml + frr.conf      RoCE switches of networks with os: cumulus (NVUE)
  <switch>/startup.yaml                 management switches (in-band, out-of-band; NVUE)
  <network>-sm/                         InfiniBand subnet manager: opensm.conf, root_guids.conf,
                                        cn_guids.conf, partitions.conf, guids.yaml, ibsim.net
                                        (<network>-plane<k>-sm/ per plane of a multi-plane network)
  hosts/<node>.sh                       RoCE NIC settings and nccl.conf of every RoCE node
Every value is computed by the modules of this package; templates under templates/ only format.
The link index is built once, so the emitter is linear in the number of links. Four emitters
make them (`configs`, `configs-2`, `configs-3`: a third of the switches each; `configs-hosts`:
the subnet managers', hosts' and SuperNICs' files; fabricc.emit.configs.files), which a large
build's two processes take apart.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fabricc.emit import Artifact
from fabricc.ir import Fabric


def switches(part: int) -> Callable[[Fabric], Iterator[Artifact]]:
    """Part `part` of the switches' files as they are made (fabricc.emit.configs.files, loaded
    when a build first emits)."""

    def emit(fabric: Fabric) -> Iterator[Artifact]:
        from fabricc.emit.configs.files import emit_switches

        return emit_switches(fabric, part)

    return emit


def reads_cables(fabric: Fabric) -> bool:
    """Whether the switches' files of this design read the cable selection: those of a data
    network on Ethernet whose switches run Cumulus Linux (PFC headroom for the longest cable,
    fabricc.emit.configs.cumulus) or SONiC (each port's cable length,
    fabricc.emit.configs.sonic). Management switches' NVUE, EOS and InfiniBand read none."""
    from fabricc.emit.configs.context import MANAGEMENT_ROLES

    return any(
        network.fabric == "ethernet"
        and network.spec.role not in MANAGEMENT_ROLES
        and network.spec.os in ("cumulus", "sonic")
        for network in fabric.loaded.networks.values()
    )


def emit_hosts(fabric: Fabric) -> Iterator[Artifact]:
    """The subnet managers', hosts' and SuperNICs' files."""
    from fabricc.emit.configs.files import emit_sm_hosts

    return emit_sm_hosts(fabric)
