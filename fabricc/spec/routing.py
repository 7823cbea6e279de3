"""Spec helper: the subnet-manager routing engines an InfiniBand network's topology family implies.

Consumes networks.<n>.topology, subnet_manager.routing_engine and subnet_manager.sharp; produces
the engine 'auto' stands for where the family decides it, once for upstream OpenSM 3.3 (every
engine of FAMILY_ENGINES ships there, man opensm) and once for NVIDIA's SM (UFM, MLNX OpenSM,
which adds the Dragonfly+ engine dfp), and whether SHARP's Aggregation Manager can build trees
under NVIDIA's engine. A fat-tree has no family engine: the OpenSM emitter
(emit/configs/ibfabric.py) picks ftree or updn per subnet by its symmetry. Read by the checks,
the OpenSM emitters and the NCCL environment alike, so no two files disagree.
"""

from __future__ import annotations

from fabricc.spec.models import NetworkSpec

TORUS_ENGINE = "torus-2QoS"  # reads torus-2QoS.conf
NUE_ENGINE = "nue"
# Nue's VL budget: man opensm, --nue_max_num_vls: "the default is 1 to enforce deadlock-freedom
# even if QoS is not enabled"; with 1 every path is on SL 0, the one SL NCCL sets (NCCL_IB_SL).
NUE_MAX_VLS = 1
# family -> (engine, why), for upstream OpenSM 3.3 (and NVIDIA's SM where NVIDIA_FAMILY_ENGINES
# names nothing better)
FAMILY_ENGINES = {
    "dragonfly-plus": (
        "dfsssp",
        "dragonfly-plus: global links close cycles, so a deadlock-free engine (DFSSSP "
        "spreads paths over virtual lanes; upstream OpenSM 3.3 has no Dragonfly+ engine)",
    ),
    # A torus carries NCCL, which sets one SL on every connection and asks for no path record:
    # torus-2QoS breaks the rings' credit loops with the path SL ("all applications run over
    # such fabrics must perform a path record query to obtain the correct path SL", man
    # torus-2QoS), Nue within a VL budget ("100% deadlock-free routing within the resource
    # limits ... it does not necessarily require virtual lanes", OpenSM doc/current-routing.txt,
    # "Nue Routing Algorithm"; shipped since OpenSM 3.3.21).
    "torus": (
        NUE_ENGINE,
        "torus: Nue routes it deadlock-free within one VL (nue_max_num_vls 1), every path on "
        "SL 0, the one SL NCCL uses",
    ),
    # One leaf per rail: up/down over a single switch is exactly min-hop, and it is an engine
    # SHARP's Aggregation Manager builds trees under.
    "rail-only": (
        "updn",
        "rail-only: every subnet is one rail leaf, where up/down routes exactly as min-hop",
    ),
}
# family -> (engine, why) for NVIDIA's SM. NVIDIA SHARP, "Setting up NVIDIA SHARP Environment":
# "DragonFly+ topology: dfp"; InfiniBand Cluster Bring-up Procedure, "Adaptive Routing": the
# "DF_PLUS: This algorithm is designed for the Dragonfly plus topology" AR group algorithm.
NVIDIA_FAMILY_ENGINES = {
    "dragonfly-plus": (
        "dfp",
        "dragonfly-plus: dfp, NVIDIA's Dragonfly+ engine (its adaptive routing uses the DF_PLUS "
        "algorithm; SHARP trees are built under it)",
    ),
}
# NVIDIA SHARP, "Setting up NVIDIA SHARP Environment": the Aggregation Manager's subnets run
# "Tree based topologies: updn, ar_updn, ftree, ar_ftree", "DragonFly+ topology: dfp",
# "Hypercube topologies: dor routing engine with dor_hyper_cube_mode enabled" - fabricc writes
# no hypercube mode, so dor is not among them.
SHARP_TREE_ENGINES = frozenset({"updn", "ar_updn", "ftree", "ar_ftree", "dfp"})


def spec_engine(spec: NetworkSpec) -> str | None:
    """The upstream OpenSM engine the spec names, or its family's under 'auto'; None for a
    fat-tree under 'auto' (chosen per subnet)."""
    forced = spec.subnet_manager.routing_engine
    if forced != "auto":
        return forced
    family = FAMILY_ENGINES.get(spec.topology)
    return family[0] if family is not None else None


def nvidia_family_engine(spec: NetworkSpec) -> tuple[str, str] | None:
    """NVIDIA's SM engine (and why) of the family under 'auto', where it differs from the
    upstream one; None otherwise."""
    if spec.subnet_manager.routing_engine != "auto":
        return None
    return NVIDIA_FAMILY_ENGINES.get(spec.topology)


def nvidia_spec_engine(spec: NetworkSpec) -> str | None:
    """NVIDIA's SM engine before its adaptive-routing variant: the family's NVIDIA engine,
    else spec_engine (None: a fat-tree's ftree or updn)."""
    family = nvidia_family_engine(spec)
    return family[0] if family is not None else spec_engine(spec)


def sharp_tree_blocker(spec: NetworkSpec) -> str | None:
    """Why SHARP's Aggregation Manager builds no tree on this network's subnets (the engine
    NVIDIA's SM runs there is none it supports), or None where it can."""
    engine = nvidia_spec_engine(spec)
    if engine is None or engine in SHARP_TREE_ENGINES:
        return None
    return (
        f"NVIDIA's SM routes this network with {engine}, and SHARP's Aggregation Manager "
        "builds trees only under updn, ar_updn, ftree, ar_ftree, dfp (Dragonfly+) and dor in "
        "hypercube mode (NVIDIA SHARP, Setting up NVIDIA SHARP Environment)"
    )
