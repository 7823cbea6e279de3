"""Check stage: InfiniBand routing that NCCL's single service level cannot follow.

Consumes a Fabric; produces warnings. torus-2QoS (the engine of a torus unless the spec names
another) breaks the rings' credit loops with the path SL: "all applications run over such
fabrics must perform a path record query to obtain the correct path SL" (man torus-2QoS,
OPERATIONAL CONSIDERATIONS). NCCL sets the SL of every connection from NCCL_IB_SL and makes no
path record query, so its traffic ignores the datelines and can deadlock. The NCCL .env file
says the same at NCCL_IB_SL.
"""

from __future__ import annotations

from fabricc.errors import Diagnostic, warning
from fabricc.ir import Fabric
from fabricc.spec.routing import TORUS_ENGINE, spec_engine
from fabricc.spec.yamlsource import format_path


def check_service_levels(fabric: Fabric) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    loaded = fabric.loaded
    for name, network in loaded.networks.items():
        if network.fabric != "infiniband" or name not in fabric.networks:
            continue
        if spec_engine(network.spec) != TORUS_ENGINE:
            continue
        path = (*network.path, "topology")
        found.append(
            warning(
                f"network {name!r} is routed by torus-2QoS, which needs every application to use "
                "the path SL from a path record query; NCCL uses one SL (NCCL_IB_SL) for every "
                "connection, so its traffic can close credit loops across the datelines",
                path=format_path(path),
                location=loaded.source.value(path),
                hint="set subnet_manager.routing_engine: updn - up/down from the origin switch "
                "(root_guids.conf) is credit-loop free on one SL, over longer paths - or run "
                "only path-record-aware (rdma_cm) traffic on the torus",
            )
        )
    return found
