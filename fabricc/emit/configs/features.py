"""Emit helper (configs): which optional switch features a network turns on.

Consumes the network spec (networks.<n>.adaptive_routing, subnet_manager.sharp) and the catalog
capability flags of its switch models (adaptive_routing, sharp); produces yes/no answers the
config emitters share: adaptive routing in NVUE (Spectrum-X) and in the NVIDIA subnet-manager
file, SHARP in that file. A feature is on only where every switch model of the network has it.
"""

from __future__ import annotations

from fabricc.emit.configs.context import ConfigContext


def _models(ctx: ConfigContext, network: str) -> list[str]:
    """Switch models of a network, computed once per build (asked once per switch)."""
    topology = ctx.fabric.networks[network]
    return ctx.fabric.derived(
        f"features.models.{network}",
        lambda: sorted(
            {ctx.devices[name].model for names in topology.switches.values() for name in names}
        ),
    )


def adaptive_routing(ctx: ConfigContext, network: str) -> bool:
    """The spec's adaptive_routing (default: on for compute networks), where every switch model
    of the network supports it."""
    wanted = ctx.fabric.loaded.networks[network].spec.wants_adaptive_routing
    models = _models(ctx, network)
    return wanted and bool(models) and all(ctx.catalog.switches[m].adaptive_routing for m in models)


def sharp(ctx: ConfigContext, network: str) -> bool:
    """subnet_manager.sharp, where every switch model of the network does SHARP."""
    spec = ctx.fabric.loaded.networks[network].spec
    models = _models(ctx, network)
    return (
        spec.subnet_manager.sharp
        and bool(models)
        and all(ctx.catalog.switches[m].sharp for m in models)
    )
