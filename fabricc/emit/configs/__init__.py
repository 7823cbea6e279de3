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
The link index is built once, so the emitter is linear in the number of links. Two emitters
make them (`configs`, `configs-rest`: fabricc.emit.configs.files.PARTS), which a large build's
two processes can take apart.
"""

from __future__ import annotations

from collections.abc import Iterator

from fabricc.emit import Artifact
from fabricc.ir import Fabric


def emit(fabric: Fabric) -> Iterator[Artifact]:
    """The first part of the config files as they are made (fabricc.emit.configs.files, loaded
    when a build first emits): the switches in even places."""
    from fabricc.emit.configs.files import emit_part

    return emit_part(fabric, 0)


def emit_rest(fabric: Fabric) -> Iterator[Artifact]:
    """The second part: the switches in odd places, the subnet managers and the hosts."""
    from fabricc.emit.configs.files import emit_part

    return emit_part(fabric, 1)
