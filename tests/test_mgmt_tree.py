"""Issue 41 at scale: the access switches' management trees (synth/oob.py connect_tree) and the
trees' roots' links to the in-band network (synth/rootlinks.py) leave a handful of seed switches
in a large design - the in-band ones - every access switch provisioning itself by DHCP through
another's relay, or a root through an in-band switch's (synth/mgmtnet.py). A 16k-GPU design of bench/bench.py's family
(the smallest that showed one root per central rack: 108 of its 175 seeds were central racks'
access switches, each keeping every port for the devices to come)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from fabricc.build import design
from fabricc.ir import MGMT, Fabric
from fabricc.spec.loader import load_spec
from fabricc.synth.mgmtnet import management_net
from fabricc.synth.oob import (
    MAX_TREE_DEPTH,
    TREE_SPAN_M,
    TREE_WINDOW,
    access_ports,
    tree_regions,
)

# COUNT HGX B300 (8 GPUs each) on Quantum-X800: three tiers in-band (cores), central racks
# for the spines and cores, the OOB network uplinked into the in-band top tier
SPEC = """\
metadata: {name: tree-16k}
site: {racks_per_row: 40, rack: {power_kw: 60}}
nodes:
  gpu: {model: hgx-b300, count: COUNT, nodes_per_rack: 4}
  mgmt: {model: mgmt-server, count: 8}
networks:
  compute: {role: compute, fabric: infiniband, switches: {leaf: q3400}}
  inband: {role: inband, dual_homed: true, oversubscription: "4:1"}
  oob: {role: oob, uplink_to: inband, max_racks_per_switch: 6}
"""


def _distance(fabric: Fabric, a: str, b: str) -> float:
    here = fabric.rack_by_name[fabric.devices[a].rack or ""]
    there = fabric.rack_by_name[fabric.devices[b].rack or ""]
    return abs(here.x_m - there.x_m) + abs(here.y_m - there.y_m)


# 16,384 and 32,768 GPUs: the seeds the rule leaves grow with the trees' roots only
@pytest.mark.parametrize("count", [2048, 4096])
def test_a_large_design_needs_a_handful_of_seeds(tmp_path: Path, count: int) -> None:
    path = tmp_path / "tree.yaml"
    path.write_text(SPEC.replace("COUNT", str(count)))
    fabric = design(load_spec(path, "tree.yaml"))
    plan = management_net(fabric)
    devices = fabric.devices
    access = fabric.networks["oob"].switches["leaf"]
    catalog = fabric.loaded.catalog.catalog
    parent: dict[str, tuple[str, str]] = {
        link.a: (link.b, link.b_port)
        for link in fabric.links
        if link.kind == MGMT and link.a in plan.subnets and link.b in plan.subnets
    }

    def depth(name: str) -> int:
        return 0 if name not in parent else 1 + depth(parent[name][0])

    # every access switch but a root provisions itself by DHCP: its management port is on an
    # access port of another access switch that relays, its address that port's reservation,
    # at most MAX_TREE_DEPTH relays below a root, on a patch cord
    for child, (up, port) in parent.items():
        assert plan.subnets[up].relays, f"{child}: its parent {up} relays nothing"
        assert 1 <= int(port) <= access_ports(catalog.switches[devices[up].model]), (child, port)
        assert devices[child].mgmt_ip == plan.port_address(up, port), child
        assert depth(child) <= MAX_TREE_DEPTH, child
        assert _distance(fabric, child, up) <= TREE_SPAN_M, child

    regions = tree_regions(fabric, access)
    roots = [name for name in access if name not in parent]

    # the bound the rule gives: a tree holds a root, TREE_WINDOW switches under it and as many
    # under each of the last of those, MAX_TREE_DEPTH levels down, where every access switch
    # keeps ports for the next ones (the central racks' TREE_PORTS) and their racks neighbour;
    # the regions whose runs fill an access switch's ports get at least a chain
    central = [region for region in regions if devices[region[0]].series is None]
    assert central
    for region in central:
        in_region = [name for name in region if name not in parent]
        assert len(in_region) <= math.ceil(len(region) / (MAX_TREE_DEPTH * TREE_WINDOW + 1)), (
            f"{len(in_region)} roots among {len(region)} central access switches"
        )
    for region in regions:
        in_region = [name for name in region if name not in parent]
        assert len(in_region) <= math.ceil(len(region) / (MAX_TREE_DEPTH + 1)), region[0]

    # the seeds: the trees' roots, the provisioning server's leaves, and of the in-band top tier
    # and the spines above those leaves only what the rest cannot come up without: every other
    # switch (a core or spine too) provisions itself by DHCP once its access switch is up and
    # one of that switch's uplinks ends on a core that routes to the server (it is up, and so
    # is a spine above the server's leaves it is cabled to)
    inband = plan.inband
    assert inband is not None and plan.server_device is not None
    server_leaves = {
        link.b for link in fabric.links if link.a == plan.server_device and link.network == "inband"
    }
    above = {link.b for link in fabric.links if link.a in server_leaves and link.b in inband.spines}
    tops = [name for name in plan.seeds if name in inband.real]
    spines = [name for name in plan.seeds if name in above]
    # every tree's root provisions itself by DHCP over a /31 (synth/rootlinks.py): to a core
    # its uplinks reach, or where every such core is past a patch cord, to a routed in-band
    # leaf within one; no root is a seed, so the seeds do not grow with the number of trees
    assert set(plan.root_links) == set(roots)
    cords = {
        link.a: link for link in fabric.links if link.a in plan.root_links and link.kind == MGMT
    }
    for root, rl in plan.root_links.items():
        assert rl.switch in inband.real or rl.switch in inband.leaves, root
        assert rl.network.prefixlen == 31 and devices[root].mgmt_ip == rl.address, root
        assert rl.relay == str(rl.network.network_address), root
        cord = cords[root]
        assert (cord.b, cord.b_port, cord.a_port) == (rl.switch, rl.port, "eth0"), root
        assert cord.cable is not None and cord.cable.media == "cat6", root
        assert cord.distance_m <= 100, root  # a 1000BASE-T channel (IEEE 802.3 clause 40)
        if rl.switch in inband.real:
            assert any(
                k.a == root and k.b == rl.switch and k.kind == "uplink" for k in fabric.links
            )
    assert set(plan.seeds) == set(tops) | set(spines) | server_leaves
    assert 1 <= len(tops) <= 2, tops
    assert 1 <= len(spines) <= 2, spines
    assert len(plan.seeds) <= len(server_leaves) + 4
    via: dict[str, set[str]] = {}
    for link in fabric.links:
        if link.kind == "spine-core" and link.a in above:
            via.setdefault(link.b, set()).add(link.a)
    # bring-up, rounds of DHCP from the seeds: every switch comes up, every root by DHCP
    alive = set(plan.seeds)
    targets: dict[str, set[str]] = {}
    up_of: dict[str, set[str]] = {}  # in-band leaf -> its spines, spine -> its cores
    for link in fabric.links:
        if link.a in plan.subnets and link.b in inband.real:
            targets.setdefault(link.a, set()).add(link.b)
        if link.network == "inband" and link.kind in ("leaf-spine", "spine-core"):
            up_of.setdefault(link.a, set()).add(link.b)
    switches = {name for name in plan.served_by if devices[name].kind == "switch"}
    roots_up: set[str] = set()
    while True:
        routing = {top for top in alive & set(inband.real) if via.get(top, set()) & alive}
        # a routed leaf relays once a spine above it is up with a core above that routing
        leaves = {
            leaf
            for leaf in alive & set(inband.leaves)
            if any(up_of.get(spine, set()) & routing for spine in up_of[leaf] & alive)
        }
        woken = {r for r, k in plan.root_links.items() if k.switch in routing | leaves} - alive
        roots_up |= woken
        alive |= woken
        lit = {
            name
            for name in switches - alive
            if plan.served_by[name] in alive and targets.get(plan.served_by[name], set()) & routing
        }
        if not lit and not woken:
            break
        alive |= lit
    assert switches <= alive, sorted(switches - alive)[:5]
    assert roots_up == set(roots)  # every root by DHCP, none from USB
    assert len(roots) < len(access) // 10
