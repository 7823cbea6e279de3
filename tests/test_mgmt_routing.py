"""The management networks route into each other: the BGP of the generated NVUE files of the
OOB access switches and the in-band spines, run by the real FRR in network namespaces (a
namespace per switch, a veth per uplink of the cabling plan, named like the switch ports), gives
every spine a route to every access switch's subnet and every access switch one to the in-band
pool - the path DHCP relays, management servers and BMCs use.

NVUE's `router bgp` and `vrf default router bgp` trees are written as the frr.conf lines NVUE
stands for (neighbor <swp> interface remote-as external, network <prefix>); the SVI addresses
sit on an interface of the same name in each namespace.
"""

from __future__ import annotations

import csv
import io
import time
from typing import Any

import pytest

from fabricc.synth.mgmtnet import management_net
from tests.configs_support import ipv4, nvue
from tests.frr_support import FRR_LIB, booted, require_root, run
from tests.support import compiled, require_tool


def frr_conf(name: str, tree: dict[str, Any]) -> str:
    bgp = tree["router"]["bgp"]
    vrf = tree["vrf"]["default"]["router"]["bgp"]
    family = vrf["address-family"]["ipv4-unicast"]
    lines = ["frr defaults datacenter", f"hostname {name}", "!"]
    for port in vrf["neighbor"]:
        lines += [f"interface {port}", " ipv6 nd ra-interval 3", " no ipv6 nd suppress-ra", "exit"]
    lines += [
        "!",
        f"router bgp {bgp['autonomous-system']}",
        f" bgp router-id {bgp['router-id']}",
        " no bgp ebgp-requires-policy",
        " neighbor FABRIC peer-group",
        " neighbor FABRIC remote-as external",
    ]
    for port, neighbor in vrf["neighbor"].items():
        assert neighbor == {"type": "unnumbered", "remote-as": "external"}
        lines.append(f" neighbor {port} interface peer-group FABRIC")
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {prefix}" for prefix in family["network"]]
    lines += [f"  maximum-paths {family['multipaths']['ebgp']}", " exit-address-family", "!"]
    return "\n".join(lines) + "\n"


@pytest.mark.tool
def test_oob_subnets_and_the_in_band_pool_reach_each_other() -> None:
    require_tool("vtysh")
    require_root()
    if not (FRR_LIB / "bgpd").exists():
        pytest.skip("needs FRR's daemons")
    fabric, artifacts = compiled("superpod-h100-4su")
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    trees = nvue(files)
    net = management_net(fabric)
    assert net.inband is not None
    rows = [
        row
        for row in csv.DictReader(io.StringIO(files["cabling/cables.csv"]))
        if row["network"] == "oob" and row["kind"] == "uplink"
    ]
    assert len(rows) == 16
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for row in rows:  # the lab helper boots the switch-to-switch cables of one network
        writer.writerow({**row, "kind": "leaf-spine"})
    routers = {*net.subnets, *net.inband.real}
    lab_files: dict[str, str | bytes] = {"cabling/cables.csv": out.getvalue()}
    for name in routers:
        lab_files[f"configs/{name}/frr.conf"] = frr_conf(name, trees[name])
    with booted(lab_files, "oob") as lab:
        for name, switch in lab.switches.items():
            for svi, entry in trees[name]["interface"].items():
                if entry.get("type") != "svi":
                    continue
                (address,) = ipv4(entry)["address"]
                run(
                    "ip",
                    "-n",
                    switch.ns,
                    "link",
                    "add",
                    svi,
                    "type",
                    "veth",
                    "peer",
                    "name",
                    f"{svi}p",
                )
                run("ip", "-n", switch.ns, "link", "set", f"{svi}p", "up")
                run("ip", "-n", switch.ns, "link", "set", svi, "up")
                run("ip", "-n", switch.ns, "addr", "add", address, "dev", svi)
        wanted = {
            **{spine: {str(s.network) for s in net.subnets.values()} for spine in net.inband.real},
            **{access: {str(net.inband.prefix)} for access in net.subnets},
        }
        deadline = time.monotonic() + 60
        missing: dict[str, set[str]] = {}
        while time.monotonic() < deadline:
            missing = {
                name: need - lab.routes(name)
                for name, need in wanted.items()
                if need - lab.routes(name)
            }
            if not missing:
                break
            time.sleep(1)
        assert not missing, (missing, lab.sessions())


@pytest.mark.tool
def test_leaves_routed_over_three_spines_reach_each_other_and_the_oob() -> None:
    """Where the in-band tier is three spines the leaves route (synth/inbandleaves.py): booted
    with two leaf pairs, the three spines and two access switches, every leaf learns the other
    pair's subnet over all its uplinks and every access subnet, and the access switches learn
    both pairs' subnets."""
    require_tool("vtysh")
    require_root()
    if not (FRR_LIB / "bgpd").exists():
        pytest.skip("needs FRR's daemons")
    fabric, artifacts = compiled("gb300-nvl72-xdr")
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    trees = nvue(files)
    net = management_net(fabric)
    assert net.inband is not None and net.inband.leaves
    leaves = list(net.inband.leaves)[:4]  # two leaf pairs
    access = list(net.subnets)[:2]
    booted_switches = {*leaves, *access, *net.inband.real}
    rows = [
        row
        for row in csv.DictReader(io.StringIO(files["cabling/cables.csv"]))
        if row["kind"] in ("leaf-spine", "uplink")
        and row["network"] in ("inband", "oob")
        and row["a_device"] in booted_switches
        and row["b_device"] in booted_switches
    ]
    assert len(rows) == 4 * 12 + 2 * 2
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    for row in rows:  # the lab helper boots the switch-to-switch cables of one network
        writer.writerow({**row, "network": "lab", "kind": "leaf-spine"})
    lab_files: dict[str, str | bytes] = {"cabling/cables.csv": out.getvalue()}
    for name in booted_switches:
        lab_files[f"configs/{name}/frr.conf"] = frr_conf(name, trees[name])
    subnets = {leaf: str(net.inband.leaves[leaf].subnet) for leaf in leaves}
    with booted(lab_files, "lab") as lab:
        for name, switch in lab.switches.items():
            for svi, entry in trees[name]["interface"].items():
                if entry.get("type") == "loopback":
                    (address,) = ipv4(entry)["address"]
                    run("ip", "-n", switch.ns, "addr", "add", address, "dev", "lo")
                if entry.get("type") != "svi":
                    continue
                (address,) = ipv4(entry)["address"]
                run("ip", "-n", switch.ns, "link", "add", svi, "type", "veth", "peer", "name", f"{svi}p")  # fmt: skip
                run("ip", "-n", switch.ns, "link", "set", f"{svi}p", "up")
                run("ip", "-n", switch.ns, "link", "set", svi, "up")
                run("ip", "-n", switch.ns, "addr", "add", address, "dev", svi)
        # the spines share one ASN, so a spine learns an access subnet from the access switch
        # itself (the leaves never pass one spine's route to another): the spines it is cabled
        # to; every leaf learns it through those
        cabled_to: dict[str, set[str]] = {spine: set() for spine in net.inband.real}
        for row in rows:
            if row["a_device"] in access:
                cabled_to[row["b_device"]].add(str(net.subnets[row["a_device"]].network))
        oob = {str(net.subnets[a].network) for a in access}
        wanted = {
            **{leaf: (set(subnets.values()) - {subnets[leaf]}) | oob for leaf in leaves},
            **{a: set(subnets.values()) for a in access},
            **{s: {*subnets.values(), *cabled_to[s]} for s in net.inband.real},
        }
        deadline = time.monotonic() + 90
        missing: dict[str, set[str]] = {}
        while time.monotonic() < deadline:
            missing = {
                name: need - lab.routes(name)
                for name, need in wanted.items()
                if need - lab.routes(name)
            }
            if not missing:
                break
            time.sleep(1)
        assert not missing, (missing, lab.sessions())
        # a leaf reaches the other pair over every uplink: one next hop per spine link (ECMP)
        # (the paths arrive one BGP update at a time after the first: wait for all of them)
        other = subnets[leaves[2]]
        route = ""
        while time.monotonic() < deadline + 60:
            route = run("ip", "-n", lab.switches[leaves[0]].ns, "-4", "route", "show", other).stdout
            if route.count("nexthop") == 12:
                break
            time.sleep(1)
        assert route.count("nexthop") == 12, (route, lab.sessions())
