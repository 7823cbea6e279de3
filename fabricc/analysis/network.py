"""Analysis, part 6: everything about one network - bisection, tiers, paths and failures.

Consumes the Fabric IR and a network name; produces the network's entry of analysis.json:
endpoint bandwidth, bisection (total, per plane and per split), the oversubscription of each
tier as built, switch hops and ECMP paths, and the impact of single failures and of a lost plane.
"""

from __future__ import annotations

from typing import Any

from fabricc.analysis.bisection import Split, max_flow, splits
from fabricc.analysis.failures import (
    Impact,
    Plane,
    endpoint_link_failure,
    endpoint_switches,
    plane_failure,
    switch_failure,
    switch_link_failure,
)
from fabricc.analysis.families import family_facts
from fabricc.analysis.graph import ENDPOINT_KINDS, TIERED_KINDS, PlaneGraph, plane_graphs
from fabricc.analysis.paths import path_classes, path_stats
from fabricc.analysis.refine import Weighted, refine
from fabricc.ir import Fabric
from fabricc.synth.bom import network_lines

TIERS = ("leaf", "spine", "core")


def analyze_network(
    fabric: Fabric, name: str, figures: dict[str, Any] | None = None
) -> dict[str, Any]:
    """`figures`: plane_figures of the network when computed elsewhere (a worker process)."""
    topology = fabric.networks[name]
    if figures is None:
        figures = plane_figures(plane_graphs(fabric, name), tier_switches(fabric, name))
    result: dict[str, Any] = {
        "role": topology.role,
        "fabric": topology.fabric,
        "tiers": topology.tiers,
        "planes": topology.planes,
    }
    for key in FIGURES_BEFORE_OVERSUBSCRIPTION:
        result[key] = figures[key]
    result["oversubscription"] = oversubscription(fabric, name)
    for key in FIGURES_AFTER_OVERSUBSCRIPTION:
        result[key] = figures[key]
    facts = family_facts(topology, len(topology.switches.get("spine", [])))
    if facts is not None:
        result["topology"] = facts
    if "plane_loss" in figures:
        result["plane_loss"] = figures["plane_loss"]
    result["hardware"] = hardware(fabric, name)
    result["per_plane"] = figures["per_plane"]
    return result


def hardware(fabric: Fabric, name: str) -> dict[str, int]:
    """What the network is built of, as the BOM counts it: switches, transceivers, cables (the
    first things two designs differ in)."""
    counts = {"switches": 0, "transceivers": 0, "cables": 0}
    key = {"switch": "switches", "transceiver": "transceivers", "cable": "cables"}
    for line in network_lines(fabric).get(name, []):
        if line.item.category in key:
            counts[key[line.item.category]] += line.quantity
    return counts


FIGURES_BEFORE_OVERSUBSCRIPTION = (
    "endpoint_nodes",
    "endpoint_ports",
    "endpoint_gbps",
    "bisection_gbps",
    "bisection_ratio",
)
FIGURES_AFTER_OVERSUBSCRIPTION = (
    "max_switch_hops",
    "ecmp_paths",
    "ecmp_link_paths",
    "connected",
    "single_failure",
)


def tier_switches(fabric: Fabric, name: str) -> dict[str, list[str]]:
    """The switches of each tier whose worst failure the analysis reports. For the leaves of a
    compute network, those that serve GPUs where there are any: a leaf of two UFM appliances is
    not the leaf two designs should be compared on (like with like)."""
    topology = fabric.networks[name]
    tiers = {tier: topology.switches.get(tier, []) for tier in TIERS}
    if topology.role != "compute":  # a storage network's worst leaf is an array's: it counts
        return tiers
    nodes = fabric.loaded.catalog.catalog.nodes
    serving = {
        link.b
        for link in fabric.links_of(name)
        if link.kind in ENDPOINT_KINDS
        and (device := fabric.devices.get(link.a)) is not None
        and (model := nodes.get(device.model)) is not None
        and model.gpus
    }
    compute = [leaf for leaf in tiers["leaf"] if leaf in serving]
    if compute:
        tiers["leaf"] = compute
    return tiers


def plane_figures(graphs: list[PlaneGraph], tiers: dict[str, list[str]]) -> dict[str, Any]:
    """Everything analyze_network reads off the plane graphs (and the switch names of each
    tier): bisection, paths, single failures and the loss of a plane, as plain data. A pure
    function of its arguments, so that a large design can run it in another process."""
    planes: list[Plane] = []
    per_plane: list[dict[str, Any]] = []
    for graph in graphs:
        attached = graph.attached()
        weighted = Weighted.of(graph.adjacency)
        base = refine(
            weighted, [(graph.roles[v], attached[v]) for v in range(len(attached))]
        ).colours
        cuts: dict[str, int] = {}
        halves: list[tuple[Split, list[int]]] = []
        for split in splits(graph):
            gbps, colours = max_flow(graph, weighted, base, split, touched=())
            cuts[split.name] = gbps
            halves.append((split, colours))
        planes.append(Plane(graph, weighted, halves, min(cuts.values(), default=0)))
        bisection = planes[-1].bisection_gbps
        stats = path_stats(graph, path_classes(graph, weighted))
        per_plane.append(
            {
                "plane": graph.plane + 1,
                "endpoint_ports": len(graph.attachments),
                "endpoint_gbps": graph.endpoint_gbps(),
                "bisection_gbps": bisection,
                "bisection_by_split": cuts,
                "max_switch_hops": stats.max_switch_hops if stats else 0,
                "ecmp_paths": stats.ecmp_paths if stats else 0,
                "ecmp_link_paths": stats.ecmp_link_paths if stats else 0,
                "connected": stats.connected if stats else False,
            }
        )
    endpoint_gbps = sum(p["endpoint_gbps"] for p in per_plane)
    bisection = sum(p.bisection_gbps for p in planes)
    homes = endpoint_switches(planes)
    failures: dict[str, Any] = {}
    for tier in TIERS:
        names = tiers.get(tier, [])
        impact = switch_failure(planes, names, homes) if names else None
        if impact is not None:
            failures[tier] = _impact(impact, bisection)
    for key, found in (
        ("switch_link", switch_link_failure(planes)),
        ("endpoint_link", endpoint_link_failure(planes)),
    ):
        if found is not None:
            failures[key] = _impact(found, bisection)
    figures: dict[str, Any] = {
        "endpoint_nodes": len(homes),
        "endpoint_ports": sum(p["endpoint_ports"] for p in per_plane),
        "endpoint_gbps": endpoint_gbps,
        "bisection_gbps": bisection,
        "bisection_ratio": round(2 * bisection / endpoint_gbps, 4) if endpoint_gbps else 0.0,
        "max_switch_hops": max((p["max_switch_hops"] for p in per_plane), default=0),
        "ecmp_paths": min((p["ecmp_paths"] for p in per_plane), default=0),
        "ecmp_link_paths": min((p["ecmp_link_paths"] for p in per_plane), default=0),
        "connected": all(p["connected"] for p in per_plane),
        "single_failure": failures,
        "per_plane": per_plane,
    }
    lost_plane = plane_failure(planes, homes)
    if lost_plane is not None:
        figures["plane_loss"] = _impact(lost_plane, bisection)
    return figures


def _impact(impact: Impact, bisection: int) -> dict[str, Any]:
    return {
        "failed": impact.what,
        "endpoints_lost": impact.endpoints_lost,
        "nodes_lost": impact.nodes_lost,
        "endpoint_gbps_lost": impact.endpoint_gbps_lost,
        "bisection_gbps_after": impact.bisection_gbps_after,
        "bisection_gbps_lost": bisection - impact.bisection_gbps_after,
    }


def oversubscription(fabric: Fabric, name: str) -> dict[str, float]:
    """Per tier, the highest down:up bandwidth ratio of its switches as built (down: endpoint
    ports and links from the tier below; up: links to the tier above or another network).
    The top tier has no uplinks and no ratio."""
    down: dict[str, int] = {}
    up: dict[str, int] = {}
    for link in fabric.links_of(name):
        if link.kind in ENDPOINT_KINDS:
            down[link.b] = down.get(link.b, 0) + link.speed
        elif link.kind in TIERED_KINDS:
            up[link.a] = up.get(link.a, 0) + link.speed
            down[link.b] = down.get(link.b, 0) + link.speed
    topology = fabric.networks[name]
    ratios: dict[str, float] = {}
    for tier in TIERS:
        values = [
            down.get(switch, 0) / up[switch]
            for switch in topology.switches.get(tier, [])
            if up.get(switch)
        ]
        if values:
            ratios[tier] = round(max(values), 3)
    return ratios
