"""Emitter `summary`: summary.json, the design's headline numbers for people and tests.

Consumes the Fabric IR; produces summary.json with gpus, nodes per group, racks, power, and per
network its tiers, switch counts per tier, link counts per kind, node-leaf cables by link, by
host cage and as ordered, transceivers and cables by part number, cable lengths per kind of link
(cables, shortest, median, longest) and the whole BOM as part number -> quantity.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabricc.emit import Artifact
from fabricc.emit.lengths import cable_lengths, length_stats
from fabricc.emit.tables import json_text
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Fabric
from fabricc.synth.bom import bom_lines, cable_kinds, network_lines, unique_cables

TIERS = ("leaf", "spine", "core")


def summary(fabric: Fabric) -> dict[str, Any]:
    return fabric.derived("summary", lambda: _summary(fabric))


def _endpoint_cables(fabric: Fabric, network: str) -> dict[str, int]:
    """Node-to-leaf connections counted three ways: by link (one per leaf port), by host cage
    (a node cage split over planes or leaves counts once - how the Spectrum-X RA counts, one
    per GPU), and as ordered (the cables and fibers in the BOM)."""
    nodes = fabric.loaded.catalog.catalog.nodes
    devices = fabric.devices
    endpoint_links = [link for link in fabric.links_of(network) if link.kind == ENDPOINT_LEAF]
    host_ports: set[tuple[str, str]] = set()
    cages_of: dict[str, dict[str, str]] = {}  # node model -> port -> cage, built once per model
    cage_of: dict[tuple[str, str], str] = {}  # (node model, link port) -> cage, looked up once
    for link in endpoint_links:
        name = devices[link.a].model
        cage = cage_of.get((name, link.a_port))
        if cage is None:
            cages = cages_of.get(name)
            if cages is None:
                model = nodes.get(name)
                cages = cages_of[name] = {p.name: p.cage for p in model.ports} if model else {}
            port = link.a_port if link.a_port in cages else link.a_port.rpartition("/")[0]
            cage = cage_of[(name, link.a_port)] = cages.get(port, link.a_port)
        host_ports.add((link.a, cage))
    links = len(endpoint_links)
    ordered = sum(cable.quantity for cable in unique_cables(endpoint_links))
    return {"by_link": links, "by_host_cage": len(host_ports), "ordered": ordered}


def _summary(fabric: Fabric) -> dict[str, Any]:
    spec = fabric.loaded.spec
    per_network = network_lines(fabric)
    lengths = cable_lengths(fabric)
    networks: dict[str, Any] = {}
    for name, topology in fabric.networks.items():
        counts = fabric.link_counts(name)
        media: Counter[str] = Counter()
        for (_, _, medium, _, quantity), count in cable_kinds(fabric).get(name, {}).items():
            media[medium] += quantity * count
        lines = per_network.get(name, [])
        networks[name] = {
            "role": topology.role,
            "fabric": topology.fabric,
            "tiers": topology.tiers,
            "planes": topology.planes,
            "rail_optimized": topology.rail_optimized,
            "scalable_units": topology.sus,
            # only the tiers the network has: a 2-tier network names no core model
            "switch_models": {
                tier: model
                for tier, model in topology.switch_models.items()
                if tier in TIERS[: topology.tiers]
            },
            "switches": {tier: len(topology.switches.get(tier, [])) for tier in TIERS},
            "links": {kind: counts.get(kind, 0) for kind in (ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE)}
            | {
                kind: count
                for kind, count in sorted(counts.items())
                if kind not in (ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE)
            },
            "cables_by_media": dict(sorted(media.items())),
            "endpoint_cables": _endpoint_cables(fabric, name),
            "transceivers": {
                ln.item.part_number: ln.quantity
                for ln in lines
                if ln.item.category == "transceiver"
            },
            "cables": {
                ln.item.part_number: ln.quantity for ln in lines if ln.item.category == "cable"
            },
            "cable_lengths": {
                kind: length_stats(counts) for kind, counts in lengths.get(name, {}).items()
            },
        }
        if topology.topology != "fat-tree":  # fat-trees keep their summary as it was
            networks[name]["topology"] = topology.topology
    nodes: dict[str, int] = {name: group.count for name, group in spec.nodes.items()}
    domains = Counter(d.gpus for d in fabric.nvlink_domains)
    return {
        "name": spec.metadata.name,
        "description": spec.metadata.description,
        "gpus": fabric.gpus(),
        "nodes": nodes,
        "racks": len(fabric.racks),
        "power_kw": round(sum(d.power_w for d in fabric.devices.values()) / 1000, 3),
        "nvlink_domains": {str(size): count for size, count in sorted(domains.items())},
        "networks": networks,
        "bom": {line.item.part_number: line.quantity for line in bom_lines(fabric)},
    }


def emit(fabric: Fabric) -> list[Artifact]:
    return [("summary.json", json_text(summary(fabric)))]
