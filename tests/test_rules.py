"""Design rules catch broken designs: each test breaks one thing in a good IR and expects the rule
that guards it to fire (synthesis never produces these, so they are injected here)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from fabricc.checks.rules import check
from fabricc.errors import Severity
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, Fabric
from fabricc.spec.loader import load_spec
from fabricc.synth.pipeline import synthesize
from tests.support import EXAMPLES, compile_text


@pytest.fixture
def fabric() -> Fabric:
    loaded = load_spec(EXAMPLES / "roce-lab.yaml", "examples/roce-lab.yaml")
    return synthesize(loaded)


def errors(fabric: Fabric) -> list[str]:
    return [d.render() for d in check(fabric) if d.severity is Severity.ERROR]


def test_good_design_passes(fabric: Fabric) -> None:
    assert errors(fabric) == []


def test_port_used_twice(fabric: Fabric) -> None:
    first = next(link for link in fabric.links if link.kind == ENDPOINT_LEAF)
    twin = copy.copy(first)
    fabric.links.append(twin)
    assert any("is used by two links" in e for e in errors(fabric))


def test_rail_landing_on_the_wrong_leaf(fabric: Fabric) -> None:
    links = [link for link in fabric.links if link.kind == ENDPOINT_LEAF]
    rail0 = next(link for link in links if link.rail == 0)
    rail1 = next(link for link in links if link.rail == 1)
    rail0.b, rail0.b_port = rail1.b, "8/2"
    found = errors(fabric)
    # rails and units are numbered from 1, as in every output
    message = f"rail 1 lands on {rail1.b} (rail 2, unit 1)"
    assert any(message in e and e.startswith("examples/roce-lab.yaml:") for e in found), found


def test_unequal_leaf_spine_links(fabric: Fabric) -> None:
    uplink = next(link for link in fabric.links if link.kind == LEAF_SPINE)
    fabric.links.remove(uplink)
    assert any("unequal link counts" in e for e in errors(fabric))


def test_speed_a_port_cannot_run(fabric: Fabric) -> None:
    link = next(link for link in fabric.links if link.kind == ENDPOINT_LEAF)
    link.speed = 1600
    assert any("cannot run 1600G" in e for e in errors(fabric))


def test_port_that_does_not_exist(fabric: Fabric) -> None:
    link = next(link for link in fabric.links if link.kind == ENDPOINT_LEAF)
    link.b_port = "99/1"
    assert any("has no port 99/1" in e for e in errors(fabric))


def test_cable_shorter_than_the_run(fabric: Fabric) -> None:
    link = next(link for link in fabric.links if link.cable is not None and link.kind == LEAF_SPINE)
    assert link.cable is not None
    link.cable.length_m = link.distance_m - 1
    assert any("for a" in e and "m run" in e for e in errors(fabric))


def test_module_beyond_its_reach(fabric: Fabric) -> None:
    link = next(link for link in fabric.links if link.a_module is not None)
    link.distance_m = 70.0
    assert link.cable is not None
    link.cable.length_m = 70.0
    assert any("reaches 50.0 m, the run is 70.0 m" in e for e in errors(fabric))


def test_module_on_a_cable_of_other_media(fabric: Fabric) -> None:
    link = next(link for link in fabric.links if link.a_module is not None and link.cable)
    assert link.cable is not None
    link.cable.media = "smf"
    assert any("is mmf but cable" in e and "is smf" in e for e in errors(fabric))


def test_fiber_without_a_module_at_one_end(fabric: Fabric) -> None:
    link = next(link for link in fabric.links if link.b_module is not None and link.cable)
    assert link.cable is not None
    link.b_module = None
    assert any(f"fiber {link.cable.id} has no transceiver at one end" in e for e in errors(fabric))


def test_switch_module_in_a_host_cage(fabric: Fabric) -> None:
    module = next(m for m in fabric.modules if fabric.devices[m.device].kind == "node")
    module.part = "MMA4Z00-NS"  # finned-top twin-port: switch side only
    assert any("does not fit cage" in e for e in errors(fabric))


def test_rack_over_its_power_budget(fabric: Fabric) -> None:
    rack = next(r for r in fabric.racks if r.role == "compute")
    rack.power_budget_w = 1000
    found = errors(fabric)
    assert any(f"rack {rack.name} draws" in e for e in found)
    # roce-lab leaves nodes_per_rack to the default, so the responsible line is the budget
    assert any(
        e.startswith("examples/roce-lab.yaml:11:") and "site.rack.power_kw" in e for e in found
    ), found


def test_two_devices_in_one_rack_unit(fabric: Fabric) -> None:
    rack = next(r for r in fabric.racks if r.role == "compute")
    nodes = [fabric.devices[n] for n in rack.devices if fabric.devices[n].kind == "node"]
    nodes[1].u = nodes[0].u
    assert any("both occupy" in e for e in errors(fabric))


def test_invalid_hostname(fabric: Fabric) -> None:
    device = next(d for d in fabric.devices.values() if d.kind == "node")
    fabric.devices["gpu_01"] = device
    device.name = "gpu_01"
    assert any("is not a valid hostname" in e for e in errors(fabric))


def test_inexact_oversubscription_is_a_warning(tmp_path: Path) -> None:
    fabric, _ = compile_text(
        "metadata: {name: ratio}\nnodes:\n  gpu: {model: lab-server, count: 4}\n"
        "networks:\n  compute:\n    role: compute\n    fabric: ethernet\n"
        "    endpoints: {gpu: {leaf_downlinks: 10, oversubscription: '3:1'}}\n",
        tmp_path,
    )
    warnings = [d.render() for d in fabric.warnings]
    assert any("5:2 oversubscribed" in w and "not 3:1 as asked" in w for w in warnings), warnings
