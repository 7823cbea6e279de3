"""Analysis entry point: the Fabric IR -> the whole analysis as plain data (analysis.json).

Consumes a Fabric and Options (all-reduce message size and GPU count, prices); produces a dict
with, per network, the figures of fabricc.analysis.network, then the all-reduce estimate on the
first compute network, GPU capacity, power and - with prices - cost. `analysis(fabric)` is the
default analysis, computed once per build and shared by the emitter and the report.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from fabricc.analysis.capacity import gpus, power
from fabricc.analysis.collectives import DEFAULT_MESSAGE_GB, Link, all_reduce, gpu_counts
from fabricc.analysis.cost import cost
from fabricc.analysis.graph import ENDPOINT_KINDS
from fabricc.analysis.network import analyze_network
from fabricc.analysis.worker import taken_figures
from fabricc.ir import Fabric


@dataclass(frozen=True, slots=True)
class Options:
    message_gb: float = DEFAULT_MESSAGE_GB
    gpus: int | None = None  # all-reduce over this many GPUs; default: every GPU of the network
    prices: dict[str, float] | None = None


def analysis(fabric: Fabric) -> dict[str, Any]:
    return fabric.derived("analysis", lambda: analyze(fabric))


def analyze(fabric: Fabric, options: Options | None = None) -> dict[str, Any]:
    options = options or Options()
    figures = taken_figures(fabric)  # computed by a worker process, when the build started one
    networks = {name: analyze_network(fabric, name, figures.get(name)) for name in fabric.networks}
    result: dict[str, Any] = {
        "name": fabric.name,
        "networks": networks,
        "all_reduce": collective(fabric, networks, options),
        "capacity": gpus(fabric),
        "power": power(fabric),
    }
    if options.prices is not None:
        result["cost"] = cost(fabric, options.prices)
    return result


def compute_network(fabric: Fabric) -> str | None:
    return next((n for n, t in fabric.networks.items() if t.role == "compute"), None)


def gpu_link(fabric: Fabric, name: str, bisection_ratio: float) -> tuple[int, Link] | None:
    """GPUs on network `name` and what each has: NVLink domain, NVLink and fabric bandwidth;
    None when fewer than 2 GPUs, or when a GPU's NVLink bandwidth is not in the catalog."""
    catalog = fabric.loaded.catalog.catalog
    gbps: Counter[str] = Counter()
    for link in fabric.links_of(name):
        if link.kind in ENDPOINT_KINDS:
            gbps[link.a] += link.speed
    domain_of = {member: d.gpus for d in fabric.nvlink_domains for member in d.members}
    total_gpus = 0
    total_gbps = 0
    domains: set[int] = set()
    nvlink: set[float] = set()
    for device, speed in gbps.items():
        node = catalog.nodes.get(fabric.devices[device].model)
        if node is None or node.gpu is None or not node.gpus:
            continue
        if "nvlink_gbs" in node.gpu.missing_figures():
            return None  # unknown NVLink bandwidth: no estimate (a warning names the model)
        total_gpus += node.gpus
        total_gbps += speed
        domains.add(domain_of.get(device, 1) if node.gpu.nvlink_gbs else 1)
        nvlink.add((node.gpu.nvlink_gbs or 0) / 2)
    if total_gpus < 2:
        return None
    factor = min(1.0, bisection_ratio)
    fabric_gbs = total_gbps / total_gpus / 8 * factor
    return total_gpus, Link(min(domains), min(nvlink), fabric_gbs)


def rail_aligned_ratio(network: dict[str, Any]) -> float:
    """Max-flow between the halves in design order (whole units on each side) against half the
    endpoint bandwidth. A hierarchical all-reduce sends GPU k of one domain to GPU k of others,
    rail to rail, so this halving - not the rail one - is what limits it (a rail-only network
    carries it in full)."""
    half = network["endpoint_gbps"] / 2
    units = sum(p["bisection_by_split"].get("units", 0) for p in network["per_plane"])
    return units / half if half else 0.0


def collective(
    fabric: Fabric, networks: dict[str, dict[str, Any]], options: Options
) -> dict[str, Any]:
    name = compute_network(fabric)
    if name is None:
        return {}
    ratio = rail_aligned_ratio(networks[name])
    found = gpu_link(fabric, name, ratio)
    if found is None:
        return {}
    total, link = found
    count = min(options.gpus or total, total)
    if link.fabric_gbs <= 0 and total > link.domain_gpus:
        return {}  # no fabric path between the halves: no estimate to give
    main = all_reduce(link, count, options.message_gb)
    return {
        "network": name,
        "message_gb": options.message_gb,
        "gpus": count,
        "nvlink_domain_gpus": link.domain_gpus,
        "nvlink_gbs_per_gpu": round(link.nvlink_gbs, 1),
        "fabric_gbs_per_gpu": round(link.fabric_gbs, 2),
        "fabric_factor": round(min(1.0, ratio), 4),  # rail-aligned bisection ratio, at most 1
        "nvlink_s": round(main.nvlink_s, 4),
        "fabric_s": round(main.fabric_s, 4),
        "time_s": round(main.time_s, 4),
        "algbw_gbs": round(main.algbw_gbs, 1),
        "busbw_gbs": round(main.busbw_gbs, 1),
        "curve": [
            {"gpus": n, "time_s": round(r.time_s, 4), "busbw_gbs": round(r.busbw_gbs, 1)}
            for n in gpu_counts(total)
            for r in (all_reduce(link, n, options.message_gb),)
        ],
    }
