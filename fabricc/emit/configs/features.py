"""Emit helper (configs): which optional switch features a network turns on.

Consumes the network spec (networks.<n>.adaptive_routing and os, subnet_manager.sharp; both
default on for compute networks only), the catalog capability flags of its switch models
(adaptive_routing, adaptive_routing_speeds, sharp) and its switch-to-switch links; produces the
yes/no answers every emitter shares, so the switch files and the NCCL files never disagree:
adaptive routing link by link (the NVUE ports), per network (NVUE `router adaptive-routing`, the
NVIDIA subnet-manager file, the SuperNIC profile, NCCL's Spectrum-X plugin), and SHARP (the
subnet-manager file, the UFM SHARP section and NCCL's CollNet). A feature is on only where every
switch model of the network has it.
"""

from __future__ import annotations

from fabricc.catalog.models import SwitchModel
from fabricc.ir import GLOBAL, LEAF_SPINE, SPINE_CORE, TORUS, Fabric, Link
from fabricc.spec.adaptive import adaptive_routing_possible, routes_adaptively_at
from fabricc.spec.routing import sharp_tree_blocker

# links between two switches of a network: where adaptive routing picks among paths
SWITCH_LINKS = frozenset({LEAF_SPINE, SPINE_CORE, GLOBAL, TORUS})


def _models(fabric: Fabric, network: str) -> list[str]:
    """Switch models of a network, computed once per build (asked once per switch)."""
    topology = fabric.networks[network]
    return fabric.derived(
        f"features.models.{network}",
        lambda: sorted(
            {fabric.devices[name].model for names in topology.switches.values() for name in names}
        ),
    )


def _switches(fabric: Fabric, network: str) -> list[SwitchModel]:
    switches = fabric.loaded.catalog.catalog.switches
    return [switches[m] for m in _models(fabric, network)]


def _possible(fabric: Fabric, network: str) -> bool:
    """spec.adaptive.adaptive_routing_possible over every switch model of the network."""
    return fabric.derived(
        f"features.ar_possible.{network}",
        lambda: adaptive_routing_possible(
            fabric.loaded.networks[network].spec, _switches(fabric, network)
        ),
    )


# (network, model of end a, model of end b, speed): the few kinds of switch-to-switch link
LinkKind = tuple[str, str, str, int]


def link_routes_adaptively(fabric: Fabric, link: Link) -> bool:
    """A switch-to-switch link runs adaptive routing: the network can (spec wish, os, every
    switch model) and both ends' models route adaptively at the link's speed. Asked per link
    end by the NVUE emitter: the answer is kept per kind of link (network, models, speed)."""
    if link.kind not in SWITCH_LINKS:
        return False
    devices = fabric.devices
    kind = (link.network, devices[link.a].model, devices[link.b].model, link.speed)
    answers: dict[LinkKind, bool] = fabric.derived("features.link_adaptive", dict)
    found = answers.get(kind)
    if found is None:
        found = answers[kind] = _kind_routes_adaptively(fabric, *kind)
    return found


def _kind_routes_adaptively(fabric: Fabric, network: str, a: str, b: str, speed: int) -> bool:
    if not _possible(fabric, network):
        return False
    switches = fabric.loaded.catalog.catalog.switches
    spec = fabric.loaded.networks[network].spec
    return routes_adaptively_at(spec, [switches[a], switches[b]], speed)


def adaptive_routing(fabric: Fabric, network: str) -> bool:
    """The network's switches run adaptive routing as emitted: some switch-to-switch link of
    it routes adaptively (a network of one leaf tier has none, and Spectrum-4 links at 800G do
    not). The one answer for the NVUE files (`router adaptive-routing` is on exactly on the
    switches with such a port), the NVIDIA SM file, the SuperNIC profile and NCCL."""
    if network not in fabric.networks:
        return False
    return fabric.derived(
        f"features.adaptive_routing.{network}",
        lambda: (
            _possible(fabric, network)
            and any(link_routes_adaptively(fabric, link) for link in fabric.links_of(network))
        ),
    )


def sharp_capable(fabric: Fabric, network: str) -> bool:
    """Every switch model of the network does SHARP (so the SM file says sharp_enabled)."""
    switches = _switches(fabric, network)
    return bool(switches) and all(switch.sharp for switch in switches)


def sharp(fabric: Fabric, network: str) -> bool:
    """subnet_manager.sharp (default: on for compute networks, off for storage and the
    others), where every switch model of the network does SHARP and NVIDIA's SM routes with an
    engine SHARP's Aggregation Manager builds trees under (spec.routing.sharp_tree_blocker)."""
    spec = fabric.loaded.networks[network].spec
    return (
        spec.wants_sharp
        and sharp_capable(fabric, network)
        and sharp_blocker(fabric, network) is None
    )


def sharp_blocker(fabric: Fabric, network: str) -> str | None:
    """Why SHARP is off although the spec wants it and the switches have it: no SHARP tree
    can be built under the network's routing engine; None otherwise."""
    spec = fabric.loaded.networks[network].spec
    if not spec.wants_sharp or not sharp_capable(fabric, network):
        return None
    return sharp_tree_blocker(spec)
