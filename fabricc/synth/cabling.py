"""Synthesis pass 5: cable lengths, media, cables and transceivers for every link.

Consumes the placed design (racks with coordinates, devices with U positions) and the catalog's
cables and transceivers; produces a Cable for every link and a transceiver Module for every cage
that carries optics. Rules (REFERENCE.md section 4):
  * length = vertical drops to the overhead tray at both ends + tray runs along and across rows
    + the site's slack; inside one rack the vertical distance plus an in-rack allowance; rounded
    up to the cable family's orderable lengths;
  * copper where a cable can physically do it: a straight DAC joins two cages whose ports all
    go to each other, a splitter joins a switch cage to single-port host cages; passive before
    active, within the cable's reach;
  * otherwise optics, one module per cage and one fiber per link; every cage carries one medium,
    so the medium is chosen per connected set of cages (multimode while every link in the set is
    within multimode reach, single-mode otherwise), and a network may fix its medium;
  * a module fits its cage (finned-top modules in switches, flat-top in HCAs, QSFP112 cages take
    QSFP28/56 plugs) and carries the cage's bandwidth.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fabricc.catalog.models import FORM_ACCEPTS, CableModel, Catalog, TransceiverModel
from fabricc.errors import Diagnostic, error
from fabricc.ir import U_HEIGHT_M, Cable, Device, Fabric, Link, Module, Rack
from fabricc.spec.yamlsource import format_path
from fabricc.synth.cableids import number_cables
from fabricc.synth.naming import PDU_PORT, POWER_SHELF_PORT, port_cage

IN_RACK_ALLOWANCE_M = 0.5  # routing from the port to the vertical manager and back
MEDIA_ORDER = {"copper": 0, "cat6": 0, "mmf": 1, "smf": 2}


@dataclass(frozen=True, slots=True)
class CageInfo:
    cage: str
    form: str
    ports: int  # logical ports the cage runs
    lane_speed: int | None = None  # switch cages: the SerDes rate every module must match


class _PortIndex:
    """(model, port) -> cage, cached: host ports come from the catalog, switch ports from their
    front-panel numbering."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self.cache: dict[tuple[str, str, str], CageInfo] = {}

    def info(self, device: Device, port: str, link_speed: int) -> CageInfo:
        key = (device.model, port, str(link_speed))
        found = self.cache.get(key)
        if found is not None:
            return found
        found = self._compute(device, port, link_speed)
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
        return CageInfo(spec.cage, spec.form, in_cage * split)


def _round_up(lengths: Sequence[float], needed: float) -> float | None:
    index = bisect.bisect_left(lengths, needed - 1e-9)
    return lengths[index] if index < len(lengths) else None


class _Cabler:
    def __init__(self, fabric: Fabric, problems: list[Diagnostic]) -> None:
        self.fabric = fabric
        self.problems = problems
        self.catalog = fabric.loaded.catalog.catalog
        self.site = fabric.loaded.spec.site
        self.ports = _PortIndex(self.catalog)
        self.families = sorted(self.catalog.cables.items())
        self.lengths = {k: sorted(v.lengths) for k, v in self.families}
        self.z_cache: dict[str, tuple[Rack, float]] = {}
        self.module_cache: dict[
            tuple[str, int, int, str, str, int | None], list[tuple[str, TransceiverModel]]
        ] = {}

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

    def where(self, name: str) -> tuple[Rack, float]:
        found = self.z_cache.get(name)
        if found is not None:
            return found
        device = self.fabric.devices[name]
        assert device.rack is not None, f"{name} was not placed"
        rack = self.fabric.rack_by_name[device.rack]
        # 0U devices (PDUs) sit in the rear at mid height; others at the middle of their units.
        z = (
            rack.top_m / 2
            if device.u is None
            else (device.u - 1 + device.height_u / 2) * U_HEIGHT_M
        )
        self.z_cache[name] = (rack, z)
        return rack, z

    def distance(self, link: Link) -> float:
        rack_a, z_a = self.where(link.a)
        rack_b, z_b = self.where(link.b)
        if rack_a is rack_b:
            return abs(z_a - z_b) + IN_RACK_ALLOWANCE_M
        drops = (rack_a.top_m - z_a) + (rack_b.top_m - z_b) + 2 * self.site.tray_height_m
        run = abs(rack_a.x_m - rack_b.x_m) + abs(rack_a.y_m - rack_b.y_m)
        return drops + run + self.site.slack_m

    # -- cables -------------------------------------------------------------------------------

    def new_cable(
        self,
        link: Link,
        family_key: str,
        family: CableModel,
        length: float,
        links: int,
        quantity: int = 1,
    ) -> Cable:
        cable = Cable(
            id="",  # numbered in link order once every link has its cable
            part=family.lengths[length],
            family=family_key,
            media=family.media,
            kind=family.kind,
            length_m=length,
            links=links,
            quantity=quantity,
        )
        self.fabric.cables.append(cable)
        return cable

    def copper_for(
        self,
        a_form: str,
        b_form: str,
        legs: int,
        ports: int,
        speed: int,
        length: float,
        lane: int | None,
    ) -> tuple[str, CableModel, float] | None:
        best: tuple[int, float, str, CableModel] | None = None
        for key, family in self.families:
            if family.media not in ("copper", "cat6"):
                continue
            if lane is not None and family.lane_speed != lane:
                continue
            if family.a_form not in FORM_ACCEPTS.get(a_form, frozenset()):
                continue
            if family.b_form not in FORM_ACCEPTS.get(b_form, frozenset()):
                continue
            if legs > 1 and family.legs != legs:
                continue
            if legs == 1 and family.legs != 1:
                continue
            carried = family.a_ports * (family.speed or 0)
            if legs == 1 and not (
                (family.speed == speed and family.a_ports >= ports)
                or (ports == 1 and carried == speed)
            ):
                continue
            if legs > 1 and family.speed != speed:
                continue
            rounded = _round_up(self.lengths[key], length)
            if rounded is None:
                continue
            rank = 0 if family.kind in ("dac", "patch") else 1
            candidate = (rank, rounded, key, family)
            if best is None or candidate[:3] < best[:3]:
                best = candidate
        return (best[2], best[3], best[1]) if best else None

    def run(self) -> None:
        fabric = self.fabric
        links = fabric.links
        info_a: list[CageInfo] = []
        info_b: list[CageInfo] = []
        for link in links:
            link.distance_m = round(self.distance(link), 2)
            info_a.append(self.ports.info(fabric.devices[link.a], link.a_port, link.speed))
            info_b.append(self.ports.info(fabric.devices[link.b], link.b_port, link.speed))
        by_cage: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, link in enumerate(links):
            by_cage[(link.a, info_a[i].cage)].append(i)
            by_cage[(link.b, info_b[i].cage)].append(i)
        done = [False] * len(links)
        mediums = {name: net.spec.medium for name, net in fabric.loaded.networks.items()}
        self._copper(by_cage, info_a, info_b, done, mediums)
        self._optics(by_cage, info_a, info_b, done, mediums)
        number_cables(self.fabric)

    def _copper(
        self,
        by_cage: dict[tuple[str, str], list[int]],
        info_a: list[CageInfo],
        info_b: list[CageInfo],
        done: list[bool],
        mediums: Mapping[str, str],
    ) -> None:
        links = self.fabric.links
        devices = self.fabric.devices
        # RJ45 management links: one patch cord each.
        for i, link in enumerate(links):
            if info_a[i].form == "rj45" and info_b[i].form == "rj45":
                found = self.copper_for("rj45", "rj45", 1, 1, link.speed, link.distance_m, None)
                if found is None:
                    self.fail(
                        f"{link.a} {link.a_port} -> {link.b} {link.b_port}: {link.distance_m} m exceeds copper reach",
                        link,
                    )
                    done[i] = True
                    continue
                key, family, length = found
                link.cable = self.new_cable(link, key, family, length, 1)
                done[i] = True
        # Switch cages first: straight DACs and splitters start there.
        for (device, _cage), members in sorted(by_cage.items(), key=lambda kv: kv[1][0]):
            if devices[device].kind != "switch" or any(done[i] for i in members):
                continue
            if mediums.get(links[members[0]].network, "auto") not in ("auto", "copper"):
                continue
            own_info = [info_a[i] if links[i].a == device else info_b[i] for i in members]
            peers = [
                (links[i].b, info_b[i]) if links[i].a == device else (links[i].a, info_a[i])
                for i in members
            ]
            peer_cages = {(name, info.cage) for name, info in peers}
            longest = max(links[i].distance_m for i in members)
            speed = links[members[0]].speed
            form = own_info[0].form
            if len(peer_cages) == 1:
                peer_name, peer_info = peers[0]
                if len(by_cage[(peer_name, peer_info.cage)]) != len(members):
                    continue
                found = self.copper_for(
                    form, peer_info.form, 1, len(members), speed, longest, own_info[0].lane_speed
                )
            elif (
                len(peer_cages) == len(members)
                and all(len(by_cage[pc]) == 1 for pc in peer_cages)
                and all(info.ports == 1 for _, info in peers)
            ):
                forms = {info.form for _, info in peers}
                if len(forms) != 1:
                    continue
                lane = own_info[0].lane_speed
                found = self.copper_for(
                    form, forms.pop(), len(members), len(members), speed, longest, lane
                )
            else:
                continue
            if found is None:
                continue
            key, family, length = found
            cable = self.new_cable(links[members[0]], key, family, length, len(members))
            for leg, i in enumerate(members):
                links[i].cable = cable
                links[i].leg = leg + 1 if len(members) > 1 else 0
                done[i] = True
        # Single-port to single-port copper (e.g. 100G QSFP28 DAC).
        for i, link in enumerate(links):
            if done[i] or mediums.get(link.network, "auto") not in ("auto", "copper"):
                continue
            if info_a[i].ports != 1 or info_b[i].ports != 1:
                continue
            if (
                len(by_cage[(link.a, info_a[i].cage)]) != 1
                or len(by_cage[(link.b, info_b[i].cage)]) != 1
            ):
                continue
            lane = info_a[i].lane_speed or info_b[i].lane_speed
            found = self.copper_for(
                info_b[i].form, info_a[i].form, 1, 1, link.speed, link.distance_m, lane
            )
            if found is None:
                continue
            key, family, length = found
            link.cable = self.new_cable(link, key, family, length, 1)
            done[i] = True
        impossible: dict[str, list[Link]] = defaultdict(list)
        for i, link in enumerate(links):
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

    # -- optics -------------------------------------------------------------------------------

    def modules_for(
        self, info: CageInfo, speed: int, media: str, fabric_kind: str, lane: int | None
    ) -> list[tuple[str, TransceiverModel]]:
        """Modules that fit the cage and carry its bandwidth at the link's lane rate."""
        key = (info.form, info.ports, speed, media, fabric_kind, lane)
        found = self.module_cache.get(key)
        if found is not None:
            return found
        out = []
        for part, module in sorted(self.catalog.transceivers.items()):
            if lane is not None and module.lane_speed != lane:
                continue
            if module.form not in FORM_ACCEPTS.get(info.form, frozenset()):
                continue
            if module.media != media or fabric_kind not in module.protocols:
                continue
            if module.ports * module.speed != info.ports * speed:
                continue
            if module.speed != speed and info.ports != 1:
                continue
            out.append((part, module))
        self.module_cache[key] = out
        return out

    def _optics(
        self,
        by_cage: dict[tuple[str, str], list[int]],
        info_a: list[CageInfo],
        info_b: list[CageInfo],
        done: list[bool],
        mediums: Mapping[str, str],
    ) -> None:
        links = self.fabric.links
        fabrics = {name: net.fabric for name, net in self.fabric.loaded.networks.items()}
        parent: dict[tuple[str, str], tuple[str, str]] = {}

        def find(key: tuple[str, str]) -> tuple[str, str]:
            root = key
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(key, key) != root:
                parent[key], key = root, parent[key]
            return root

        reach_cache: dict[tuple[str, int, int, str, str, int | None], float] = {}

        def best_reach(
            info: CageInfo, speed: int, media: str, kind: str, lane: int | None
        ) -> float:
            key = (info.form, info.ports, speed, media, kind, lane)
            if key not in reach_cache:
                modules = self.modules_for(info, speed, media, kind, lane)
                reach_cache[key] = max((m.reach_m for _, m in modules), default=0.0)
            return reach_cache[key]

        def lane_of(i: int) -> int | None:
            """A link runs at the SerDes rate of its switch end(s)."""
            return info_a[i].lane_speed or info_b[i].lane_speed

        optical = [i for i in range(len(links)) if not done[i]]
        for i in optical:
            ra, rb = find((links[i].a, info_a[i].cage)), find((links[i].b, info_b[i].cage))
            if ra != rb:
                parent[ra] = rb
        need: dict[tuple[str, str], int] = {}
        for i in optical:
            link = links[i]
            kind = fabrics.get(link.network, "ethernet")
            forced = mediums.get(link.network, "auto")
            if forced == "multimode":
                wanted = 1
            elif forced == "singlemode":
                wanted = 2
            else:
                mmf = min(
                    best_reach(info_a[i], link.speed, "mmf", kind, lane_of(i)),
                    best_reach(info_b[i], link.speed, "mmf", kind, lane_of(i)),
                )
                wanted = 1 if link.distance_m <= mmf else 2
            root = find((link.a, info_a[i].cage))
            need[root] = max(need.get(root, 0), wanted)
        media_of = {1: "mmf", 2: "smf"}
        chosen: dict[tuple[str, str], str] = {}
        for i in optical:
            link = links[i]
            media = media_of[need[find((link.a, info_a[i].cage))]]
            kind = fabrics.get(link.network, "ethernet")
            parts = []
            for device, info in ((link.a, info_a[i]), (link.b, info_b[i])):
                key = (device, info.cage)
                if key not in chosen:
                    longest = max(links[j].distance_m for j in by_cage[key])
                    modules = self.modules_for(info, link.speed, media, kind, lane_of(i))
                    options = [(m.reach_m, p) for p, m in modules if m.reach_m >= longest]
                    if not options:
                        self.fail(
                            f"no {media} transceiver for {device} cage {info.cage} ({info.form}, "
                            f"{info.ports}x{link.speed}G) reaches {longest} m",
                            link,
                            "move the racks closer, or add a longer-reach module to the catalog",
                        )
                        chosen[key] = ""
                    else:
                        part = min(options)[1]
                        chosen[key] = part
                        self.fabric.modules.append(Module(device, info.cage, part, link.network))
                parts.append(chosen[key])
            link.a_module, link.b_module = parts
            if not all(parts):
                continue
            mod_a = self.catalog.transceivers[parts[0]]
            mod_b = self.catalog.transceivers[parts[1]]
            if mod_a.connector != mod_b.connector:
                self.fail(
                    f"{parts[0]} ({mod_a.connector}) and {parts[1]} ({mod_b.connector}) cannot be joined by one fiber",
                    link,
                )
                continue
            fibers = max(
                1, (mod_a.connectors or mod_a.ports) * link.speed // (mod_a.ports * mod_a.speed)
            )
            link.fibers = fibers
            family_key = next(
                (
                    k
                    for k, f in self.families
                    if f.kind == "fiber" and f.media == media and f.a_form == mod_a.connector
                ),
                None,
            )
            if family_key is None:
                self.fail(f"no {media} {mod_a.connector} fiber in the catalog", link)
                continue
            family = self.catalog.cables[family_key]
            length = _round_up(self.lengths[family_key], link.distance_m)
            if length is None:
                self.fail(
                    f"{link.a} -> {link.b} needs {link.distance_m} m of fiber; the longest "
                    f"{family_key} is {self.lengths[family_key][-1]} m",
                    link,
                )
                continue
            link.cable = self.new_cable(link, family_key, family, length, 1, fibers)


def cable_design(fabric: Fabric, problems: list[Diagnostic]) -> None:
    _Cabler(fabric, problems).run()


__all__ = ["PDU_PORT", "POWER_SHELF_PORT", "CageInfo", "cable_design"]
