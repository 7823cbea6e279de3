"""The BGP underlay boots: FRR accepts every generated frr.conf, and in network namespaces wired
like the cabling plan every session comes up and every leaf reaches every other leaf's loopback.

Expectations come from the cabling plan and the spec, not from the configs: one BGP session per
end of every switch-to-switch cable, loopback reachability inside each plane (connected component
of the cabling graph), and none across planes (Spectrum-X reference architecture: planes are independent).
"""

from __future__ import annotations

import csv
import io
import time
from pathlib import Path

import pytest

from fabricc.emit import Artifact
from tests.frr_support import (
    Lab,
    booted,
    check_frr_config,
    components,
    frr_readable_folder,
    lab_switches,
    require_root,
)
from tests.support import EXAMPLES, compile_text, compiled, require_tool

FRR_TOOLS = ("vtysh", "/usr/lib/frr/zebra", "/usr/lib/frr/bgpd")
NETNS_TOOLS = (*FRR_TOOLS, "ip", "ping")
CONVERGE_S = 90


def frr_files(artifacts: tuple[Artifact, ...] | list[Artifact]) -> dict[str, str]:
    found = {
        path: text
        for path, text in artifacts
        if path.startswith("configs/") and path.endswith("/frr.conf") and isinstance(text, str)
    }
    assert found
    return found


@pytest.mark.tool
@pytest.mark.parametrize("example", ["roce-lab", "spectrum-x-2plane", "gb300-nvl72-spectrum-x"])
def test_frr_accepts_every_generated_config(example: str) -> None:
    require_tool(*FRR_TOOLS)
    _, artifacts = compiled(example)
    problems: dict[str, list[str]] = {}
    with frr_readable_folder() as folder:
        for path, text in sorted(frr_files(artifacts).items()):
            found = check_frr_config(folder, path.split("/")[1], text)
            if found:
                problems[path] = found
        # the checkers do bite: a typo and an undefined peer group are reported
        _, text = next(iter(sorted(frr_files(artifacts).items())))
        broken = text.replace(" interface peer-group FABRIC", " interfacee peer-group FABRIC", 1)
        assert any("vtysh" in p for p in check_frr_config(folder, "typo", broken))
        undefined = text.replace("peer-group FABRIC\n", "peer-group SPINES\n", 1)
        assert any("bgpd" in p for p in check_frr_config(folder, "undefined", undefined))
    assert not problems, problems


def wait_established(lab: Lab, expected: int, converge_s: float = CONVERGE_S) -> None:
    deadline = time.monotonic() + converge_s
    states: dict[tuple[str, str], str] = {}
    while time.monotonic() < deadline:
        states = lab.sessions()
        if len(states) == expected and all(s == "Established" for s in states.values()):
            return
        time.sleep(0.5)
    down = sorted(
        f"{sw} {peer}: {state}" for (sw, peer), state in states.items() if state != "Established"
    )
    pytest.fail(
        f"{len(states) - len(down)} of {expected} BGP sessions Established after {converge_s} s; "
        f"not Established: {down or 'sessions missing'}"
    )


def leaf_pings(lab: Lab, plane_of: dict[str, int], *, v6: bool = False) -> None:
    """Every leaf pings every other leaf of its plane, loopback to loopback (retried until the
    routes are in); no leaf has a route to another plane's loopbacks."""
    leaves = sorted(n for n in lab.switches if "leaf" in n)
    assert len(leaves) >= 2
    pending = [(a, b) for a in leaves for b in leaves if a != b and plane_of[a] == plane_of[b]]
    deadline = time.monotonic() + 30
    while pending and time.monotonic() < deadline:
        pending = [(a, b) for a, b in pending if not lab.ping(a, b, v6=v6)]
    assert not pending, f"loopback pings failed: {pending}"
    if not v6:
        for leaf in leaves:
            foreign = {
                f"{lab.switches[o].loopback}" for o in leaves if plane_of[o] != plane_of[leaf]
            }
            assert not foreign & lab.routes(leaf), f"{leaf} routes into another plane"


def boot_and_check(
    artifacts: dict[str, str | bytes],
    network: str,
    *,
    v6: bool = False,
    converge_s: float = CONVERGE_S,
) -> None:
    names, cables = lab_switches(artifacts, network)
    plane_of = components(cables)
    with booted(artifacts, network) as lab:
        assert sorted(lab.switches) == sorted(names)
        # one session per cable end; each generated frr.conf has exactly its cables as neighbors
        assert sum(s.neighbors for s in lab.switches.values()) == 2 * len(cables)
        wait_established(lab, 2 * len(cables), converge_s)
        leaf_pings(lab, plane_of)
        if v6:
            leaf_pings(lab, plane_of, v6=True)


@pytest.mark.tool
def test_roce_lab_underlay_boots() -> None:
    """SONiC names (Ethernet0, Loopback0), BGP unnumbered."""
    require_tool(*NETNS_TOOLS)
    require_root()
    _, artifacts = compiled("roce-lab")
    boot_and_check(dict(artifacts), "fabric")


def _roce_lab_with(addressing: str, tmp_path: Path) -> dict[str, str | bytes]:
    text = (EXAMPLES / "roce-lab.yaml").read_text() + f"\naddressing:\n{addressing}"
    _, artifacts = compile_text(text, tmp_path)
    return dict(artifacts)


@pytest.mark.tool
def test_roce_lab_numbered_underlay_boots(tmp_path: Path) -> None:
    """addressing.p2p set: /31s on switch links and neighbors by address."""
    require_tool(*NETNS_TOOLS)
    require_root()
    artifacts = _roce_lab_with("  p2p: 10.255.0.0/24\n", tmp_path)
    frr = artifacts["configs/fabric-leaf001/frr.conf"]
    assert isinstance(frr, str) and " interface peer-group" not in frr
    boot_and_check(artifacts, "fabric")


@pytest.mark.tool
def test_roce_lab_dual_stack_loopbacks_boot(tmp_path: Path) -> None:
    """addressing.loopbacks_v6 set: IPv6 loopbacks announced over the unnumbered sessions."""
    require_tool(*NETNS_TOOLS)
    require_root()
    artifacts = _roce_lab_with("  loopbacks_v6: fd00:fab::/64\n", tmp_path)
    boot_and_check(artifacts, "fabric", v6=True)


@pytest.mark.tool
@pytest.mark.slow
def test_spectrum_x_two_plane_underlay_boots() -> None:
    """Cumulus names (swp9, swp1s0, lo), 2 planes x (8 leaves + 4 spines), 2 links per pair."""
    require_tool(*NETNS_TOOLS)
    require_root()
    fabric, artifacts = compiled("spectrum-x-2plane")
    topology = fabric.networks["compute"]
    assert topology.planes == 2
    assert len(topology.switches["spine"]) >= 8 and len(topology.switches["leaf"]) >= 16
    boot_and_check(dict(artifacts), "compute")


def one_plane(artifacts: dict[str, str | bytes], plane: int) -> dict[str, str | bytes]:
    """The artifacts with a cabling plan reduced to one plane's switch-to-switch cables."""
    text = artifacts["cabling/cables.csv"]
    assert isinstance(text, str)
    rows = list(csv.DictReader(io.StringIO(text)))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(r for r in rows if r["plane"] == str(plane))
    return {**artifacts, "cabling/cables.csv": out.getvalue()}


@pytest.mark.tool
@pytest.mark.slow
def test_gb300_spectrum_x_underlay_boots() -> None:
    """One GB300 NVL72 unit on two Spectrum-X800 planes: every leaf-spine session comes up and
    leaves reach each other inside their plane. Planes share nothing (checked on the cabling
    plan), so each boots on its own: 20 switches and 1536 sessions at a time on 2 cores (the 800G
    cages between Spectrum-4 switches run as 2x400G, where they route adaptively)."""
    require_tool(*NETNS_TOOLS)
    require_root()
    fabric, artifacts = compiled("gb300-nvl72-spectrum-x")
    assert fabric.networks["compute"].planes == 2
    names, cables = lab_switches(dict(artifacts), "compute")
    assert len(names) == 40 and len(set(components(cables).values())) == 2
    for plane in (1, 2):  # 1-based, as cables.csv numbers planes
        part = one_plane(dict(artifacts), plane)
        plane_names, plane_cables = lab_switches(part, "compute")
        assert len(plane_names) == 20 and len(plane_cables) == len(cables) // 2
        boot_and_check(part, "compute", converge_s=4 * CONVERGE_S)
