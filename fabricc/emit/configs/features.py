"""Emit helper (configs): which optional switch features a network turns on.

Consumes the network spec (networks.<n>.adaptive_routing, subnet_manager.sharp) and the catalog
capability flags of its switch models (adaptive_routing, sharp); produces yes/no answers the
emitters share: adaptive routing in NVUE (Spectrum-X) and in the NVIDIA subnet-manager file,
SHARP in that file and in the NCCL files. A feature is on only where every switch model of the
network has it.
"""

from __future__ import annotations

from fabricc.ir import Fabric


def _models(fabric: Fabric, network: str) -> list[str]:
    """Switch models of a network, computed once per build (asked once per switch)."""
    topology = fabric.networks[network]
    return fabric.derived(
        f"features.models.{network}",
        lambda: sorted(
            {fabric.devices[name].model for names in topology.switches.values() for name in names}
        ),
    )


def adaptive_routing(fabric: Fabric, network: str) -> bool:
    """The spec's adaptive_routing (default: on for compute networks), where every switch model
    of the network supports it."""
    wanted = fabric.loaded.networks[network].spec.wants_adaptive_routing
    models = _models(fabric, network)
    switches = fabric.loaded.catalog.catalog.switches
    return wanted and bool(models) and all(switches[m].adaptive_routing for m in models)


def sharp(fabric: Fabric, network: str) -> bool:
    """subnet_manager.sharp, where every switch model of the network does SHARP."""
    spec = fabric.loaded.networks[network].spec
    models = _models(fabric, network)
    switches = fabric.loaded.catalog.catalog.switches
    return spec.subnet_manager.sharp and bool(models) and all(switches[m].sharp for m in models)
