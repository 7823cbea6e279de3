"""In-band networks whose top tier is more than two spines route at their leaves: every leaf
pair is the VRR gateway of its own subnet, its uplinks BGP unnumbered, so spanning tree has no
switch-to-switch link to block; hosts, NetBox and the seeds follow the pair's subnet. Where two
spines suffice the network still bridges up to the spine pair.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.errors import DesignError
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
            assert tree["vrf"]["default"]["router"]["bgp"]["neighbor"][name] == {
                "type": "unnumbered",
                "remote-as": "external",
            }
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
        assert set(announced["ipv4-unicast"]["network"]) == {str(subnet)}
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


def test_two_spines_still_bridge_up_to_the_spine_pair() -> None:
    fabric, _, trees = _build("superpod-h100-4su")
    net = management_net(fabric)
    assert net.inband is not None and not net.inband.leaves
    assert len(net.inband.real) == 2
    assert "vrr" in ipv4(trees["inband-spine001"]["interface"]["vlan10"])
    assert [n for n in trees["inband-leaf001"]["interface"] if n.startswith("uplink")]


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


def test_an_in_band_core_tier_warns_that_it_stays_bridged(tmp_path: Path) -> None:
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    line = '    oversubscription: "4:1"\n'
    assert text.count(line) == 1
    fabric, _ = compile_text(text.replace(line, line + "    tiers: 3\n"), tmp_path)
    assert fabric.networks["inband"].top_tier == "core"
    assert management_net(fabric).inband is not None
    found = [w for w in fabric.warnings if "inband needs a core tier" in w.message]
    assert len(found) == 1 and "tiers: 2 or auto" in (found[0].hint or "")
