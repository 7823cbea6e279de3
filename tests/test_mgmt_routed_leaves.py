"""In-band networks whose top tier is more than two spines route at their leaves: every leaf
pair is the VRR gateway of its own subnet, its uplinks BGP unnumbered, so spanning tree has no
switch-to-switch link to block; hosts, NetBox and the seeds follow the pair's subnet. Where two
spines suffice the network still bridges up to the spine pair. A core tier routes the same way,
as a 3-tier Clos (RFC 7938): BGP unnumbered on every leaf-spine and spine-core link.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.errors import DesignError
from fabricc.ir import Fabric
from fabricc.spec.resolve import general_cages
from fabricc.synth.mgmtnet import MGMT_ASN, management_net
from tests.configs_support import cables, ipv4, nvue
from tests.support import EXAMPLES, compile_text, compiled

ROUTED = ["gb300-nvl72-xdr", "gb300-nvl72-spectrum-x"]


def _build(example: str) -> tuple[Any, dict[str, str], dict[str, dict[str, Any]]]:
    fabric, artifacts = compiled(example)
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    return fabric, files, nvue(files)


def _members(tree: dict[str, Any]) -> set[str]:
    """Ports that are members of a bond (bridged towards another switch or a host)."""
    return {
        port
        for entry in tree["interface"].values()
        if entry.get("type") in ("bond", "peerlink")
        for port in entry["bond"]["member"]
    }


def _port(port: str) -> str:
    return port if port.startswith("swp") else f"swp{port.removeprefix('Ethernet')}"


@pytest.mark.parametrize("example", ROUTED)
def test_more_than_two_spines_route_at_the_leaves(example: str) -> None:
    fabric, files, trees = _build(example)
    spines = fabric.networks["inband"].switches["spine"]
    leaves = fabric.networks["inband"].switches["leaf"]
    assert len(spines) == 3  # the 4:1 in-band tier these examples need
    net = management_net(fabric)
    assert net.inband is not None and set(net.inband.leaves) == set(leaves)
    rows = [r for r in cables(files) if r["network"] == "inband"]
    uplinks = [r for r in rows if r["kind"] == "leaf-spine"]
    assert uplinks
    # no redundant uplink for spanning tree: every leaf-spine cable is a routed port on both
    # ends (a BGP unnumbered neighbor, in no bond, in no bridge)
    for row in uplinks:
        for switch, port in ((row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])):
            tree = trees[switch]
            name = next(p for p in tree["interface"] if p == port or p == _port(port))
            assert "bridge" not in tree["interface"][name], (switch, name)
            assert name not in _members(tree), (switch, name)
            session = dict(tree["vrf"]["default"]["router"]["bgp"]["neighbor"][name])
            if switch in spines:  # its end accepts the valley paths (tests/test_mgmt_valley.py)
                session.pop("address-family")
            assert session == {"type": "unnumbered", "remote-as": "external"}
    # what is still bridged is one MLAG pair and its hosts: no peer link between spines, no
    # switch-to-switch bond anywhere in the network
    assert not [r for r in rows if r["kind"] == "peer" and r["a_device"] in spines]
    for switch in [*spines, *leaves]:
        kinds = {e.get("type") for e in trees[switch]["interface"].values()}
        bonds = [n for n in trees[switch]["interface"] if n.startswith(("uplink", "downlink"))]
        assert not bonds, (switch, bonds, kinds)
    # the spines: one ASN, a loopback as router id, no in-band SVI; leaves: each its own ASN
    asns = [trees[s]["router"]["bgp"]["autonomous-system"] for s in spines]
    assert set(asns) == {MGMT_ASN}
    for spine in spines:
        assert not [n for n in trees[spine]["interface"] if n.startswith("vlan")]
        assert "bridge" not in trees[spine] and "mlag" not in trees[spine]
        loopback = trees[spine]["router"]["bgp"]["router-id"]
        assert ipv4(trees[spine]["interface"]["lo"])["address"] == {f"{loopback}/32": {}}
    routed = [*spines, *net.subnets, *leaves]
    leaf_asns = [trees[s]["router"]["bgp"]["autonomous-system"] for s in [*net.subnets, *leaves]]
    assert len(set(leaf_asns)) == len(leaf_asns) and MGMT_ASN not in leaf_asns
    assert all(trees[s]["router"]["bgp"]["router-id"] for s in routed)


@pytest.mark.parametrize("example", ROUTED)
def test_every_in_band_gateway_is_owned_by_its_leaf_pair(example: str) -> None:
    fabric, files, trees = _build(example)
    net = management_net(fabric)
    assert net.inband is not None
    pool = net.inband.prefix
    # every leaf pair owns one subnet of the pool: VRR on both peers, the same virtual address
    owned: dict[str, tuple[ipaddress.IPv4Network, str, set[str]]] = {}
    for leaf in net.inband.leaves:
        svi = ipv4(trees[leaf]["interface"]["vlan10"])
        ((real, _),) = svi["address"].items()
        ((virtual, _),) = svi["vrr"]["address"].items()
        subnet = ipaddress.IPv4Interface(virtual).network
        assert ipaddress.IPv4Interface(real).network == subnet and subnet.subnet_of(pool)
        assert subnet.network_address + 1 == ipaddress.IPv4Interface(virtual).ip  # aligned
        gateway = str(ipaddress.IPv4Interface(virtual).ip)
        owned.setdefault(gateway, (subnet, svi["vrr"]["mac-address"], set()))[2].add(leaf)
        announced = trees[leaf]["vrf"]["default"]["router"]["bgp"]["address-family"]
        (loopback,) = ipv4(trees[leaf]["interface"]["lo"])["address"]
        assert set(announced["ipv4-unicast"]["network"]) == {str(subnet), loopback}
    subnets = [s for s, _, _ in owned.values()]
    assert all(not a.overlaps(b) for i, a in enumerate(subnets) for b in subnets[i + 1 :])
    assert all(len(pair) == 2 for _, _, pair in owned.values())  # both peers of a pair
    for spine, address in net.inband.real.items():
        assert not any(ipaddress.ip_address(address) in s for s in subnets), spine
    # every host's netplan gateway is the VRR address of the pair it is cabled to, its address
    # in that pair's subnet (and NetBox records the same prefix length)
    cabled: dict[str, set[str]] = {}
    for row in cables(files):
        if row["network"] == "inband" and row["kind"] == "endpoint-leaf":
            cabled.setdefault(row["a_device"], set()).add(row["b_device"])
    netbox = files["provisioning/netbox/08-ip-addresses.csv"]
    checked = 0
    for host, leaves in cabled.items():
        text = files.get(f"provisioning/netplan/{host}.yaml")
        if text is None:
            continue
        bond = yaml.safe_load(text)["network"]["bonds"]["bond0"]
        ((route,),) = (bond["routes"],)
        subnet, _, pair = owned[route["via"]]
        assert leaves == pair, host
        (address,) = bond["addresses"]
        assert ipaddress.ip_interface(address).network == subnet, host
        assert f"{address}," in netbox
        checked += 1
    assert checked == len(cabled) > 100
    # the provisioning server is a host of a pair: the relays send there, the seeds say so
    assert net.server_device is not None
    seeds = files["provisioning/ztp/seeds.txt"]
    assert "in-band spine: routes between the leaves' subnets" in seeds


@pytest.mark.parametrize("example", ROUTED)
def test_mlag_leaves_route_across_the_peer_link_and_back_up_on_the_loopback(example: str) -> None:
    """Issue 41: an MLAG + VRR leaf pair with routed uplinks has a routed adjacency across the
    peer link (Cumulus Linux "Multi-Chassis Link Aggregation - MLAG", Peer Link Routing: BGP
    unnumbered on peerlink.4094) and its backup IP is the peer's loopback in the default VRF,
    announced over the uplinks - not the peer's eth0 behind the OOB network, which itself
    uplinks into these spines."""
    fabric, files, trees = _build(example)
    net = management_net(fabric)
    assert net.inband is not None
    peers = {
        r["a_device"]: r["b_device"]
        for r in cables(files)
        if r["network"] == "inband" and r["kind"] == "peer"
    }
    peers |= {b: a for a, b in peers.items()}
    leaves = fabric.networks["inband"].switches["leaf"]
    assert set(leaves) <= set(peers)  # every leaf of these examples is in an MLAG pair
    subnets = [leaf.subnet for leaf in net.inband.leaves.values()]
    loopbacks: dict[str, str] = {}
    for leaf in leaves:
        (address,) = ipv4(trees[leaf]["interface"]["lo"])["address"]
        loopback = ipaddress.IPv4Interface(address)
        assert loopback.network.prefixlen == 32 and loopback.ip in net.inband.prefix
        assert not any(loopback.ip in s for s in subnets), leaf  # not over the bridged VLAN
        announced = _bgp(trees[leaf])["address-family"]["ipv4-unicast"]["network"]
        assert address in announced, leaf
        loopbacks[leaf] = str(loopback.ip)
    assert len(set(loopbacks.values())) == len(loopbacks)
    spine_loopbacks = {
        next(iter(ipv4(trees[s]["interface"]["lo"])["address"])).split("/")[0]
        for s in fabric.networks["inband"].switches["spine"]
    }
    assert not spine_loopbacks & set(loopbacks.values())
    for leaf in leaves:
        tree = trees[leaf]
        assert tree["interface"]["peerlink"]["type"] == "peerlink"
        assert _bgp(tree)["neighbor"]["peerlink.4094"] == {
            "type": "unnumbered",
            "remote-as": "external",
        }
        assert tree["mlag"]["backup"] == {loopbacks[peers[leaf]]: {"vrf": "default"}}, leaf
        assert tree["router"]["bgp"]["router-id"] == loopbacks[leaf]


def test_two_spines_still_bridge_up_to_the_spine_pair() -> None:
    fabric, _, trees = _build("superpod-h100-4su")
    net = management_net(fabric)
    assert net.inband is not None and not net.inband.leaves
    assert len(net.inband.real) == 2
    assert "vrr" in ipv4(trees["inband-spine001"]["interface"]["vlan10"])
    assert [n for n in trees["inband-leaf001"]["interface"] if n.startswith("uplink")]
    # the spine pair routes (the OOB uplinks): across its peer link too, iBGP (one ASN) with
    # next hop self (Cumulus MLAG, Peer Link Routing); its leaves bridge and run no BGP
    for spine in ("inband-spine001", "inband-spine002"):
        assert _bgp(trees[spine])["neighbor"]["peerlink.4094"] == {
            "type": "unnumbered",
            "remote-as": "internal",
            "address-family": {"ipv4-unicast": {"nexthop-setting": "self"}},
        }
    assert "router" not in trees["inband-leaf001"]


def test_an_in_band_pool_too_small_for_the_leaf_subnets_is_an_error(tmp_path: Path) -> None:
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    assert "\naddressing:" not in text
    # eight leaves in four pairs need four /26 subnets and the spines' own addresses
    with pytest.raises(DesignError) as caught:
        compile_text(text + "addressing:\n  inband: 10.64.0.0/25\n", tmp_path)
    message = str(caught.value)
    assert "address pool exhausted" in message and "a subnet per leaf pair" in message
    assert "154 in-band hosts on 8 leaves" in message and "addressing.inband" in message


def test_two_spines_of_single_homed_leaves_route_at_the_leaves(tmp_path: Path) -> None:
    """Single-homed hosts: the two spines are no MLAG pair, so a bridge over them would loop."""
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    fabric, artifacts = compile_text(
        text.replace("    dual_homed: true\n", "    dual_homed: false\n"), tmp_path
    )
    trees = nvue({path: body for path, body in artifacts if isinstance(body, str)})
    spines = fabric.networks["inband"].switches["spine"]
    assert len(spines) == 2
    net = management_net(fabric)
    assert net.inband is not None
    assert set(net.inband.leaves) == set(fabric.networks["inband"].switches["leaf"])
    for leaf, own in net.inband.leaves.items():
        tree = trees[leaf]
        assert "mlag" not in tree and not [n for n in tree["interface"] if n.startswith("uplink")]
        assert ipv4(tree["interface"]["vlan10"])["vrr"]["address"] == {
            f"{own.virtual}/{own.subnet.prefixlen}": {}
        }
        assert len(tree["vrf"]["default"]["router"]["bgp"]["neighbor"]) == len(own.uplinks) > 0
    for link in fabric.links:
        if link.network == "inband" and link.kind == "endpoint-leaf":
            address = fabric.devices[link.a].inband_ip
            assert address is not None
            subnet = net.inband.leaves[link.b].subnet
            assert ipaddress.IPv4Address(address) in subnet, link.a
    assert all("bridge" not in trees[spine] for spine in spines)


CORE_TIER = "    spine_leaf_groups: {per_su: 1}\n"  # a pod per leaf pair: cores above them


def core_tier_design(tmp_path: Path) -> tuple[Fabric, dict[str, str], dict[str, dict[str, Any]]]:
    """gb300-nvl72-xdr with its in-band network in three tiers: every leaf pair a pod of its own
    (two spines each), cores above the pods, the OOB access switches uplinked into the cores."""
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    line = '    oversubscription: "4:1"\n'
    assert text.count(line) == 1
    fabric, artifacts = compile_text(text.replace(line, line + CORE_TIER), tmp_path)
    files = {path: body for path, body in artifacts if isinstance(body, str)}
    return fabric, files, nvue(files)


@pytest.fixture(scope="module")
def cored(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Fabric, dict[str, str], dict[str, dict[str, Any]]]:
    return core_tier_design(tmp_path_factory.mktemp("cored"))


def _bgp(tree: dict[str, Any]) -> dict[str, Any]:
    bgp: dict[str, Any] = tree["vrf"]["default"]["router"]["bgp"]
    return bgp


def test_a_core_tier_routes_every_switch_link(
    cored: tuple[Fabric, dict[str, str], dict[str, dict[str, Any]]],
) -> None:
    fabric, files, trees = cored
    topology = fabric.networks["inband"]
    assert topology.top_tier == "core" and topology.pods >= 2
    leaves, spines, cores = (topology.switches[t] for t in ("leaf", "spine", "core"))
    assert len(cores) >= 2
    assert not [w for w in fabric.warnings if "core tier" in w.message]
    net = management_net(fabric)
    assert net.inband is not None
    assert set(net.inband.leaves) == set(leaves) and set(net.inband.spines) == set(spines)
    assert set(net.inband.real) == set(cores)
    rows = cables(files)
    switch_links = [
        r
        for r in rows
        if (r["network"] == "inband" and r["kind"] in ("leaf-spine", "spine-core"))
        or (r["network"] == "oob" and r["kind"] == "uplink")
    ]
    kinds = {(r["network"], r["kind"]) for r in switch_links}
    assert kinds == {("inband", "leaf-spine"), ("inband", "spine-core"), ("oob", "uplink")}
    # spanning tree has nothing to block: every switch-to-switch cable is a routed port with a
    # BGP unnumbered neighbor at both ends, in no bond and no bridge
    for row in switch_links:
        for switch, port in ((row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])):
            tree = trees[switch]
            name = next(p for p in tree["interface"] if p == _port(port))
            assert "bridge" not in tree["interface"][name], (switch, name)
            assert name not in _members(tree), (switch, name)
            session = dict(_bgp(tree)["neighbor"][name])
            if switch in cores and row["kind"] == "spine-core":  # the valley paths
                session.pop("address-family")
            assert session == {"type": "unnumbered", "remote-as": "external"}
    assert not [r for r in rows if r["kind"] == "peer" and r["a_device"] not in leaves]
    for switch in [*spines, *cores]:
        tree = trees[switch]
        assert "bridge" not in tree and "mlag" not in tree, switch
        assert not [n for n in tree["interface"] if n.startswith(("vlan", "uplink", "downlink"))]
        # every neighbor a BGP session stands for is a cable of the plan (no dangling one)
        ends = {
            _port(port)
            for r in switch_links
            for device, port in ((r["a_device"], r["a_port"]), (r["b_device"], r["b_port"]))
            if device == switch
        }
        assert set(_bgp(tree)["neighbor"]) == ends, switch
        if switch in net.inband.spines:  # the plan says the same
            assert {_port(p) for p in net.inband.spines[switch].ports} == ends, switch
    for leaf, own in net.inband.leaves.items():
        # its uplinks, and across the peer link to its MLAG peer (Peer Link Routing)
        want = {_port(p) for p in own.uplinks} | {"peerlink.4094"}
        assert want == set(_bgp(trees[leaf])["neighbor"]), leaf


def test_a_core_tier_numbers_asns_as_rfc_7938(
    cored: tuple[Fabric, dict[str, str], dict[str, dict[str, Any]]],
) -> None:
    """Leaves each their own ASN, the spines of one pod one, the cores one (RFC 7938 5.2.1)."""
    fabric, files, trees = cored
    topology = fabric.networks["inband"]
    leaves, spines, cores = (topology.switches[t] for t in ("leaf", "spine", "core"))
    net = management_net(fabric)

    def asn(switch: str) -> int:
        value: int = trees[switch]["router"]["bgp"]["autonomous-system"]
        return value

    # a pod, as the cabling shows it: the spines that serve the same leaves
    served: dict[str, set[str]] = {}
    for row in cables(files):
        if row["network"] == "inband" and row["kind"] == "leaf-spine":
            served.setdefault(row["b_device"], set()).add(row["a_device"])
    pods: dict[frozenset[str], set[int]] = {}
    for spine in spines:
        pods.setdefault(frozenset(served[spine]), set()).add(asn(spine))
    assert len(pods) == topology.pods >= 2
    assert all(len(numbers) == 1 for numbers in pods.values())
    pod_asns = [next(iter(numbers)) for numbers in pods.values()]
    assert len(set(pod_asns)) == len(pod_asns)
    assert {asn(c) for c in cores} == {MGMT_ASN}
    own = [asn(s) for s in [*leaves, *net.subnets]]  # leaves and access switches: one each
    assert len(set(own)) == len(own)
    assert not set(own) & {*pod_asns, MGMT_ASN}
    assert all(4_200_000_000 <= n <= 4_294_967_294 for n in [*own, *pod_asns])  # RFC 6996
    # ECMP: a leaf installs a path per uplink, a spine one per link down and up (up to the 64
    # next hops FRR builds support)
    for switch in [*leaves, *spines, *cores]:
        family = _bgp(trees[switch])["address-family"]["ipv4-unicast"]
        neighbors = len([n for n in _bgp(trees[switch])["neighbor"] if n != "peerlink.4094"])
        assert family["multipaths"]["ebgp"] == min(neighbors, 64) > 1


def test_a_core_tier_keeps_the_leaf_pairs_gateways_and_loopbacks_apart(
    cored: tuple[Fabric, dict[str, str], dict[str, dict[str, Any]]],
) -> None:
    fabric, files, trees = cored
    topology = fabric.networks["inband"]
    net = management_net(fabric)
    assert net.inband is not None
    pool = net.inband.prefix
    owners: dict[str, set[str]] = {}
    subnets = set()
    for leaf in topology.switches["leaf"]:
        svi = ipv4(trees[leaf]["interface"]["vlan10"])
        ((virtual, _),) = svi["vrr"]["address"].items()
        owners.setdefault(virtual, set()).add(leaf)
        subnets.add(ipaddress.IPv4Interface(virtual).network)
    # every gateway is owned by one MLAG pair, both peers, and the pair is cabled together
    peers = {
        frozenset((r["a_device"], r["b_device"])) for r in cables(files) if r["kind"] == "peer"
    }
    assert all(len(pair) == 2 and frozenset(pair) in peers for pair in owners.values())
    # every spine and core has its own loopback in the pool, outside every leaf subnet
    loopbacks = []
    for switch in [*topology.switches["spine"], *topology.switches["core"]]:
        (address,) = ipv4(trees[switch]["interface"]["lo"])["address"]
        loopback = ipaddress.IPv4Interface(address)
        assert loopback.network.prefixlen == 32 and loopback.ip in pool
        assert not any(loopback.ip in s for s in subnets), switch
        assert str(loopback.ip) == trees[switch]["router"]["bgp"]["router-id"]
        # (and the /31 of each management tree's root it relays for, synth/rootlinks.py)
        roots = {str(link.network) for link in net.relayed_roots(switch)}
        networks = set(_bgp(trees[switch])["address-family"]["ipv4-unicast"]["network"])
        assert networks == {address, *roots}
        loopbacks.append(loopback.ip)
    assert len(set(loopbacks)) == len(loopbacks)
    # every host's gateway is its own pair's
    for link in fabric.links:
        if link.network == "inband" and link.kind == "endpoint-leaf":
            address = fabric.devices[link.a].inband_ip
            assert address is not None
            _, gateway = net.inband.host_gateway(address)
            assert link.b in owners[f"{gateway}/{net.inband.host_prefixlen}"], link.a
    # the seeds: a core, a spine above the provisioning server's leaves, those leaves - the
    # relays' path to the server, and no other switch (the management trees' roots come up by
    # DHCP through the in-band switch their management port is cabled to, synth/rootlinks.py)
    server_leaves = {
        link.b
        for link in fabric.links
        if link.kind == "endpoint-leaf" and link.a == net.server_device and link.network == "inband"
    }
    above = {
        link.b
        for link in fabric.links
        if link.kind == "leaf-spine" and link.network == "inband" and link.a in server_leaves
    }
    # of the cores only those the rest cannot come up without (synth/mgmtnet.py _top_seeds):
    # the others provision themselves by DHCP through access switches uplinked into a seed
    cores = [s for s in net.seeds if s in topology.switches["core"]]
    assert 1 <= len(cores) < len(topology.switches["core"])
    assert net.seeds == [
        *[s for s in net.subnets if s not in net.served_by and s not in net.root_links],
        *cores,
        *[s for s in net.seeds if s in above],  # those the seeded cores route through
        *sorted(server_leaves),
    ]
    assert len(above) == topology.spines_per_pod
    assert 1 <= len([s for s in net.seeds if s in above]) < len(above)
    seeds = files["provisioning/ztp/seeds.txt"]
    assert "in-band core: routes between the pods' spines and the relays" in seeds
    assert f"in-band spine above {net.server_device}'s leaves" in seeds


def test_tiers_3_on_a_small_in_band_network_routes_too(tmp_path: Path) -> None:
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    line = '    oversubscription: "4:1"\n'
    fabric, artifacts = compile_text(text.replace(line, line + "    tiers: 3\n"), tmp_path)
    trees = nvue({path: body for path, body in artifacts if isinstance(body, str)})
    topology = fabric.networks["inband"]
    assert topology.top_tier == "core" and topology.pods == 1
    net = management_net(fabric)
    assert net.inband is not None and set(net.inband.spines) == set(topology.switches["spine"])
    for switch in [*topology.switches["spine"], *topology.switches["core"]]:
        assert "bridge" not in trees[switch] and "lo" in trees[switch]["interface"], switch
    assert not [w for w in fabric.warnings if "core tier" in w.message]


def test_routed_in_band_spines_keep_the_peer_link_cages(tmp_path: Path) -> None:
    """Only a spine pair that bridges needs a peer link: spines that route at the leaves may use
    every cage. 17 GB300 racks: 14 in-band leaves with 12 uplinks each and the OOB access
    switches' uplinks fit four SN4600C spines only with all 64 cages (with two kept for a peer
    link no spine pair would have, the sizing took six)."""
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    racks = "    count: 8\n    su_size: 8\n"
    assert text.count(racks) == 1
    fabric, _ = compile_text(text.replace(racks, "    count: 17\n    su_size: 8\n"), tmp_path)
    spines = fabric.networks["inband"].switches["spine"]
    assert len(spines) == 4
    used: dict[str, set[str]] = {s: set() for s in spines}
    for link in fabric.links:
        if link.kind == "mgmt":  # the management port, no cage
            continue
        assert link.kind != "peer" or link.a not in used, link  # routed spines are no pair
        for device, port in ((link.a, link.a_port), (link.b, link.b_port)):
            if device in used:
                used[device].add(port)
    model = fabric.loaded.catalog.catalog.switches[fabric.devices[spines[0]].model]
    assert max(len(ports) for ports in used.values()) == general_cages(model) == 64
