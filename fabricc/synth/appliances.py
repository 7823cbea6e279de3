"""Synthesis stage, before the node plan: subnet-manager hosts onto reserved leaf ports.

Consumes the LoadedSpec; produces it with, per rail-optimized compute network, the
subnet-manager appliances and servers that the spec attaches without options moved onto ports
the first scalable unit reserves for them (reserved_slots), as RA-11333 cables UFM - where that
adds no unit: the leaves then serve them beside the GPU nodes. Without it they get a leaf of
their own, which costs that leaf and often twice the spines (synth/fattree.py says so).
"""

from __future__ import annotations

import dataclasses

from fabricc.ir import Fabric
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.resolve import Attachment, ResolvedNetwork
from fabricc.synth.nodes import default_su_size

HOST_KINDS = ("appliance", "server")  # kinds that run a subnet manager (UFM, a management node)
UNIT_KINDS = ("gpu-node",)  # groups built in units; rack-scale trays keep their own rules


def reserve_for_sm_hosts(loaded: LoadedSpec) -> LoadedSpec:
    networks = dict(loaded.networks)
    for name, network in loaded.networks.items():
        changed = _reserved(loaded, network)
        if changed is not None:
            networks[name] = changed
    if networks == loaded.networks:
        return loaded
    return dataclasses.replace(loaded, networks=networks)


def _reserved(loaded: LoadedSpec, network: ResolvedNetwork) -> ResolvedNetwork | None:
    spec = network.spec
    if (
        spec.role != "compute"
        or not network.rail_optimized
        or spec.topology != "fat-tree"
        or "reserved_slots" in spec.model_fields_set
        or any(a.reserved for a in network.attachments)
    ):
        return None
    nodes = loaded.catalog.catalog.nodes
    groups = loaded.spec.nodes
    written = spec.endpoints or {}

    def kind(attachment: Attachment) -> str:
        return nodes[groups[attachment.group].model].kind

    hosts = [
        a
        for a in network.attachments
        if a.group in spec.subnet_manager.sm_nodes
        and kind(a) in HOST_KINDS
        and not (written.get(a.group) and written[a.group].model_fields_set)
    ]
    gpus = [a for a in network.attachments if kind(a) in UNIT_KINDS]
    if not hosts or len(gpus) != 1:
        return None
    (gpu,) = gpus
    rails = len(gpu.ports) * spec.planes
    needed = sum(groups[a.group].count * len(a.ports) for a in hosts)
    slots = -(-needed // rails)
    group = groups[gpu.group]
    size = group.su_size or default_su_size(Fabric(loaded), gpu.group, 1)[0] or group.count
    units = -(-group.count // size)
    if slots >= size or group.count + slots > units * size:
        return None  # a unit more: the appliances' own leaf is cheaper (and says what it costs)
    chosen = {a.group for a in hosts}
    return dataclasses.replace(
        network,
        spec=spec.model_copy(update={"reserved_slots": slots}),
        attachments=tuple(
            dataclasses.replace(a, reserved=True) if a.group in chosen else a
            for a in network.attachments
        ),
    )
