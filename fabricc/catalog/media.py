"""Catalog stage, a question about media: at which speeds can two switch models be cabled?

Consumes the Catalog (its switches' cage groups, transceivers and cables); produces, for a pair
of switch models and a fabric, the link speeds at which the catalog has something to cable their
general-purpose cages: a module of one media in each cage that fits it and carries its
bandwidth (the rules of the cabling pass, synth/cabling.py: form accepted by the cage, the cage's lane rate, the cage's
bandwidth per module), or a straight cable with its plugs on (DAC, ACC, AOC) that fits both. The
resolver runs each pair of tiers at the fastest such speed.
"""

from __future__ import annotations

from fabricc.catalog.models import FORM_ACCEPTS, Catalog, PortGroup, SwitchModel


def _module_media(catalog: Catalog, group: PortGroup, speed: int, fabric: str) -> set[str]:
    """The media of the modules that fit a cage of `group` at `speed`."""
    ports = group.cage_speed // speed
    media: set[str] = set()
    for module in catalog.transceivers.values():
        if fabric not in module.protocols or module.lane_speed != group.lane_speed:
            continue
        if module.form not in FORM_ACCEPTS.get(group.form, frozenset()):
            continue
        if module.ports * module.speed != ports * speed:
            continue
        if module.speed != speed and ports != 1:
            continue
        media.add(module.media)
    return media


def _cable_fits(catalog: Catalog, a: PortGroup, b: PortGroup, speed: int) -> bool:
    ports = a.cage_speed // speed
    if b.cage_speed // speed != ports or a.lane_speed != b.lane_speed:
        return False
    for cable in catalog.cables.values():
        if not cable.direct or cable.legs != 1 or cable.lane_speed != a.lane_speed:
            continue
        carries = (cable.speed == speed and cable.a_ports >= ports) or (
            ports == 1 and cable.a_ports * (cable.speed or 0) == speed
        )
        if not carries:
            continue
        for one, other in ((a, b), (b, a)):
            if cable.a_form in FORM_ACCEPTS.get(one.form, frozenset()) and cable.b_form in (
                FORM_ACCEPTS.get(other.form, frozenset())
            ):
                return True
    return False


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
