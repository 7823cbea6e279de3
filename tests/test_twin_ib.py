"""`fabricc twin`, InfiniBand: each subnet of a build in ibsim, routed by OpenSM as configured.

The route check is pinned on a hand-written fabric (no tools); the booting tests run the real
ibsim, OpenSM and ibnetdiscover on real builds, with faults edited into the build's ibsim.net as an
engineer cabling by it would make them, and the twin must name the cable.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.twin import ib, lft, requirements, smdrill
from fabricc.twin.folder import load
from fabricc.twin.ibsim import Simulator
from fabricc.twin.lab import lab, own_leftovers
from fabricc.verify.ibnetdiscover import IbNode, IbPort
from tests.frr_support import require_root
from tests.ib_support import parse_net, write_net
from tests.support import EXAMPLES, require_tool

TOOLS = ("ibsim", "opensm", "ibnetdiscover")

# leaf (LID 1, GUID 0x10) ports 1, 2: CAs a (LID 3, GUID 0x30), b (LID 4, GUID 0x40); port 3: spine
# (LID 2, GUID 0x20), whose port 1 leads back to the leaf
NODES = {
    0x10: IbNode(0x10, True, "leaf", {1: IbPort(0x30, 1, None), 2: IbPort(0x40, 1, None),
                                      3: IbPort(0x20, 1, None)}),
    0x20: IbNode(0x20, True, "spine", {1: IbPort(0x10, 3, None)}),
    0x30: IbNode(0x30, False, "a/P1", {1: IbPort(0x10, 1, None)}),
    0x40: IbNode(0x40, False, "b/P1", {1: IbPort(0x10, 2, None)}),
}  # fmt: skip


def _dump(leaf: dict[int, int], spine: dict[int, int]) -> str:
    names = {1: ("Switch", 0x10, "leaf"), 2: ("Switch", 0x20, "spine"),
             3: ("Channel Adapter", 0x31, "a/P1"), 4: ("Channel Adapter", 0x41, "b/P1")}  # fmt: skip
    lines = []
    for lid, guid, name, table in ((1, 0x10, "leaf", leaf), (2, 0x20, "spine", spine)):
        lines.append(f"Unicast lids [0-4] of switch Lid {lid} guid {guid:#018x} ('{name}'):")
        for dest, port in sorted(table.items()):
            kind, pguid, owner = names[dest]
            lines.append(f"0x{dest:04x} {port:03d} # {kind} portguid {pguid:#018x}: '{owner}'")
        lines.append(f"{len(table)} lids dumped")
    return "\n".join(lines) + "\n"


def test_every_lid_is_reached_from_every_ca_port() -> None:
    tables = lft.parse_lfts(_dump({1: 0, 2: 3, 3: 1, 4: 2}, {1: 1, 2: 0, 3: 1, 4: 1}))
    assert tables.owner == {1: "leaf", 2: "spine", 3: "a/P1", 4: "b/P1"}
    # sources a and b, to the 3 LIDs other than their own
    assert lft.unrouted(NODES, tables) == (6, 0, [])


def test_a_missing_entry_and_a_loop_are_named() -> None:
    # the leaf has no entry for b; the spine sends the leaf's own LID back and forth is fine, but
    # the leaf sends the spine's LID to port 1 (CA a): it never reaches the spine
    tables = lft.parse_lfts(_dump({1: 0, 2: 1, 3: 1}, {1: 1, 2: 0, 3: 1, 4: 1}))
    checked, missing, named = lft.unrouted(NODES, tables)
    assert (checked, missing) == (6, 3)
    text = json.dumps(named)
    assert (
        '"from": "a/P1", "to": "b/P1 (LID 4)", "problem": "no entry for it in the LFT of leaf"'
        in text
    )
    assert "leaf port 1 leads to a/P1" in text  # b -> spine (LID 2)
    # a loop: the leaf sends b's LID up, the spine sends it back down
    looping = lft.parse_lfts(_dump({1: 0, 2: 3, 3: 1, 4: 3}, {1: 1, 2: 0, 3: 1, 4: 1}))
    _, missing, named = lft.unrouted(NODES, looping)
    assert missing == 1 and named[0]["problem"].startswith("loops at ")


def test_a_dump_is_whole_only_with_every_switch_table_closed() -> None:
    text = _dump({1: 0, 2: 3, 3: 1, 4: 2}, {1: 1, 2: 0, 3: 1, 4: 1})
    assert lft.whole(text, 2)
    assert not lft.whole(text, 3)  # a sweep that did not reach a switch
    cut = text.rindex("4 lids dumped")
    assert not lft.whole(text[:cut], 2)  # caught while OpenSM writes the last table
    assert not lft.whole(text[: text.index("Unicast lids", 1)], 2)  # one table of two


# OpenSM's heavy sweep rewriting its dump in place (fopen "w", then the tables in stdio-sized
# pieces): the file is cut to nothing, then grows with pauses between pieces
REWRITER = """
import sys, time
path, text = sys.argv[1], open(sys.argv[2]).read()
with open(path, "w") as out:
    for start in range(0, len(text), 40):
        out.write(text[start : start + 40]); out.flush(); time.sleep(0.4)
"""


def test_a_dump_being_rewritten_is_read_once_it_is_whole(tmp_path: Path) -> None:
    """A read while the daemon rewrites the dump (the pause between pieces longer than any
    size-stable wait) is retried until the tables are whole: a read cut short would leave most
    switches without a table, and every route through them unrouted."""
    text = _dump({1: 0, 2: 3, 3: 1, 4: 2}, {1: 1, 2: 0, 3: 1, 4: 1})
    source, dump = tmp_path / "whole", tmp_path / "opensm-lfts.dump"
    source.write_text(text)
    dump.write_text(text[:100])
    writer = subprocess.Popen([sys.executable, "-c", REWRITER, str(dump), str(source)])
    try:
        read = smdrill.read_dump(dump, 2, settle=5.0)
    finally:
        writer.kill()
        writer.wait()
    assert read == text
    # a dump that stays short (a switch never routed) is returned as it is after `settle`
    dump.write_text(text[:100])
    assert smdrill.read_dump(dump, 2, settle=0.5) == text[:100]
    assert smdrill.read_dump(tmp_path / "absent", 2, settle=0) == ""


def test_no_drill_without_a_standby_subnet_manager(tmp_path: Path) -> None:
    conf = tmp_path / "opensm.conf"
    conf.write_text("#   ufm01: master, sm_priority 15\nsm_priority 15\n")
    assert smdrill.run(Simulator({}, tmp_path), conf, NODES) is None
    assert smdrill.managers(conf.read_text(), {"ufm01/P1"}) is None


# a daemon's stand-in: `phase` seconds of work (busy: spinning on a CPU; logging: a line every
# 0.1 s; idle: asleep), then the line the drill waits for
DAEMON = """
import sys, time
log, mode, phase = sys.argv[1], sys.argv[2], float(sys.argv[3])
end = time.monotonic() + phase
with open(log, "a") as out:
    while time.monotonic() < end:
        if mode == "idle":
            time.sleep(phase)
        elif mode == "logging":
            out.write("sweeping\\n"); out.flush(); time.sleep(0.1)
    out.write("SUBNET UP\\n")
time.sleep(30)
"""


@pytest.mark.parametrize(("mode", "reached"), [("busy", True), ("logging", True), ("idle", False)])
def test_the_drill_waits_while_the_subnet_manager_makes_progress(
    mode: str, reached: bool, tmp_path: Path
) -> None:
    """A sweep that outlasts the stall time is waited for while the daemon works or logs; a
    daemon that only waits is given up on after the stall time, however long its own wait."""
    log = tmp_path / "sm.log"
    daemon = subprocess.Popen([sys.executable, "-c", DAEMON, str(log), mode, "2.5"])
    try:
        took = smdrill._wait(log, "SUBNET UP", daemon, 1.0)
    finally:
        daemon.kill()
        daemon.wait()
    if reached:
        assert took is not None and took >= 2.5
    else:
        assert took is None


@pytest.mark.parametrize(
    ("mode", "phase", "least", "most"),
    [
        ("busy", 2.0, 2.0, 5.0),  # quiet once its work is done
        ("logging", 2.0, 2.0, 5.0),
        ("idle", 2.0, 0.4, 1.9),  # quiet from the start
        ("logging", 60.0, 2.0, 5.0),  # never quiet: it goes after the drill's wait (here 2 s)
    ],
)
def test_the_master_is_stopped_once_it_is_quiet(
    mode: str,
    phase: float,
    least: float,
    most: float,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The drill stops the master only once it has neither logged nor worked for a while: the
    sweep it makes when the standby joins is not cut off in the middle."""
    monkeypatch.setattr(smdrill, "WAIT", 2.0)
    log = tmp_path / "sm.log"
    daemon = subprocess.Popen([sys.executable, "-c", DAEMON, str(log), mode, str(phase)])
    try:
        start = time.monotonic()
        smdrill._quiet(log, daemon, 0.4)
        took = time.monotonic() - start
    finally:
        daemon.kill()
        daemon.wait()
    assert least <= took <= most


def test_infiniband_tools_are_required_only_with_infiniband(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(requirements, "_found", lambda program: "ib" not in program)
    assert not any("ibsim" in line for line in requirements.missing(infiniband=False))
    assert any("ibsim-utils" in line for line in requirements.missing(infiniband=True))
    assert not ib.has_infiniband(tmp_path)
    (tmp_path / "configs" / "compute-sm").mkdir(parents=True)
    (tmp_path / "configs" / "compute-sm" / "ibsim.net").write_text("")
    assert ib.has_infiniband(tmp_path)
    seen: list[bool] = []

    def missing(*, infiniband: bool, netplan: bool = False) -> list[str]:
        seen.append(infiniband)
        return ["ibsim not found: install the Debian package ibsim-utils"]

    monkeypatch.setattr(requirements, "missing", missing)
    result = CliRunner().invoke(cli, ["twin", str(tmp_path)])
    assert result.exit_code == 2 and seen == [True]
    assert "ibsim-utils" in result.output


def _build(example: str, out: Path) -> Path:
    result = CliRunner().invoke(cli, ["build", str(EXAMPLES / f"{example}.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def rail_only(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _build("rail-only-h100", tmp_path_factory.mktemp("rail-only") / "out")


def _swap_leaf_ports(net: str, one: str, two: str) -> str:
    """Two CAs' cables swapped at the leaf, written on both ends (as ibsim needs)."""
    preamble, records = parse_net(net)
    by_name = {r.name: r for r in records}
    (leaf, p1), (_, p2) = by_name[one].links[1], by_name[two].links[1]
    by_name[one].links[1], by_name[two].links[1] = (leaf, p2), (leaf, p1)
    by_name[leaf].links[p1], by_name[leaf].links[p2] = (two, 1), (one, 1)
    return write_net(preamble, records)


def _unplug(net: str, ca: str) -> str:
    preamble, records = parse_net(net)
    by_name = {r.name: r for r in records}
    leaf, port = by_name[ca].links.pop(1)
    del by_name[leaf].links[port]
    return write_net(preamble, records)


def _run(folder: Path, subnet: str, *, drill: bool) -> dict[str, object]:
    loaded = load(folder)
    (target,) = [s for s in ib.subnets(loaded) if s.name == subnet]
    with lab(120) as the_lab:
        return ib.check(the_lab, loaded, target, drill=drill)


@pytest.mark.tool
@pytest.mark.parametrize("fault", [None, "swapped", "unplugged"])
def test_each_subnet_routes_and_cabling_faults_are_named(
    fault: str | None, rail_only: Path, tmp_path: Path
) -> None:
    require_tool(*TOOLS)
    require_root()
    folder = tmp_path / "out"
    shutil.copytree(rail_only, folder)
    net_file = folder / "configs/compute-rail1-sm/ibsim.net"
    if fault == "swapped":
        net_file.write_text(
            _swap_leaf_ports(net_file.read_text(), "dgx001/OSFP4/P2", "dgx002/OSFP4/P2")
        )
    elif fault == "unplugged":
        net_file.write_text(_unplug(net_file.read_text(), "dgx003/OSFP4/P2"))
    result = _run(folder, "compute-rail1", drill=fault is None)
    assert result["network"] == "compute"
    manager = result["subnet_manager"]
    assert isinstance(manager, dict)
    assert manager["failures"] == [] and manager["configured_by"] == "updn"
    assert (manager["master"], manager["standbys"]) == ("dgx-sm01", ["dgx-sm02"])
    cabling, routes = result["cabling"], result["routes"]
    assert isinstance(cabling, dict) and isinstance(routes, dict)
    assert cabling["cables"] == 64  # 62 DGX + 2 SM hosts on the rail's one leaf
    failures = json.dumps(cabling["failures"])
    if fault is None:
        assert cabling["failures"] == [] and cabling["ok"] == 64
        # 64 CA ports, each to the 64 other LIDs (63 CA ports and the leaf)
        assert routes == {"lids": 65, "pairs": 64 * 64, "failures": []}
        # the master SM (dgx-sm01) stopped: the standby takes over and routes every pair again
        drills = result["drills"]
        assert isinstance(drills, list) and len(drills) == 1
        drill = drills[0]
        assert drill["failures"] == [] and drill["takes_over"] == "dgx-sm02"
        assert drill["pairs"] == 64 * 64 and drill["designed_takeover_s"] == 40.0
    elif fault == "swapped":
        assert cabling["ok"] == 62
        assert "dgx001:OSFP4/P2" in failures and "dgx002:OSFP4/P2" in failures
        assert "miswired" in failures
    else:
        assert cabling["ok"] == 63
        assert '"status": "missing"' in failures and "dgx003:OSFP4/P2" in failures
    assert not own_leftovers()
