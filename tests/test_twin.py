"""`fabricc twin`: a build folder booted in namespaces names the faults injected into it.

The folders are real builds (`fabricc build`); each fault is a hand edit of one file, as an
engineer might make it, and the twin must name the device, session or prefix it breaks. Tests
that boot need root and the tools: they skip outside CI and fail in CI (tests.support).
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.twin import requirements, routing
from fabricc.twin.folder import load
from fabricc.twin.lab import PREFIX, RUN, TAG_LENGTH, lab, leftovers, own_leftovers
from fabricc.twin.names import Namer
from fabricc.twin.provisioning import provision
from fabricc.twin.run import twin
from tests.frr_support import require_root
from tests.support import EXAMPLES, require_tool

TOOLS = ("vtysh", "kea-dhcp4", "dhcrelay", "dhclient")
_BUILT: dict[str, Path] = {}


def _built(example: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    if example not in _BUILT:
        out = tmp_path_factory.mktemp(example) / "out"
        result = CliRunner().invoke(
            cli, ["build", str(EXAMPLES / f"{example}.yaml"), "-o", str(out)]
        )
        assert result.exit_code == 0, result.output
        _BUILT[example] = out
    return _BUILT[example]


def _copy(example: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Path:
    folder = tmp_path / "out"
    shutil.copytree(_built(example, tmp_path_factory), folder)
    folder.chmod(0o755)
    tmp_path.chmod(0o755)
    return folder


def _edit(path: Path, edit: Callable[[str], str]) -> None:
    before = path.read_text()
    after = edit(before)
    assert after != before, f"the fault did not change {path}"
    path.write_text(after)


def _booting() -> None:
    require_tool(*TOOLS)
    require_root()


def test_missing_tools_are_named_with_their_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(requirements, "_found", lambda program: "dhcrelay" not in program)
    lines = requirements.missing(infiniband=False)
    assert any("dhcrelay" in line and "isc-dhcp-relay" in line for line in lines), lines
    assert all("\n" not in line for line in lines)


def test_cli_exits_2_on_a_missing_requirement(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(requirements, "missing", lambda **_: ["kea-dhcp4 not found: install x"])
    result = CliRunner().invoke(cli, ["twin", str(tmp_path)])
    assert result.exit_code == 2
    assert "kea-dhcp4 not found: install x" in result.output


def test_not_a_build_folder_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    _booting()
    result = CliRunner().invoke(cli, ["twin", str(tmp_path)])
    assert result.exit_code == 1
    assert "not a fabricc build folder" in result.output
    assert "Traceback" not in result.output


@pytest.mark.tool
def test_nothing_is_left_after_a_failure() -> None:
    _booting()
    tag = ""
    with pytest.raises(RuntimeError), lab(30) as the_lab:
        tag = the_lab.tag
        a, b = the_lab.namespace(), the_lab.namespace()
        the_lab.cable(a, "x0", b, "y0")
        the_lab.start(a, "sleep", "60", log="sleep.log")
        raise RuntimeError("a stage failed")
    assert not [ns for ns in leftovers() if tag in ns]
    assert not (RUN / tag).exists()


@pytest.mark.tool
@pytest.mark.slow
def test_sigterm_removes_everything(tmp_path_factory: pytest.TempPathFactory) -> None:
    _booting()
    folder = _built("roce-lab", tmp_path_factory)
    process = subprocess.Popen(
        [sys.executable, "-m", "fabricc", "twin", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    # only this run's namespaces count: another twin may run on the same machine
    tags: set[str] = set()
    deadline = time.monotonic() + 30
    while not tags and time.monotonic() < deadline:
        tags |= _lab_tags(process.pid)
        time.sleep(0.05)
    end = time.monotonic() + 2.0  # in the middle of booting
    while time.monotonic() < end:
        tags |= _lab_tags(process.pid)
        time.sleep(0.05)
    assert tags, "the twin started no lab"
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 1, output
    assert "interrupted" in output
    assert [ns for ns in leftovers() if ns[len(PREFIX) : len(PREFIX) + TAG_LENGTH] in tags] == []
    assert not [tag for tag in tags if (RUN / tag).exists()]


def _lab_tags(pid: int) -> set[str]:
    """The lab tags of the twin process `pid`: the ftw<tag> namespaces its children name on
    their command lines, and the lab folders (RUN/<tag>) its daemons run in."""
    tags: set[str] = set()
    # a namespace's name as a word of its own (ip -n ftw<tag>) or at the end of a path
    # (nsenter --net=/run/netns/ftw<tag>)
    pattern = re.compile(rf"(?:^|/){PREFIX}([0-9a-f]{{{TAG_LENGTH}}})")
    for proc in Path("/proc").iterdir():
        try:
            stat = (proc / "stat").read_text()
            if int(stat[stat.rindex(")") + 2 :].split()[1]) != pid:
                continue
            words = (proc / "cmdline").read_bytes().decode(errors="replace").split("\0")
            cwd = (proc / "cwd").readlink()
        except (OSError, ValueError, IndexError):
            continue
        tags |= {m.group(1) for word in words if (m := pattern.search(word))}
        if cwd.parent == RUN:
            tags.add(cwd.name)
    return tags


def _checks(report: dict[str, object], network: str, check: str) -> list[dict[str, object]]:
    networks = report["networks"]
    assert isinstance(networks, dict)
    failures = networks[network][check]["failures"]
    assert isinstance(failures, list)
    return failures


@pytest.mark.tool
@pytest.mark.slow
def test_roce_lab_routes_as_designed(tmp_path_factory: pytest.TempPathFactory) -> None:
    _booting()
    folder = _built("roce-lab", tmp_path_factory)
    report = json.loads(twin(folder, 300).text())
    for check in ("sessions", "reachability", "ecmp", "mtu"):
        assert _checks(report, "fabric", check) == [], check
    fabric = report["networks"]["fabric"]
    assert fabric["sessions"]["designed"] == 16  # 8 leaf-spine cables, both ends
    assert fabric["ecmp"]["checked"] == 2
    drills = {d["drill"]: d for d in fabric["drills"]}
    assert drills["one spine down"]["failures"] == []
    assert drills["one spine down"]["still_reach"] == drills["one spine down"]["pairs"] == 2
    # issue 41: the access switches are the seeds (the first of each floor region's management
    # tree; the OOB network routes through its tree to the server on the GPU region's root),
    # and every fabric switch comes up by DHCP through their relays
    assert report["provisioning"]["by_usb"] == ["oob-leaf001", "oob-gpu-leaf001"]
    assert report["provisioning"]["by_dhcp"] == [
        "fabric-leaf001",
        "fabric-leaf002",
        "fabric-spine001",
        "fabric-spine002",
    ]
    assert report["provisioning"]["not_provisioned"] == []
    assert report["provisioning"]["failures"] == []
    # the management tree routes too: BGP unnumbered on the uplink between its two access
    # switches (FRR rendered from NVUE), each reaching the other's SVI and announced prefixes
    # (the root's provisioning-server /30 among them)
    for check in ("sessions", "reachability", "mtu"):
        assert _checks(report, "oob", check) == [], check
    oob = report["networks"]["oob"]
    assert oob["switches"] == 2
    assert oob["sessions"]["designed"] == 2
    assert oob["reachability"]["checked"] == 5
    assert not own_leftovers()


def _frr(folder: Path, switch: str) -> Path:
    return folder / "configs" / switch / "frr.conf"


def _asn(text: str) -> str:
    return re.sub(r"^router bgp 4200000001$", "router bgp 4200000077", text, flags=re.M)


def _no_neighbour(text: str) -> str:
    return text.replace(" neighbor Ethernet32 interface peer-group FABRIC\n", "")


def _swap(text: str) -> str:
    rows = list(csv.DictReader(io.StringIO(text)))
    one = next(r for r in rows if r["cable_id"] == "FABRIC-LEAF-000001")  # leaf001 - spine001
    two = next(r for r in rows if r["cable_id"] == "FABRIC-LEAF-000007")  # leaf002 - spine002
    for key in ("b_device", "b_port"):
        one[key], two[key] = two[key], one[key]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def _mtu(text: str) -> str:
    db = json.loads(text)
    db["PORT"]["Ethernet0"]["mtu"] = "1500"  # spine001's port to leaf001
    return json.dumps(db, indent=2) + "\n"


FAULTS = {
    # fault: (file, edit, check, words the failure must name)
    "asn-changed": (
        "configs/fabric-leaf002/frr.conf", _asn, "sessions",
        ("fabric-spine001", "AS 4200000077", "designed AS 4200000001"),
    ),
    "neighbour-removed": (
        "configs/fabric-leaf001/frr.conf", _no_neighbour, "sessions",
        ("fabric-leaf001", "Ethernet32", "no BGP neighbour"),
    ),
    "cable-swapped": (
        "cabling/cables.csv", _swap, "sessions",
        ("fabric-leaf001", "config expects fabric-spine001 here, found fabric-spine002"),
    ),
    "mtu-mismatch": (
        "configs/fabric-spine001/config_db.json", _mtu, "mtu",
        ("fabric-leaf001", "Ethernet32", "9216"),
    ),
}  # fmt: skip


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_routing_faults_are_named(
    fault: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    _booting()
    folder = _copy("roce-lab", tmp_path_factory, tmp_path)
    relative, edit, check, words = FAULTS[fault]
    _edit(folder / relative, edit)
    report = json.loads(twin(folder, 300, drill=False).text())
    assert report["holds"] is False
    failures = _checks(report, "fabric", check)
    text = json.dumps(failures)
    assert any(all(w in json.dumps(f) for w in words) for f in failures), text
    # a session the config keeps down crosses a link that passes packets: not the machine's
    assert "relinked" not in report["networks"]["fabric"]["sessions"]
    assert "lab" not in report
    assert not own_leftovers()


@pytest.mark.tool
@pytest.mark.slow
def test_a_link_that_passes_nothing_is_taken_down_and_up(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The machine's fault, not the design's (CI of 229d9e9: one veth of gb300-nvl72-spectrum-x
    passed no packet for the whole run, its session Active at one end, Connect at the other):
    the twin takes the wire down and up once and names it; the sessions then come up."""
    _booting()
    root = _built("roce-lab", tmp_path_factory)
    folder = load(root)
    with lab(300) as the_lab:
        booted = routing.boot(the_lab, folder, Namer(folder), "fabric")
        wire = booted.wires[0]
        # the stand-in for a stalled veth: one end down, so that neither end reaches the other
        the_lab.run("ip", "-n", booted.routers[wire.a].ns, "link", "set", wire.a_if, "down")
        designed, failures = routing.wait_sessions(the_lab, folder, booted)
        assert routing.silent_wires(the_lab, booted, booted.wires) == []
    assert (designed, failures) == (16, [])
    assert booted.relinked == [wire.cable]


@pytest.mark.tool
@pytest.mark.slow
def test_a_link_that_stays_silent_is_named_the_machines(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taking it down and up did not help (here: did nothing): its sessions fail, each saying
    that the link passes no packet, which no design does."""
    _booting()
    root = _built("roce-lab", tmp_path_factory)
    folder = load(root)
    monkeypatch.setattr(routing, "SESSION_WAIT", 12.0)
    monkeypatch.setattr(routing, "set_links", lambda *_: None)
    with lab(300) as the_lab:
        booted = routing.boot(the_lab, folder, Namer(folder), "fabric")
        wire = booted.wires[0]
        the_lab.run("ip", "-n", booted.routers[wire.a].ns, "link", "set", wire.a_if, "down")
        _designed, failures = routing.wait_sessions(the_lab, folder, booted)
    assert failures and {f["cable"] for f in failures} == {wire.cable}
    assert all("passes no packet" in str(f["problem"]) for f in failures), failures


def _no_relay(text: str) -> str:
    return re.sub(r"    service:\n      dhcp-relay:\n(?:        .*\n|          .*\n)+", "", text)


def _vlan(text: str) -> str:
    # the access port of inband-leaf003's eth0 moved to VLAN 30, which no SVI serves
    return re.sub(
        r"(      swp\d+:\n        type: swp\n        description: inband-leaf003:eth0\n"
        r"(?:        .*\n)*?              access: )20",
        r"\g<1>30",
        text,
        count=1,
    )


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize(
    ("switch", "edit", "words"),
    [
        ("", None, ()),
        ("oob-leaf002", _no_relay, ("inband-leaf003", "oob-leaf002 runs no DHCP relay")),
        ("oob-leaf002", _vlan, ("inband-leaf003", "oob-leaf002:swp", "(VLAN 30)")),
        # the relay of the management trees' roots on the in-band spine (synth/rootlinks.py)
        ("inband-spine001", _no_relay, ("oob-dgx-leaf001", "inband-spine001 runs no DHCP relay")),
    ],
)
def test_switches_provision_through_the_designed_relay(
    switch: str,
    edit: Callable[[str], str] | None,
    words: tuple[str, ...],
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
) -> None:
    _booting()
    root = _copy("superpod-h100-4su", tmp_path_factory, tmp_path)
    if edit is not None:
        _edit(root / f"configs/{switch}/startup.yaml", edit)
    folder = load(root)
    with lab(120) as the_lab:
        result = provision(the_lab, folder, Namer(folder))
    failures = result["failures"]
    assert isinstance(failures, list)
    if edit is None:
        assert failures == []
        # the in-band leaves behind the access switches, and (issue 41) every access switch:
        # the management trees' roots (each floor region's first) on a routed /31 port of the
        # seeded in-band spine, which relays for them (synth/rootlinks.py), the others on
        # relayed access ports - the central racks' second one on a port the first keeps; and
        # the in-band spine that is no seed, through an access switch uplinked into the seeded
        # one (synth/mgmtnet.py _top_seeds)
        assert result["by_dhcp"] == sorted(
            [
                "inband-spine002",
                *(f"inband-leaf00{n}" for n in range(3, 7)),
                *(f"oob-dgx-leaf00{n}" for n in range(1, 7)),
                "oob-leaf001",
                "oob-leaf002",
            ]
        )
        assert result["by_usb"] == ["inband-spine001", "inband-leaf001", "inband-leaf002"]
    else:
        assert words[0] in str(result["not_provisioned"])
        assert any(all(w in json.dumps(f) for w in words) for f in failures), failures
    assert not own_leftovers()
