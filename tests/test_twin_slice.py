"""`fabricc twin`: a design larger than the machine boots runs as a named slice - one scalable
unit with every spine, core and shared device - and says so. Checked on the folder the twin would
boot (no namespaces needed): which devices and cables are in, and the scope it reports."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.errors import SpecError
from fabricc.twin.folder import load
from fabricc.twin.names import Namer
from fabricc.twin.routing import outside
from fabricc.twin.run import ethernet_networks
from fabricc.twin.slice import MAX_CABLES, choose, cut, routed_cables, units
from tests.support import EXAMPLES


@pytest.fixture(scope="module")
def superpod(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("superpod") / "out"
    spec = EXAMPLES / "superpod-h100-4su.yaml"
    assert CliRunner().invoke(cli, ["build", str(spec), "-o", str(out)]).exit_code == 0
    return out


def test_a_small_design_boots_whole(superpod: Path) -> None:
    folder = load(superpod)
    booted, scope = choose(folder, ethernet_networks(folder), None)
    assert booted is folder and scope.text() == "whole design"


def test_a_large_design_boots_its_first_su_with_every_spine(superpod: Path) -> None:
    folder = load(superpod)
    networks = ethernet_networks(folder)
    assert units(folder) == ["1", "2", "3", "4"]
    booted, scope = choose(folder, networks, None, limit=100)
    assert scope.su == "1" and scope.sus == 4
    assert scope.text().startswith("slice: scalable unit 1 of 4 with every spine, core")
    rows = folder.devices
    cabled = {
        r[e] for r in folder.cables if r["network"] in networks for e in ("a_device", "b_device")
    }
    kept = {r[e] for r in booted.cables for e in ("a_device", "b_device")}
    assert scope.devices == len(kept | (cabled & set(booted.devices))) < scope.total == len(cabled)
    # every device of SU 1 and every device of no SU (spines, cores, shared servers) is in
    for name in cabled:
        unit = rows[name]["scalable_unit"]
        if unit in ("", "1"):
            assert name in booted.devices, name
    # of the other SUs only the access switches that manage a kept device
    strangers = {n for n in kept if rows.get(n, {}).get("scalable_unit", "") not in ("", "1")}
    for name in strangers:
        assert rows[name]["kind"] == "switch"
        assert any(
            r["kind"] == "mgmt"
            and name in (r["a_device"], r["b_device"])
            and {r["a_device"], r["b_device"]} - {name} <= kept
            for r in folder.cables
        ), name
    assert not any(rows[n]["role"] == "gpu-node" and rows[n]["scalable_unit"] == "2" for n in kept)
    # a cable is booted only with both its ends
    assert all(r["a_device"] in kept and r["b_device"] in kept for r in booted.cables)
    # the rest are named as left out (their neighbours are not expected Established)
    assert len(booted.cables) + len(booted.left_out) == len(folder.cables)
    assert all(r["a_device"] not in kept or r["b_device"] not in kept for r in booted.left_out)
    spines = {n for n in cabled if rows[n]["role"] in ("spine", "core")}
    assert spines and spines <= kept
    # the border links to the site network stay known to the slice (their neighbours are not
    # expected up either)
    assert folder.site_cables and booted.site_cables == folder.site_cables


def test_a_named_su_and_an_unknown_one(superpod: Path) -> None:
    folder = load(superpod)
    networks = ethernet_networks(folder)
    _, scope = choose(folder, networks, "3")
    assert scope == cut(folder, "3", networks)[1] and scope.su == "3"
    forced, whole = choose(folder, networks, "whole", limit=1)
    assert forced is folder and whole.text() == "whole design"
    with pytest.raises(SpecError, match="no scalable unit '9'"):
        choose(folder, networks, "9")


def test_a_design_of_one_large_su_keeps_its_first_leaves(tmp_path: Path) -> None:
    """gb300-nvl72-spectrum-x is one SU of 1,728 routed cables (about 9 minutes on 2 shared
    cores): the slice keeps every spine and the first leaves within the bound on routed cables."""
    out = tmp_path / "out"
    spec = EXAMPLES / "gb300-nvl72-spectrum-x.yaml"
    assert CliRunner().invoke(cli, ["build", str(spec), "-o", str(out)]).exit_code == 0
    folder = load(out)
    networks = ethernet_networks(folder)
    assert routed_cables(folder, networks) > MAX_CABLES
    booted, scope = choose(folder, networks, None)
    assert scope.su == "1" and scope.leaves is not None
    kept_leaves, of = scope.leaves
    assert f"its first {kept_leaves} of {of} routed leaves with every spine" in scope.text()
    assert routed_cables(booted, networks) <= MAX_CABLES < routed_cables(folder, networks)
    kept = {r[e] for r in booted.cables for e in ("a_device", "b_device")}
    rows = folder.devices
    spines = {n for n in rows if rows[n]["role"] == "spine" and rows[n]["network"] in networks}
    assert spines <= kept
    for network in networks:
        uplinked = {
            r["a_device"]
            for r in folder.cables
            if r["network"] == network and r["kind"] == "leaf-spine"
        }
        if uplinked:
            # at least two leaves per network, and the kept ones are the first by name
            mine = sorted(uplinked & kept)
            assert len(mine) >= 2 and mine == sorted(uplinked)[: len(mine)], network
    # an endpoint boots only where it reaches a kept leaf
    for row in booted.cables:
        if row["kind"] == "endpoint-leaf":
            assert row["b_device"] in kept


def test_every_cut_end_of_a_kept_router_is_outside(superpod: Path) -> None:
    """A slice that cuts an out-of-band access switch's uplink on an in-band spine (a cable of
    network oob, booted with in-band: mixed-gb200-gb300's SU 2 switches) and keeps the site
    uplinks: the spines' sessions on both are not expected up."""
    folder = load(superpod)
    booted, _ = choose(folder, ethernet_networks(folder), "2")
    spines = {
        n for n, r in folder.devices.items() if r["network"] == "inband" and r["role"] == "spine"
    }
    cut_one = next(r for r in booted.cables if r["kind"] == "uplink" and r["b_device"] in spines)
    booted.cables.remove(cut_one)
    booted.left_out.append(cut_one)
    namer = Namer(booted)
    site = {
        (r["a_device"], namer.interface(r["a_device"], r["a_port"])) for r in folder.site_cables
    }
    assert cut_one["network"] == "oob" and site
    assert outside(booted, namer, spines) == site | {
        (cut_one["b_device"], namer.interface(cut_one["b_device"], cut_one["b_port"]))
    }
