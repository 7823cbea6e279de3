"""Catalog stage, a question about media: at which speeds can two switch models be cabled?

Consumes the Catalog (its switches' cage groups, transceivers and cables); produces, for a pair
of switch models and a fabric, the link speeds at which the catalog has something to cable their
general-purpose cages: a module of one media in each cage that fits it and carries its
bandwidth (the rules of synth/media.py that the cabling pass uses: form accepted by the cage, the
cage's lane rate, the cage's bandwidth per module), or a straight cable with its plugs on
(DAC, ACC, AOC) that fits both. The resolver runs each pair of tiers at the fastest such speed.
"""

from __future__ import annotations

from fabricc.catalog.models import Catalog, PortGroup, SwitchModel
from fabricc.synth.media import cable_families, fitting_modules


def _module_media(catalog: Catalog, group: PortGroup, speed: int, fabric: str) -> set[str]:
    """The media of the modules that fit a cage of `group` at `speed` (synth/media.py's rule)."""
    ports = group.cage_speed // speed
    media = {module.media for module in catalog.transceivers.values()}
    return {
        m
        for m in media
        if fitting_modules(
            catalog.transceivers, group.form, ports, speed, m, fabric, group.lane_speed
        )
    }


def _cable_fits(catalog: Catalog, a: PortGroup, b: PortGroup, speed: int) -> bool:
    """A straight cable with its plugs on (DAC, ACC, AOC) joins the two cages at `speed`
    (synth/media.py's rule, either way round)."""
    ports = a.cage_speed // speed
    if b.cage_speed // speed != ports or a.lane_speed != b.lane_speed:
        return False
    cables = list(catalog.cables.items())
    return any(
        cable_families(cables, one.form, other.form, 1, ports, speed, a.lane_speed)
        for one, other in ((a, b), (b, a))
    )


def cabled_speeds(catalog: Catalog, a: SwitchModel, b: SwitchModel, fabric: str) -> set[int]:
    """Link speeds at which the catalog can cable a general cage of `a` to one of `b`."""
    found: set[int] = set()
    for group_a in (g for g in a.port_groups if g.use == "any"):
        for group_b in (g for g in b.port_groups if g.use == "any"):
            speeds_a = {group_a.cage_speed // n for n in group_a.breakouts}
            speeds_b = {group_b.cage_speed // n for n in group_b.breakouts}
            for speed in speeds_a & speeds_b:
                if speed in found:
                    continue
                optics = _module_media(catalog, group_a, speed, fabric) & _module_media(
                    catalog, group_b, speed, fabric
                )
                if optics or _cable_fits(catalog, group_a, group_b, speed):
                    found.add(speed)
    return found
