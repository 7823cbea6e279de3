"""Catalog stage, a question about media: at which speeds can two switch models be cabled?

Consumes the Catalog (its switches' cage groups, transceivers and cables); produces, for a pair
of switch models and a fabric, the link speeds at which the catalog has something to cable their
general-purpose cages: a module of one media in each cage that fits it and carries its
bandwidth (the rules below, which the cabling pass uses too: form accepted by the cage, the
cage's lane rate, the cage's bandwidth per module), or a straight cable with its plugs on
(DAC, ACC, AOC) that fits both. The resolver runs each pair of tiers at the fastest such speed.

Media by reach, as pure functions over catalog entries: from catalog transceivers (form, ports,
speed, media, reach, lane rate, protocols), a run's length and the network's `medium`, the media
a run takes and the modules that can carry it. The cabling pass (synth/cabling.py) asks these
rules per cage and link; it does the geometry, the copper cables and the fibers. A cable with its
plugs on (DAC, ACC, AOC) joins two cages by its rank in DIRECT_KINDS (catalog/models.py), within the media the
network's `medium` allows. It joins at its own speed, or at a lower rate its catalog entry lists
with a public source (CableModel.also_runs), where its newer plug also fits an older cage of its
plug outline (plug_fits: the 200 Gb/s QSFP56 AOC at 100GbE in a QSFP28 cage, RA-11333 Table 8).

The rule: per link, the cheapest media whose reach covers the run at both ends, from the media
that the network's `medium` allows (auto: all of them). Copper is cheapest, then multimode
fiber, then single-mode (NVIDIA LinkX NDR cables and transceivers: passive DAC to 2-3 m, active
copper to 5 m, SR4 multimode MMA4Z00-NS to 50 m on OM4, single-mode DR8 MMS4X00-NS to 100 m and
2xDR4 MMS4X00-NM to 500 m, 2xFR4 MMS4X50-NM to 2 km; each catalog entry names its datasheet).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from fabricc.catalog.models import (
    DIRECT_KINDS,
    FORM_ACCEPTS,
    OUTLINE,
    CableModel,
    Catalog,
    PortGroup,
    SwitchModel,
    TransceiverModel,
)

# Cheapest first: what a run takes when several reach it.
MEDIA_COST: tuple[str, ...] = ("copper", "cat6", "mmf", "smf")
OPTICAL: tuple[str, ...] = ("mmf", "smf")

# The media each spec `medium` allows (NetworkSpec.medium).
MEDIUM_ALLOWS: Mapping[str, tuple[str, ...]] = {
    "auto": MEDIA_COST,
    "copper": ("copper", "cat6"),
    "multimode": ("mmf",),
    "singlemode": ("smf",),
}


def allowed(medium: str, among: Sequence[str] = MEDIA_COST) -> tuple[str, ...]:
    """The media of `among` that a network's `medium` allows, cheapest first."""
    allows = MEDIUM_ALLOWS.get(medium, MEDIA_COST)
    return tuple(m for m in MEDIA_COST if m in among and m in allows)


def cheapest(reach: Mapping[str, float], run_m: float, media: Sequence[str]) -> str | None:
    """The first of `media` (cheapest first) whose reach covers a run of `run_m` metres, or
    None when none does. `reach` is each media's longest reach at both ends of the run (the
    shorter end's), 0 where the cages take none."""
    for name in media:
        if reach.get(name, 0.0) >= run_m - 1e-9:
            return name
    return None


def fitting_modules(
    transceivers: Mapping[str, TransceiverModel],
    form: str,
    cage_ports: int,
    speed: int,
    media: str,
    fabric: str,
    lane: int | None,
) -> list[tuple[float, str]]:
    """Modules that plug into a cage of `form` running `cage_ports` links of `speed` Gb/s: the
    cage takes the module's form, the module carries the cage's bandwidth (twin-port modules
    at the link speed), runs the switch's lane rate and the network's protocol. As (reach,
    part), shortest reach first: the cheapest that covers a run is the first that reaches it."""
    found = []
    for part, module in transceivers.items():
        if lane is not None and module.lane_speed != lane:
            continue
        if module.form not in FORM_ACCEPTS.get(form, frozenset()):
            continue
        if module.media != media or fabric not in module.protocols:
            continue
        if module.ports * module.speed != cage_ports * speed:
            continue
        if module.speed != speed and cage_ports != 1:
            continue
        found.append((module.reach_m, part))
    found.sort()
    return found


def plug_fits(cage: str, plug: str, native: bool = True) -> bool:
    """A cable's plug fits a cage whose form accepts it (FORM_ACCEPTS: newer cages take older
    plugs). Running a lower rate the cable lists (`native` False, CableModel.also_runs), a
    newer plug of the cage's own outline fits too (OUTLINE): a QSFP56 plug in a QSFP28 cage
    at 100GbE, never a QSFP-DD plug in a QSFP cage."""
    if plug in FORM_ACCEPTS.get(cage, frozenset()):
        return True
    outline = OUTLINE.get(plug)
    return not native and outline is not None and OUTLINE.get(cage) == outline


def fits_at_a_rate(cage: str, plug: str, family: CableModel) -> bool:
    """The cable's plug fits the cage at one of the cable's rates (its own or a listed lower
    one, plug_fits)."""
    return any(plug_fits(cage, plug, native) for *_, native in family.rates)


def _joins_at(
    family: CableModel,
    rate: tuple[int, int, bool],
    forms: tuple[str, str],
    legs: int,
    ports: int,
    speed: int,
    lane: int | None,
) -> bool:
    """The cable, at one of its rates (CableModel.rates), joins a cage of forms[0] running
    `ports` links of `speed` Gb/s to `legs` cages of forms[1] at the switch's lane rate."""
    rate_speed, rate_lane, native = rate
    if lane is not None and rate_lane != lane:
        return False
    if not plug_fits(forms[0], family.a_form, native):
        return False
    if not plug_fits(forms[1], family.b_form, native):
        return False
    if legs > 1:
        return rate_speed == speed
    carried = family.a_ports * rate_speed
    return (rate_speed == speed and family.a_ports >= ports) or (ports == 1 and carried == speed)


def cable_families(
    families: Sequence[tuple[str, CableModel]],
    a_form: str,
    b_form: str,
    legs: int,
    ports: int,
    speed: int,
    lane: int | None,
    medium: str = "auto",
) -> list[tuple[int, str, CableModel]]:
    """Catalog cables that join a cage of `a_form` running `ports` links of `speed` Gb/s to
    `legs` cages of `b_form` without transceivers (straight when `legs` is 1, a splitter with a
    leg per cage otherwise), at the switch's lane rate, in a media the network's `medium`
    allows (copper: DAC/ACC and patch cords; multimode or singlemode: AOCs of that fiber),
    whatever the length; as (cost rank, catalog key, cable) with the rank of DIRECT_KINDS. A
    cable joins at its own speed or at a lower rate its entry lists (_joins_at). The caller
    picks the cheapest rank, then the shortest orderable length that covers the run."""
    media = allowed(medium)
    found = []
    for key, family in families:
        if not family.direct or family.media not in media or family.legs != legs:
            continue
        if any(
            _joins_at(family, rate, (a_form, b_form), legs, ports, speed, lane)
            for rate in family.rates
        ):
            found.append((DIRECT_KINDS[family.kind], key, family))
    return found


def _module_media(catalog: Catalog, group: PortGroup, speed: int, fabric: str) -> set[str]:
    """The media of the modules that fit a cage of `group` at `speed` (fitting_modules)."""
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
    (cable_families, either way round)."""
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


__all__ = [
    "MEDIA_COST",
    "MEDIUM_ALLOWS",
    "allowed",
    "cable_families",
    "cabled_speeds",
    "cheapest",
    "fits_at_a_rate",
    "fitting_modules",
    "plug_fits",
]


BASE_T_MEDIA = "cat6"  # the modules of a copper management link (optics.yaml)


def base_t_parts(catalog: Catalog, form: str) -> tuple[str, str] | None:
    """(adapter, module) for a 1000BASE-T link in a cage of `form`: an adapter the cage takes
    and a 1000BASE-T module that adapter takes; None where the catalog has none."""
    adapters = sorted(
        part
        for part, t in catalog.transceivers.items()
        if t.media == BASE_T_MEDIA
        and t.form in FORM_ACCEPTS.get(form, ())
        and t.adapter is not None
    )
    for adapter in adapters:
        holds = catalog.transceivers[adapter].adapter
        modules = sorted(
            part
            for part, t in catalog.transceivers.items()
            if t.media == BASE_T_MEDIA
            and t.adapter is None
            and t.form in FORM_ACCEPTS.get(holds or "", ())
        )
        if modules:
            return adapter, modules[0]
    return None
