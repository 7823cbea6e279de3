"""Diagrams helper: the questions diagrams ask of the Fabric IR, answered once.

Consumes the Fabric IR and its catalog; provides display names of models, the catalog kind of a
node, GPUs per device, the pod of each leaf (from its uplinks) and the leaf class of each leaf.
"""

from __future__ import annotations

from fabricc.ir import LEAF_SPINE, Device, Fabric, NetworkTopology


def model_name(fabric: Fabric, device: Device) -> str:
    if device.kind == "switch":
        return device.model.upper()
    return device.model


def node_kind(fabric: Fabric, device: Device) -> str:
    """gpu-node, appliance, storage, server, compute-tray, ... or the IR kind (pdu, switch)."""
    node = fabric.loaded.catalog.catalog.nodes.get(device.model)
    if node is not None and device.kind in ("node", "tray"):
        return node.kind
    return device.kind


def gpus(fabric: Fabric, device: Device) -> int:
    node = fabric.loaded.catalog.catalog.nodes.get(device.model)
    return node.gpus if node is not None and device.kind in ("node", "tray") else 0


def spine_pods(fabric: Fabric, topology: NetworkTopology) -> dict[str, int]:
    """Pod of every spine of a 3-tier network, numbered network-wide for drawing: pods count
    within their leaf class, and are drawn class after class (pod_label names them)."""
    devices = fabric.devices
    numbers: dict[tuple[str | None, int], int] = {}
    pods: dict[str, int] = {}
    for spine in topology.switches.get("spine", []):
        device = devices[spine]
        if device.pod is not None:
            key = (device.series, device.pod)
            pods[spine] = numbers.setdefault(key, len(numbers))
    return pods


def pod_label(device: Device) -> str:
    """A pod as drawn: Pod 2, or storage pod 2 for a later leaf class (it counts its own)."""
    number = (device.pod or 0) + 1
    return f"{device.series} pod {number}" if device.series else f"Pod {number}"


def leaf_pods(fabric: Fabric, topology: NetworkTopology) -> dict[str, int]:
    """Pod of every leaf of a 3-tier network: the pod of the spines it uplinks to."""
    spines = spine_pods(fabric, topology)
    pods: dict[str, int] = {}
    for link in fabric.links_of(topology.name):
        if link.kind == LEAF_SPINE and link.a not in pods:
            pod = spines.get(link.b)
            if pod is not None:
                pods[link.a] = pod
    return pods


def leaf_classes(topology: NetworkTopology) -> dict[str, str]:
    return {leaf: lc.name for lc in topology.leaf_classes for leaf in lc.leaves}


def rail_optimized_classes(topology: NetworkTopology) -> set[str]:
    return {lc.name for lc in topology.leaf_classes if lc.rail_optimized}


def one_based(value: int | None) -> str:
    return "" if value is None else str(value + 1)
