"""Analysis, part 6b: what a network's topology family serves, beyond the numbers of the graph.

Consumes a NetworkTopology (its family and shape) and its links; produces the `topology` facts of
the network's analysis.json entry - nothing for a fat-tree (bisection, hops and failures say it
all). Rail-only (Wang et al. 2023): a rail's leaf joins the same NIC of every node, and no switch
joins two rails, so a collective runs on the fabric only when its cross-rail step goes over
NVLink first (NCCL's PXN); any-to-any traffic between GPUs of different rails has no fabric path.
Dragonfly-plus: groups, spines per group and the links joining each pair of groups (the network's
bisection is limited by them). Torus: dimensions, links per direction and the diameter.
"""

from __future__ import annotations

from typing import Any

from fabricc.ir import NetworkTopology

# Collectives whose traffic stays on one rail once NVLink has moved data to the right GPU
# (NCCL PXN; ring and tree algorithms run per rail across nodes).
RAIL_LOCAL = ("all-reduce", "all-gather", "reduce-scatter", "broadcast", "reduce")
# Patterns that send from a GPU to GPUs of other rails on other nodes.
CROSS_RAIL = ("all-to-all (MoE expert parallelism)", "send/recv between different local ranks")


def family_facts(topology: NetworkTopology, spines: int) -> dict[str, Any] | None:
    family = topology.topology
    if family == "rail-only":
        return {
            "family": family,
            "rails": len(topology.switches.get("leaf", [])) // max(topology.planes, 1),
            "serves": list(RAIL_LOCAL),
            "crosses_nvlink": list(CROSS_RAIL),
            "note": "no switch joins two rails: rail-local collectives run at full fabric "
            "bandwidth (their cross-rail step moves data over NVLink first, NCCL PXN); "
            "all-to-all between GPUs of different rails must cross the NVLink domain, so it is "
            "bounded by NVLink and runs over the fabric only rail by rail",
        }
    if family == "dragonfly-plus":
        return {
            "family": family,
            "groups": topology.pods,
            "spines_per_group": topology.spines_per_pod,
            "global_links_per_group_pair": topology.global_links,
            "spines": spines,
        }
    if family == "torus":
        dims = topology.dimensions
        return {
            "family": family,
            "dimensions": list(dims),
            # the farthest switch is half way round every ring
            "diameter_switch_hops": sum(d // 2 for d in dims),
        }
    return None
