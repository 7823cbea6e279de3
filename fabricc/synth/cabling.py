"""Synthesis pass 5: cable lengths, media, cables and transceivers for every link.

Consumes the placed design (racks with coordinates, devices with U positions) and the catalog's
cables and transceivers; produces a Cable for every link and a transceiver Module for every cage
that carries optics. Rules (NVIDIA LinkX product specifications, RA-11333 cabling):
  * length = vertical drops to the overhead tray at both ends + tray runs along and across rows
    + the site's slack; inside one rack the vertical distance plus an in-rack allowance; rounded
    up to the cable family's orderable lengths;
  * a cable with its plugs on where one can physically do it: a straight cable joins two cages
    whose ports all go to each other, a splitter joins a switch cage to single-port host cages;
    the cable a node port's catalog entry names (the vendor's reference design, PortSpec.cable)
    where it joins both cages and reaches the run, else passive copper before active copper
    before active optical (AOC), within the cable's reach (an AOC's reach is its longest
    length); a network's `medium` narrows the kinds (copper: DAC/ACC, multimode or singlemode:
    AOCs of that fiber);
  * otherwise optics, one module per cage and one fiber per link; every cage carries one medium,
    so the medium is chosen per connected set of cages (multimode while every link in the set is
    within multimode reach, single-mode otherwise), and a network may fix its medium;
  * a module fits its cage (finned-top modules in switches, flat-top in HCAs, QSFP112 cages take
    QSFP28/56 plugs) and carries the cage's bandwidth.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fabricc.catalog.media import (
    OPTICAL,
    allowed,
    base_t_parts,
    cable_families,
    cheapest,
    fits_at_a_rate,
    fitting_modules,
)
from fabricc.catalog.models import FORM_ACCEPTS, CableModel, Catalog
from fabricc.errors import Diagnostic, error
from fabricc.ir import SITE, U_HEIGHT_M, Cable, Device, Fabric, Link, Module, Rack
from fabricc.spec.yamlsource import format_path
from fabricc.synth.cableids import number_cables
from fabricc.synth.naming import PDU_PORT, POWER_SHELF_PORT, port_cage

IN_RACK_ALLOWANCE_M = 0.5  # routing from the port to the vertical manager and back


@dataclass(frozen=True, slots=True, eq=False)
class CageInfo:
    """One cage as a link end sees it; one object per (model, port, speed). The questions of
    media and modules are asked per `shape`, which many ports' objects share."""

    cage: str
    form: str
    ports: int  # logical ports the cage runs
    lane_speed: int | None = None  # switch cages: the SerDes rate every module must match
    cable: str | None = None  # node ports: the cable the vendor's design orders (PortSpec.cable)
    # the same number for every cage of one form, port count, lane rate and cable (what the
    # choice of media and modules depends on): per-port objects, questions asked per shape
    shape: int = 0


def run_length(fabric: Fabric, a: str, b: str) -> float:
    """The run of a cable between two placed devices, as _Cabler measures every link (kept in
    step with its inlined loop, _Cabler._ends): inside one rack the vertical distance and an
    allowance; else both drops to the overhead tray, the tray run along and across the rows,
    the site's slack and the allowance."""
    site = fabric.loaded.spec.site
    rack_a, z_a = _middle(fabric, fabric.devices[a])
    rack_b, z_b = _middle(fabric, fabric.devices[b])
    if rack_a is rack_b:
        return round(abs(z_a - z_b) + IN_RACK_ALLOWANCE_M, 2)
    drops = (rack_a.top_m - z_a) + (rack_b.top_m - z_b) + 2 * site.tray_height_m
    floor = abs(rack_a.x_m - rack_b.x_m) + abs(rack_a.y_m - rack_b.y_m)
    return round(drops + floor + site.slack_m + IN_RACK_ALLOWANCE_M, 2)


def _middle(fabric: Fabric, device: Device) -> tuple[Rack, float]:
    """A placed device's rack and the height of its middle: 0U devices (PDUs) sit in the rear
    at mid height, others at the middle of their units."""
    assert device.rack is not None, f"{device.name} was not placed"
    rack = fabric.rack_by_name[device.rack]
    z = rack.top_m / 2 if device.u is None else (device.u - 1 + device.height_u / 2) * U_HEIGHT_M
    return rack, z


class _PortIndex:
    """(model, port) -> cage, cached: host ports come from the catalog, switch ports from their
    front-panel numbering."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.cache: dict[tuple[str, str, int], CageInfo] = {}
        self.shapes: dict[tuple[str, int, int | None, str | None], int] = {}

    def info(self, device: Device, port: str, link_speed: int) -> CageInfo:
        key = (device.model, port, link_speed)
        found = self.cache.get(key)
        if found is not None:
            return found
        found = self._compute(device, port, link_speed)
        shape = (found.form, found.ports, found.lane_speed, found.cable)
        found = dataclasses.replace(found, shape=self.shapes.setdefault(shape, len(self.shapes)))
        self.cache[key] = found
        return found

    def _compute(self, device: Device, port: str, link_speed: int) -> CageInfo:
        if device.kind == "pdu" or device.kind == "power-shelf":
            return CageInfo(port, "rj45", 1)
        if device.kind == "switch":
            switch = self.catalog.switches[device.model]
            for mgmt in switch.mgmt_ports:
                if mgmt.name == port:
                    return CageInfo(port, mgmt.form, 1)
            cage = int(port_cage(port))
            group = switch.group_of_cage(cage)
            if group is None:
                raise KeyError(f"{device.model} has no cage {cage}")
            breakout = max(1, group.cage_speed // link_speed)
            return CageInfo(str(cage), group.form, breakout, group.lane_speed)
        model = self.catalog.nodes[device.model]
        ports = {p.name: p for p in model.ports}
        spec = ports.get(port)
        split = 1
        if spec is None:  # a sub-port of a split NIC port: "NIC0/2"
            base, _, _ = port.rpartition("/")
            spec = ports[base]
            split = max(spec.breakouts)
        in_cage = sum(1 for p in model.ports if p.cage == spec.cage)
        cable = spec.cable.family if spec.cable is not None else None
        return CageInfo(spec.cage, spec.form, in_cage * split, cable=cable)


# Why two ends got modules of different connectors: a set of cages joined by links shares one
# connector (_Cabler._set_connectors), and none had modules reaching every run of the set.
_MIXED_HINT = (
    "the cages these links join must share a fiber connector, and no connector's modules reach "
    "every run among them: stand the racks closer (site.racks_per_row, row_pitch_m, "
    "network_racks) or add modules of one connector that reach to the catalog"
)


def _round_up(lengths: Sequence[float], needed: float) -> float | None:
    index = bisect.bisect_left(lengths, needed - 1e-9)
    return lengths[index] if index < len(lengths) else None


class _Cabler:
    def __init__(self, fabric: Fabric, problems: list[Diagnostic]) -> None:
        self.fabric = fabric
        self.problems = problems
        self.links = fabric.links  # the links cabled by geometry (run: all but border links)
        self.catalog = fabric.loaded.catalog.catalog
        self.site = fabric.loaded.spec.site
        self.ports = _PortIndex(self.catalog)
        self.families = sorted(self.catalog.cables.items())
        self.lengths = {k: sorted(v.lengths) for k, v in self.families}
        self.z_cache: dict[str, tuple[Rack, float, float, Device]] = {}
        self.module_cache: dict[
            tuple[str, int, int, str, str, int | None], list[tuple[float, str]]
        ] = {}
        self.copper_cache: dict[
            tuple[str, str, int, int, int, float, int | None, str, str | None],
            tuple[str, CableModel, float] | None,
        ] = {}
        self.family_cache: dict[
            tuple[str, str, int, int, int, int | None, str], list[tuple[int, str, CableModel]]
        ] = {}
        self.fiber_cache: dict[tuple[str, str, int], str | None] = {}
        self.picks: dict[
            tuple[int, int, str, str, int | None, str | None], list[tuple[float, str]]
        ] = {}
        self.candidates: dict[tuple[int, int, str, str, int | None], list[tuple[float, str]]] = {}

    def fail(self, message: str, link: Link, hint: str | None = None) -> None:
        path = (
            self.fabric.loaded.networks[link.network].path
            if link.network in self.fabric.loaded.networks
            else ()
        )
        spec_path = (*path, "medium") if path else ()
        self.problems.append(
            error(
                message,
                path=format_path(spec_path),
                location=self.fabric.loaded.source.value(spec_path),
                hint=hint,
            )
        )

    # -- geometry -----------------------------------------------------------------------------

    def where(self, name: str) -> tuple[Rack, float, float, Device]:
        """A device's rack, the height of its middle, its drop to the top of the rack, and the
        device."""
        found = self.z_cache.get(name)
        if found is not None:
            return found
        device = self.fabric.devices[name]
        rack, z = _middle(self.fabric, device)
        found = self.z_cache[name] = (rack, z, rack.top_m - z, device)
        return found

    def _base_t(self, link: Link, cage: CageInfo, done: list[bool], i: int) -> None:
        done[i] = True
        parts = base_t_parts(self.fabric.loaded.catalog.catalog, cage.form)
        found = self.copper_for("rj45", "rj45", 1, 1, 1, link.distance_m, None)
        if parts is None or found is None:
            self.fail(
                f"{link.a} {link.a_port} -> {link.b} {link.b_port}: no 1000BASE-T module for a "
                f"{cage.form} cage, or {link.distance_m} m exceeds copper reach",
                link,
            )
            return
        key, family, length = found
        link.cable = self.new_cable(key, family, length, 1)
        for part in parts:  # the adapter, then the module in it (the cabling plan names it)
            self.fabric.modules.append(Module(link.b, cage.cage, part, link.network))
        link.b_module = parts[1]

    # -- cables -------------------------------------------------------------------------------

    @staticmethod
    def new_cable(
        family_key: str, family: CableModel, length: float, links: int, quantity: int = 1
    ) -> Cable:
        """A cable with no ID yet: number_cables names every cable once all links have one."""
        part = family.lengths[length]
        return Cable("", part, family_key, family.media, family.kind, length, links, quantity)

    def copper_for(
        self,
        a_form: str,
        b_form: str,
        legs: int,
        ports: int,
        speed: int,
        length: float,
        lane: int | None,
        medium: str = "auto",
        preferred: str | None = None,
    ) -> tuple[str, CableModel, float] | None:
        """The cable with its plugs on for a run (DAC, ACC, AOC, patch cord): the `preferred`
        family (the one a node port's catalog entry names, PortSpec.cable) where it joins these
        cages and reaches the run, else passive copper before active copper before active
        optical; then the shortest orderable length, then the catalog key; `medium` is the
        network's (which media it allows). Memoized per question: a fabric asks a handful of
        distinct ones (cage forms, speeds, a few hundred distances) hundreds of thousands of
        times."""
        question = (a_form, b_form, legs, ports, speed, length, lane, medium, preferred)
        if question in self.copper_cache:
            return self.copper_cache[question]
        best: tuple[int, float, str, CableModel] | None = None
        families = self._copper_families(a_form, b_form, legs, ports, speed, lane, medium)
        for rank, key, family in families:
            rounded = _round_up(self.lengths[key], length)
            if rounded is None:
                continue
            candidate = (-1 if key == preferred else rank, rounded, key, family)
            if best is None or candidate[:3] < best[:3]:
                best = candidate
        found = (best[2], best[3], best[1]) if best else None
        self.copper_cache[question] = found
        return found

    def _copper_families(
        self,
        a_form: str,
        b_form: str,
        legs: int,
        ports: int,
        speed: int,
        lane: int | None,
        medium: str,
    ) -> list[tuple[int, str, CableModel]]:
        """Families with their plugs on that join these cages at this speed in a medium the
        network allows, whatever the length, with their rank (0 passive copper, 1 active
        copper, 2 active optical)."""
        question = (a_form, b_form, legs, ports, speed, lane, medium)
        found = self.family_cache.get(question)
        if found is not None:
            return found
        found = cable_families(self.families, a_form, b_form, legs, ports, speed, lane, medium)
        self.family_cache[question] = found
        return found

    def run(self) -> None:
        """Geometry and cage of both ends of every link, then copper, then optics. Cages are
        numbered in order of their first link: cage_a[i] and cage_b[i] are the cages of link
        i's ends, members[c] the links of cage c (in link order), longest[c] its longest run,
        forms[c] its form."""
        fabric = self.fabric
        # border links end at the site network, which has no rack: cabled apart (_site)
        site = [link for link in fabric.links if link.kind == SITE]
        links = self.links = [x for x in fabric.links if x.kind != SITE] if site else fabric.links
        info = self.ports.info
        known = self.ports.cache
        where = self.where
        info_a: list[CageInfo] = []
        info_b: list[CageInfo] = []
        cage_a: list[int] = []
        cage_b: list[int] = []
        ids: dict[tuple[str, str], int] = {}
        keys: list[tuple[str, str]] = []
        members: list[list[int]] = []
        longest: list[float] = []
        forms: list[str] = []
        placed = self.z_cache
        tray, slack = 2 * self.site.tray_height_m, self.site.slack_m
        # One loop over the links, inlined: at 100k GPUs it runs 400k times.
        for i, link in enumerate(links):
            a, b, speed = link.a, link.b, link.speed
            rack_a, z_a, drop_a, device_a = placed.get(a) or where(a)
            rack_b, z_b, drop_b, device_b = placed.get(b) or where(b)
            # Inside one rack: the vertical distance plus an allowance; otherwise both drops to
            # the tray, the tray run along and across the rows, the slack, and at each end the
            # route from the port to the rack's vertical manager (half the in-rack allowance).
            if rack_a is rack_b:
                distance = abs(z_a - z_b) + IN_RACK_ALLOWANCE_M
            else:
                drops = drop_a + drop_b + tray
                distance = drops + (abs(rack_a.x_m - rack_b.x_m) + abs(rack_a.y_m - rack_b.y_m))
                distance += slack + IN_RACK_ALLOWANCE_M
            link.distance_m = distance = round(distance, 2)
            end_a = known.get((device_a.model, link.a_port, speed)) or info(
                device_a, link.a_port, speed
            )
            end_b = known.get((device_b.model, link.b_port, speed)) or info(
                device_b, link.b_port, speed
            )
            info_a.append(end_a)
            info_b.append(end_b)
            key = (a, end_a.cage)
            cage = ids.get(key)
            if cage is None:
                cage = ids[key] = len(keys)
                keys.append(key)
                members.append([i])
                longest.append(distance)
                forms.append(end_a.form)
            else:
                members[cage].append(i)
                if distance > longest[cage]:
                    longest[cage] = distance
            cage_a.append(cage)
            key = (b, end_b.cage)
            cage = ids.get(key)
            if cage is None:
                cage = ids[key] = len(keys)
                keys.append(key)
                members.append([i])
                longest.append(distance)
                forms.append(end_b.form)
            else:
                members[cage].append(i)
                if distance > longest[cage]:
                    longest[cage] = distance
            cage_b.append(cage)
        ends = _Ends(info_a, info_b, cage_a, cage_b, keys, members, longest, forms)
        done = [False] * len(links)
        mediums = {name: net.spec.medium for name, net in fabric.loaded.networks.items()}
        self._copper(ends, done, mediums)
        self._optics(ends, done, mediums)
        for link in site:
            self._site(link)
        number_cables(self.fabric)

    def _copper(self, ends: _Ends, done: list[bool], mediums: Mapping[str, str]) -> None:
        links = self.links
        devices = self.fabric.devices
        info_a, info_b, cage_a, cage_b = ends.info_a, ends.info_b, ends.cage_a, ends.cage_b
        members, longest = ends.members, ends.longest
        reach = self._copper_reach()
        # RJ45 management links: one patch cord each.
        for i, (link, end_a, end_b) in enumerate(zip(links, info_a, info_b, strict=True)):
            if end_a.form == "rj45" and end_b.form == "rj45":
                found = self.copper_for("rj45", "rj45", 1, 1, link.speed, link.distance_m, None)
                if found is None:
                    self.fail(
                        f"{link.a} {link.a_port} -> {link.b} {link.b_port}: {link.distance_m} m exceeds copper reach",
                        link,
                    )
                    done[i] = True
                    continue
                key, family, length = found
                link.cable = self.new_cable(key, family, length, 1)
                done[i] = True
            elif end_a.form == "rj45" and link.speed == 1 and devices[link.b].kind == "switch":
                # a management port on a switch cage (a tree's root on the in-band top tier,
                # synth/rootlinks.py): a patch cord into a 1000BASE-T module in a cage adapter
                self._base_t(link, end_b, done, i)
        # Switch cages first (in order of their first link): straight DACs and splitters start
        # there.
        for cage, own in enumerate(members):
            if longest[cage] > reach[ends.forms[cage]]:
                continue
            device = ends.keys[cage][0]
            if devices[device].kind != "switch" or any(done[i] for i in own):
                continue
            medium = mediums.get(links[own[0]].network, "auto")
            own_info = [info_a[i] if links[i].a == device else info_b[i] for i in own]
            peers = [
                (cage_b[i], info_b[i]) if links[i].a == device else (cage_a[i], info_a[i])
                for i in own
            ]
            peer_cages = {peer for peer, _ in peers}
            speed = links[own[0]].speed
            form = own_info[0].form
            if len(peer_cages) == 1:
                peer, peer_info = peers[0]
                if len(members[peer]) != len(own):
                    continue
                found = self.copper_for(
                    form,
                    peer_info.form,
                    1,
                    len(own),
                    speed,
                    longest[cage],
                    own_info[0].lane_speed,
                    medium,
                    peer_info.cable,
                )
            elif (
                len(peer_cages) == len(own)
                and all(len(members[peer]) == 1 for peer in peer_cages)
                and all(info.ports == 1 for _, info in peers)
            ):
                forms = {info.form for _, info in peers}
                if len(forms) != 1:
                    continue
                lane = own_info[0].lane_speed
                found = self.copper_for(
                    form, forms.pop(), len(own), len(own), speed, longest[cage], lane, medium
                )
            else:
                continue
            if found is None:
                continue
            key, family, length = found
            cable = self.new_cable(key, family, length, len(own))
            for leg, i in enumerate(own):
                links[i].cable = cable
                links[i].leg = leg + 1 if len(own) > 1 else 0
                done[i] = True
        # Single-port to single-port copper (e.g. 100G QSFP28 DAC).
        for i, link in enumerate(links):
            if done[i] or link.distance_m > reach[info_b[i].form]:  # B is the cable's A end
                continue
            medium = mediums.get(link.network, "auto")
            if info_a[i].ports != 1 or info_b[i].ports != 1:
                continue
            if len(members[cage_a[i]]) != 1 or len(members[cage_b[i]]) != 1:
                continue
            lane = info_a[i].lane_speed or info_b[i].lane_speed
            preferred = info_a[i].cable or info_b[i].cable
            found = self.copper_for(
                info_b[i].form,
                info_a[i].form,
                1,
                1,
                link.speed,
                link.distance_m,
                lane,
                medium,
                preferred,
            )
            if found is None:
                continue
            key, family, length = found
            link.cable = self.new_cable(key, family, length, 1)
            done[i] = True
        impossible: dict[str, list[Link]] = defaultdict(list)
        for i, link in enumerate(links if "copper" in mediums.values() else ()):
            if not done[i] and mediums.get(link.network) == "copper":
                impossible[link.network].append(link)
                done[i] = True
        for network, failed in impossible.items():
            first = failed[0]
            self.fail(
                f"{len(failed)} links of network {network!r} cannot be copper, e.g. {first.a} "
                f"{first.a_port} -> {first.b} {first.b_port} ({first.distance_m} m)",
                first,
                "copper reaches 2-5 m and needs matching cages; use 'medium: auto'",
            )

    def _copper_reach(self) -> dict[str, float]:
        """Per cage form, the longest cable with its plugs on (copper or AOC) whose A end plugs
        into it at one of its rates (and a rounding margin, as _round_up): a longer run from
        that cage is left to optics without a closer look."""
        reach: dict[str, float] = defaultdict(float)
        for _, family in self.families:
            if not family.direct:
                continue
            for form in FORM_ACCEPTS:
                if fits_at_a_rate(form, family.a_form, family):
                    reach[form] = max(reach[form], max(family.lengths) + 1e-9)
        return reach

    # -- optics -------------------------------------------------------------------------------

    def modules_for(
        self, info: CageInfo, speed: int, media: str, fabric_kind: str, lane: int | None
    ) -> list[tuple[float, str]]:
        """Modules that fit the cage and carry its bandwidth at the link's lane rate, as
        (reach, part), shortest reach first."""
        key = (info.form, info.ports, speed, media, fabric_kind, lane)
        found = self.module_cache.get(key)
        if found is None:
            found = self.module_cache[key] = fitting_modules(
                self.catalog.transceivers, info.form, info.ports, speed, media, fabric_kind, lane
            )
        return found

    def fiber_for(self, media: str, connector: str, legs: int = 1) -> str | None:
        """The first fiber family (by catalog key) of this media and connector with `legs` B
        ends: 1 straight, 2 a 1:2 splitter (LinkX: MFP7E10/MFP7E30 straight multimode/
        single-mode, MFP7E20/MFP7E40 their 1:2 splitters)."""
        key = (media, connector, legs)
        if key not in self.fiber_cache:
            self.fiber_cache[key] = next(
                (
                    k
                    for k, f in self.families
                    if f.kind == "fiber"
                    and f.media == media
                    and f.a_form == connector
                    and f.legs == legs
                ),
                None,
            )
        return self.fiber_cache[key]

    def _optics(self, ends: _Ends, done: list[bool], mediums: Mapping[str, str]) -> None:
        links = self.links
        info_a, info_b, cage_a, cage_b = ends.info_a, ends.info_b, ends.cage_a, ends.cage_b
        fabrics = {name: net.fabric for name, net in self.fabric.loaded.networks.items()}
        parent = list(range(len(ends.keys)))

        def find(cage: int) -> int:
            root = cage
            while parent[root] != root:
                root = parent[root]
            while parent[cage] != root:
                parent[cage], cage = root, parent[cage]
            return root

        def best_reach(
            info: CageInfo, speed: int, media: str, kind: str, lane: int | None
        ) -> float:
            modules = self.modules_for(info, speed, media, kind, lane)
            return modules[-1][0] if modules else 0.0

        # Each optical media's reach at a link's two ends, per kind of link.
        reach_cache: dict[tuple[int, int, int, str], dict[str, float]] = {}  # by cage shapes
        rank = {m: r for r, m in enumerate(OPTICAL, 1)}
        optical = [i for i in range(len(links)) if not done[i]]
        # Per link the cheapest optical media whose reach covers the run at both ends, among
        # those the network's medium allows (catalog/media.py); where none reaches, the longest-reaching
        # one, whose module choice then says so. A cage carries one media, so its connected set
        # (joined here as the links come) takes the dearest that any of its links needs.
        options = {name: allowed(medium, OPTICAL) or OPTICAL for name, medium in mediums.items()}
        need = [0] * len(parent)  # per set's root
        # per kind of link, the media rank wanted per run (runs repeat by the thousand)
        wanted_by_run: dict[tuple[int, int, int, str], dict[float, int]] = {}
        for i in optical:
            link = links[i]
            pair = (info_a[i].shape, info_b[i].shape, link.speed, link.network)
            by_run = wanted_by_run.get(pair)
            if by_run is None:
                by_run = wanted_by_run[pair] = {}
            wanted = by_run.get(link.distance_m)
            if wanted is None:
                choices = options.get(link.network, OPTICAL)
                reach = reach_cache.get(pair)
                if reach is None:
                    kind = fabrics.get(link.network, "ethernet")
                    # each module matches its own cage's lanes (a host cage: the switch's)
                    lane_a = info_a[i].lane_speed or info_b[i].lane_speed
                    lane_b = info_b[i].lane_speed or info_a[i].lane_speed
                    reach = reach_cache[pair] = {
                        m: min(
                            best_reach(info_a[i], link.speed, m, kind, lane_a),
                            best_reach(info_b[i], link.speed, m, kind, lane_b),
                        )
                        for m in choices
                    }
                wanted = by_run[link.distance_m] = rank[
                    cheapest(reach, link.distance_m, choices) or choices[-1]
                ]
            ra, rb = cage_a[i], cage_b[i]
            # (find inline where a cage is its own root: most cages, most of the time)
            if parent[ra] != ra:
                ra = find(ra)
            if parent[rb] != rb:
                rb = find(rb)
            if ra != rb:  # two sets join: the new root needs what either needed
                parent[ra] = rb
                if need[ra] > need[rb]:
                    need[rb] = need[ra]
            if wanted > need[rb]:
                need[rb] = wanted
        media_of = {r: m for m, r in rank.items()}
        connectors = self._set_connectors(ends, optical, lambda root: media_of[need[root]], find)
        chosen: dict[int, str] = {}
        # What a pair of modules needs between them, per (modules, speed): a cage's module
        # carries the media of its connected set, so both ends of a link share it.
        plans: dict[tuple[str, str, int], _FiberPlan] = {}
        splitters: dict[int, Cable] = {}  # cage -> its splitter with a free leg
        for i in optical:
            link = links[i]
            part_a = chosen.get(cage_a[i])
            part_b = chosen.get(cage_b[i])
            if part_a is None or part_b is None:
                root = find(cage_a[i])
                media, connector = media_of[need[root]], connectors.get(root)
                lane_a = info_a[i].lane_speed or info_b[i].lane_speed
                lane_b = info_b[i].lane_speed or info_a[i].lane_speed
                if part_a is None:
                    part_a = chosen[cage_a[i]] = self._module(
                        link,
                        link.a,
                        info_a[i],
                        ends.longest[cage_a[i]],
                        media,
                        lane_a,
                        ends.members[cage_a[i]],
                        connector,
                    )
                if part_b is None:
                    part_b = chosen[cage_b[i]] = self._module(
                        link,
                        link.b,
                        info_b[i],
                        ends.longest[cage_b[i]],
                        media,
                        lane_b,
                        ends.members[cage_b[i]],
                        connector,
                    )
            link.a_module, link.b_module = part_a, part_b
            if not part_a or not part_b:
                continue
            question = (part_a, part_b, link.speed)
            plan = plans.get(question)
            if plan is None:
                plan = plans[question] = self._fiber_plan(part_a, part_b, link.speed)
            if plan.fibers:
                link.fibers = plan.fibers
            if plan.problem:
                mixed = plan.problem.endswith("cannot be joined by one fiber")
                self.fail(plan.problem, link, _MIXED_HINT if mixed else None)
                continue
            distance = link.distance_m
            cut = plan.cuts.get(distance)
            if cut is None:
                length = _round_up(plan.lengths, distance)
                cut = plan.cuts[distance] = () if length is None else (length, plan.parts[length])
            if not cut:
                self.fail(
                    f"{link.a} -> {link.b} needs {distance} m of fiber; the longest "
                    f"{plan.family} is {plan.lengths[-1]} m",
                    link,
                )
                continue
            length, part = cut
            if plan.legs > 1:
                # consecutive links of one cage share a splitter (its legs: the cage's links
                # in port order), the longer run setting the length
                cage = cage_b[i]  # the upper tier's cage carries the split connector
                shared = splitters.get(cage)
                if shared is not None and shared.links < plan.legs and shared.family == plan.family:
                    shared.links += 1
                    if length > shared.length_m:
                        shared.length_m, shared.part = length, part
                    link.cable = shared
                    continue
                link.cable = splitters[cage] = Cable(
                    "", part, plan.family, plan.media, "fiber", length, 1, plan.fibers
                )
                continue
            link.cable = Cable("", part, plan.family, plan.media, "fiber", length, 1, plan.fibers)

    def _site(self, link: Link) -> None:
        """A border link: the near end's module (as given, else the shortest-reach one of the
        hand-off's fiber that fits the cage and reaches the run) and a straight fiber of the
        spec's length to the hand-off; the far end's module is the site's."""
        network = self.fabric.loaded.networks[link.network]
        site = network.spec.site_uplinks
        path = (*network.path, "site_uplinks")
        media = "smf" if site.medium == "singlemode" else "mmf"
        info = self.ports.info(self.fabric.devices[link.a], link.a_port, link.speed)
        link.distance_m = site.length_m
        modules = self.modules_for(info, link.speed, media, network.fabric, info.lane_speed)

        def fail(message: str, key: str, hint: str) -> None:
            at = (*path, key)
            self.problems.append(
                error(
                    message,
                    path=format_path(at),
                    location=self.fabric.loaded.source.value(at),
                    hint=hint,
                )
            )

        fits = f"{info.form} cage at {link.speed}G"
        if site.transceiver is not None:
            reach = next((r for r, part in modules if part == site.transceiver), None)
            if reach is None:
                fail(
                    f"{site.transceiver} does not fit {link.a}'s {fits}",
                    "transceiver",
                    "modules that fit: " + (", ".join(p for _, p in modules) or "none"),
                )
                return
            if reach < site.length_m:
                fail(
                    f"{site.transceiver} reaches {reach:g} m; the hand-off is {site.length_m:g} m "
                    "away",
                    "length_m",
                    "a longer-reach module, or the site's real distance",
                )
                return
            part = site.transceiver
        else:
            at = bisect.bisect_left(modules, (site.length_m,))
            if at == len(modules):
                best = f"the longest reaches {modules[-1][0]:g} m" if modules else "none fits"
                fail(
                    f"no {site.medium} module for {link.a}'s {fits} reaches the hand-off "
                    f"{site.length_m:g} m away: {best}",
                    "length_m",
                    "name a module (site_uplinks.transceiver) or add one to a site catalog",
                )
                return
            part = modules[at][1]
        module = self.catalog.transceivers[part]
        family = self.fiber_for(media, module.connector)
        length = _round_up(self.lengths[family], site.length_m) if family else None
        if family is None or length is None:
            fail(
                f"no straight {media} {module.connector} fiber of {site.length_m:g} m in the "
                "catalog",
                "length_m",
                "add the fiber to a site catalog, or a shorter run",
            )
            return
        self.fabric.modules.append(Module(link.a, info.cage, part, link.network))
        link.a_module = part
        connectors = module.connectors or module.ports
        link.fibers = max(1, connectors * link.speed // (module.ports * module.speed))
        link.cable = Cable(
            "",
            self.catalog.cables[family].lengths[length],
            family,
            media,
            "fiber",
            length,
            1,
            link.fibers,
        )

    def _module(
        self,
        link: Link,
        device: str,
        info: CageInfo,
        longest: float,
        media: str,
        lane: int | None,
        cage_links: Sequence[int],
        connector: str | None = None,
    ) -> str:
        """The transceiver of one cage (`cage_links`: its links), plugged in: the shortest-reach
        module (then the first part) that fits it, carries its bandwidth, reaches its longest
        link and has the fiber connector of its set of cages (`connector`, see _set_connectors);
        "" (and a problem) when none does. The candidates are kept per question (cages repeat
        by the thousand, each with its own longest run): a bisection per cage."""
        question = (info.shape, link.speed, media, link.network, lane, connector)
        modules = self.picks.get(question)
        if modules is None:
            modules = self._candidates(link, info, media, lane)
            if connector is not None:
                modules = [
                    m for m in modules if self.catalog.transceivers[m[1]].connector == connector
                ]
            self.picks[question] = modules
        at = bisect.bisect_left(modules, (longest,))
        if at == len(modules):
            self._out_of_reach(link, device, info, longest, media, modules, cage_links)
            return ""
        part = self._own_vendor(device, modules, at)
        self.fabric.modules.append(Module(device, info.cage, part, link.network))
        return part

    def _candidates(
        self, link: Link, info: CageInfo, media: str, lane: int | None
    ) -> list[tuple[float, str]]:
        """The modules of `media` that fit a cage and carry `link` at its lane rate, shortest
        reach first. Memoized per what they depend on (the cage's shape, the link's speed and
        network, the media, the lane rate): every optical cage asks, a few hundred thousand
        times."""
        question = (info.shape, link.speed, link.network, media, lane)
        found = self.candidates.get(question)
        if found is None:
            network = self.fabric.loaded.networks.get(link.network)
            kind = network.fabric if network is not None else "ethernet"
            found = self.candidates[question] = self.modules_for(
                info, link.speed, media, kind, lane
            )
        return found

    def _set_connectors(
        self,
        ends: _Ends,
        optical: Sequence[int],
        media: Callable[[int], str],
        find: Callable[[int], int],
    ) -> dict[int, str]:
        """The fiber connector of each connected set of cages (by its root), given its media
        (`media`: root -> media).

        One fiber joins two modules of one connector (a 2x DR4 module: MPO-12/APC; a 2x FR4
        module: LC duplex; LinkX MMS4X00-NM and MMS4X50-NM product specifications), and a
        twin-port cage's module serves both its links, so every cage of a set takes one
        connector: among those whose modules reach each cage's longest run, the one whose
        farthest-reaching pick is shortest (DR4 before FR4 while both reach), then by name.
        A set that no connector serves whole gets none: each cage then takes its own module
        and the fiber between mismatched ones is refused with both parts named."""
        links = self.links
        cage_a, cage_b, info_a, info_b, runs = (
            ends.cage_a,
            ends.cage_b,
            ends.info_a,
            ends.info_b,
            ends.longest,
        )
        # A cage needs of each connector its first candidate (shortest reach first) that covers
        # its longest run; of cages with one candidate list, the one with the longest run needs
        # the most, and only what it finds every one of them finds. So per set and candidate
        # list (kept by modules_for for the whole run) only the longest run is asked about.
        longest: dict[int, dict[int, tuple[list[tuple[float, str]], float]]] = {}
        seen = [False] * len(runs)

        def hold(
            lists: dict[int, tuple[list[tuple[float, str]], float]],
            link: Link,
            info: CageInfo,
            kind: str,
            lane: int | None,
            run: float,
        ) -> None:
            candidates = self._candidates(link, info, kind, lane)
            held = lists.get(id(candidates))
            if held is None or run > held[1]:
                lists[id(candidates)] = (candidates, run)

        for i in optical:
            a, b = cage_a[i], cage_b[i]
            if seen[a] and seen[b]:
                continue
            root = find(a)
            lists = longest.get(root)
            if lists is None:
                lists = longest[root] = {}
            kind = media(root)
            end_a, end_b = info_a[i], info_b[i]
            if not seen[a]:
                seen[a] = True
                hold(lists, links[i], end_a, kind, end_a.lane_speed or end_b.lane_speed, runs[a])
            if not seen[b]:
                seen[b] = True
                hold(lists, links[i], end_b, kind, end_b.lane_speed or end_a.lane_speed, runs[b])
        chosen: dict[int, str] = {}
        for root, lists in longest.items():
            need: dict[str, float] | None = None  # connector -> the reach it must have
            for candidates, run in lists.values():
                reach: dict[str, float] = {}
                for length, part in candidates:
                    connector = self.catalog.transceivers[part].connector
                    if length >= run and connector not in reach:
                        reach[connector] = length
                need = (
                    reach
                    if need is None
                    else {c: max(r, need[c]) for c, r in reach.items() if c in need}
                )
            if need:
                chosen[root] = min(need.items(), key=lambda item: (item[1], item[0]))[0]
        return chosen

    def _own_vendor(self, device: str, modules: Sequence[tuple[float, str]], at: int) -> str:
        """The shortest-reach module from `at` on whose vendor is the switch's own, where the
        catalog has one (a site catalog's switch and its optics); else the shortest-reach one
        (checks/optics.py says when a switch gets another vendor's)."""
        owner = self.fabric.devices[device]
        switch = self.catalog.switches.get(owner.model) if owner.kind == "switch" else None
        if switch is not None:
            for _, part in modules[at:]:
                if self.catalog.transceivers[part].vendor == switch.vendor:
                    return part
        return modules[at][1]

    def _out_of_reach(
        self,
        link: Link,
        device: str,
        info: CageInfo,
        longest: float,
        media: str,
        modules: Sequence[tuple[float, str]],
        cage_links: Sequence[int],
    ) -> None:
        """Refuse a cage that no module of any allowed media reaches from: name its longest
        run, the two racks it joins, how far the media goes and the fixes."""
        links = self.links
        far = max((links[i] for i in cage_links), key=lambda x: x.distance_m)
        rack_a = self.fabric.devices[far.a].rack
        rack_b = self.fabric.devices[far.b].rack
        best = f"the longest reaches {modules[-1][0]:g} m" if modules else "the catalog has none"
        network = self.fabric.loaded.networks.get(link.network)
        narrowed = network is not None and network.spec.medium != "auto"
        self.fail(
            f"no {media} transceiver for {device} cage {info.cage} ({info.form}, "
            f"{info.ports}x{link.speed}G) reaches its longest run, {longest} m from rack "
            f"{rack_a} ({far.a}) to rack {rack_b} ({far.b}): {best}",
            link,
            ("allow every media that reaches (medium: auto), " if narrowed else "")
            + "stand the racks closer (site.network_racks: per-su puts a unit's switches "
            "beside its nodes; racks_per_row and row_pitch_m shape the hall), or add a "
            "longer-reach module to the catalog",
        )

    def _fiber_plan(self, part_a: str, part_b: str, speed: int) -> _FiberPlan:
        """Fibers per link between two modules (an unsplit 800G over twin-port optics: 2) and
        the fiber family that joins them, or the problem."""
        mod_a = self.catalog.transceivers[part_a]
        mod_b = self.catalog.transceivers[part_b]
        if mod_a.connector != mod_b.connector:
            return _FiberPlan(
                problem=f"{part_a} ({mod_a.connector}) and {part_b} ({mod_b.connector}) "
                "cannot be joined by one fiber"
            )
        if mod_a.media != mod_b.media:
            return _FiberPlan(
                problem=f"{part_a} ({mod_a.media}) and {part_b} ({mod_b.media}) carry different "
                "media: no fiber joins them"
            )
        media = mod_a.media
        fibers = max(1, (mod_a.connectors or mod_a.ports) * speed // (mod_a.ports * mod_a.speed))
        # a link that carries part of one connector's lanes at either end (2x 200G from one
        # 400G SR4/DR4 port) runs over a 1:2 splitter whose legs serve two such links
        rate_a, rate_b = (m.ports * m.speed // (m.connectors or m.ports) for m in (mod_a, mod_b))
        legs = 2 if speed * 2 <= max(rate_a, rate_b) else 1
        family = self.fiber_for(media, mod_a.connector, legs)
        if family is None:
            kind = "1:2 splitter" if legs > 1 else "straight"
            return _FiberPlan(
                fibers, problem=f"no {media} {mod_a.connector} {kind} fiber in the catalog"
            )
        parts = self.catalog.cables[family].lengths
        return _FiberPlan(fibers, family, media, self.lengths[family], parts, legs=legs)


@dataclass(frozen=True, slots=True)
class _FiberPlan:
    """The fiber between a pair of modules, with the (length, part) of each run seen so far
    (() when none reaches)."""

    fibers: int = 0  # 0: the modules do not meet
    family: str = ""
    media: str = ""
    lengths: list[float] = field(default_factory=list)
    parts: Mapping[float, str] = field(default_factory=dict)
    problem: str = ""
    legs: int = 1  # 2: a 1:2 splitter, one per two links of a connector
    cuts: dict[float, tuple[float, str] | tuple[()]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class _Ends:
    """Both ends of every link (see _Cabler.run)."""

    info_a: list[CageInfo]
    info_b: list[CageInfo]
    cage_a: list[int]
    cage_b: list[int]
    keys: list[tuple[str, str]]  # cage -> (device, cage name)
    members: list[list[int]]  # cage -> its links
    longest: list[float]  # cage -> its longest run
    forms: list[str]  # cage -> its form (as its first link sees it)


def cable_design(fabric: Fabric, problems: list[Diagnostic]) -> None:
    _Cabler(fabric, problems).run()


__all__ = ["PDU_PORT", "POWER_SHELF_PORT", "CageInfo", "cable_design"]
