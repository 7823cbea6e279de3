"""The in-band top tier's valley paths: where the OOB access switches uplink into a routed
in-band top tier that shares one ASN (RFC 7938 section 5.2.1), each top-tier switch accepts, on
its sessions with the tier below, a path carrying its own ASN once - for the OOB pool's subnets
and the tier's loopbacks only (allow-my-asn 1 and an inbound route map); every other path with
its own ASN is still dropped, so a leaf's prefix never takes a valley path. Built from
tests/data/inband-valley.yaml (an MLAG leaf pair under three spines, two uplinks per access
switch) and booted in the twin: OOB-to-OOB and OOB-to-spine-loopback reachability hold, and the
spine-down drill loses nothing that still has a path.
"""

from __future__ import annotations

import ipaddress
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.emit.configs.mgmt import VALLEY_MAP, VALLEY_OWN_AS, VALLEY_PREFIXES
from fabricc.ir import Fabric
from fabricc.synth.mgmtnet import MGMT_ASN, management_net
from fabricc.twin import drills, routing
from fabricc.twin.folder import load
from fabricc.twin.lab import lab, leftovers
from fabricc.twin.names import Namer
from fabricc.twin.nvue import nvue_set
from fabricc.twin.nvue_frr import render
from tests.configs_support import cables, nvue
from tests.frr_support import require_root
from tests.support import compile_text
from tests.test_mgmt_routed_leaves import core_tier_design

SPEC = Path(__file__).parent / "data" / "inband-valley.yaml"
OOB_POOL = "10.128.0.0/16"  # addressing.oob's default (spec/models.py)


def _design(tmp_path: Path, text: str | None = None) -> tuple[Fabric, dict[str, str], Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    fabric, artifacts = compile_text(text or SPEC.read_text(), tmp_path, "inband-valley.yaml")
    files = {path: body for path, body in artifacts if isinstance(body, str)}
    return fabric, files, nvue(files)


def _neighbors(tree: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = tree["vrf"]["default"]["router"]["bgp"]["neighbor"]
    return found


def _far(files: dict[str, str], switch: str) -> dict[str, tuple[str, str]]:
    """port (Cumulus name) -> (far switch, cable kind) for a switch's cables."""
    found: dict[str, tuple[str, str]] = {}
    for row in cables(files):
        for near, far in (("a", "b"), ("b", "a")):
            if row[f"{near}_device"] == switch:
                port = row[f"{near}_port"]
                name = port if port.startswith("swp") else f"swp{port}"
                found[name] = (row[f"{far}_device"], row["kind"])
    return found


def test_the_top_tier_accepts_valley_paths_for_oob_and_its_loopbacks_only(
    tmp_path: Path,
) -> None:
    fabric, files, trees = _design(tmp_path)
    spines = fabric.networks["inband"].switches["spine"]
    leaves = fabric.networks["inband"].switches["leaf"]
    assert len(spines) == 3
    net = management_net(fabric)
    assert net.inband is not None and net.inband.leaves  # routed at the leaves
    loopbacks = sorted(ipaddress.IPv4Address(a) for a in net.inband.real.values())
    # the OOB pool (any length to /32) and exactly the spines' loopbacks
    assert net.inband.valley[0] == OOB_POOL
    covered = [ipaddress.IPv4Network(p) for p in net.inband.valley[1:]]
    assert sorted(a for n in covered for a in n) == loopbacks
    session = {
        "ipv4-unicast": {
            "aspath": {"allow-my-asn": {"state": "enabled", "occurrences": 1}},
            "policy": {"inbound": {"route-map": VALLEY_MAP}},
        }
    }
    for spine in spines:
        tree = trees[spine]
        far = _far(files, spine)
        below = above = 0
        for name, entry in _neighbors(tree).items():
            other, kind = far[name]
            if kind == "leaf-spine":
                assert other in leaves
                assert entry.get("address-family") == session, (spine, name)
                below += 1
            else:  # an access switch's uplink: its own ASN, nothing to relax
                assert kind == "uplink" and other.startswith("oob-"), (spine, name)
                assert "address-family" not in entry, (spine, name)
                above += 1
        assert below and above
        policy = tree["router"]["policy"]
        rules = policy["prefix-list"][VALLEY_PREFIXES]["rule"]
        matched = {p: b for rule in rules.values() for p, b in rule["match"].items()}
        assert matched[OOB_POOL] == {"max-prefix-len": 32}
        assert all(r["action"] == "permit" for r in rules.values())
        (own,) = policy["as-path-list"][VALLEY_OWN_AS]["rule"].values()
        assert own == {"action": "permit", "aspath-exp": f"_{MGMT_ASN}_"}
        route_map = policy["route-map"][VALLEY_MAP]["rule"]
        assert [route_map[k] for k in sorted(route_map, key=int)] == [
            {"match": {"ip-prefix-list": VALLEY_PREFIXES}, "action": {"permit": {}}},
            {"match": {"as-path-list": VALLEY_OWN_AS}, "action": {"deny": {}}},
            {"action": {"permit": {}}},
        ]
    for switch in [*leaves, *(s for s in trees if s.startswith("oob-"))]:
        assert "policy" not in trees[switch].get("router", {}), switch
        assert all("address-family" not in e for e in _neighbors(trees[switch]).values())


def test_cores_accept_valley_paths_from_the_pod_spines(tmp_path: Path) -> None:
    fabric, files, trees = core_tier_design(tmp_path)
    cores = fabric.networks["inband"].switches["core"]
    for core in cores:
        far = _far(files, core)
        relaxed = {n for n, e in _neighbors(trees[core]).items() if "address-family" in e}
        assert relaxed == {n for n, (_, kind) in far.items() if kind == "spine-core"}, core
        assert VALLEY_MAP in trees[core]["router"]["policy"]["route-map"]
    for spine in fabric.networks["inband"].switches["spine"]:  # a pod's spines: not the top
        assert "policy" not in trees[spine]["router"], spine
        assert all("address-family" not in e for e in _neighbors(trees[spine]).values())


def test_no_valley_policy_without_access_uplinks_or_routed_leaves(tmp_path: Path) -> None:
    text = SPEC.read_text()
    # the OOB network uplinks nowhere (its own management tree): the spines need no valley
    alone = text.replace("    uplink_to: inband\n", "")
    assert alone != text
    fabric, _, trees = _design(tmp_path / "alone", alone)
    net = management_net(fabric)
    assert net.inband is not None and net.inband.leaves and not net.inband.valley
    for spine in fabric.networks["inband"].switches["spine"]:
        assert "policy" not in trees[spine]["router"]
    # two spines, an MLAG pair bridged up to them: the top tier runs no session with leaves
    pair = text.replace("    spines: 3\n", "    spines: 2\n")
    fabric, _, trees = _design(tmp_path / "pair", pair)
    net = management_net(fabric)
    assert net.inband is not None and not net.inband.leaves and not net.inband.valley
    assert "policy" not in trees["inband-spine001"]["router"]


@pytest.mark.tool
@pytest.mark.slow
def test_the_twin_reaches_every_oob_switch_and_spine_through_the_valley(
    tmp_path: Path,
) -> None:
    require_root()
    shutil.which("vtysh") or pytest.skip("FRR (vtysh) is not installed")
    root = tmp_path / "out"
    result = CliRunner().invoke(cli, ["build", str(SPEC), "-o", str(root)])
    assert result.exit_code == 0, result.output
    for path in (root, tmp_path):
        path.chmod(0o755)
    folder = load(root)
    spine = render(nvue_set(folder, "inband-spine001"))
    assert spine is not None and f"route-map {VALLEY_MAP} in" in spine
    with lab(240) as the_lab:
        tag = the_lab.tag
        booted = routing.boot(the_lab, folder, Namer(folder), "inband")
        assert {"oob-leaf001", "inband-spine003"} <= set(booted.routers)
        designed, failures = routing.wait_sessions(the_lab, folder, booted)
        checked, unreachable = routing.reachability(the_lab, booted)
        found = {d["drill"]: d for d in drills.run(the_lab, booted)}
    assert designed > 0 and failures == [], failures
    # every access switch reaches every spine's loopback, cabled to it or not
    assert checked > 0 and unreachable == [], unreachable
    down = found["one spine down"]
    assert down["down"] == ["inband-spine001"]
    # access switches that shared only spine001 still reach each other down through a leaf
    assert down["failures"] == [], down
    assert down["lost_by_design"] == [] and down["still_reach"] == down["pairs"]
    assert isinstance(down["pairs"], int) and down["pairs"] >= 6 * 5
    assert not leftovers(f"ftw{tag}")
