"""Check stage: InfiniBand routing that NCCL's single service level cannot follow.

Consumes a Fabric; produces errors. torus-2QoS breaks the rings' credit loops with the path SL:
"all applications run over such fabrics must perform a path record query to obtain the correct
path SL" (man torus-2QoS, OPERATIONAL CONSIDERATIONS). NCCL sets the SL of every connection from
NCCL_IB_SL and makes no path record query, so on a compute network (the one NCCL runs on) its
traffic would ignore the datelines and can deadlock: the design is refused with the engines
that are credit-loop free on one SL. A torus under 'auto' gets one of them (Nue on one VL,
spec/routing.py).
"""

from __future__ import annotations

from fabricc.errors import Diagnostic, error
from fabricc.ir import Fabric
from fabricc.spec.routing import TORUS_ENGINE, spec_engine
from fabricc.spec.yamlsource import format_path


def check_service_levels(fabric: Fabric) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    loaded = fabric.loaded
    for name, network in loaded.networks.items():
        if network.fabric != "infiniband" or name not in fabric.networks:
            continue
        if spec_engine(network.spec) != TORUS_ENGINE or network.spec.role != "compute":
            continue
        path = (*network.path, "subnet_manager", "routing_engine")
        found.append(
            error(
                f"network {name!r} carries NCCL and is routed by torus-2QoS, which needs every "
                "application to use the path SL from a path record query; NCCL uses one SL "
                "(NCCL_IB_SL) for every connection, so its traffic can close credit loops "
                "across the datelines",
                path=format_path(path),
                location=loaded.source.value(path),
                hint="remove routing_engine (auto: nue with nue_max_num_vls 1, deadlock-free "
                "with every path on SL 0) or set routing_engine: updn (up/down from the origin "
                "switch, credit-loop free on one SL over longer paths)",
            )
        )
    return found
