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
from pathlib import Path
from typing import Any

import pytest

from fabricc.synth.mgmtnet import management_net
from fabricc.twin.nvue_frr import policy
from tests.configs_support import by_path, cables, ipv4, nvue
from tests.frr_support import FRR_LIB, Lab, booted, cumulus_port, require_root, run
from tests.support import compiled, require_tool
from tests.test_mgmt_routed_leaves import core_tier_design


def frr_conf(name: str, tree: dict[str, Any]) -> str:
    bgp = tree["router"]["bgp"]
    vrf = tree["vrf"]["default"]["router"]["bgp"]
    family = vrf["address-family"]["ipv4-unicast"]
    lines = ["frr defaults datacenter", f"hostname {name}", "!"]
    # (the MLAG peer link's session: this lab cables no peer link; the twin tests boot it)
    neighbors = {p: n for p, n in vrf["neighbor"].items() if p != "peerlink.4094"}
    for port in neighbors:
        lines += [f"interface {port}", " ipv6 nd ra-interval 3", " no ipv6 nd suppress-ra", "exit"]
    lines += [
        "!",
        f"router bgp {bgp['autonomous-system']}",
        f" bgp router-id {bgp['router-id']}",
        " no bgp ebgp-requires-policy",
        " neighbor FABRIC peer-group",
        " neighbor FABRIC remote-as external",
    ]
    valley: list[str] = []  # a top-tier switch's sessions with the tier below
    for port, neighbor in neighbors.items():
        session = neighbor.get("address-family", {}).get("ipv4-unicast", {})
        assert {**neighbor, "address-family": {}} == {
            "type": "unnumbered",
            "remote-as": "external",
            "address-family": {},
        }
        lines.append(f" neighbor {port} interface peer-group FABRIC")
        if session:
            occurrences = session["aspath"]["allow-my-asn"]["occurrences"]
            route_map = session["policy"]["inbound"]["route-map"]
            valley += [
                f"  neighbor {port} allowas-in {occurrences}",
                f"  neighbor {port} route-map {route_map} in",
            ]
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {prefix}" for prefix in family["network"]]
    lines += [f"  maximum-paths {family['multipaths']['ebgp']}", *valley]
    lines += [" exit-address-family", "!", *policy(tree)]
    return "\n".join(lines) + "\n"


def lab_cabling(switch_links: list[dict[str, str]], host_links: list[dict[str, str]]) -> str:
    """The cables.csv of a lab: the lab helper boots the switch-to-switch cables of one network
    (here `lab`, as leaf-spine cables) and the host cables of that network."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(switch_links[0]))
    writer.writeheader()
    for row in switch_links:
        writer.writerow({**row, "network": "lab", "kind": "leaf-spine"})
    for row in host_links:
        writer.writerow({**row, "network": "lab"})
    return out.getvalue()


def add_svi(ns: str, svi: str, address: str) -> None:
    """An SVI's address on an interface of its name (one end of a veth pair left unwired)."""
    run("ip", "-n", ns, "link", "add", svi, "type", "veth", "peer", "name", f"{svi}p")
    run("ip", "-n", ns, "link", "set", f"{svi}p", "up")
    run("ip", "-n", ns, "link", "set", svi, "up")
    run("ip", "-n", ns, "addr", "add", address, "dev", svi)


def wait_for_routes(lab: Lab, wanted: dict[str, set[str]], seconds: float) -> dict[str, set[str]]:
    """Wait until every switch has the destinations it wants; what is still missing."""
    deadline = time.monotonic() + seconds
    missing: dict[str, set[str]] = {}
    while time.monotonic() < deadline:
        missing = {n: need - lab.routes(n) for n, need in wanted.items() if need - lab.routes(n)}
        if not missing:
            break
        time.sleep(1)
    return missing


def wait_for_next_hops(lab: Lab, switch: str, prefix: str, paths: int, seconds: float) -> str:
    """The switch's kernel route to the prefix once it has `paths` next hops (ECMP: they arrive
    one BGP update at a time after the first), or as it is when the time is up."""
    deadline = time.monotonic() + seconds
    route = ""
    while time.monotonic() < deadline:
        route = run("ip", "-n", lab.switches[switch].ns, "-4", "route", "show", prefix).stdout
        if route.count("nexthop") == paths:
            break
        time.sleep(1)
    return route


@pytest.mark.tool
def test_oob_subnets_and_the_in_band_pool_reach_each_other() -> None:
    require_tool("vtysh")
    require_root()
    if not (FRR_LIB / "bgpd").exists():
        pytest.skip("needs FRR's daemons")
    fabric, artifacts = compiled("superpod-h100-4su")
    files = by_path(artifacts)
    trees = nvue(files)
    net = management_net(fabric)
    assert net.inband is not None
    rows = [row for row in cables(files) if row["network"] == "oob" and row["kind"] == "uplink"]
    assert len(rows) == 16
    routers = {*net.subnets, *net.inband.real}
    lab_files: dict[str, str | bytes] = {"cabling/cables.csv": lab_cabling(rows, [])}
    for name in routers:
        lab_files[f"configs/{name}/frr.conf"] = frr_conf(name, trees[name])
    with booted(lab_files, "lab") as lab:
        for name, switch in lab.switches.items():
            for svi, entry in trees[name]["interface"].items():
                if entry.get("type") == "svi":
                    (address,) = ipv4(entry)["address"]
                    add_svi(switch.ns, svi, address)
        wanted = {
            **{spine: {str(s.network) for s in net.subnets.values()} for spine in net.inband.real},
            **{access: {str(net.inband.prefix)} for access in net.subnets},
        }
        missing = wait_for_routes(lab, wanted, 60)
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
    files = by_path(artifacts)
    trees = nvue(files)
    net = management_net(fabric)
    assert net.inband is not None and net.inband.leaves
    leaves = list(net.inband.leaves)[:4]  # two leaf pairs
    access = list(net.subnets)[:2]
    booted_switches = {*leaves, *access, *net.inband.real}
    rows = [
        row
        for row in cables(files)
        if row["kind"] in ("leaf-spine", "uplink")
        and row["network"] in ("inband", "oob")
        and row["a_device"] in booted_switches
        and row["b_device"] in booted_switches
    ]
    assert len(rows) == 4 * 12 + 2 * 2
    lab_files: dict[str, str | bytes] = {"cabling/cables.csv": lab_cabling(rows, [])}
    for name in booted_switches:
        lab_files[f"configs/{name}/frr.conf"] = frr_conf(name, trees[name])
    subnets = {leaf: str(net.inband.leaves[leaf].subnet) for leaf in leaves}
    with booted(lab_files, "lab") as lab:
        for name, switch in lab.switches.items():
            for svi, entry in trees[name]["interface"].items():
                if entry.get("type") == "loopback":
                    (address,) = ipv4(entry)["address"]
                    run("ip", "-n", switch.ns, "addr", "add", address, "dev", "lo")
                if entry.get("type") == "svi":
                    (address,) = ipv4(entry)["address"]
                    add_svi(switch.ns, svi, address)
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
        missing = wait_for_routes(lab, wanted, 90)
        assert not missing, (missing, lab.sessions())
        # a leaf reaches the other pair over every uplink: one next hop per spine link (ECMP)
        route = wait_for_next_hops(lab, leaves[0], subnets[leaves[2]], 12, 60)
        assert route.count("nexthop") == 12, (route, lab.sessions())


@pytest.mark.tool
def test_a_core_tier_routes_a_host_of_one_pod_to_another_pod_and_the_oob(tmp_path: Path) -> None:
    """An in-band network in three tiers (tests/test_mgmt_routed_leaves.py core_tier_design: a
    pod of two spines per leaf pair, cores above) booted with two pods - their four leaves and
    four spines, all cores - and two OOB access switches uplinked into the cores: every BGP
    session of a booted cable comes up, a host dual-homed to a leaf pair of one pod (its address
    on both links, standing for its bond) pings a host of the other pod (through the cores: the
    pods meet nowhere else), a core's loopback and an access switch's gateway, and a leaf and a
    spine reach the other pod over all their links (ECMP)."""
    require_tool("vtysh", "ping")
    require_root()
    if not (FRR_LIB / "bgpd").exists():
        pytest.skip("needs FRR's daemons")
    fabric, files, trees = core_tier_design(tmp_path)
    net = management_net(fabric)
    assert net.inband is not None
    topology = fabric.networks["inband"]
    pods: dict[int, list[str]] = {}
    for spine, router in net.inband.spines.items():
        pods.setdefault(router.pod, []).append(spine)
    spines = [*pods[0], *pods[1]]
    rows = cables(files)
    leaves = sorted(
        {r["a_device"] for r in rows if r["kind"] == "leaf-spine" and r["b_device"] in spines}
    )
    cores = topology.switches["core"]
    access = list(net.subnets)[:2]
    booted_switches = {*leaves, *spines, *cores, *access}
    assert len(booted_switches) < 20
    links = [
        r
        for r in rows
        if r["kind"] in ("leaf-spine", "spine-core", "uplink")
        and r["a_device"] in booted_switches
        and r["b_device"] in booted_switches
    ]
    assert {r["b_device"] for r in links if r["a_device"] in access} <= set(cores)
    # a host of each pod: one whose two in-band links go to the two leaves of a pair
    cabled: dict[str, dict[str, str]] = {}  # host -> leaf -> host port
    leaf_ports: dict[tuple[str, str], str] = {}
    for row in rows:
        if row["network"] == "inband" and row["kind"] == "endpoint-leaf":
            cabled.setdefault(row["a_device"], {})[row["b_device"]] = row["a_port"]
            leaf_ports[row["a_device"], row["b_device"]] = row["b_port"]
    hosts = [
        next(h for h, ends in cabled.items() if set(ends) == {*pair})
        for pair in (leaves[:2], leaves[2:])
    ]
    host_links = [
        r
        for r in rows
        if r["kind"] == "endpoint-leaf" and r["network"] == "inband" and r["a_device"] in hosts
    ]
    lab_files: dict[str, str | bytes] = {"cabling/cables.csv": lab_cabling(links, host_links)}
    for name in booted_switches:
        lab_files[f"configs/{name}/frr.conf"] = frr_conf(name, trees[name])
    host_ports = {
        h: {port: f"eth{k}" for k, port in enumerate(sorted(cabled[h].values()))} for h in hosts
    }
    with booted(lab_files, "lab", host_ports) as lab:
        for name, switch in lab.switches.items():
            for interface, entry in trees[name]["interface"].items():
                if entry.get("type") == "loopback":
                    (address,) = ipv4(entry)["address"]
                    run("ip", "-n", switch.ns, "addr", "add", address, "dev", "lo")
                elif entry.get("type") == "svi" and name in access:
                    (address,) = ipv4(entry)["address"]
                    add_svi(switch.ns, interface, address)
        # a leaf's SVI (its real and VRR addresses) sits on its port to the host, the host's
        # address on both its ports; its default route the pair's VRR address
        for host in hosts:
            address = fabric.devices[host].inband_ip
            assert address is not None
            prefixlen, gateway = net.inband.host_gateway(address)
            ns = lab.hosts[host]
            run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0")
            for leaf, port in cabled[host].items():
                interface = host_ports[host][port]
                run("ip", "-n", ns, "addr", "add", f"{address}/{prefixlen}", "dev", interface)
                svi = ipv4(trees[leaf]["interface"]["vlan10"])
                leaf_if = cumulus_port(leaf_ports[host, leaf])
                for each in [*svi["address"], *svi["vrr"]["address"]]:
                    run("ip", "-n", lab.switches[leaf].ns, "addr", "add", each, "dev", leaf_if)
            run("ip", "-n", ns, "route", "add", "default", "via", gateway, "dev", "eth0")
        subnets = {leaf: str(net.inband.leaves[leaf].subnet) for leaf in leaves}
        oob = {str(net.subnets[a].network) for a in access}
        loopbacks = {f"{lab.switches[s].loopback}" for s in [*spines, *cores]}
        # the cores share one ASN, so a core learns an access subnet (and an access switch a
        # core's loopback) only over a cable between them, never through another core
        cabled_to: dict[str, set[str]] = {core: set() for core in cores}
        for row in links:
            if row["a_device"] in access:
                cabled_to[row["b_device"]].add(row["a_device"])
        wanted = {
            **{leaf: {*subnets.values(), *oob, *loopbacks} - {subnets[leaf]} for leaf in leaves},
            **{s: {*subnets.values(), *oob} for s in spines},
            **{
                c: {*subnets.values(), *(str(net.subnets[a].network) for a in cabled_to[c])}
                for c in cores
            },
            **{
                a: {*subnets.values(), *(lab.switches[s].loopback for s in spines)}
                | {lab.switches[c].loopback for c in cores if a in cabled_to[c]}
                for a in access
            },
        }
        missing = wait_for_routes(lab, wanted, 120)
        assert not missing, (missing, lab.sessions())
        # every BGP session a booted cable stands for is up, at both ends
        sessions = lab.sessions()
        for a, a_if, b, b_if in lab.cables:
            assert sessions.get((a, a_if)) == "Established", (a, a_if, sessions.get((a, a_if)))
            assert sessions.get((b, b_if)) == "Established", (b, b_if, sessions.get((b, b_if)))
        # the host of one pod reaches the other pod's host, a core and an access switch's gateway
        far = fabric.devices[hosts[1]].inband_ip
        assert far is not None
        targets = [far, *(lab.switches[c].loopback for c in cores), net.subnets[access[0]].gateway]
        source = lab.hosts[hosts[0]]

        def pings(target: str) -> bool:
            ping = ("ip", "netns", "exec", source, "ping", "-c1", "-W1", target)
            return run(*ping, check=False).returncode == 0

        deadline = time.monotonic() + 30
        unreached = targets
        while unreached and time.monotonic() < deadline:
            unreached = [t for t in unreached if not pings(t)]
        assert not unreached, (unreached, lab.sessions())
        # ECMP: a leaf reaches the other pod over every uplink, a spine over every core link
        other = subnets[leaves[2]]
        for hop in (leaves[0], spines[0]):
            paths = sum(1 for a, _, b, _ in lab.cables if hop == a and b in (*spines, *cores))
            route = wait_for_next_hops(lab, hop, other, paths, 60)
            assert route.count("nexthop") == paths > 1, (hop, route)
