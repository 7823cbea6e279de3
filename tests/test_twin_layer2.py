"""`fabricc twin`: hosts under layer-2 in-band leaves, bridged up to a routed MLAG/VRR spine pair.

The folder is a real build of superpod-h100-4su, whose in-band leaves run no routing: each host
bond is an access port of VLAN 10, the leaves trunk it to the spine pair, which answers the VRR
gateway. The twin boots the leaves as bridges and applies each host's netplan file; the faults
are hand edits of one leaf port (its access VLAN, its MTU). Needs root, FRR and netplan.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fabricc.twin import netplan, routing
from fabricc.twin.bridging import wait_forwarding
from fabricc.twin.folder import load
from fabricc.twin.lab import Lab, lab, leftovers
from fabricc.twin.names import Namer
from tests.frr_support import require_root
from tests.support import require_tool
from tests.test_twin import _built

# inband-leaf001's port to dgx001 (bond9 over swp9): its access VLAN, and swp9's MTU
PORT = "      bond9:\n        type: bond\n        description: dgx001\n"
FAULTS = {
    "vlan": ("access: 10", "access: 20"),
    "mtu": ("mtu: 9216", "mtu: 1500"),
}


def _fault(root: Path, fault: str) -> None:
    startup = root / "configs/inband-leaf001/startup.yaml"
    text = startup.read_text()
    if fault == "vlan":
        start = text.index(PORT)
        end = text.index("      bond10:\n", start)
        old, new = FAULTS["vlan"]
        block = text[start:end]
        assert old in block
        text = text[:start] + block.replace(old, new) + text[end:]
    else:
        start = text.index("      swp9:\n")
        end = text.index("      swp10:\n", start)
        old, new = FAULTS["mtu"]
        block = text[start:end]
        assert old in block
        text = text[:start] + block.replace(old, new) + text[end:]
    startup.write_text(text)


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("fault", ["", "vlan", "mtu"])
def test_hosts_of_layer2_leaves_reach_the_vrr_gateway_and_each_other(
    fault: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    require_tool("vtysh", "fping", "netplan")
    require_root()
    root = tmp_path / "out"
    shutil.copytree(_built("superpod-h100-4su", tmp_path_factory), root)
    if fault:
        _fault(root, fault)
    folder = load(root)
    with lab(300) as the_lab:
        tag = the_lab.tag
        booted = routing.boot(the_lab, folder, Namer(folder), "inband")
        designed, sessions = routing.wait_sessions(the_lab, folder, booted)
        result = netplan.check(the_lab, folder, booted)
    assert (designed, sessions) == (34, [])  # the spine pair's: none to a layer-2 leaf
    # the layer-2 leaves are booted (bridges, no FRR) and carry no session of their own
    leaves = [r for name, r in booted.routers.items() if name.startswith("inband-leaf")]
    assert len(leaves) == 6 and not any(r.routes for r in leaves)
    assert "not_booted" not in result
    # 127 DGX, 4 UFM and 4 management servers, one bond each
    assert (result["hosts"], result["nics"]) == (135, 135)
    # each: its VRR gateway, a host on another leaf, a full-MTU packet to the gateway
    assert result["checked"] == 3 * 135 - (1 if fault == "vlan" else 0)
    failures = result["failures"]
    assert isinstance(failures, list)
    if not fault:
        assert failures == []
    elif fault == "vlan":
        # dgx001's frames land in VLAN 20, which the leaf's uplink does not carry
        assert {(f["host"], f["to"], f["problem"]) for f in failures if f["host"] == "dgx001"} >= {
            ("dgx001", "gateway 10.64.0.1", "unreachable")
        }
        assert all(
            f["host"] == "dgx001" or str(f.get("to", "")).startswith("dgx001 ") for f in failures
        )
    else:
        assert [(f["host"], f["to"]) for f in failures] == [("dgx001", "gateway 10.64.0.1")]
        assert "MTU mismatch" in str(failures[0]["problem"])
    assert not leftovers(f"ftw{tag}")


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("fault", ["", "no-neighbour"])
def test_peerlink_subinterface_is_routed_outside_spanning_tree(
    fault: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    require_tool("vtysh")
    require_root()
    root = tmp_path / "out"
    shutil.copytree(_built("superpod-h100-4su", tmp_path_factory), root)
    spine = root / "configs/inband-spine002/startup.yaml"
    if fault:
        # the peer link's routed subinterface dropped from one spine's BGP
        lines = spine.read_text().splitlines(keepends=True)
        start = lines.index("              peerlink.4094:\n")
        end = start + 1
        while end < len(lines) and lines[end].startswith(" " * 15):  # its own keys
            end += 1
        spine.write_text("".join(lines[:start] + lines[end:]))
    folder = load(root)
    with lab(180) as the_lab:
        tag = the_lab.tag
        booted = routing.boot(the_lab, folder, Namer(folder), "inband")
        spines = [booted.routers[n].ns for n in ("inband-spine001", "inband-spine002")]
        wait_forwarding(the_lab, [booted.routers[n].ns for n in sorted(booted.routers)])
        _designed, failures = routing.wait_sessions(the_lab, folder, booted)
        states: dict[str, dict[str, object]] = {}
        for name, ns in zip(("inband-spine001", "inband-spine002"), spines, strict=True):
            ports = json.loads(the_lab.run("bridge", "-n", ns, "-j", "link", "show").stdout)
            states[name] = {str(p["ifname"]): p.get("state") for p in ports}
            link = json.loads(the_lab.run("ip", "-n", ns, "-j", "link", "show").stdout)
            states[name]["peerlink.4094 master"] = next(
                (x.get("master") for x in link if x["ifname"] == "peerlink.4094"), "absent"
            )
        learnt = _svi_neighbours(the_lab, spines) if not fault else {}
    # the peer link's carrier is a port of br_default (its spanning tree), the subinterface not
    assert all(states[name].get("swp63") == "forwarding" for name in states), states
    assert all("peerlink.4094" not in states[name] for name in states), states
    if not fault:
        for name in states:  # a layer-3 interface of its own: no bridge holds it
            assert states[name]["peerlink.4094 master"] is None
        assert failures == []
        # each spine learns its peer's SVI address at the peer's SVI, not at the VRR MAC both
        # hold as their own (ARP flux: the VRR macvlan answered for its SVI's address)
        assert learnt and all(m == svi for seen in learnt.values() for m, svi in seen), learnt
    else:
        named = {(f["switch"], f["interface"]): str(f["problem"]) for f in failures}
        assert "no BGP neighbour" in named[("inband-spine002", "peerlink")], failures
        assert set(named) <= {("inband-spine002", "peerlink"), ("inband-spine001", "peerlink.4094")}
    assert not leftovers(f"ftw{tag}")


def _svi_neighbours(the_lab: Lab, spines: list[str]) -> dict[str, list[tuple[str, str]]]:
    """Asking namespace -> (the MAC it learnt for its peer's vlan10 address, the peer's vlan10
    MAC), for each of five pings from each spine to the other's SVI address, each after the
    entry is flushed: which interface of the peer answers first is a race where several do."""
    svi: dict[str, tuple[str, str]] = {}
    for ns in spines:
        link = json.loads(the_lab.run("ip", "-n", ns, "-j", "addr", "show", "vlan10").stdout)[0]
        address = next(a["local"] for a in link["addr_info"] if a["family"] == "inet")
        svi[ns] = (address, str(link["address"]))
    learnt: dict[str, list[tuple[str, str]]] = {}
    for ns, peer in zip(spines, reversed(spines), strict=True):
        address, mac = svi[peer]
        for _ in range(5):
            the_lab.run("ip", "-n", ns, "neigh", "flush", "to", address, check=False)
            the_lab.run("ip", "netns", "exec", ns, "ping", "-c1", "-W2", address, check=False)
            seen = json.loads(the_lab.run("ip", "-n", ns, "-j", "neigh", "show", address).stdout)
            learnt.setdefault(ns, []).append((str(seen[0].get("lladdr", "")) if seen else "", mac))
    return learnt
