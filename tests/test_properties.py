"""Synthesis invariants over generated specs (hypothesis).

For any spec the generator can write: every port is used at most once; both ends of every link run
its speed and take the cable's or module's plug; every rail of a scalable unit lands on that
unit's rail leaves; link and switch counts equal the fat-tree formulas; no switch is used beyond
its radix; every cable and module reaches.
"""

from __future__ import annotations

import math
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricc.catalog.media import plug_fits
from fabricc.catalog.models import FORM_ACCEPTS, Catalog, SwitchModel
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Device, Fabric
from fabricc.synth.racks import RackPlan
from tests.support import compile_text


@dataclass(frozen=True)
class Case:
    model: str
    count: int
    fabric: str
    planes: int
    ratio: tuple[int, int]
    tiers: str
    pod_sus: int | None
    ufm: int
    inband: bool
    oob: bool
    su_size: int | None
    storage: int = 0  # storage arrays (central, on the in-band and out-of-band networks)
    storage_racks: bool = False  # the storage arrays in racks of their own (a floor region)

    def text(self) -> str:
        group = f"  gpu: {{model: {self.model}, count: {self.count}"
        group += f", su_size: {self.su_size}}}\n" if self.su_size else "}\n"
        lines = [
            "metadata: {name: prop}",
            "site: {racks_per_row: 24, rack: {power_kw: 140}}",
            "nodes:",
            group.rstrip("\n"),
        ]
        if self.ufm:
            lines.append(f"  ufm: {{model: ufm-3.1, count: {self.ufm}}}")
        if self.storage:
            placement = ", placement: own-racks" if self.storage_racks else ""
            lines.append(f"  storage: {{model: storage-array, count: {self.storage}{placement}}}")
        compute = [
            f"role: compute, fabric: {self.fabric}",
            f"oversubscription: '{self.ratio[0]}:{self.ratio[1]}'",
        ]
        if self.planes > 1:
            compute.append(f"planes: {self.planes}")
        if self.tiers != "auto":
            compute.append(f"tiers: {self.tiers}")
        if self.pod_sus:
            compute.append(f"pod_sus: {self.pod_sus}")
        if self.model == "hgx-b300" and self.fabric == "infiniband":
            compute.append("switches: {leaf: q3400}")
        if self.ufm:
            compute.append("reserved_slots: 1")
            compute.append("endpoints: {gpu: {}, ufm: {reserved: true}}")
        lines += ["networks:", "  compute: {" + ", ".join(compute) + "}"]
        if self.inband:
            lines.append("  inband: {role: inband, dual_homed: true}")
        if self.oob:
            lines.append(
                "  oob: {role: oob}" if not self.inband else "  oob: {role: oob, uplink_to: inband}"
            )
        return "\n".join(lines) + "\n"


@st.composite
def cases(draw: st.DrawFn) -> Case:
    model = draw(
        st.sampled_from(
            ["dgx-h100", "dgx-b200", "hgx-h100", "lab-server", "hgx-b300", "gb200-nvl72"]
        )
    )
    fabric = draw(st.sampled_from(["infiniband", "ethernet"]))
    if model == "lab-server":
        fabric = "ethernet"
    planes = draw(st.sampled_from([1, 2])) if model == "hgx-b300" and fabric == "ethernet" else 1
    rack_scale = model == "gb200-nvl72"
    count = draw(st.integers(1, 6)) if rack_scale else draw(st.integers(1, 160))
    su_size = draw(st.integers(1, 2)) if rack_scale else None
    tiers = draw(st.sampled_from(["auto", "auto", "3"])) if not rack_scale else "auto"
    pod_sus = 1 if tiers == "3" else None
    ratio = draw(st.sampled_from([(1, 1), (2, 1), (3, 1), (4, 3)]))
    xdr = model == "hgx-b300" and fabric == "infiniband"  # the UFM 3.1 appliance has NDR ports only
    ufm = (
        draw(st.sampled_from([0, 0, 2]))
        if fabric == "infiniband" and not rack_scale and not xdr
        else 0
    )
    inband = draw(st.booleans())
    oob = draw(st.booleans())
    return Case(model, count, fabric, planes, ratio, tiers, pod_sus, ufm, inband, oob, su_size)


def port_speeds(catalog: Catalog, device: Device, port: str) -> tuple[set[int], str]:
    """Independent reading of the catalog: speeds a port can run and its cage form."""
    if device.kind == "switch":
        switch = catalog.switches[device.model]
        for mgmt in switch.mgmt_ports:
            if mgmt.name == port:
                return set(mgmt.speeds), mgmt.form
        cage, _, sub = port.partition("/")
        first = 0
        for group in switch.port_groups:
            if first < int(cage) <= first + group.count:
                ways = [b for b in group.breakouts if (b > 1) == bool(sub)]
                speeds = {group.cage_speed // b for b in ways}
                # a whole cage runs 1GbE through an adapter holding a 1000BASE-T module (a
                # management tree's root's link, synth/rootlinks.py)
                adapters = [
                    t
                    for t in catalog.transceivers.values()
                    if t.adapter is not None and t.form in FORM_ACCEPTS[group.form]
                ]
                return speeds | ({1} if adapters and not sub else set()), group.form
            first += group.count
        raise AssertionError(f"{device.name} has no cage {cage}")
    if device.kind in ("pdu", "power-shelf"):
        return {1}, "rj45"
    model = catalog.nodes[device.model]
    for spec in model.ports:
        if spec.name == port:
            return set(spec.speeds), spec.form
        if port.startswith(spec.name + "/"):
            return {s // b for s in spec.speeds for b in spec.breakouts if b > 1}, spec.form
    raise AssertionError(f"{device.name} has no port {port}")


def radix(switch: SwitchModel, speed: int) -> int:
    return sum(
        g.count * (g.cage_speed // speed) for g in switch.port_groups if g.cage_speed >= speed
    )


def check_invariants(fabric: Fabric) -> None:
    catalog = fabric.loaded.catalog.catalog
    devices = fabric.devices
    used = Counter(
        (end, port)
        for link in fabric.links
        for end, port in ((link.a, link.a_port), (link.b, link.b_port))
    )
    assert max(used.values()) == 1, "a port is used twice"

    # what a cage's adapter takes: (device, cage) -> forms
    held = {
        (m.device, m.cage): FORM_ACCEPTS[holds]
        for m in fabric.modules
        if (holds := catalog.transceivers[m.part].adapter) is not None
    }
    for link in fabric.links:
        for end, port in ((link.a, link.a_port), (link.b, link.b_port)):
            speeds, form = port_speeds(catalog, devices[end], port)
            assert link.speed in speeds, (end, port, link.speed, speeds)
            cable = link.cable
            assert cable is not None
            family = catalog.cables[cable.family]
            module = link.a_module if end == link.a else link.b_module
            if module is not None:
                fits = FORM_ACCEPTS[form] | held.get((end, port.partition("/")[0]), frozenset())
                assert catalog.transceivers[module].form in fits, (end, port, module)
                assert catalog.transceivers[module].reach_m >= link.distance_m
            else:
                assert family.direct, "fiber without a module"  # copper, AOC, patch cord
                # a plug fits the cage at the cable's own rate, or at a lower rate its entry
                # lists where the plug is a newer one of the cage's outline (QSFP56 in QSFP28)
                fits_at = {
                    (speed, native)
                    for speed, _, native in family.rates
                    if any(plug_fits(form, plug, native) for plug in (family.a_form, family.b_form))
                }
                assert fits_at, (end, port, family)
                if not any(native for _, native in fits_at):
                    assert link.speed in {speed for speed, _ in fits_at}, (end, port, family)
        assert link.cable is not None and link.cable.length_m >= link.distance_m
        assert link.cable.length_m in catalog.cables[link.cable.family].lengths
    # the BOM counts each cable under one network: a cable's legs never span networks
    cable_networks: dict[int, set[str]] = {}
    for link in fabric.links:
        cable_networks.setdefault(id(link.cable), set()).add(link.network)
    assert all(len(networks) == 1 for networks in cable_networks.values())

    # no switch beyond its radix: every cage exists and carries at most its breakout of ports
    per_cage: Counter[tuple[str, str]] = Counter()
    for end, port in used:
        device = devices[end]
        if device.kind == "switch" and port[0].isdigit():
            per_cage[(end, port.partition("/")[0])] += 1
    for (name, cage), ports in per_cage.items():
        switch = catalog.switches[devices[name].model]
        first = 0
        for group in switch.port_groups:
            if first < int(cage) <= first + group.count:
                assert ports <= max(group.breakouts), (name, cage, ports)
                break
            first += group.count
        else:
            raise AssertionError(f"{name} has no cage {cage}")


def check_formulas(fabric: Fabric, case: Case) -> None:
    catalog = fabric.loaded.catalog.catalog
    topology = fabric.networks["compute"]
    links = [link for link in fabric.links if link.network == "compute"]
    kinds = Counter(link.kind for link in links)
    leaves = topology.switches["leaf"]
    rail_class = topology.leaf_classes[0]
    assert rail_class.rail_optimized
    rails = 4 if case.model == "gb200-nvl72" else (2 if case.model == "lab-server" else 8)
    endpoints = sum(
        1 for d in fabric.devices.values() if d.group == "gpu" and d.kind in ("node", "tray")
    )
    # endpoint-leaf links: every rail port of every node on every plane, plus the appliances
    assert kinds[ENDPOINT_LEAF] == endpoints * rails * case.planes + case.ufm * 1
    # leaves: per unit and plane, one leaf per rail per D endpoint ports
    units = topology.sus
    per_unit = fabric.devices[
        next(iter(d for d in fabric.devices.values() if d.group == "gpu")).name
    ]
    del per_unit
    slots = (case.su_size or 0) * 18 if case.model == "gb200-nvl72" else None
    down = rail_class.down_ports
    if slots is None:
        first = fabric.loaded.spec.nodes["gpu"].su_size or down
        slots = first
    leaves_per_rail = math.ceil(slots / down)
    assert len(leaves) == units * rails * leaves_per_rail * case.planes
    # rails land on their own leaves
    landing: dict[tuple[int | None, int | None, int | None], set[str]] = defaultdict(set)
    for link in links:
        if link.kind == ENDPOINT_LEAF and fabric.devices[link.a].group == "gpu":
            leaf = fabric.devices[link.b]
            node = fabric.devices[link.a]
            assert (leaf.rail, leaf.su, leaf.plane) == (link.rail, node.su, link.plane)
            landing[(node.su, link.plane, link.rail)].add(link.b)
    assert all(len(v) <= leaves_per_rail for v in landing.values())
    if topology.tiers == 1:
        return
    # every leaf: U uplinks spread evenly over the spines of its tree
    up = rail_class.up_ports
    assert kinds[LEAF_SPINE] == len(leaves) * up
    spines = topology.switches["spine"]
    spine_model = catalog.switches[topology.switch_models["spine"]]
    ports = radix(spine_model, rail_class.up_speed)
    if topology.tiers == 2:
        per_plane = len(spines) // case.planes
        leaves_per_plane = len(leaves) // case.planes
        # the fewest spines that divide the uplinks and have the ports, at least two where the
        # uplinks allow it (no single spine)
        widths = [s for s in range(2, up + 1) if up % s == 0] or [1]
        expected = next(s for s in widths if leaves_per_plane * up // s <= ports)
        assert per_plane == expected
    else:
        per_pod = topology.spines_per_pod
        assert len(spines) == per_pod * topology.pods * case.planes
        assert (
            kinds[SPINE_CORE]
            == len(spines) * (len(leaves) // (topology.pods * case.planes)) * up // per_pod
        )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_synthesis_invariants(case: Case) -> None:
    with tempfile.TemporaryDirectory() as folder:
        fabric, _ = compile_text(case.text(), Path(folder))
    check_invariants(fabric)
    check_formulas(fabric, case)


@given(st.lists(st.booleans(), max_size=48), st.integers(1, 6), st.booleans())
def test_rack_places_at_the_first_free_run(used: list[bool], height: int, top: bool) -> None:
    """A device goes to the highest (top) or lowest run of `height` free units, or nowhere:
    every start of the rack looked at in order."""
    starts = range(len(used) - height, -1, -1) if top else range(len(used) - height + 1)
    expected = next((s for s in starts if not any(used[s : s + height])), None)
    rack = RackPlan("network", used=list(used))
    device = Device("d", "switch", "m", "leaf", 0, height_u=height)
    assert rack.place(device, top=top) == (expected is not None)
    if expected is not None:
        assert device.u == expected + 1
        assert rack.used[expected : expected + height] == [True] * height
