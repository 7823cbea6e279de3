"""Check stage: design rules over the finished IR, independent of how synthesis built it.

Consumes a Fabric; produces Diagnostics that point at the spec line responsible. The rules:
every port exists and is used once; both ends of a link run its speed; cables and modules reach;
rack power and space hold; rails are symmetric (rail k of every node of a unit on that unit's
rail-k leaf) and every leaf reaches every spine of its tree with the same number of links;
hostnames are valid and unique; every InfiniBand subnet has a subnet-manager host
(checks/subnet_managers.py, a warning), and NCCL's one SL can follow the routing engine
(checks/service_levels.py, a warning). Synthesis already avoids these mistakes; the rules are
here so that a regression, a user catalog or a later pass cannot slip one through.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from fabricc.catalog.media import base_t_parts
from fabricc.catalog.models import FORM_ACCEPTS, TransceiverModel
from fabricc.checks.early import power_hint
from fabricc.checks.exposure import check_exposure
from fabricc.checks.imex import check_imex
from fabricc.checks.optics import check_optics_vendor
from fabricc.checks.power import check_power
from fabricc.checks.reach import check_reach
from fabricc.checks.service_levels import check_service_levels
from fabricc.checks.subnet_managers import check_subnet_managers
from fabricc.checks.switch_os import check_switch_os
from fabricc.errors import Diagnostic, error, warning
from fabricc.ir import (
    ENDPOINT_LEAF,
    EXTERNAL,
    LEAF_SPINE,
    SITE,
    SPINE_CORE,
    Cable,
    Device,
    Fabric,
    Link,
    Rack,
    one_based,
)
from fabricc.spec.yamlsource import DataPath, format_path
from fabricc.synth.naming import PDU_PORT, POWER_SHELF_PORT, port_cage, valid_hostname


class _Rules:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.catalog = fabric.loaded.catalog.catalog
        self.source = fabric.loaded.source
        self.problems: list[Diagnostic] = []
        self.seen: set[tuple[str, str]] = set()

    def fail(
        self, message: str, path: DataPath, hint: str | None = None, where: DataPath | None = None
    ) -> None:
        """An error at the spec `path`, its position that of `where` (default: `path`)."""
        at = path if where is None else where
        self.problems.append(
            error(message, path=format_path(path), location=self.source.value(at), hint=hint)
        )

    def once(
        self,
        rule: str,
        message: str,
        path: DataPath,
        hint: str | None = None,
        where: DataPath | None = None,
    ) -> None:
        """Report a rule once per spec location; a broken rule usually breaks thousands of links."""
        key = (rule, format_path(path))
        if key in self.seen:
            return
        self.seen.add(key)
        self.fail(message, path, hint, where)

    def network_path(self, link: Link) -> DataPath:
        network = self.fabric.loaded.networks.get(link.network)
        return network.path if network is not None else ()

    # -- ports and speeds -----------------------------------------------------------------------

    def port_speeds(self, device: Device, port: str) -> tuple[set[int], str] | None:
        """Speeds a port can run and its plug form, or None when the port does not exist."""
        if device.kind in ("pdu", "power-shelf"):
            return ({1}, "rj45") if port in (PDU_PORT, POWER_SHELF_PORT) else None
        if device.kind == "switch":
            switch = self.catalog.switches[device.model]
            for mgmt in switch.mgmt_ports:
                if mgmt.name == port:
                    return set(mgmt.speeds), mgmt.form
            try:
                cage = int(port_cage(port))
            except ValueError:
                return None
            sub = port.partition("/")[2]
            group = switch.group_of_cage(cage)
            if group is None:
                return None
            ways = [b for b in group.breakouts if not sub or int(sub) <= b]
            if sub and not ways:
                return None
            speeds = {group.cage_speed // b for b in ways if (b > 1) == bool(sub)}
            if not sub and base_t_parts(self.catalog, group.form) is not None:
                # 1000BASE-T in a cage adapter (a management port, synth/rootlinks.py)
                speeds.add(1)
            return speeds, group.form
        model = self.catalog.nodes[device.model]
        for spec in model.ports:
            if spec.name == port:
                return set(spec.speeds), spec.form
            if port.startswith(spec.name + "/"):
                sub = port[len(spec.name) + 1 :]
                if sub.isdigit() and int(sub) <= max(spec.breakouts):
                    return {s // b for s in spec.speeds for b in spec.breakouts if b > 1}, spec.form
        return None

    def ports_and_speeds(self) -> None:
        """Every link end is a port of its device that runs the link's speed, and no port is
        used twice. The links are first checked in bulk (distinct ports per model and speed,
        one set of link ends); only a design that fails is walked link by link to report."""
        links = self.fabric.links
        devices = self.fabric.devices
        ends = [(link.a, link.a_port) for link in links]
        ends.extend((link.b, link.b_port) for link in links)
        kinds = {(devices[link.a].model, link.a_port, link.speed) for link in links}
        kinds.update((devices[link.b].model, link.b_port, link.speed) for link in links)
        kinds = {kind for kind in kinds if kind[0] != EXTERNAL}  # the site's ports: not ours
        models = {device.model: device for device in devices.values()}
        for model, port, speed in kinds:
            found = self.port_speeds(models[model], port)
            if found is None or speed not in found[0]:
                break
        else:
            if len(set(ends)) == len(ends):
                return
        self._report_ports_and_speeds()

    def _report_ports_and_speeds(self) -> None:
        used: set[tuple[str, str]] = set()
        cache: dict[tuple[str, str], tuple[set[int], str] | None] = {}
        for link in self.fabric.links:
            for name, port in ((link.a, link.a_port), (link.b, link.b_port)):
                device = self.fabric.devices[name]
                if device.kind == EXTERNAL and (name, port) not in used:
                    used.add((name, port))
                    continue
                if (name, port) in used:
                    self.once(
                        "port-twice",
                        f"port {port} of {name} is used by two links",
                        self.network_path(link),
                    )
                used.add((name, port))
                key = (device.model, port)
                if key not in cache:
                    cache[key] = self.port_speeds(device, port)
                found = cache[key]
                if found is None:
                    self.once(
                        "no-port",
                        f"{name} ({device.model}) has no port {port}",
                        self.network_path(link),
                    )
                    continue
                speeds, _ = found
                if link.speed not in speeds:
                    self.once(
                        "speed",
                        f"{name} {port} cannot run {link.speed}G (it runs {sorted(speeds)})",
                        self.network_path(link),
                    )

    # -- reach and connectors -------------------------------------------------------------------

    def medium_path(self, link: Link) -> DataPath:
        return (*self.network_path(link), "medium")

    def reach(self) -> None:
        """Every link has a cable long enough for its run, modules that reach it on the cable's
        media, and a module at both ends of a fiber. Checked in bulk (per cable part, module pair
        and the shortest reach of the three against the run); a design that fails is walked link
        by link to report."""
        transceivers = self.catalog.transceivers
        optical = {key: not family.direct for key, family in self.catalog.cables.items()}
        reaches: dict[tuple[str, str | None, str | None], float | None] = {}
        for link in self.fabric.links:
            cable = link.cable
            if cable is None:
                break
            key = (cable.part, link.a_module, link.b_module)
            reach = reaches.get(key, -1.0)
            if reach == -1.0:
                reach = reaches[key] = self._combined_reach(
                    cable, key[1], key[2], optical, link.kind == SITE
                )
            run = link.distance_m - 1e-9
            if reach is None or reach < run or cable.length_m < run:
                break
        else:
            return
        self._report_reach(transceivers, optical)

    def _combined_reach(
        self,
        cable: Cable,
        a_module: str | None,
        b_module: str | None,
        optical: dict[str, bool],
        site: bool = False,
    ) -> float | None:
        """The shortest reach of a cable part's modules (inf without any), or None where the
        modules do not suit the cable (media, or a fiber without one at an end; a border
        link's far module is the site's)."""
        reach = math.inf
        for part in (a_module, b_module):
            if part is None:
                continue
            module = self.catalog.transceivers[part]
            if module.media != cable.media:
                return None
            reach = min(reach, module.reach_m)
        if optical[cable.family] and (a_module is None or (b_module is None and not site)):
            return None
        return reach

    def _report_reach(
        self, transceivers: dict[str, TransceiverModel], optical: dict[str, bool]
    ) -> None:
        for link in self.fabric.links:
            cable = link.cable
            if cable is None:
                self.once(
                    "uncabled",
                    f"{link.a} {link.a_port} -> {link.b} {link.b_port} has no cable",
                    self.medium_path(link),
                )
                continue
            if cable.length_m + 1e-9 < link.distance_m:
                self.once(
                    "reach",
                    f"cable {cable.id} is {cable.length_m} m for a {link.distance_m} m run",
                    self.medium_path(link),
                )
            for part in (link.a_module, link.b_module):
                if part is None:
                    continue
                module = transceivers[part]
                if module.reach_m + 1e-9 < link.distance_m:
                    self.once(
                        "module-reach",
                        f"{part} reaches {module.reach_m} m, the run is {link.distance_m} m",
                        self.medium_path(link),
                    )
                if module.media != cable.media:
                    self.once(
                        "media",
                        f"{part} is {module.media} but cable {cable.part} is {cable.media}",
                        self.medium_path(link),
                    )
            if not optical[cable.family]:
                continue
            if link.a_module is None or (link.b_module is None and link.kind != SITE):
                self.once(
                    "optics",
                    f"fiber {cable.id} has no transceiver at one end",
                    self.medium_path(link),
                )

    def cage_form(self, device: Device, cage: str) -> str:
        """The form of a device's cage ("" when it has no such cage)."""
        if device.kind == "switch":
            group = self.catalog.switches[device.model].group_of_cage(int(cage))
            return group.form if group is not None else ""
        forms = {p.form for p in self.catalog.nodes[device.model].ports if p.cage == cage}
        return forms.pop() if forms else ""

    def module_forms(self) -> None:
        """Every module fits the form of its cage: checked per distinct (model, cage, part), and
        walked module by module to report only where one does not."""
        devices = self.fabric.devices
        transceivers = self.catalog.transceivers
        forms: dict[tuple[str, str], str] = {}  # (model, cage) -> form
        models = {name: device.model for name, device in devices.items()}
        kinds = {(models[m.device], m.cage, m.part) for m in self.fabric.modules}
        by_model = {device.model: device for device in devices.values()}
        for model, cage, part_number in kinds:
            form = forms.get((model, cage))
            if form is None:
                form = forms[(model, cage)] = self.cage_form(by_model[model], cage)
            if transceivers[part_number].form not in FORM_ACCEPTS.get(form, frozenset()):
                break
        else:
            return
        # a cage adapter (a QSA) takes the module it holds: (device, cage) -> the forms it takes
        held: dict[tuple[str, str], frozenset[str]] = {}
        for module in self.fabric.modules:
            holds = transceivers[module.part].adapter
            if holds is not None:
                held[(module.device, module.cage)] = FORM_ACCEPTS.get(holds, frozenset())
        for module in self.fabric.modules:
            device = devices[module.device]
            key = (device.model, module.cage)
            form = forms.get(key)
            if form is None:
                form = forms[key] = self.cage_form(device, module.cage)
            part = transceivers[module.part]
            fits = FORM_ACCEPTS.get(form, frozenset()) | held.get(
                (module.device, module.cage), set()
            )
            if part.form not in fits:
                network = self.fabric.loaded.networks.get(module.network)
                self.once(
                    "module-form",
                    f"{module.part} ({part.form}) does not fit cage {module.cage} ({form}) of {module.device}",
                    network.path if network else (),
                )

    # -- racks --------------------------------------------------------------------------------

    def racks(self) -> None:
        for rack in self.fabric.racks:
            power = 0
            occupied: dict[int, str] = {}
            for name in rack.devices:
                device = self.fabric.devices[name]
                power += device.power_w
                if device.u is None or device.height_u == 0:
                    continue
                top = device.u + device.height_u - 1
                if device.u < 1 or top > rack.height_u:
                    self.fail(
                        f"{name} at U{device.u} sticks out of {rack.name} ({rack.height_u}U)",
                        ("site", "rack", "height_u"),
                    )
                for u in range(device.u, top + 1):
                    if u in occupied:
                        self.fail(
                            f"{name} and {occupied[u]} both occupy {rack.name} U{u}",
                            ("site", "rack"),
                        )
                        break
                    occupied[u] = name
            if power > rack.power_budget_w:
                self.rack_power(rack, power)

    def rack_power(self, rack: Rack, power: int) -> None:
        """A rack over its budget, said once per cause: at the node group's nodes_per_rack when
        the spec sets it, else at site.rack.power_kw (where written); the hint says what the
        rack needs and how many nodes fit the budget."""
        devices = [self.fabric.devices[n] for n in rack.devices]
        nodes = [d for d in devices if d.kind == "node" and d.spec_path[:1] == ("nodes",)]
        budget = rack.power_budget_w
        path: DataPath = ("site", "rack", "power_kw")
        per_rack = (*nodes[0].spec_path[:2], "nodes_per_rack") if nodes else None
        fits = None
        if nodes and per_rack is not None and len({d.power_w for d in nodes}) == 1:
            others = power - sum(d.power_w for d in nodes)
            fits = (budget - others) // nodes[0].power_w
            if per_rack in self.source.values:
                path = per_rack
        hint = power_hint(power, fits)
        where = next(
            (
                p
                for p in (path, ("site", "rack", "power_kw"), ("site", "rack"), ("site",))
                if p in self.source.values
            ),
            next((d.spec_path for d in devices if d.kind in ("node", "tray")), ()),
        )
        if ("site", "rack", "power_kw") not in self.source.values:
            hint += f" (unset, it is {budget / 1000:g} kW)"
        self.once(
            "rack-power",
            f"rack {rack.name} draws {power / 1000:g} kW, over its {budget / 1000:g} kW budget",
            path,
            hint,
            where,
        )

    # -- symmetry -----------------------------------------------------------------------------

    def rails(self) -> None:
        """Rail k of every node lands on its unit's rail-k leaf; each lower switch reaches every
        switch of the tier above in its tree with the same number of links."""
        devices = self.fabric.devices
        by_network: dict[str, list[Link]] = defaultdict(list)
        for link in self.fabric.links:
            by_network[link.network].append(link)
        for name, topology in self.fabric.networks.items():
            network = self.fabric.loaded.networks.get(name)
            if network is None:
                continue
            links = by_network.get(name, [])
            if topology.rail_optimized:
                for link in links:
                    if link.kind != ENDPOINT_LEAF or link.rail is None:
                        continue
                    node, leaf = devices[link.a], devices[link.b]
                    if node.su is None or node.kind not in ("node", "tray"):
                        continue
                    # a fat-tree's rail leaves serve one unit; other families' serve them all
                    unit = leaf.su != node.su and topology.topology == "fat-tree"
                    if leaf.rail != link.rail or unit:
                        self.once(
                            "rail",
                            f"{link.a} rail {link.rail + 1} lands on {link.b} (rail "
                            f"{one_based(leaf.rail)}, unit {self.fabric.su_label(leaf.su)})",
                            network.path,
                        )
            for kind in (LEAF_SPINE, SPINE_CORE):
                per_pair = Counter((link.a, link.b) for link in links if link.kind == kind)
                uppers_of: dict[str, set[str]] = defaultdict(set)
                counts_of: dict[str, set[int]] = defaultdict(set)
                for (lower, upper), count in per_pair.items():
                    uppers_of[lower].add(upper)
                    counts_of[lower].add(count)
                for lower, counts in counts_of.items():
                    if len(counts) > 1:
                        self.once(
                            "symmetry",
                            f"{lower} has unequal link counts to the tier above: {sorted(counts)}",
                            network.path,
                        )
                if kind != LEAF_SPINE:
                    continue
                # a pod is counted within its leaf class (the switches' name series)
                Tree = tuple[int | None, str | None, int | None]
                trees: dict[Tree, set[frozenset[str]]] = defaultdict(set)
                for lower, uppers in uppers_of.items():
                    device = devices[lower]
                    trees[(device.plane, device.series, device.pod)].add(frozenset(uppers))
                if any(len(sets) > 1 for sets in trees.values()):
                    self.once(
                        "symmetry",
                        "leaves of one tree reach different sets of spines",
                        network.path,
                    )

    # -- names --------------------------------------------------------------------------------

    def names(self) -> None:
        for name, device in self.fabric.devices.items():
            if not valid_hostname(name):
                self.once(
                    "hostname",
                    f"{name!r} is not a valid hostname",
                    (*device.spec_path, "hostname") if device.kind == "node" else device.spec_path,
                    "use letters, digits and '-' (at most 63)",
                )


def single_switch(fabric: Fabric) -> list[Diagnostic]:
    """A data network (compute or storage) of two or more nodes whose every node hangs on one
    switch: that switch is a single point of failure for the whole network."""
    found = []
    for name, network in fabric.loaded.networks.items():
        if network.spec.role not in ("compute", "storage"):
            continue
        switches: dict[str, set[str]] = defaultdict(set)
        for link in fabric.links_of(name):
            if link.kind == ENDPOINT_LEAF:
                switches[link.b].add(link.a)
        nodes = {node for attached in switches.values() for node in attached}
        if len(switches) != 1 or len(nodes) < 2:
            continue
        [(switch, _)] = switches.items()
        shown = sorted(nodes)
        listed = ", ".join(shown[:4]) + (f" and {len(shown) - 4:,} more" if len(shown) > 4 else "")
        hint = (
            "set spread_ports: true (each node's ports over two leaves, every port routed on "
            "its own, with spines between the leaves)"
            if network.fabric == "ethernet"
            else "set endpoints.<group>.leaf_downlinks below the ports the nodes bring, so that "
            "they spread over two or more leaves"
        )
        found.append(
            warning(
                f"every node of {name} ({listed}) hangs on one switch, {switch}: it is a single "
                f"point of failure, and its loss cuts all {network.spec.role} traffic",
                path=format_path(network.path),
                location=fabric.loaded.source.key(network.path),
                hint=hint,
            )
        )
    return found


def check(fabric: Fabric) -> list[Diagnostic]:
    rules = _Rules(fabric)
    rules.ports_and_speeds()
    rules.reach()
    rules.module_forms()
    rules.racks()
    rules.rails()
    rules.names()
    return [
        *rules.problems,
        *check_power(fabric),
        *check_reach(fabric),
        *single_switch(fabric),
        *check_exposure(fabric),
        *check_optics_vendor(fabric),
        *check_subnet_managers(fabric),
        *check_service_levels(fabric),
        *check_imex(fabric),
        *check_switch_os(fabric),
    ]
