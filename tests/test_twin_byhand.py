"""`fabricc twin` on a design whose access switches have no OS (issue 41): megascale-roce's OOB
switches are set up from seeds.txt's by-hand lines, as an operator would, and every other switch
provisions itself through their relays; a hand edit of a by-hand line is named."""

from __future__ import annotations

import csv
import io
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.twin import routing
from fabricc.twin.folder import load
from fabricc.twin.lab import lab, own_leftovers
from fabricc.twin.names import Namer
from fabricc.twin.provisioning import provision
from tests.frr_support import require_root
from tests.support import EXAMPLES, require_tool

EXAMPLE = "megascale-roce"
SEEDS = "provisioning/ztp/seeds.txt"
_BUILT: list[Path] = []


def _build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not _BUILT:
        out = tmp_path_factory.mktemp(EXAMPLE) / "out"
        result = CliRunner().invoke(
            cli, ["build", str(EXAMPLES / f"{EXAMPLE}.yaml"), "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        _BUILT.append(out)
    return _BUILT[0]


def _line(text: str, switch: str, edit: Callable[[str], str]) -> str:
    """seeds.txt with one by-hand line edited."""
    lines = text.splitlines(keepends=True)
    at = next(k for k, line in enumerate(lines) if line.startswith(f"{switch}\tby hand\t"))
    lines[at] = edit(lines[at])
    return "".join(lines)


def _relay_elsewhere(line: str) -> str:
    return re.sub(r"DHCP relay to \S+ ", "DHCP relay to 192.0.2.1 ", line)


def _address_moved(line: str) -> str:
    return re.sub(r"management address \S+", "management address 10.128.0.60", line)


def _behind(root: Path, access: str) -> set[str]:
    """The switches with a ZTP file whose management port is cabled to `access`."""
    rows = csv.DictReader(io.StringIO((root / "cabling/cables.csv").read_text()))
    return {
        r["a_device"]
        for r in rows
        if r["kind"] == "mgmt"
        and r["b_device"] == access
        and (root / "provisioning/ztp" / r["a_device"]).is_dir()
    }


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (None, ""),
        (_relay_elsewhere, "no DHCP answer through oob-gpu-leaf002:"),
        (_address_moved, "by-hand management address 10.128.0.60, the inventory plans"),
    ],
)
def test_switches_without_an_os_are_set_up_from_their_by_hand_lines(
    edit: Callable[[str], str] | None,
    words: str,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    require_tool("kea-dhcp4", "dhcrelay", "dhclient")
    require_root()
    root = tmp_path / "out"
    shutil.copytree(_build(tmp_path_factory), root)
    root.chmod(0o755)
    tmp_path.chmod(0o755)
    if edit is not None:
        seeds = root / SEEDS
        seeds.write_text(_line(seeds.read_text(), "oob-gpu-leaf002", edit))
    folder = load(root)
    with lab(400) as the_lab:
        result = provision(the_lab, folder, Namer(folder))
    failures = result["failures"]
    assert isinstance(failures, list)
    switches = {n for n, row in folder.devices.items() if row.get("kind") == "switch"}
    ethernet = {n for n in switches if n.startswith(("oob", "compute"))}
    assert ethernet == switches  # every switch of the design is Ethernet
    by_hand = set(map(str, result["by_hand"]))  # type: ignore[call-overload]
    by_dhcp = set(map(str, result["by_dhcp"]))  # type: ignore[call-overload]
    by_usb = set(map(str, result["by_usb"]))  # type: ignore[call-overload]
    left = set(map(str, result["not_provisioned"]))  # type: ignore[call-overload]
    if edit is None:
        assert failures == []
        assert by_usb == set()
        assert by_hand == {n for n in switches if n.startswith("oob")}
        assert by_dhcp == {n for n in switches if n.startswith("compute")}
        assert left == set()
    else:
        assert any(words in str(f.get("problem")) for f in failures), failures
        if edit is _relay_elsewhere:
            behind = _behind(root, "oob-gpu-leaf002")
            assert behind and left == behind
        else:
            # a switch set up otherwise than its line says is not counted: nor are those behind
            assert left == {"oob-gpu-leaf002"} | _behind(root, "oob-gpu-leaf002")
    assert by_hand | by_dhcp | by_usb | left == switches
    assert not own_leftovers()


def _asn_changed(line: str) -> str:
    # oob-gpu-leaf002 expects another ASN of its parent than the parent's own
    return re.sub(r"(49>oob-gpu-leaf001/)\d+", r"\g<1>4290009999", line)


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("edit", [None, _asn_changed])
def test_the_by_hand_management_tree_routes(
    edit: Callable[[str], str] | None,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    """The OOB network of switches without an OS boots its tree from the by-hand lines: BGP
    unnumbered on every uplink cable Established, every announced subnet reachable; an edited
    neighbour ASN is named by the session it breaks."""
    require_tool("vtysh")
    require_root()
    root = tmp_path / "out"
    shutil.copytree(_build(tmp_path_factory), root)
    root.chmod(0o755)
    tmp_path.chmod(0o755)
    if edit is not None:
        seeds = root / SEEDS
        seeds.write_text(_line(seeds.read_text(), "oob-gpu-leaf002", edit))
    folder = load(root)
    uplinks = [r for r in folder.cables if r["network"] == "oob" and r["kind"] == "uplink"]
    with lab(300) as the_lab:
        booted = routing.boot(the_lab, folder, Namer(folder), "oob")
        assert len(booted.routers) == 8
        designed, sessions = routing.wait_sessions(the_lab, folder, booted)
        checked, unreachable = routing.reachability(the_lab, booted)
    assert designed == 2 * len(uplinks) > 0  # both ends of every uplink cable
    if edit is None:
        assert sessions == []
        assert checked > 0 and unreachable == []
    else:
        assert any("oob-gpu-leaf002" in str(s) and "oob-gpu-leaf001" in str(s) for s in sessions), (
            sessions
        )
    assert not own_leftovers()
