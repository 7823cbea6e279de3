"""Routed Ethernet data networks (compute, storage): the cabling plan, the switch configs
(Cumulus NVUE and frr.conf, SONiC config_db, EOS AVD structured config) and the host scripts agree port for port, for
every example and for nodes whose ports spread over leaf pairs (spread_ports); dual_homed,
whose MLAG peer links no RoCE config configures, is refused there."""

from __future__ import annotations

import ipaddress
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.errors import FabriccError
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Fabric
from tests.configs_support import LOADER, by_path, cables
from tests.support import EXAMPLES, compile_text, compiled

EXAMPLE = "gb300-nvl72-spectrum-x"
ROUTED_KINDS = {ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE}


def routed(fabric: Fabric) -> set[str]:
    return {
        name
        for name, network in fabric.loaded.networks.items()
        if network.fabric == "ethernet" and network.spec.role in ("compute", "storage")
    }


def _ports(files: dict[str, str], switch: str) -> dict[str, tuple[str, list[str]]] | None:
    """far end (device:port) -> (the switch's port name, its IPv4 interface addresses), read
    from the switch's config; None for a switch with neither config."""
    nvue = files.get(f"configs/{switch}/startup.yaml")
    if nvue is not None:
        tree = yaml.load(nvue, Loader=LOADER)[0]["set"]
        found = {}
        for name, entry in tree["interface"].items():
            if "description" in entry:
                addresses = list(entry.get("ipv4", {}).get("address", {}))
                found[entry["description"].split(" ")[0]] = (name, addresses)
        return found
    avd = files.get(f"configs/{switch}/structured_config.yaml")
    if avd is not None:  # Arista EOS: the AVD structured config
        structured = yaml.safe_load(avd)
        return {
            entry["description"]: (
                entry["name"],
                [entry["ip_address"]] if "ip_address" in entry else [],
            )
            for entry in structured["ethernet_interfaces"]
        }
    db = files.get(f"configs/{switch}/config_db.json")
    if db is None:
        return None
    tables: dict[str, Any] = json.loads(db)
    on_port: dict[str, list[str]] = defaultdict(list)
    for key in tables.get("INTERFACE", {}):
        name, _, address = key.partition("|")
        on_port[name] += [address] if address else []
    return {
        entry["description"]: (name, on_port[name])
        for name, entry in tables["PORT"].items()
        if "description" in entry and name in tables.get("INTERFACE", {})
    }


def _announced(files: dict[str, str], switch: str) -> set[str]:
    """The prefixes the switch announces in BGP: frr.conf's `network` lines, or on EOS the AVD
    structured config's IPv4 networks."""
    frr = files.get(f"configs/{switch}/frr.conf")
    if frr is not None:
        return set(re.findall(r"^\s+network (\S+)$", frr, re.M))
    structured = yaml.safe_load(files[f"configs/{switch}/structured_config.yaml"])
    return {n["prefix"] for n in structured["router_bgp"]["address_family_ipv4"]["networks"]}


def _host_lines(files: dict[str, str], host: str) -> dict[str, list[str]]:
    """port -> the fields of its line in the host's addressing table (configs/hosts)."""
    text = files.get(f"configs/hosts/{host}.sh", "")
    return {line.split()[0]: line.split() for line in text.splitlines() if " IF_" in line}


def check_agreement(fabric: Fabric, files: dict[str, str]) -> int:
    """Every cable of a routed data network is a kind its configs configure; every switch end
    is a configured port, every host port its own /31 with the leaf, announced in BGP by the
    leaf, and the host script addresses it towards that leaf port. Returns ports checked."""
    networks = routed(fabric)
    configs: dict[str, dict[str, tuple[str, list[str]]] | None] = {}
    between: dict[tuple[str, str], int] = defaultdict(int)  # (switch, far switch) -> cables
    checked = 0
    for row in cables(files):
        if row["network"] not in networks:
            continue
        assert row["kind"] in ROUTED_KINDS, f"{row['label']}: no RoCE config configures it"
        for side, far in (("a", "b"), ("b", "a")):
            switch = row[f"{side}_device"]
            if fabric.devices[switch].kind != "switch":
                continue
            if switch not in configs:
                configs[switch] = _ports(files, switch)
            ports = configs[switch]
            if ports is None:
                continue
            if row["kind"] != ENDPOINT_LEAF:
                # a switch port's description names the far switch's port in that switch's
                # own naming: count the configured ports towards the far switch instead
                between[(switch, row[f"{far}_device"])] += 1
                continue
            far_end = f"{row[f'{far}_device']}:{row[f'{far}_port']}"
            assert far_end in ports, f"{switch} does not configure its port to {far_end}"
            name, addresses = ports[far_end]
            assert len(addresses) == 1, f"{switch}:{name} to {far_end}: {addresses}"
            leaf = ipaddress.ip_interface(addresses[0])
            assert leaf.network.prefixlen == 31
            assert str(leaf.network) in _announced(files, switch), (switch, leaf)
            lines = _host_lines(files, row["a_device"])
            if lines:  # hosts the build writes a script for
                fields = lines[row["a_port"]]
                host = ipaddress.ip_interface(fields[5])
                assert host.network == leaf.network and host != leaf, (far_end, fields)
                assert fields[7] == str(leaf.ip) and fields[-1] == f"{switch}:{name}", fields
            checked += 1
    for (switch, far), count in sorted(between.items()):
        ports = configs[switch]
        assert ports is not None
        configured = sum(1 for end in ports if end.startswith(f"{far}:"))
        assert configured == count, f"{switch}: {count} cables to {far}, {configured} ports"
        checked += count
    return checked


NAMES = sorted(path.stem for path in EXAMPLES.glob("*.yaml"))


@pytest.mark.parametrize("example", NAMES)
def test_routed_configs_match_the_cabling(example: str) -> None:
    fabric, artifacts = compiled(example)
    checked = check_agreement(fabric, by_path(artifacts))
    assert checked > 0 or not routed(fabric)


def _spread(os: str, switch: str) -> str:
    """The example with its storage network's node ports spread over leaf pairs, on `os`."""
    text = (EXAMPLES / f"{EXAMPLE}.yaml").read_text()
    old = "    spread_ports: true\n    fabric: ethernet\n    os: cumulus\n"
    old += "    switches: {leaf: sn5610, spine: sn5610}\n"
    assert old in text
    new = f"    spread_ports: true\n    fabric: ethernet\n    os: {os}\n"
    new += f"    switches: {{leaf: {switch}, spine: {switch}}}\n"
    return text.replace(old, new)


def _unspread(text: str) -> str:
    return text.replace("    spread_ports: true\n", "")


@pytest.mark.parametrize(("os", "switch"), [("cumulus", "sn5610"), ("sonic", "sn5600")])
def test_spread_ports_land_on_two_leaves_and_configs_follow(
    os: str, switch: str, tmp_path: Path
) -> None:
    fabric, artifacts = compile_text(_spread(os, switch), tmp_path)
    files = by_path(artifacts)
    assert check_agreement(fabric, files) > 0
    leaves: dict[str, set[str]] = defaultdict(set)
    ports: dict[str, int] = defaultdict(int)
    for link in fabric.links_of("storage"):
        assert link.kind in ROUTED_KINDS
        if link.kind == ENDPOINT_LEAF:
            leaves[link.a].add(link.b)
            ports[link.a] += 1
    # 16 storage nodes and 8 x 18 trays, two storage ports each, each port on its own leaf
    assert len(leaves) == 16 + 8 * 18 and set(ports.values()) == {2}
    assert all(len(on) == 2 for on in leaves.values())
    assert not [d for d in fabric.warnings if "every port on one leaf" in d.message]
    # the same design without the option strands the nodes, as the warning says
    plain, _ = compile_text(_unspread(_spread(os, switch)), tmp_path)
    [stranded] = [d for d in plain.warnings if "every port on one leaf" in d.message]
    assert stranded.hint is not None and "spread_ports: true" in stranded.hint


def test_the_example_spreads_its_storage_ports() -> None:
    fabric, _ = compiled(EXAMPLE)
    assert fabric.loaded.networks["storage"].spec.spread_ports
    assert not [d for d in fabric.warnings if d.path == "networks.storage"]


def test_dual_homed_is_refused_on_routed_data_networks(tmp_path: Path) -> None:
    text = _unspread(_spread("cumulus", "sn5610"))
    for role in ("storage", "compute"):
        spec = text.replace("    role: storage\n", "    role: storage\n    dual_homed: true\n")
        if role == "compute":
            spec = text.replace("    role: compute\n", "    role: compute\n    dual_homed: true\n")
        with pytest.raises(FabriccError) as caught:
            compile_text(spec, tmp_path)
        [found] = [d for d in caught.value.diagnostics if "dual_homed" in d.message]
        assert found.path == f"networks.{role}.dual_homed"
        assert found.location is not None and found.location.line > 0
        assert found.hint is not None and "spread_ports: true" in found.hint
    # in-band networks keep their MLAG pairs
    fabric, _ = compile_text(text, tmp_path)
    assert fabric.loaded.networks["inband"].spec.dual_homed


SMALL = """\
metadata: {name: small}
nodes:
  g: {model: dgx-h100, count: 4}
  s: {model: storage-node, count: 6}
networks:
  c: {role: compute, fabric: infiniband}
  st: {role: storage, fabric: ethernet, spread_ports: true%s}
"""


def test_spread_ports_needs_spines_between_the_pair(tmp_path: Path) -> None:
    # every node fits one leaf, yet its two ports go to two leaves, which spines join
    fabric, artifacts = compile_text(SMALL % "", tmp_path)
    topology = fabric.networks["st"]
    assert topology.tiers == 2 and len(topology.switches["leaf"]) == 2
    assert check_agreement(fabric, by_path(artifacts)) > 0
    on: dict[str, set[str]] = defaultdict(set)
    for link in fabric.links_of("st"):
        if link.kind == ENDPOINT_LEAF:
            on[link.a].add(link.b)
    assert len(on) == 4 + 6 and all(len(leaves) == 2 for leaves in on.values())
    with pytest.raises(FabriccError) as caught:
        compile_text(SMALL % ", tiers: 1", tmp_path)
    [found] = caught.value.diagnostics
    assert found.path == "networks.st.tiers" and "spread_ports" in (found.hint or "")
