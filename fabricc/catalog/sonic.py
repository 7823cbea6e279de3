"""Catalog: SONiC platforms, SKUs and port layouts (fabricc/emit/configs/data/sonic.yaml).

Consumes a sonic-buildimage platform name (device/<vendor>/<platform>, which a catalog switch
model names in its operating_systems) and the ports-per-cage plan of one switch (cage -> ways);
produces the SONiC platform, the HWSKU chosen for that plan and every PORT/BREAKOUT_CFG entry as
SONiC's portconfig.py (sonic-buildimage src/sonic-config-engine) derives them from the platform's
platform.json and the SKU's hwsku.json, with dynamic breakout (BREAKOUT_CFG) where the plan differs
from the SKU's default. Pure functions of the data.

SKU rule: the SKUs whose SAI profile allows every cage's split; of those, the one whose default
split (hwsku.json) matches the most cages in use, the platform's default SKU on a tie.

The port plan (fabricc/synth/portplan.py) picks each switch's SKU here for the design check and the
SONiC emitter alike; the emitter also reads the SKUs' buffer settings and the releases.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

import yaml

# portconfig.py BRKOUT_PATTERN, first group: <ports>x<speed>[<other speeds>]
_MODE = re.compile(r"(\d+)x(\d+G?)")
# The data stays beside the SONiC emitter's templates: error hints and docs/any-vendor.md name
# this path. Read as a file of the package, so that the catalog imports no emitter.
DATA = "emit/configs/data/sonic.yaml"


@dataclass(frozen=True, slots=True)
class PortGroup:
    """platform.json layout of one catalog port group (its cages in order)."""

    lanes: int  # SerDes lanes behind one cage
    first_lane: int
    lane_step: int  # lane numbers between the first lanes of neighbouring cages
    first_name: int  # EthernetN of the group's first cage
    name_step: int  # EthernetN numbers between neighbouring cages
    modes: dict[int, str]  # ways -> BREAKOUT_CFG mode string
    cage_lanes: tuple[int, ...] = ()  # each cage's first lane, where they follow no step
    alias: str = "etp"  # etp<cage><a..h> or slash: Ethernet<cage>/<lane in the cage from 1>

    def first_lane_of(self, position: int) -> int:
        if self.cage_lanes:
            return self.cage_lanes[position]
        return self.first_lane + position * self.lane_step

    def alias_of(self, cage: int, sub: int, ways: int) -> str:
        if self.alias == "slash":
            return f"Ethernet{cage}/{sub * (self.lanes // ways) + 1}"
        return f"etp{cage}" + (chr(ord("a") + sub) if ways > 1 else "")


@dataclass(frozen=True, slots=True)
class Headroom:
    """A pg_profile_lookup.ini row: the lossless PG profile buffermgrd makes for a speed and
    cable length."""

    size: str
    xon: str
    xoff: str
    threshold: str
    xon_offset: str


@dataclass(frozen=True, slots=True)
class StaticBuffers:
    """A SKU's traditional buffer model: its template's pools and profiles, its headroom rows."""

    pools: dict[str, dict[str, str]]
    profiles: dict[str, dict[str, str]]
    headroom: dict[tuple[int, int], Headroom]  # (speed Mb/s, cable m) -> row

    def cable_row(self, speed: int, length_m: float) -> int | None:
        """The shortest cable length of the table at or above `length_m` that has a row for
        `speed`, in m (buffermgrd looks the port's CABLE_LENGTH up exactly)."""
        fits = [m for s, m in self.headroom if s == speed and m >= length_m]
        return min(fits) if fits else None


@dataclass(frozen=True, slots=True)
class ExtraPort:
    """A platform.json port with no catalog cage (SFP ports beside the OSFP cages)."""

    name: str
    lanes: str
    alias: str
    index: int
    mode: str


@dataclass(frozen=True, slots=True)
class Sku:
    name: str
    ways: int  # hwsku.json default_brkout_mode of every cage
    breakouts: tuple[int, ...]  # splits the SAI profile allows
    autoneg: str | None
    lossy_ingress_pool: bool  # buffer objects with an ingress_lossy_pool (the shared template)
    egress_lossless_pool: str
    default_cable: str
    static: StaticBuffers | None = None  # the traditional buffer model (Broadcom SKUs)


@dataclass(frozen=True, slots=True)
class SonicPlatform:
    platform: str
    groups: tuple[PortGroup, ...]
    extra_ports: tuple[ExtraPort, ...]
    skus: tuple[Sku, ...]  # the default SKU first
    unsupported: str | None  # why no SKU can run a lossless RoCE plan


@dataclass(frozen=True, slots=True)
class SonicPort:
    name: str  # Ethernet136
    lanes: str  # "136,137,138,139"
    alias: str  # etp18b
    index: int  # front-panel cage
    speed: int  # Mb/s, the breakout mode's default speed
    master: bool  # first port of its cage: the BREAKOUT_CFG key
    mode: str  # the cage's BREAKOUT_CFG mode


@functools.cache
def _data() -> dict[str, Any]:
    text = resources.files("fabricc").joinpath(DATA).read_text()
    data: dict[str, Any] = yaml.safe_load(text)
    return data


@functools.cache
def sonic_platforms() -> dict[str, SonicPlatform]:
    """sonic-buildimage platform folder name -> its layout and SKUs, in name order."""
    return {
        name: SonicPlatform(
            platform=name,
            groups=tuple(
                PortGroup(
                    lanes=g["lanes"],
                    first_lane=g.get("first_lane", 0),
                    lane_step=g.get("lane_step", 0),
                    first_name=g["first_name"],
                    name_step=g["name_step"],
                    modes={int(k): v for k, v in g["modes"].items()},
                    cage_lanes=tuple(g.get("cage_lanes", ())),
                    alias=g.get("alias", "etp"),
                )
                for g in entry.get("groups", [])
            ),
            extra_ports=tuple(ExtraPort(**p) for p in entry.get("extra_ports", [])),
            skus=tuple(_sku(s) for s in entry.get("skus", [])),
            unsupported=entry.get("unsupported"),
        )
        for name, entry in sorted(_data()["platforms"].items())
    }


def _sku(entry: dict[str, Any]) -> Sku:
    common = {
        "name": entry["name"],
        "ways": entry["ways"],
        "breakouts": tuple(entry["breakouts"]),
        "autoneg": entry.get("autoneg"),
    }
    if "static_buffers" in entry:
        static = _static_buffers(entry["static_buffers"])
        default_cable = _data()["static_buffers"][entry["static_buffers"]]["default_cable"]
        return Sku(
            **common,
            lossy_ingress_pool=False,
            egress_lossless_pool=static.pools["egress_lossless_pool"]["size"],
            default_cable=default_cable,
            static=static,
        )
    return Sku(
        **common,
        lossy_ingress_pool=_objects(entry["objects"]),
        egress_lossless_pool=entry["egress_lossless_pool"],
        default_cable=entry["default_cable"],
    )


@functools.cache
def _static_buffers(name: str) -> StaticBuffers:
    entry = _data()["static_buffers"][name]
    headroom: dict[tuple[int, int], Headroom] = {}
    for row in entry["headroom"]:
        speed, cable, size, xon, xoff, threshold, xon_offset = row.split()
        headroom[(int(speed), cable_metres(cable))] = Headroom(
            size=size, xon=xon, xoff=xoff, threshold=threshold, xon_offset=xon_offset
        )
    return StaticBuffers(
        pools={k: {f: str(v) for f, v in p.items()} for k, p in entry["pools"].items()},
        profiles={k: {f: str(v) for f, v in p.items()} for k, p in entry["profiles"].items()},
        headroom=headroom,
    )


def cable_metres(text: str) -> int:
    """A CABLE_LENGTH value ("40m") in metres."""
    if not text.endswith("m") or not text[:-1].isdigit():
        raise ValueError(f"bad cable length {text!r}")
    return int(text[:-1])


@functools.cache
def _objects(name: str) -> bool:
    if name not in ("shared", "one-ingress-pool"):
        raise ValueError(f"data/sonic.yaml: unknown buffer objects {name!r}")
    return name == "shared"


@dataclass(frozen=True, slots=True)
class SonicRelease:
    """What one SONiC release's db_migrator.py (sonic-utilities, that release's branch) knows."""

    version: str  # its CURRENT_VERSION: what VERSIONS|DATABASE says
    known: tuple[str, ...]  # the version_<release>_NN migration steps it defines
    source: str  # file, branch and commit it was read from


@functools.cache
def sonic_release_data() -> dict[str, SonicRelease]:
    return {
        str(release): SonicRelease(entry["version"], tuple(entry["known"]), entry["source"])
        for release, entry in _data()["releases"].items()
    }


@functools.cache
def sonic_releases() -> dict[str, str]:
    """SONiC release -> the CONFIG_DB schema version of VERSIONS|DATABASE."""
    return {release: data.version for release, data in sonic_release_data().items()}


def mode_speed(mode: str) -> int:
    """The default speed of a breakout mode in Mb/s: "2x400G[200G]" -> 400000, "1x1000" -> 1000
    (portconfig.py BreakoutModeEntry._speed_to_int)."""
    found = _MODE.match(mode)
    if found is None:
        raise ValueError(f"bad breakout mode {mode!r}")
    speed = found.group(2)
    return int(speed[:-1]) * 1000 if speed.endswith("G") else int(speed)


def cage_groups(
    platform: SonicPlatform, group_sizes: list[int]
) -> dict[int, tuple[PortGroup, int]]:
    """Cage -> (its platform.json group, position in the group), the catalog's port groups (their
    cage counts, in front-panel order) paired with the platform's in order."""
    if len(group_sizes) != len(platform.groups):
        raise ValueError(
            f"{platform.platform}: {len(group_sizes)} port groups in the catalog, "
            f"{len(platform.groups)} in data/sonic.yaml"
        )
    out: dict[int, tuple[PortGroup, int]] = {}
    cage = 1
    for group, size in zip(platform.groups, group_sizes, strict=True):
        for position in range(size):
            out[cage] = (group, position)
            cage += 1
    return out


def allows(sku: Sku, group: PortGroup, ways: int) -> bool:
    return ways in group.modes and (ways == default_ways_of(sku, group) or ways in sku.breakouts)


def default_ways_of(sku: Sku, group: PortGroup) -> int:
    return sku.ways if sku.ways in group.modes else min(group.modes)


def choose_sku(
    platform: SonicPlatform, plan: dict[int, tuple[PortGroup, int]], skus: tuple[str, ...] = ()
) -> Sku | None:
    """The SKU for a plan of cage -> (its port group, ways): see the module docstring; `skus`,
    where given, are the only SKUs to choose from (a catalog entry's)."""
    best: tuple[int, int, Sku] | None = None
    for order, sku in enumerate(platform.skus):
        if skus and sku.name not in skus:
            continue
        if not all(allows(sku, group, ways) for group, ways in plan.values()):
            continue
        matching = sum(1 for group, ways in plan.values() if ways == default_ways_of(sku, group))
        key = (-matching, order)
        if best is None or key < best[:2]:
            best = (*key, sku)
    return None if best is None else best[2]


def cage_ports(group: PortGroup, position: int, cage: int, ways: int) -> list[SonicPort]:
    """The ports of the cage at `position` (0-based) of its group, split `ways` ways, as
    portconfig.py BreakoutCfg.get_config names them."""
    mode = group.modes[ways]
    first_lane = group.first_lane_of(position)
    base = group.first_name + position * group.name_step
    per = group.lanes // ways
    speed = mode_speed(mode)
    ports = []
    for sub in range(ways):
        offset = sub * per
        ports.append(
            SonicPort(
                name=f"Ethernet{base + offset}",
                lanes=",".join(str(first_lane + offset + k) for k in range(per)),
                alias=group.alias_of(cage, sub, ways),
                index=cage,
                speed=speed,
                master=sub == 0,
                mode=mode,
            )
        )
    return ports


@dataclass(frozen=True, slots=True)
class SonicSwitch:
    """One switch's SONiC platform, chosen SKU and every port of its PORT table, in order."""

    platform: SonicPlatform
    sku: Sku
    ports: tuple[SonicPort, ...]
    by_cage: dict[tuple[int, int], SonicPort]  # (cage, sub-port from 1) -> port


def sonic_switch(
    platform: SonicPlatform,
    group_sizes: list[int],
    ways: dict[int, int],
    skus: tuple[str, ...] = (),
) -> SonicSwitch | str:
    """The switch's SKU and ports for a plan of cage -> ways (cages in use only; the others keep
    the SKU's default split), or why SONiC cannot run the plan; `skus`: the SKUs a catalog entry
    allows (all of the platform's where empty)."""
    if platform.unsupported is not None:
        return platform.unsupported
    groups = cage_groups(platform, group_sizes)
    plan: dict[int, tuple[PortGroup, int]] = {}
    for cage, split in sorted(ways.items()):
        group = groups[cage][0]
        if split not in group.modes:
            allowed = ", ".join(str(w) for w in sorted(group.modes))
            return (
                f"cage {cage} is split {split} ways; {platform.platform}'s platform.json "
                f"allows {allowed} ports per cage"
            )
        plan[cage] = (group, split)
    unknown = sorted(set(skus) - {s.name for s in platform.skus})
    if unknown:
        known = ", ".join(s.name for s in platform.skus)
        return f"{platform.platform} has no SKU {', '.join(unknown)} in data/sonic.yaml ({known})"
    sku = choose_sku(platform, plan, skus)
    if sku is None:
        splits = ", ".join(sorted({str(w) for _, w in plan.values()}))
        offered = "; ".join(
            f"{s.name}: {s.ways} by default, {'/'.join(map(str, s.breakouts))} by breakout"
            for s in platform.skus
            if not skus or s.name in skus
        )
        return f"no SKU splits its cages {splits} ways (ports per cage: {offered})"
    ports: list[SonicPort] = []
    by_cage: dict[tuple[int, int], SonicPort] = {}
    for cage, (group, position) in sorted(groups.items()):
        split = ways.get(cage, default_ways_of(sku, group))
        for sub, port in enumerate(cage_ports(group, position, cage, split), start=1):
            ports.append(port)
            by_cage[(cage, sub)] = port
    for extra in platform.extra_ports:
        ports.append(
            SonicPort(
                name=extra.name,
                lanes=extra.lanes,
                alias=extra.alias,
                index=extra.index,
                speed=mode_speed(extra.mode),
                master=True,
                mode=extra.mode,
            )
        )
    return SonicSwitch(platform=platform, sku=sku, ports=tuple(ports), by_cage=by_cage)
