"""NVIDIA Cumulus Linux NVUE startup.yaml: parses as YAML with NVUE's structure, matches the
cabling plan and the FRR config, carries the spec's RoCE QoS, and - for management switches -
builds MLAG pairs, bonds, VLANs, uplinks and management addresses from the IR."""

from __future__ import annotations

import ipaddress
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.emit import configs
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.cumulus import roce_tree
from fabricc.emit.configs.mgmt import ManagementPlan, management_tree
from fabricc.errors import DesignError
from fabricc.synth.mgmtnet import management_net
from tests.configs_support import by_path, cables, ipv4, nvue, with_custom_qos
from tests.support import EXAMPLES, compile_text, compiled

INTERFACE = re.compile(r"^(lo|eth0|swp\d+(s\d+)?|bond\d+|uplink\d+|downlink\d+|peerlink|vlan\d+)$")
DEFAULTS = {"roce": (26, 3), "cnp": (48, 6), "pfc": 3, "ecn": (150, 1500, 100), "dwrr": (50, 50)}
CUSTOM = {"roce": (24, 5), "cnp": (4, 7), "pfc": 5, "ecn": (200, 2000, 50), "dwrr": (70, 30)}


def cumulus_port(port: str) -> str:
    cage, _, sub = port.partition("/")
    return f"swp{cage}" if not sub else f"swp{cage}s{int(sub) - 1}"


def spectrum() -> dict[str, str]:
    return by_path(compiled("spectrum-x-2plane")[1])


def superpod() -> dict[str, str]:
    return by_path(compiled("superpod-h100-4su")[1])


def check_cabled_ports(files: dict[str, str], trees: dict[str, dict[str, Any]]) -> int:
    """Every cable end on a Cumulus switch has an interface described with the far device; a
    split cage has its breakout set on the parent port."""
    checked = 0
    for row in cables(files):
        for side, other in (("a", "b"), ("b", "a")):
            tree = trees.get(row[f"{side}_device"])
            if tree is None:
                continue
            port = row[f"{side}_port"]
            interface = tree["interface"][cumulus_port(port) if port != "eth0" else "eth0"]
            assert interface["description"].startswith(row[f"{other}_device"] + ":"), row
            if "/" in port:
                parent = tree["interface"]["swp" + port.split("/")[0]]
                assert list(parent["link"]["breakout"]) in (["2x"], ["4x"], ["8x"])
            checked += 1
    return checked


def test_roce_nvue_structure_and_cabling() -> None:
    files = spectrum()
    trees = nvue(files)
    fabric, _ = compiled("spectrum-x-2plane")
    routed = {n for t in ("leaf", "spine") for n in fabric.networks["compute"].switches[t]}
    assert routed <= set(trees)
    for name, tree in trees.items():
        assert tree["system"]["hostname"] == name
        assert all(INTERFACE.match(i) for i in tree["interface"]), name
    assert check_cabled_ports(files, trees) > 0
    for name in routed:
        device, tree = fabric.devices[name], trees[name]
        bgp = tree["vrf"]["default"]["router"]["bgp"]
        assert tree["router"]["bgp"]["autonomous-system"] == device.asn
        assert tree["router"]["bgp"]["router-id"] == device.loopback
        assert f"{device.loopback}/32" in tree["interface"]["lo"]["ipv4"]["address"]
        switch_ports = {
            cumulus_port(row["a_port"] if row["a_device"] == name else row["b_port"])
            for row in cables(files)
            if row["kind"] == "leaf-spine" and name in (row["a_device"], row["b_device"])
        }
        assert set(bgp["neighbor"]) == switch_ports
        assert {n["type"] for n in bgp["neighbor"].values()} == {"unnumbered"}
        # NVUE and frr.conf describe the same sessions and announcements
        frr = files[f"configs/{name}/frr.conf"]
        assert set(re.findall(r"^ neighbor (\S+) interface peer-group", frr, re.M)) == switch_ports
        networks = set(re.findall(r"^  network (\S+)$", frr, re.M))
        assert networks == set(bgp["address-family"]["ipv4-unicast"]["network"])


def expect_qos(qos: dict[str, Any], values: dict[str, Any]) -> None:
    (roce_dscp, roce_prio), (cnp_dscp, cnp_prio) = values["roce"], values["cnp"]
    assert qos["roce"] == {"state": "enabled", "mode": "lossless"}
    mapping = qos["mapping"]["default-global"]
    assert mapping["trust"] == "both"
    dscp = {int(k): v["switch-priority"] for k, v in mapping["dscp"].items()}
    assert sorted(dscp) == list(range(64))
    assert dscp[roce_dscp] == roce_prio and dscp[cnp_dscp] == cnp_prio
    assert {v for k, v in dscp.items() if k not in (roce_dscp, cnp_dscp)} == {0}
    assert list(qos["pfc"]["default-global"]["switch-priority"]) == [str(values["pfc"])]
    low, high, probability = values["ecn"]
    ecn = qos["congestion-control"]["default-global"]["traffic-class"][str(roce_prio)]
    # KB as NVUE means it: 150 KB is 150,000 bytes on Spectrum-4 (Cumulus Linux "RDMA over
    # Converged Ethernet - RoCE", Verify RoCE Configuration)
    assert (ecn["ecn"], ecn["min-threshold"], ecn["max-threshold"]) == (
        "enable",
        low * 1000,
        high * 1000,
    )
    assert ecn["probability"] == probability
    queues = qos["egress-queue-mapping"]["default-global"]["switch-priority"]
    assert {int(p): q["traffic-class"] for p, q in queues.items()} == {
        p: p if p in (roce_prio, cnp_prio) else 0 for p in range(8)
    }
    scheduler = qos["egress-scheduler"]["default-global"]["traffic-class"]
    roce_weight, default_weight = values["dwrr"]
    assert scheduler[str(roce_prio)] == {"mode": "dwrr", "bw-percent": roce_weight}
    assert scheduler["0"] == {"mode": "dwrr", "bw-percent": default_weight}
    assert scheduler[str(cnp_prio)] == {"mode": "strict"}


def test_roce_qos_on_every_switch() -> None:
    fabric, _ = compiled("spectrum-x-2plane")
    trees = nvue(spectrum())
    for tier in ("leaf", "spine"):
        for name in fabric.networks["compute"].switches[tier]:
            expect_qos(trees[name]["qos"], DEFAULTS)
    for name in fabric.networks["oob"].switches["leaf"]:
        assert "qos" not in trees[name]


def test_roce_qos_comes_from_the_spec(tmp_path: Path) -> None:
    trees = nvue(with_custom_qos("spectrum-x-2plane", "    os: cumulus\n", tmp_path))
    assert sum(1 for t in trees.values() if "qos" in t) == 24
    for tree in trees.values():
        if "qos" in tree:
            expect_qos(tree["qos"], CUSTOM)


def test_management_switches_follow_the_cabling_plan() -> None:
    files = superpod()
    trees = nvue(files)
    fabric, _ = compiled("superpod-h100-4su")
    managed = [
        n
        for net in ("inband", "oob")
        for t in ("leaf", "spine")
        for n in fabric.networks[net].switches.get(t, [])
    ]
    assert set(managed) <= set(trees)
    assert check_cabled_ports(files, {n: trees[n] for n in managed}) > 0
    net = management_net(fabric)
    for name in managed:
        device, tree = fabric.devices[name], trees[name]
        if "eth0" in tree["interface"]:  # cabled management port: mgmt VRF, its access switch
            # the router of its subnet - or, a management tree's root, the in-band switch
            # that relays for it, on their /31 (synth/rootlinks.py)
            eth0 = tree["interface"]["eth0"]
            ip = ipv4(eth0)
            vrf = eth0.get("vrf", ip.get("vrf"))  # 5.15 moved `ip vrf` up to `vrf`
            root = net.root_links.get(name)
            prefixlen, gateway = (
                (31, root.relay)
                if root is not None
                else (
                    net.subnets[net.served_by[name]].network.prefixlen,
                    net.subnets[net.served_by[name]].gateway,
                )
            )
            assert (list(ip["address"]), list(ip["gateway"]), vrf) == (
                [f"{device.mgmt_ip}/{prefixlen}"],
                [gateway],
                "mgmt",
            )
            if root is not None:  # its subnet's gateway on the SVI, as every access switch's
                svi = tree["interface"]["vlan20"]
                assert list(ipv4(svi)["address"]) == [f"{net.subnets[name].gateway}/26"]
        else:  # OOB access switch: the gateway of its subnet on the SVI of its VLAN
            access = net.subnets[name]
            svi = tree["interface"]["vlan20"]
            assert device.mgmt_ip == access.gateway
            assert list(ipv4(svi)["address"]) == [f"{access.gateway}/26"]
            assert (
                str(access.network)
                == f"{ipaddress.ip_network(f'{access.gateway}/26', strict=False)}"
            )


def _bond_of(tree: dict[str, Any], port: str) -> tuple[str, dict[str, Any]]:
    found = [
        (n, i)
        for n, i in tree["interface"].items()
        if i.get("type") == "bond" and port in i["bond"]["member"]
    ]
    assert len(found) == 1, port
    return found[0]


def test_in_band_hosts_are_bonded_over_mlag_pairs() -> None:
    files = superpod()
    trees = nvue(files)
    rows = cables(files)
    peers: dict[str, str] = {}
    peer_ports: dict[str, set[str]] = {}
    for row in rows:
        if row["network"] == "inband" and row["kind"] == "peer":
            peers[row["a_device"]], peers[row["b_device"]] = row["b_device"], row["a_device"]
            peer_ports.setdefault(row["a_device"], set()).add(cumulus_port(row["a_port"]))
            peer_ports.setdefault(row["b_device"], set()).add(cumulus_port(row["b_port"]))
    assert len(peers) == 8  # 3 leaf pairs and the spine pair
    for leaf, peer in peers.items():
        mlag, other = trees[leaf]["mlag"], trees[peer]["mlag"]
        assert mlag["mac-address"] == other["mac-address"] and mlag["peer-ip"] == "linklocal"
        assert {mlag["priority"], other["priority"]} == {1000, 2000}
        assert mlag["init-delay"] == other["init-delay"] == 300
        assert set(trees[leaf]["interface"]["peerlink"]["bond"]["member"]) == peer_ports[leaf]
    assert len({trees[leaf]["mlag"]["mac-address"] for leaf in peers}) == 4
    host_bonds: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["network"] == "inband" and row["kind"] == "endpoint-leaf":
            _, bond = _bond_of(trees[row["b_device"]], cumulus_port(row["b_port"]))
            assert bond["description"] == row["a_device"]
            assert bond["bridge"]["domain"]["br_default"]["access"] == 10
            host_bonds.setdefault(row["a_device"], {})[row["b_device"]] = bond["bond"]["mlag"]["id"]
    # every host: one bond on each leaf of one pair, with the same MLAG id on both
    assert len(host_bonds) == 127 + 4 + 4
    for host, bonds in host_bonds.items():
        (a, id_a), (b, id_b) = sorted(bonds.items())
        assert peers[a] == b and id_a == id_b, host
    assert_loop_free(trees, rows, "inband", peers)


def assert_loop_free(
    trees: dict[str, Any], rows: list[dict[str, str]], network: str, peers: dict[str, str]
) -> None:
    """Spanning tree blocks nothing: between two switches or MLAG pairs every cable is in one
    bond on each side (the same bond and MLAG id on both peers), and the switches and pairs
    joined by these bonds form a tree."""

    def group(switch: str) -> str:
        return min(switch, peers.get(switch, switch))

    links: dict[tuple[str, str], list[tuple[str, str, str, str]]] = {}
    for row in rows:
        if row["network"] == network and row["kind"] in ("leaf-spine", "spine-core"):
            key = (group(row["a_device"]), group(row["b_device"]))
            cable = (row["a_device"], row["a_port"], row["b_device"], row["b_port"])
            links.setdefault(key, []).append(cable)
    for cables_between in links.values():
        for side in (0, 2):
            bonds = {
                (end[side], _bond_of(trees[end[side]], cumulus_port(end[side + 1]))[0])
                for end in cables_between
            }
            names = {name for _, name in bonds}
            ids = {
                str(trees[switch]["interface"][name]["bond"].get("mlag", {}).get("id"))
                for switch, name in bonds
            }
            assert len(names) == 1 and len(ids) == 1, bonds  # one logical link per side
    nodes = {g for key in links for g in key}
    parent = {node: node for node in nodes}

    def root(node: str) -> str:
        while parent[node] != node:
            node = parent[node]
        return node

    for a, b in links:
        ra, rb = root(a), root(b)
        assert ra != rb, f"a loop through {a} and {b}: spanning tree would block a link"
        parent[ra] = rb


def test_oob_access_ports_and_uplinks() -> None:
    """Access ports in the OOB VLAN; the access switch routes its subnet into the in-band top
    tier (BGP unnumbered on both ends of every uplink, each side announcing its prefix), relays
    DHCP with the access port as circuit-id, and the top tier owns the in-band gateway (VRR)."""
    files = superpod()
    trees = nvue(files)
    fabric, _ = compiled("superpod-h100-4su")
    net = management_net(fabric)
    assert net.inband is not None
    uplinks = 0
    for row in cables(files):
        if row["network"] != "oob":
            continue
        if row["kind"] == "mgmt" and row["a_device"] in net.root_links:
            # a management tree's root on an in-band switch: a routed /31 it relays from
            link = net.root_links[row["a_device"]]
            port = trees[row["b_device"]]["interface"][cumulus_port(row["b_port"])]
            assert row["b_device"] == link.switch and "bridge" not in port
            assert list(ipv4(port)["address"]) == [f"{link.relay}/31"]
            continue
        if row["kind"] == "mgmt":
            switch = trees[row["b_device"]]
            domain = switch["interface"][cumulus_port(row["b_port"])]["bridge"]["domain"]
            assert domain["br_default"]["access"] == 20
            assert domain["br_default"]["stp"] == {"admin-edge": "enabled", "bpdu-guard": "enabled"}
            continue
        uplinks += 1
        for end, port in ((row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])):
            tree = trees[end]
            assert "bridge" not in tree["interface"][cumulus_port(port)]  # routed
            neighbor = tree["vrf"]["default"]["router"]["bgp"]["neighbor"][cumulus_port(port)]
            assert neighbor == {"type": "unnumbered", "remote-as": "external"}
        access = net.subnets[row["a_device"]]
        ours = trees[row["a_device"]]
        assert ours["router"]["bgp"]["autonomous-system"] == access.asn
        family = ours["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        assert list(family["network"]) == [str(access.network)]
        relay = ours["service"]["dhcp-relay"]["default"]
        (group,) = relay["server-group"].values()  # Cumulus Linux 5.14+: one server group
        assert group["server"] == {net.server: {}}
        assert cumulus_port(row["a_port"]) in group["upstream-interface"]
        (name,) = relay["server-group"]
        assert relay["downstream-interface"] == {"vlan20": {"server-group-name": name}}
        assert relay["agent"] == {"state": "enabled", "use-pif-circuit-id": {"state": "enabled"}}
    assert uplinks == 16
    asns = [
        t["router"]["bgp"]["autonomous-system"] for n, t in trees.items() if n.startswith("oob")
    ]
    assert len(set(asns)) == len(asns) == 8
    for spine in ("inband-spine001", "inband-spine002"):
        tree = trees[spine]
        assert set(tree["bridge"]["domain"]["br_default"]["vlan"]) == {"10"}
        svi = ipv4(tree["interface"]["vlan10"])
        assert list(svi["address"]) == [f"{net.inband.real[spine]}/16"]
        assert svi["vrr"]["address"] == {f"{net.inband.virtual}/16": {}}
        assert (
            svi["vrr"]["mac-address"]
            == ipv4(trees["inband-spine001"]["interface"]["vlan10"])["vrr"]["mac-address"]
        )
    assert net.inband.virtual == "10.64.0.1"  # the in-band hosts' gateway (Ansible, netplan)
    priorities = {
        n: t["bridge"]["domain"]["br_default"]["stp"]["priority"] for n, t in trees.items()
    }
    assert min(priorities, key=lambda n: priorities[n]) == "inband-spine001"


def test_management_vlans_must_differ(tmp_path: Path) -> None:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    text = text.replace("    uplink_to: inband\n", "    uplink_to: inband\n    vlan: 10\n")
    with pytest.raises(DesignError, match="VLAN 10 is used by networks 'inband' and 'oob'"):
        compile_text(text, tmp_path)


@pytest.mark.parametrize("example", ["roce-lab", "gb200-nvl72-su"])
def test_every_nvue_file_parses(example: str) -> None:
    files = by_path(compiled(example)[1])
    trees = nvue(files)
    assert trees
    for name, tree in trees.items():
        assert tree["system"]["hostname"] == name
        assert all(INTERFACE.match(i) for i in tree["interface"]), name
    assert check_cabled_ports(files, trees) > 0


@pytest.mark.parametrize(
    "example", ["roce-lab", "spectrum-x-2plane", "superpod-h100-4su", "gb200-nvl72-su"]
)
def test_nvue_text_reads_back_as_the_structured_config(example: str) -> None:
    """templates/cumulus only format: each startup.yaml parses back to exactly the tree the
    Python builders computed (values, types and nesting; quoting cannot turn '10' into 10)."""
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    ctx = ConfigContext(fabric)
    plan = ManagementPlan(ctx)
    checked = 0
    for device in fabric.devices.values():
        if device.kind != "switch" or ctx.os_of(device) != "cumulus":
            continue
        management = ctx.role_of(device) in ("inband", "oob")
        tree = management_tree(ctx, plan, device) if management else roce_tree(ctx, device)
        text = files[f"configs/{device.name}/startup.yaml"]
        assert yaml.safe_load(text) == [{"set": tree}], device.name
        checked += 1
    assert checked > 0


def switch_ports(
    tree: dict[str, Any], files: dict[str, str], name: str
) -> tuple[set[str], set[str]]:
    """Cumulus names of the switch-to-switch and of the host ports of one switch."""
    fabric_ports: set[str] = set()
    host_ports: set[str] = set()
    for row in cables(files):
        for side in ("a", "b"):
            if row[f"{side}_device"] != name or row["network"] != "compute":
                continue
            port = cumulus_port(row[f"{side}_port"])
            (host_ports if row["kind"] == "endpoint-leaf" else fabric_ports).add(port)
    return fabric_ports, host_ports


def adaptive_ports(tree: dict[str, Any]) -> set[str]:
    return {
        name
        for name, entry in tree["interface"].items()
        if entry.get("router", {}).get("adaptive-routing", {}).get("state") == "enabled"
    }


def test_spectrum_x_gets_adaptive_routing_on_switch_links() -> None:
    """Spectrum-X (SN5600 with adaptive_routing in the catalog): on globally and on every
    switch-to-switch port, not on host ports (one path, nothing to choose)."""
    fabric, artifacts = compiled("spectrum-x-2plane")
    files = by_path(artifacts)
    trees = nvue(files)
    compute = {n: t for n, t in trees.items() if fabric.devices[n].network == "compute"}
    assert len(compute) < len(trees)
    for name, tree in compute.items():
        assert tree["router"]["adaptive-routing"] == {"state": "enabled"}, name
        fabric_ports, host_ports = switch_ports(tree, files, name)
        assert fabric_ports and adaptive_ports(tree) == fabric_ports, name
        assert not adaptive_ports(tree) & host_ports


def test_adaptive_routing_can_be_turned_off(tmp_path: Path) -> None:
    text = (EXAMPLES / "spectrum-x-2plane.yaml").read_text()
    off = text.replace("    os: cumulus\n", "    os: cumulus\n    adaptive_routing: false\n")
    assert off != text
    trees = nvue(by_path(compile_text(off, tmp_path)[1]))
    assert trees
    for name, tree in trees.items():
        assert "adaptive-routing" not in tree.get("router", {}), name
        assert not adaptive_ports(tree), name


def test_no_adaptive_routing_where_the_switch_lacks_it() -> None:
    """superpod's in-band and OOB switches (SN4600C, SN2201) have no adaptive_routing flag (and
    are no compute network): their trees carry none."""
    _, artifacts = compiled("superpod-h100-4su")
    for name, tree in nvue(by_path(artifacts)).items():
        assert "adaptive-routing" not in tree.get("router", {}), name


# Cumulus Linux 5.18 user guide, "Equal Cost Multipath Load Sharing", Adaptive Routing: "Switches
# with the Spectrum-4 ASIC at 400G and 200G speeds"; "The Spectrum-4 switch does not support
# adaptive routing on 800G links" (5.15 says the same).
SPECTRUM_4_AR_SPEEDS = {400, 200}


def test_spectrum_4_switches_route_adaptively_at_400g_and_200g_only() -> None:
    fabric, _ = compiled("spectrum-x-2plane")
    switches = fabric.loaded.catalog.catalog.switches
    spectrum_4 = {name: s for name, s in switches.items() if s.asic == "Spectrum-4"}
    assert set(spectrum_4) >= {"sn5600", "sn5610"}
    for switch in spectrum_4.values():
        assert switch.adaptive_routing
        assert set(switch.adaptive_routing_speeds) == SPECTRUM_4_AR_SPEEDS
        assert not switch.routes_adaptively_at(800)


@pytest.mark.parametrize("example", ["spectrum-x-2plane", "gb300-nvl72-spectrum-x"])
def test_spectrum_x_uplinks_run_where_spectrum_4_routes_adaptively(example: str) -> None:
    """800G cages between Spectrum-4 switches run as 2x400G (a twin-port transceiver carries
    two 400G links), so every switch-to-switch port of the compute fabric routes adaptively -
    the SN5610 of the GB300 example included - and none runs at a speed it cannot."""
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    trees = nvue(files)
    rows = [r for r in cables(files) if r["network"] == "compute" and r["kind"] == "leaf-spine"]
    assert rows and {r["speed_gbps"] for r in rows} == {"400"}
    assert all("/" in r["a_port"] and "/" in r["b_port"] for r in rows)  # split cages
    compute = {n: t for n, t in trees.items() if fabric.devices[n].network == "compute"}
    assert compute
    for name, tree in compute.items():
        assert tree["router"]["adaptive-routing"] == {"state": "enabled"}, name
        fabric_ports, _ = switch_ports(tree, files, name)
        assert fabric_ports and adaptive_ports(tree) == fabric_ports, name
        for port in adaptive_ports(tree):
            assert int(tree["interface"][port]["link"]["speed"].removesuffix("G")) in (
                SPECTRUM_4_AR_SPEEDS
            )


def test_without_adaptive_routing_spectrum_4_uplinks_stay_800g(tmp_path: Path) -> None:
    text = (EXAMPLES / "spectrum-x-2plane.yaml").read_text()
    off = text.replace("    os: cumulus\n", "    os: cumulus\n    adaptive_routing: false\n")
    files = by_path(compile_text(off, tmp_path)[1])
    rows = [r for r in cables(files) if r["network"] == "compute" and r["kind"] == "leaf-spine"]
    assert rows and {r["speed_gbps"] for r in rows} == {"800"}


def test_no_adaptive_routing_at_a_speed_the_switch_cannot_route_adaptively(
    tmp_path: Path,
) -> None:
    """A switch that routes adaptively at 200G only, with 800G cages split at most 2x400G: the
    links run at 800G, the spec is warned (plain ECMP), and no port or global setting claims
    adaptive routing - the rule comes from the catalog, not from a switch model's name."""
    (tmp_path / "site.yaml").write_text(
        "switches:\n"
        "  lab-sw:\n"
        "    description: test switch, 32x 800GbE\n"
        "    part_number: LAB-SW\n"
        "    source: test\n"
        "    fabric: ethernet\n"
        "    asic: Spectrum-4\n"
        "    adaptive_routing: true\n"
        "    adaptive_routing_speeds: [200]\n"
        "    height_u: 1\n"
        "    power_w: 1000\n"
        "    port_groups:\n"
        "      - {count: 32, form: osfp, cage_speed: 800, breakouts: [1, 2]}\n"
        "    mgmt_ports:\n"
        "      - {name: eth0, cage: eth0, form: rj45, speeds: [1], role: oob,"
        " protocols: [ethernet]}\n"
    )
    fabric, artifacts = compile_text(
        "metadata: {name: lab}\ncatalog: [site.yaml]\n"
        "nodes:\n  gpu: {model: hgx-b300, count: 8}\n"
        "networks:\n  compute:\n    role: compute\n    fabric: ethernet\n    tiers: 2\n"
        "    os: cumulus\n    switches: {leaf: lab-sw, spine: lab-sw}\n",
        tmp_path,
    )
    assert any("route adaptively at no speed" in w.message for w in fabric.loaded.warnings)
    trees = nvue(by_path(artifacts))
    assert trees
    for name, tree in trees.items():
        assert "adaptive-routing" not in tree.get("router", {}), name
        assert not adaptive_ports(tree), name


def _leaves_with(tree: dict[str, Any], path: tuple[str, ...]) -> list[Any]:
    """Every value at `path` below any key of the tree (a key sequence found anywhere)."""
    found = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict):
            continue
        value: Any = node
        for key in path:
            if not isinstance(value, dict) or key not in value:
                break
            value = value[key]
        else:
            found.append(value)
        stack.extend(node.values())
    return found


@pytest.mark.parametrize("example", ["spectrum-x-2plane", "gb300-nvl72-spectrum-x"])
def test_nvue_is_written_for_the_current_release_object_model(example: str) -> None:
    """By default the files follow Cumulus Linux 5.15 and later ("New and Changed NVUE
    Commands", 5.15): `state enabled` where 5.14 had `enable on` (router bgp, vrf router bgp
    and its address families, qos roce, router adaptive-routing, mlag), `enabled` for on/off
    leaves, `ipv4 address` / `ipv4 gateway` / interface `vrf` for `ip address|gateway|vrf`."""
    fabric, artifacts = compiled(example)
    networks = fabric.loaded.networks.values()
    management = {n.name for n in networks if n.spec.role in ("inband", "oob")}
    assert {n.spec.nvue_release for n in networks} == {"5.18"}  # one release, every role
    files = by_path(artifacts)
    for path, text in files.items():
        if path.endswith("/startup.yaml"):  # each file says which release it is written for
            assert text.splitlines()[0].endswith("for Cumulus Linux 5.18, generated by fabricc")
    trees = nvue(files)
    assert trees
    for name, tree in trees.items():
        assert not _leaves_with(tree, ("enable",)), name
        assert "on" not in _leaves_with(tree, ("aspath-ignore",)), name
        for interface in tree["interface"].values():
            assert "ip" not in interface, name
        if "router" in tree:
            assert tree["router"]["bgp"]["state"] == "enabled"
            bgp = tree["vrf"]["default"]["router"]["bgp"]
            assert bgp["state"] == "enabled"
            assert bgp["address-family"]["ipv4-unicast"]["state"] == "enabled"
            if fabric.devices[name].network not in management:  # fabric routers only
                assert bgp["path-selection"]["multipath"]["aspath-ignore"] == "enabled"
                assert tree["qos"]["roce"]["state"] == "enabled"
        eth0 = tree["interface"].get("eth0")
        if eth0 is not None and "ipv4" in eth0:
            assert eth0["vrf"] == "mgmt" and list(eth0["ipv4"]["gateway"])


def test_cumulus_5_14_keeps_its_own_object_model(tmp_path: Path) -> None:
    """NVUE reference, Adaptive Routing: "In Cumulus Linux 5.14 and earlier, you specify enable
    on or enable off instead of state enabled or state disabled"."""
    text = (EXAMPLES / "spectrum-x-2plane.yaml").read_text()
    old = text.replace(
        "    os: cumulus\n", '    os: cumulus\n    cumulus_release: "5.14"\n'
    ).replace("  oob:\n    role: oob\n", '  oob:\n    role: oob\n    cumulus_release: "5.14"\n')
    assert old.count("5.14") == 2
    fabric, artifacts = compile_text(old, tmp_path)
    for name, tree in nvue(by_path(artifacts)).items():
        for interface in tree["interface"].values():
            assert "ipv4" not in interface, name
        if "router" in tree and fabric.devices[name].network == "oob":
            # the OOB access switches route their management tree (BGP), 5.14 model too
            assert tree["router"]["bgp"]["enable"] == "on"
        elif "router" in tree:
            assert tree["router"]["bgp"]["enable"] == "on"
            assert tree["router"]["adaptive-routing"] == {"enable": "on"}
            bgp = tree["vrf"]["default"]["router"]["bgp"]
            assert bgp["address-family"]["ipv4-unicast"]["enable"] == "on"
            assert bgp["path-selection"]["multipath"]["aspath-ignore"] == "on"
            assert tree["qos"]["roce"]["enable"] == "on"
            assert f"{fabric.devices[name].loopback}/32" in tree["interface"]["lo"]["ip"]["address"]
        eth0 = tree["interface"].get("eth0")
        if eth0 is not None and "ip" in eth0:
            assert eth0["ip"]["vrf"] == "mgmt"


def test_cumulus_release_must_be_a_5x_release(tmp_path: Path) -> None:
    text = (EXAMPLES / "spectrum-x-2plane.yaml").read_text()
    bad = text.replace("    os: cumulus\n", "    os: cumulus\n    cumulus_release: latest\n")
    with pytest.raises(Exception, match="cumulus_release"):
        compile_text(bad, tmp_path)


@pytest.mark.parametrize("example", ["spectrum-x-2plane", "gb300-nvl72-spectrum-x"])
def test_roce_ports_have_pfc_watchdog_and_cable_length_from_the_plan(example: str) -> None:
    """Every RoCE port carries PFC, so each gets NVUE's PFC watchdog (`nv set interface <id> qos
    pfc-watchdog state enable`: "detects and mitigates pause storms on ports where PFC ... is
    ON", NVUE reference, QoS; SONiC's PFC_WD does the same); the PFC headroom is sized for the
    switch's longest planned cable (`qos pfc <profile> cable-length`, metres), not NVUE's 100 m
    default (`nv show qos roce`: cable-length 100)."""
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    trees = nvue(files)
    longest: dict[str, float] = {}
    for row in cables(files):
        for side in ("a", "b"):
            device = row[f"{side}_device"]
            longest[device] = max(longest.get(device, 0.0), float(row["length_m"]))
    routed = [n for n, t in trees.items() if "qos" in t]
    assert routed
    for name in routed:
        tree = trees[name]
        network = fabric.devices[name].network
        ports: set[str] = set()
        for row in cables(files):
            for side in ("a", "b"):
                if row[f"{side}_device"] == name and row["network"] == network:
                    ports.add(cumulus_port(row[f"{side}_port"]))
        assert ports
        for port in ports:
            assert tree["interface"][port]["qos"] == {"pfc-watchdog": {"state": "enable"}}, port
        cable = tree["qos"]["pfc"]["default-global"]["cable-length"]
        assert cable == math.ceil(longest[name]) and cable < 100


@pytest.mark.parametrize(
    ("release", "groups", "agent"),
    [
        ("5.13", False, {"enable": "on", "use-pif-circuit-id": {"enable": "on"}}),
        ("5.14", True, {"enable": "on", "use-pif-circuit-id": {"enable": "on"}}),
        ("5.16", True, {"state": "enabled", "use-pif-circuit-id": {"state": "enabled"}}),
    ],
)
def test_dhcp_relay_is_written_for_the_release(
    tmp_path: Path, release: str, groups: bool, agent: dict[str, Any]
) -> None:
    """Cumulus Linux 5.14 replaced the relay's `interface` and `server` lists by server groups
    ("DHCP Relays": "In Cumulus Linux 5.13 and earlier, DHCP relay does not use server groups";
    NVUE reference: `server-group <id> server|upstream-interface`, `downstream-interface <id>
    server-group-name`, introduced in 5.14.0); 5.15 renamed the agent's `enable on`."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    marker = "    role: oob\n"
    assert marker in text
    spec = text.replace(marker, f'{marker}    cumulus_release: "{release}"\n')
    files = by_path(compile_text(spec, tmp_path)[1])
    relays = {
        name: tree["service"]["dhcp-relay"]["default"]
        for name, tree in nvue(files).items()
        if "service" in tree and name.startswith("oob")
    }
    # (and the in-band spine relaying for the management trees' roots, on its own release)
    others = {name for name, tree in nvue(files).items() if "service" in tree} - set(relays)
    assert relays and others == {"inband-spine001"}
    for relay in relays.values():
        assert relay["agent"] == agent
        if groups:
            assert set(relay) == {"server-group", "downstream-interface", "agent"}
            (group,) = relay["server-group"].values()
            assert len(group["server"]) == 1 and group["upstream-interface"]
            (svi,) = relay["downstream-interface"].values()
            assert svi["server-group-name"] in relay["server-group"]
        else:
            assert set(relay) == {"interface", "server", "agent"}
            assert len(relay["server"]) == 1 and any(
                i.startswith("vlan") for i in relay["interface"]
            )


def test_management_release_before_the_relay_agent_is_refused(tmp_path: Path) -> None:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    spec = text.replace("    role: oob\n", '    role: oob\n    cumulus_release: "5.6"\n')
    with pytest.raises(Exception, match=r"from 5\.7"):
        compile_text(spec, tmp_path)


@pytest.mark.parametrize("example", ["superpod-h100-4su", "spectrum-x-2plane", "roce-lab"])
def test_the_config_parts_share_the_switches_out_and_keep_every_file(example: str) -> None:
    """Each switch's files are in exactly one of the three parts, the parts a switch apart at
    most; the subnet managers' and hosts' files in the fourth; together every config file of
    the build (the parts that a large build's two processes take apart)."""
    fabric, artifacts = compiled(example)
    parts = [[path for path, _ in configs.switches(part)(fabric)] for part in range(3)]
    hosts = [path for path, _ in configs.emit_hosts(fabric)]
    made = [path for part in parts for path in part] + hosts
    assert sorted(made) == sorted(path for path, _ in artifacts if path.startswith("configs/"))
    assert len(made) == len(set(made))
    owners = [{path.split("/")[1] for path in part} for part in parts]
    assert not (owners[0] & owners[1]) and not (owners[1] & owners[2])
    assert not (owners[0] & owners[2])
    assert max(map(len, owners)) - min(map(len, owners)) <= 1
    assert not {path.split("/")[1] for path in hosts} & set(fabric.devices)
