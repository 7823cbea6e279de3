"""Load stage (resolve), shared with the emitters: the adaptive-routing rule of a network.

Consumes a network's spec (adaptive_routing, os) and the catalog models of its switches
(adaptive_routing, adaptive_routing_speeds); produces yes/no answers. The resolver picks the
fabric link speed by them, and emit/configs/features.py decides from them, link by link, where
the emitted files turn adaptive routing on (NVUE, NVIDIA SM, SuperNIC, NCCL), so no two places
keep their own copy of the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from fabricc.catalog.models import SwitchModel
from fabricc.spec.models import NetworkSpec


def adaptive_routing_possible(network: NetworkSpec, switches: Sequence[SwitchModel]) -> bool:
    """The spec wants adaptive routing (default: compute networks), every switch model has it,
    and an Ethernet network runs Cumulus Linux: fabricc turns it on in NVUE only (Cumulus Linux
    user guide, "Equal Cost Multipath Load Sharing", Adaptive Routing); SONiC's config_db gets
    none."""
    if not switches or not network.wants_adaptive_routing:
        return False
    if not all(switch.adaptive_routing for switch in switches):
        return False
    return switches[0].fabric != "ethernet" or network.os == "cumulus"


def routes_adaptively_at(network: NetworkSpec, switches: Sequence[SwitchModel], speed: int) -> bool:
    """Adaptive routing is possible on the network, and every one of `switches` routes
    adaptively at `speed` Gb/s (Spectrum-4: 400G and 200G, not 800G)."""
    return adaptive_routing_possible(network, switches) and all(
        switch.routes_adaptively_at(speed) for switch in switches
    )
