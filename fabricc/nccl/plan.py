"""Emit-stage helper: which node types need NCCL files, and what the design says about their NICs.

Consumes the Fabric IR (the spec's node groups, the resolved networks and their attachments, the
catalog); produces one GroupPlan per GPU node group: its node type (the compute tray for
rack-scale systems), the compute network it attaches to and its rail NICs in rail order with the
speed the network runs them at, and the in-band ports NCCL's bootstrap should use.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.catalog.models import NodeModel, PortSpec
from fabricc.ir import Fabric
from fabricc.nccl.topology import NicPlan
from fabricc.spec.resolve import Attachment, ResolvedNetwork

# PCI class of a ConnectX port by link layer (NCCL src/graph/topo.cc kvDictPciClass).
NIC_CLASS = {"infiniband": "0x020700", "ethernet": "0x020000"}


@dataclass(frozen=True, slots=True)
class GroupPlan:
    group: str
    model: str  # node type: the node model, or the compute tray of a rack-scale system
    node: NodeModel
    compute: ResolvedNetwork | None
    nics: tuple[NicPlan, ...]  # rail order
    rail_gpus: tuple[int, ...]  # the GPU each NIC of `nics` serves
    inband: ResolvedNetwork | None
    inband_ports: tuple[PortSpec, ...]


def plan_groups(fabric: Fabric) -> list[GroupPlan]:
    """GPU node groups in spec order."""
    loaded = fabric.loaded
    catalog = loaded.catalog.catalog
    plans: list[GroupPlan] = []
    for group, spec in loaded.spec.nodes.items():
        model_name = spec.model
        node = catalog.nodes[model_name]
        if node.rack_scale is not None:
            tray = catalog.compute_tray(node)
            if tray is None:
                continue
            model_name, node = tray
        if node.kind not in ("gpu-node", "compute-tray") or not node.gpus or node.gpu is None:
            continue
        compute, attachment = _attached(fabric, group, "compute")
        nics, gpus = _rail_nics(node, compute, attachment)
        inband, inband_attachment = _attached(fabric, group, "inband")
        ports = {p.name: p for p in node.ports}
        inband_ports = (
            tuple(ports[name] for name in inband_attachment.ports)
            if inband_attachment is not None
            else ()
        )
        plans.append(GroupPlan(group, model_name, node, compute, nics, gpus, inband, inband_ports))
    return plans


def _attached(
    fabric: Fabric, group: str, role: str
) -> tuple[ResolvedNetwork | None, Attachment | None]:
    for network in fabric.loaded.networks.values():
        if network.spec.role != role:
            continue
        for attachment in network.attachments:
            if attachment.group == group and not attachment.reserved:
                return network, attachment
    return None, None


def _rail_nics(
    node: NodeModel, network: ResolvedNetwork | None, attachment: Attachment | None
) -> tuple[tuple[NicPlan, ...], tuple[int, ...]]:
    """Compute ports with an ibverbs device and a GPU, by GPU (the attachment's rail order)."""
    ports = {p.name: p for p in node.ports}
    rails = sorted(
        (p for p in node.ports if p.role == "compute" and p.gpu is not None and p.rdma_device),
        key=lambda p: (p.gpu if p.gpu is not None else 0, node.ports.index(p)),
    )
    attached = set(attachment.ports) if attachment is not None else set()
    class_code = NIC_CLASS[network.fabric] if network is not None else None
    nics: list[NicPlan] = []
    gpus: list[int] = []
    for port in rails:
        assert port.rdma_device is not None and port.gpu is not None
        split = attachment is not None and port.name in attached and attachment.breakout > 1
        if split and port.leg_devices:
            # A port split across planes with one PCI function per leg: one NIC per plane.
            assert attachment is not None
            for leg in port.leg_devices[: attachment.breakout]:
                nics.append(
                    NicPlan(leg.rdma_device, len(nics), attachment.speed * 1000, class_code)
                )
                gpus.append(port.gpu)
            continue
        if attachment is not None and port.name in attached:
            # A split port without per-leg functions is one NIC at the sum of its legs.
            speed = attachment.speed * attachment.breakout
        else:
            speed = ports[port.name].speeds[0]
        nics.append(NicPlan(port.rdma_device, len(nics), speed * 1000, class_code))
        gpus.append(port.gpu)
    return tuple(nics), tuple(gpus)
