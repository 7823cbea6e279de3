"""Spec helper: the OpenSM routing engine an InfiniBand network's topology family implies.

Consumes networks.<n>.topology and subnet_manager.routing_engine; produces the engine 'auto'
stands for where the family decides it (dragonfly-plus, torus, rail-only; every engine here is
shipped by upstream OpenSM 3.3, man opensm). A fat-tree has no family engine: the OpenSM
emitter (emit/configs/ibfabric.py) picks ftree or updn per subnet by its symmetry. Read by the
checks (service levels), the OpenSM emitters and the NCCL environment alike.
"""

from __future__ import annotations

from fabricc.spec.models import NetworkSpec

TORUS_ENGINE = "torus-2QoS"  # reads torus-2QoS.conf
# family -> (engine, why)
FAMILY_ENGINES = {
    "dragonfly-plus": (
        "dfsssp",
        "dragonfly-plus: global links close cycles, so a deadlock-free engine (DFSSSP "
        "spreads paths over virtual lanes)",
    ),
    "torus": (TORUS_ENGINE, "torus: dimension-order routing with datelines (torus-2QoS.conf)"),
    "rail-only": ("minhop", "rail-only: every subnet is one rail leaf, so min-hop is exact"),
}


def spec_engine(spec: NetworkSpec) -> str | None:
    """The engine the spec names, or its family's under 'auto'; None for a fat-tree under
    'auto' (chosen per subnet)."""
    forced = spec.subnet_manager.routing_engine
    if forced != "auto":
        return forced
    family = FAMILY_ENGINES.get(spec.topology)
    return family[0] if family is not None else None
