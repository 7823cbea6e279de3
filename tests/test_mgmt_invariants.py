"""Management networks that come up (issue 36), checked on the emitted files as their consumers
read them - NVUE startup.yaml, SONiC config_db.json, Kea's kea-dhcp4.conf, the ZTP files, the
netplan files - with the cabling plan for which cables join two switches:

(a) every gateway handed out (eth0 gateways, static routes, Kea `routers`, netplan routes) is
    an address a switch of the design owns on the client's subnet - and, where the client's
    cables are known, a switch bridged to one the client is cabled to;
(c) every switch with a ZTP file gets its address and its ZTP URL (option 239, SONiC's 67) from
    a Kea reservation keyed by its cable's circuit-id (a seed switch with no cabled management
    port is bootstrapped from a USB drive instead), and every URL Kea hands out names a file;
(d) every host cabled to two leaves of an in-band network (and any host given a bond) has a
    netplan LACP bond over its ports, and its leaves bond them as one (MLAG) bond;
(e) no redundant switch-to-switch link is left to spanning tree: each switch reaches each far
    switch (or far MLAG pair) through exactly one bond or through routed ports only, and the
    bridged switches (an MLAG pair one) and bonds form a forest.

Every example is checked, and variations of the SuperPOD example (VARIATIONS). The last test
breaks the SuperPOD outputs one way per check, so that each check is seen to fail.
(b) - relayed requests that Kea's reservations match - runs in tests/test_kea_relay.py.
"""

from __future__ import annotations

import copy
import csv
import functools
import io
import ipaddress
import itertools
import json
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import yaml

from fabricc.build import compile_design
from fabricc.emit import Artifact
from fabricc.spec.loader import load_spec
from tests.configs_support import LOADER, by_path, cables, config_dbs, nvue
from tests.frr_support import cumulus_port
from tests.support import EXAMPLE_NAMES, EXAMPLES, compiled

Address = ipaddress.IPv4Address
Interface = ipaddress.IPv4Interface

BASE = "superpod-h100-4su"  # the example with both management networks and an in-band server
# variation -> changes to the base example: a dotted path in the spec -> its value (None: the
# key goes)
VARIATIONS: dict[str, dict[str, Any]] = {
    "inband-single-homed": {"networks.inband.dual_homed": False},
    "inband-single-homed-1-spine": {
        "networks.inband.dual_homed": False,
        "networks.inband.spines": 1,
    },
    "inband-1-spine": {"networks.inband.spines": 1},
    "inband-2-spines": {"networks.inband.spines": 2},
    "inband-4-spines": {"networks.inband.spines": 4},
    "oob-access-switch-per-rack": {"networks.oob.max_racks_per_switch": 1},
    "oob-not-uplinked": {"networks.oob.uplink_to": None},
    # no access switch: no DHCP for any switch's management port
    "no-oob": {"networks.oob": None},
    # the NVUE object model of Cumulus Linux 5.15 (`ipv4`, `state enabled`)
    "mgmt-cumulus-5-15": {
        "networks.inband.cumulus_release": "5.15",
        "networks.oob.cumulus_release": "5.15",
    },
    # one leaf pair under two spines, each under its own core: a bridged tree
    "inband-3-tiers-small": {"networks.inband.tiers": 3, "nodes.dgx.count": 16},
    "inband-3-tiers": {"networks.inband.tiers": 3},
}
DESIGNS = [*EXAMPLE_NAMES, *VARIATIONS]


# -- the emitted files, parsed ---------------------------------------------------------------


@dataclass(slots=True)
class Owned:
    """An address a switch owns on one of its interfaces (the interface's prefix with it)."""

    switch: str
    interface: Interface


@dataclass(slots=True)
class Outputs:
    files: dict[str, str]
    roles: dict[str, str]  # network -> role (from the spec: which cables are in-band)
    nvue: dict[str, dict[str, Any]]  # switch -> its startup.yaml `set` tree
    config_db: dict[str, dict[str, Any]]  # switch -> its config_db.json
    cables: list[dict[str, str]]
    owned: dict[Address, list[Owned]] = field(default_factory=dict)
    eos: dict[str, dict[str, Any]] = field(default_factory=dict)  # its AVD structured config

    @property
    def switches(self) -> set[str]:
        return {*self.nvue, *self.config_db, *self.eos}


def _variation_spec(name: str) -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load((EXAMPLES / f"{BASE}.yaml").read_text())
    spec["metadata"]["name"] = name
    for path, value in VARIATIONS[name].items():
        *parents, key = path.split(".")
        tree = functools.reduce(lambda tree, part: tree[part], parents, spec)
        if value is None:
            del tree[key]
        else:
            tree[key] = value
    return spec


@functools.cache
def _artifacts(design: str) -> tuple[dict[str, str], dict[str, str]]:
    artifacts: list[Artifact] | tuple[Artifact, ...]
    if design in VARIATIONS:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{design}.yaml"
            path.write_text(yaml.safe_dump(_variation_spec(design), sort_keys=False))
            fabric, artifacts = compile_design(load_spec(path, f"{design}.yaml"))
    else:
        fabric, artifacts = compiled(design)
    roles: dict[str, str] = {n: network.spec.role for n, network in fabric.loaded.networks.items()}
    return by_path(artifacts), roles


@functools.cache
def outputs(design: str) -> Outputs:
    files, roles = _artifacts(design)
    config_db = config_dbs(files)
    out = Outputs(files, roles, nvue(files), config_db, cables(files))
    out.eos = {
        path.split("/")[1]: yaml.safe_load(text)
        for path, text in files.items()
        if path.startswith("configs/") and path.endswith("/structured_config.yaml")
    }
    for switch, structured in out.eos.items():
        for table in ("ethernet_interfaces", "loopback_interfaces", "management_interfaces"):
            for entry in structured.get(table, []):
                if "ip_address" in entry:
                    prefix = Interface(entry["ip_address"])
                    out.owned.setdefault(prefix.ip, []).append(Owned(switch, prefix))
    for switch, tree in out.nvue.items():
        for entry in tree.get("interface", {}).values():
            for prefix in _nvue_addresses(entry):
                out.owned.setdefault(prefix.ip, []).append(Owned(switch, prefix))
    for switch, db in out.config_db.items():
        for table in ("INTERFACE", "VLAN_INTERFACE", "LOOPBACK_INTERFACE", "MGMT_INTERFACE"):
            for key in db.get(table, {}):
                if "|" in key:
                    prefix = Interface(key.split("|")[1])
                    out.owned.setdefault(prefix.ip, []).append(Owned(switch, prefix))
    return out


def _ip(entry: dict[str, Any]) -> dict[str, Any]:
    """An NVUE interface's IPv4 subtree: `ip` up to Cumulus Linux 5.14, `ipv4` from 5.15."""
    tree: dict[str, Any] = entry.get("ipv4") or entry.get("ip") or {}
    return tree


def _nvue_addresses(entry: dict[str, Any]) -> Iterator[Interface]:
    ip = _ip(entry)
    for prefix in ip.get("address", {}):
        yield Interface(prefix)
    for prefix in ip.get("vrr", {}).get("address", {}):
        yield Interface(prefix)


def _inband_ports(out: Outputs) -> dict[str, list[dict[str, str]]]:
    """Host -> its cables to the leaves of the in-band networks."""
    inband = {name for name, role in out.roles.items() if role == "inband"}
    ports: dict[str, list[dict[str, str]]] = {}
    for row in out.cables:
        if row["network"] in inband and row["kind"] == "endpoint-leaf":
            ports.setdefault(row["a_device"], []).append(row)
    return ports


# -- (a) gateways ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Gateway:
    where: str  # the file and the place in it
    gateway: Address
    client: ipaddress.IPv4Network  # the addresses that use it (a host's /32, a subnet)
    client_switch: str | None = None
    attached: tuple[str, ...] = ()  # the switches the client is cabled to (its layer 2)


def gateways(out: Outputs) -> Iterator[Gateway]:
    mgmt_cables = {row["a_device"]: row["b_device"] for row in out.cables if row["kind"] == "mgmt"}
    leaves = {
        host: tuple(row["b_device"] for row in rows) for host, rows in _inband_ports(out).items()
    }
    for switch, tree in out.nvue.items():
        path = f"configs/{switch}/startup.yaml"
        interfaces = tree.get("interface", {})
        own = [p for entry in interfaces.values() for p in _nvue_addresses(entry)]
        eth0 = _ip(interfaces.get("eth0", {}))
        for gateway in eth0.get("gateway", {}):
            for prefix in eth0.get("address", {}):
                client = Interface(prefix).network
                attached = (mgmt_cables[switch],) if switch in mgmt_cables else ()
                yield Gateway(f"{path} eth0", Address(gateway), client, switch, attached)
        vrfs = tree.get("vrf", {})
        for vrf, vrf_tree in vrfs.items():
            static = vrf_tree.get("router", {}).get("static", {})
            for route, entry in static.items():
                for via in entry.get("via", {}):
                    # the route's gateway must be on a subnet of one of the switch's own addresses
                    nets = [p.network for p in own if Address(via) in p.network]
                    client = nets[0] if nets else ipaddress.IPv4Network(f"{via}/32")
                    where = f"{path} vrf {vrf} static {route}"
                    yield Gateway(where, Address(via), client, switch)
    for switch, db in out.config_db.items():
        for key, entry in db.get("MGMT_INTERFACE", {}).items():
            if "gwaddr" in entry:
                client = Interface(key.split("|")[1]).network
                where = f"configs/{switch}/config_db.json MGMT_INTERFACE"
                attached = (mgmt_cables[switch],) if switch in mgmt_cables else ()
                yield Gateway(where, Address(entry["gwaddr"]), client, switch, attached)
    for switch, structured in out.eos.items():
        own = [Interface(e["ip_address"]) for e in structured.get("management_interfaces", [])]
        for route in structured.get("static_routes", []):
            # Management1's default route in its VRF: the gateway on Management1's subnet
            nets = [p.network for p in own if Address(route["next_hop"]) in p.network]
            client = nets[0] if nets else ipaddress.IPv4Network(f"{route['next_hop']}/32")
            where = f"configs/{switch}/structured_config.yaml static_routes {route['prefix']}"
            attached = (mgmt_cables[switch],) if switch in mgmt_cables else ()
            yield Gateway(where, Address(route["next_hop"]), client, switch, attached)
    kea = out.files.get("provisioning/kea/kea-dhcp4.conf")
    if kea is not None:
        for subnet in json.loads(kea)["Dhcp4"]["subnet4"]:
            for option in subnet.get("option-data", []):
                if option["name"] == "routers":
                    for router in option["data"].split(","):
                        where = f"kea-dhcp4.conf subnet {subnet['subnet']} routers"
                        yield Gateway(
                            where, Address(router.strip()), ipaddress.IPv4Network(subnet["subnet"])
                        )
    for path, text in out.files.items():
        if path.startswith("provisioning/netplan/") and path.endswith(".yaml"):
            network = yaml.load(text, Loader=LOADER)["network"]
            host = path.removeprefix("provisioning/netplan/").removesuffix(".yaml")
            for kind in ("ethernets", "bonds", "vlans"):
                for name, entry in network.get(kind, {}).items():
                    clients = [Interface(a).network for a in entry.get("addresses", [])]
                    vias = [r["via"] for r in entry.get("routes", []) if "via" in r]
                    vias += [entry["gateway4"]] if "gateway4" in entry else []
                    for via in vias:
                        nets = [n for n in clients if Address(via) in n]
                        client = nets[0] if nets else ipaddress.IPv4Network(f"{via}/32")
                        where = f"{path} {name}"
                        yield Gateway(where, Address(via), client, None, leaves.get(host, ()))


def layer2(out: Outputs) -> dict[str, int]:
    """Switch -> its bridged domain: switches joined by cables bridged on both ends (a peer link
    bridges the MLAG pair) share one."""
    graph: nx.Graph = nx.Graph()
    graph.add_nodes_from(out.nvue)
    for row in out.cables:
        a, b = row["a_device"], row["b_device"]
        if row["kind"] == "mgmt" or a not in out.nvue or b not in out.nvue:
            continue
        ends = (
            _port_use(out.nvue[a], cumulus_port(row["a_port"])),
            _port_use(out.nvue[b], cumulus_port(row["b_port"])),
        )
        if all(isinstance(e, PortUse) and (e.bridged or e.via == "peerlink") for e in ends):
            graph.add_edge(a, b)
    return {s: k for k, part in enumerate(nx.connected_components(graph)) for s in part}


def _unconfigured_switches(out: Outputs) -> dict[Address, str]:
    """Management address -> switch, for the switches of the inventory with no config file."""
    rows = csv.DictReader(io.StringIO(out.files.get("inventory/devices.csv", "")))
    owned = {
        Address(row["mgmt_ip"]): row["name"]
        for row in rows
        if row["kind"] == "switch" and row["mgmt_ip"] and row["name"] not in out.switches
    }
    # and the gateway addresses seeds.txt tells the site to set on them by hand
    for line in out.files.get("provisioning/ztp/seeds.txt", "").splitlines():
        name, _, what = line.partition("\tby hand\t")
        if what and name not in out.switches:
            for gateway in re.findall(r"gateway ([0-9.]+)/", what):
                owned[Address(gateway)] = name
    return owned


def gateway_problems(out: Outputs) -> list[str]:
    """Each gateway: an address a switch owns on the client's subnet, and where the client's
    cables are known, a switch in the bridged domain of one of the switches it is cabled to."""
    problems = []
    domain = layer2(out)
    unconfigured = _unconfigured_switches(out)
    for gateway in gateways(out):
        owner = unconfigured.get(gateway.gateway)
        on_subnet = gateway.client.prefixlen == 32 or gateway.gateway in gateway.client
        near_owner = not gateway.attached or owner in gateway.attached
        if owner is not None and on_subnet and near_owner:
            # the management address of a switch whose model names no OS (megascale-roce's
            # generic OOB switches): fabricc writes no config of it, the site sets the address
            continue
        owners = out.owned.get(gateway.gateway, [])
        on_link = [
            o
            for o in owners
            if o.switch != gateway.client_switch and gateway.client.subnet_of(o.interface.network)
        ]
        near = {domain.get(s, s) for s in gateway.attached}
        if gateway.attached:
            on_link = [o for o in on_link if domain.get(o.switch, o.switch) in near]
        if not on_link:
            owned = [(o.switch, str(o.interface)) for o in owners] or "no switch"
            problems.append(
                f"{gateway.where}: gateway {gateway.gateway} for {gateway.client} "
                f"(cabled to {list(gateway.attached)}): {owned}"
            )
    return problems


@pytest.mark.parametrize("design", DESIGNS)
def test_every_gateway_is_an_address_of_a_switch_on_the_clients_subnet(design: str) -> None:
    out = outputs(design)
    problems = gateway_problems(out)
    assert not problems, "\n".join(problems[:20])
    if any(role in ("inband", "oob") for role in out.roles.values()):
        assert any(gateways(out))  # a design with management networks hands gateways out


# -- (c) ZTP ---------------------------------------------------------------------------------


def _reservations(out: Outputs) -> dict[str, list[dict[str, Any]]]:
    kea = out.files.get("provisioning/kea/kea-dhcp4.conf")
    found: dict[str, list[dict[str, Any]]] = {}
    if kea is None:
        return found
    for subnet in json.loads(kea)["Dhcp4"]["subnet4"]:
        for reservation in subnet.get("reservations", []):
            found.setdefault(reservation["hostname"], []).append({**reservation, "in": subnet})
    return found


def _seeds(out: Outputs) -> set[str]:
    text = out.files.get("provisioning/ztp/seeds.txt", "")
    return {
        line.split("\t")[0]
        for line in text.splitlines()
        if line and line[0] != "#" and "\tby hand\t" not in line
    }


def _management_address(out: Outputs, switch: str) -> str | None:
    """The address of the switch's management port as its config sets it."""
    if switch in out.nvue:
        eth0 = _ip(out.nvue[switch].get("interface", {}).get("eth0", {}))
        addresses = list(eth0.get("address", {}))
    elif switch in out.eos:
        management = out.eos[switch].get("management_interfaces", [])
        addresses = [e["ip_address"] for e in management if "ip_address" in e]
    else:
        addresses = [k.split("|")[1] for k in out.config_db[switch].get("MGMT_INTERFACE", {})]
    return str(Interface(addresses[0]).ip) if addresses else None


ZTP_FILES = ("/ztp.sh", "/ztp.json", "/bootstrap")  # Cumulus, SONiC, EOS


def ztp_problems(out: Outputs) -> list[str]:
    ztp = {
        path.split("/")[2]: path
        for path in out.files
        if path.startswith("provisioning/ztp/") and path.endswith(ZTP_FILES)
    }
    reservations, seeds = _reservations(out), _seeds(out)
    mgmt_cables = {row["a_device"]: row for row in out.cables if row["kind"] == "mgmt"}
    problems = []
    for switch, path in sorted(ztp.items()):
        address = _management_address(out, switch)
        found = reservations.get(switch, [])
        if not found and switch in seeds and address is None:
            continue  # bootstrapped from a USB drive; it has no management port to ask DHCP on
        if len(found) != 1:
            problems.append(f"{switch}: {len(found)} Kea reservations for its ZTP file {path}")
            continue
        reservation = found[0]
        if reservation["ip-address"] != address:
            problems.append(f"{switch}: Kea reserves {reservation['ip-address']}, eth0 {address}")
        subnet = ipaddress.IPv4Network(reservation["in"]["subnet"])
        if Address(reservation["ip-address"]) not in subnet:
            problems.append(f"{switch}: reservation outside its subnet {subnet}")
        cable = mgmt_cables.get(switch)
        if cable is None or reservation["circuit-id"] not in (
            f"'{cumulus_port(cable['b_port'])}'",
            f"'{cable['b_port']}'",
        ):
            problems.append(f"{switch}: circuit-id {reservation['circuit-id']} is not its cable")
        name, code = ("ztp-url", 239) if path.endswith(".sh") else ("boot-file-name", None)
        options = [o for o in reservation.get("option-data", []) if o["name"] == name]
        if len(options) != 1 or options[0].get("code") != code:
            problems.append(f"{switch}: no {name} option ({code}) in its reservation")
            continue
        url = options[0]["data"]
        if not url.endswith("/fabricc/" + path) or not url.startswith("http://"):
            problems.append(f"{switch}: ZTP URL {url} is not its file {path}")
    # and no reservation hands out a ZTP URL of a file the build did not write
    for host, found in sorted(reservations.items()):
        for reservation in found:
            for option in reservation.get("option-data", []):
                if option["name"] in ("ztp-url", "boot-file-name"):
                    path = option["data"].partition("/fabricc/")[2]
                    if path not in out.files or host not in ztp:
                        problems.append(f"{host}: {option['name']} {option['data']}: no file")
    return problems


@pytest.mark.parametrize("design", DESIGNS)
def test_every_switch_with_a_ztp_file_gets_its_address_and_ztp_url(design: str) -> None:
    problems = ztp_problems(outputs(design))
    assert not problems, "\n".join(problems[:20])


def relay_problems(out: Outputs) -> list[str]:
    """Every switch that boots by DHCP (a ZTP file, no seed) is cabled to an access switch that
    relays: a server group with the provisioning server (the host of its ZTP URL) and an upstream
    interface, the SVI of the port's VLAN (or the routed port itself) downstream, and option 82
    with the physical port as circuit-id (use-pif-circuit-id) - the circuit-id Kea reserves its
    address by."""
    reservations, seeds = _reservations(out), _seeds(out)
    mgmt_cables = {row["a_device"]: row for row in out.cables if row["kind"] == "mgmt"}
    problems = []
    for path in sorted(out.files):
        if not path.startswith("provisioning/ztp/") or not path.endswith(ZTP_FILES):
            continue
        switch = path.split("/")[2]
        if switch in seeds:
            continue
        cable, found = mgmt_cables.get(switch), reservations.get(switch, [])
        if cable is None or len(found) != 1:
            problems.append(f"{switch}: boots by DHCP without one cable and one reservation")
            continue
        access, port = cable["b_device"], cumulus_port(cable["b_port"])
        if access not in out.switches:
            # no config of fabricc's (its model names no OS): seeds.txt has the site set it up
            # as the relay by hand
            seeds_txt = out.files.get("provisioning/ztp/seeds.txt", "")
            if not re.search(rf"^{re.escape(access)}\tby hand\t.*DHCP relay", seeds_txt, re.M):
                problems.append(f"{switch}: {access} has no config and no by-hand relay")
            continue
        tree = out.nvue.get(access, {})
        relay = tree.get("service", {}).get("dhcp-relay", {}).get("default", {})
        groups = relay.get("server-group", {})
        urls = [o["data"] for o in found[0].get("option-data", [])]
        if not urls:
            problems.append(f"{switch}: its reservation hands out no ZTP URL")
            continue
        server = urls[0].split("/")[2]
        bridge = tree.get("interface", {}).get(port, {}).get("bridge", {})
        vlan = bridge.get("domain", {}).get("br_default", {}).get("access")
        # the SVI of the port's VLAN; a routed port (a tree's root on an in-band switch,
        # synth/rootlinks.py) relays from itself
        own = tree.get("interface", {}).get(port, {}).get("ipv4", {}).get("address")
        where = f"vlan{vlan}" if vlan is not None or not own else port
        downstream = relay.get("downstream-interface", {}).get(where, {})
        group = groups.get(downstream.get("server-group-name"), {})
        if server not in group.get("server", {}) or not group.get("upstream-interface"):
            problems.append(f"{switch}: {access} relays nothing from {where} to {server}")
        agent = relay.get("agent", {})
        if agent.get("state") != "enabled" or agent.get("use-pif-circuit-id") != {
            "state": "enabled"
        }:
            problems.append(f"{switch}: {access}'s relay does not insert the port as circuit-id")
        if found[0]["circuit-id"] != f"'{port}'":
            problems.append(f"{switch}: Kea reserves by {found[0]['circuit-id']}, relay {port!r}")
    return problems


@pytest.mark.parametrize("design", DESIGNS)
def test_every_switch_that_boots_by_dhcp_has_a_relay_inserting_its_circuit_id(
    design: str,
) -> None:
    problems = relay_problems(outputs(design))
    assert not problems, "\n".join(problems[:20])


def _access_switches(out: Outputs) -> set[str]:
    """The switches other devices' management ports are cabled to."""
    return {r["b_device"] for r in out.cables if r["kind"] == "mgmt"} & out.switches


def seed_problems(out: Outputs) -> list[str]:
    """Issue 41: every switch but a few seeds provisions itself by DHCP. A seed is the root of a
    management tree (an access switch whose own management port is cabled to no other access
    switch: the first of a floor region, or one of racks that keep every port; a few, at most
    two and one per three access switches), a switch with no cabled management
    port, or an in-band switch on the relays' path to the provisioning server; any other seed
    is a switch left to a USB drive for want of a relay."""
    access = _access_switches(out)
    cabled = {r["a_device"] for r in out.cables if r["kind"] == "mgmt"}
    inband = {
        device
        for r in out.cables
        if out.roles.get(r["network"]) == "inband" and r["kind"] != "mgmt"
        for device in (r["a_device"], r["b_device"])
    }
    roots = sorted(access - cabled)
    problems = []
    if len(roots) > 2 + len(access) // 3:
        problems.append(f"{len(roots)} of {len(access)} access switches are roots: {roots[:5]}")
    for seed in sorted(_seeds(out)):
        if seed in cabled and seed not in inband:
            problems.append(f"{seed}: a seed although its management port is cabled to a relay")
    return problems


# the SuperPOD with an OOB network that uplinks nowhere while its provisioning server is an
# in-band host: no relay can reach it, every switch boots from USB, and seeds.txt says so
UNREACHABLE = {"oob-not-uplinked"}


@pytest.mark.parametrize("design", DESIGNS)
def test_every_switch_but_a_few_seeds_provisions_itself_by_dhcp(design: str) -> None:
    out = outputs(design)
    if design in UNREACHABLE:
        assert "no path toward the provisioning server" in out.files["provisioning/ztp/seeds.txt"]
        return
    problems = seed_problems(out)
    assert not problems, "\n".join(problems[:20])


def path_problems(out: Outputs) -> list[str]:
    """Every DHCP relay has a routed path to the provisioning server: one of its upstream
    interfaces is on the server's subnet, or is a BGP unnumbered port whose cable leads, over
    BGP adjacencies and bridged domains, to a switch that owns an address on the server's
    subnet and announces it; and each relay announces the subnet it relays for (the server's
    answer goes to that address)."""
    reservations = _reservations(out)
    urls = [
        o["data"]
        for found in reservations.values()
        for r in found
        for o in r.get("option-data", [])
        if o["name"] in ("ztp-url", "boot-file-name")
    ]
    if not urls:
        return []
    server = Address(urls[0].split("/")[2])

    def bgp(switch: str) -> dict[str, Any]:
        tree: dict[str, Any] = (
            out.nvue.get(switch, {}).get("vrf", {}).get("default", {}).get("router", {})
        )
        found: dict[str, Any] = tree.get("bgp", {})
        return found

    def announced(switch: str) -> list[ipaddress.IPv4Network]:
        family = bgp(switch).get("address-family", {}).get("ipv4-unicast", {})
        return [ipaddress.IPv4Network(n) for n in family.get("network", {})]

    owners = {
        o.switch
        for found in out.owned.values()
        for o in found
        if server in o.interface.network
        and o.interface.network.prefixlen < 32
        and any(server in n for n in announced(o.switch))
    }
    graph: nx.Graph = nx.Graph()
    graph.add_nodes_from(out.switches)
    domain = layer2(out)
    for a, b in itertools.combinations(sorted(out.nvue), 2):
        if domain.get(a) == domain.get(b) and a in domain:
            graph.add_edge(a, b)
    far: dict[tuple[str, str], str] = {}
    for row in out.cables:
        if row["kind"] == "mgmt" or not {row["a_device"], row["b_device"]} <= set(out.nvue):
            continue
        a, b = row["a_device"], row["b_device"]
        pa, pb = cumulus_port(row["a_port"]), cumulus_port(row["b_port"])
        far[(a, pa)], far[(b, pb)] = b, a
        if pa in bgp(a).get("neighbor", {}) and pb in bgp(b).get("neighbor", {}):
            graph.add_edge(a, b)
    problems = []
    for switch, tree in sorted(out.nvue.items()):
        relay = tree.get("service", {}).get("dhcp-relay", {}).get("default", {})
        if not relay:
            continue
        interfaces = tree.get("interface", {})
        upstream = [
            port
            for group in relay.get("server-group", {}).values()
            for port in group.get("upstream-interface", {})
        ]
        connected = [
            u for u in upstream if any(server in p.network for p in _nvue_addresses(interfaces[u]))
        ]
        reached = [
            u
            for u in upstream
            if u in bgp(switch).get("neighbor", {})
            and (switch, u) in far
            and any(nx.has_path(graph, far[(switch, u)], o) for o in owners)
        ]
        if not connected and not reached:
            problems.append(f"{switch}: no routed path from its relay {upstream} to {server}")
        for downstream in relay.get("downstream-interface", {}):
            for prefix in _nvue_addresses(interfaces.get(downstream, {})):
                if not connected and prefix.network not in announced(switch):
                    problems.append(f"{switch}: relays for {prefix.network} but does not route it")
    return problems


@pytest.mark.parametrize("design", DESIGNS)
def test_every_relay_has_a_routed_path_to_the_provisioning_server(design: str) -> None:
    problems = path_problems(outputs(design))
    assert not problems, "\n".join(problems[:20])


# -- (d) host bonds --------------------------------------------------------------------------


def bond_problems(out: Outputs) -> list[str]:
    inband = {name for name, role in out.roles.items() if role == "inband"}
    ports = _inband_ports(out)
    peers = {
        frozenset((row["a_device"], row["b_device"]))
        for row in out.cables
        if row["network"] in inband and row["kind"] == "peer"
    }
    problems = []

    # dual-homed hosts, and any host given an LACP bond: the leaves must bond its ports too
    plans: dict[str, dict[str, Any]] = {}  # host -> its netplan `network`, {} without one
    for host in ports:
        path = f"provisioning/netplan/{host}.yaml"
        text = out.files.get(path)
        plans[host] = yaml.load(text, Loader=LOADER)["network"] if text is not None else {}

    def mode(host: str) -> str | None:
        bonds = plans[host].get("bonds", {})
        return next((b.get("parameters", {}).get("mode") for b in bonds.values()), None)

    bonded = {
        host: rows
        for host, rows in ports.items()
        if (len({r["b_device"] for r in rows}) > 1 and mode(host) != "active-backup")
        or mode(host) == "802.3ad"
    }
    for host, rows in sorted(ports.items()):
        if host in bonded or not plans[host]:
            continue
        # a host the leaves bond nothing for: an active-backup bond over its cabled ports, or
        # its first port alone, with an address either way
        bonds = plans[host].get("bonds", {})
        where = next(iter(bonds.values()), None) or next(iter(plans[host]["ethernets"].values()))
        if not where.get("addresses"):
            problems.append(f"{host}: its in-band netplan gives no address")
        if bonds and len(next(iter(bonds.values()))["interfaces"]) != len(rows):
            problems.append(f"{host}: an active-backup bond not over its {len(rows)} cables")
    for host, rows in sorted(bonded.items()):
        path = f"provisioning/netplan/{host}.yaml"
        if path not in out.files:
            problems.append(f"{host}: cabled to {sorted({r['b_device'] for r in rows})}, no {path}")
            continue
        bonds = plans[host].get("bonds", {})
        members = [m for bond in bonds.values() for m in bond.get("interfaces", [])]
        if len(bonds) != 1 or len(members) != len(rows):
            problems.append(f"{path}: {len(bonds)} bonds over {members}, {len(rows)} cables")
            continue
        (bond,) = bonds.values()
        if bond.get("parameters", {}).get("mode") != "802.3ad" or not bond.get("addresses"):
            problems.append(f"{path}: no LACP bond with an address")
        # the leaves' side: one MLAG bond, the same id on both leaves of a pair
        leaves = sorted({r["b_device"] for r in rows})
        if len(leaves) == 2 and frozenset(leaves) not in peers:
            problems.append(f"{host}: its leaves {leaves} are no MLAG pair")
        ids = set()
        for leaf in leaves:
            swps = {cumulus_port(r["b_port"]) for r in rows if r["b_device"] == leaf}
            holding = [
                entry
                for entry in out.nvue.get(leaf, {}).get("interface", {}).values()
                if entry.get("type") == "bond" and swps <= set(entry["bond"]["member"])
            ]
            if len(holding) != 1:
                problems.append(f"{host}: {leaf} bonds {sorted(swps)} in {len(holding)} bonds")
                continue
            ids.add(holding[0]["bond"].get("mlag", {}).get("id"))
        if len(ids) != 1 or None in ids:
            problems.append(f"{host}: MLAG ids {ids} on its leaves")
    return problems


@pytest.mark.parametrize("design", DESIGNS)
def test_every_dual_homed_host_has_a_bond(design: str) -> None:
    problems = bond_problems(outputs(design))
    assert not problems, "\n".join(problems[:20])


# -- (e) spanning tree blocks nothing --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PortUse:
    bridged: bool
    via: str | None  # the bond it is a member of, or the port where it is bridged alone
    mlag: int | None  # that bond's MLAG id


def _port_use(tree: dict[str, Any], port: str) -> PortUse | str:
    """How a switch uses one of its switch-to-switch ports, or why it is no use."""
    interfaces = tree.get("interface", {})
    if port not in interfaces:
        return f"{port} not configured"
    for name, entry in interfaces.items():
        if entry.get("type") in ("bond", "peerlink") and port in entry["bond"]["member"]:
            return PortUse("bridge" in entry, name, entry["bond"].get("mlag", {}).get("id"))
    if "bridge" in interfaces[port]:
        return PortUse(True, port, None)
    neighbors = tree.get("vrf", {}).get("default", {}).get("router", {}).get("bgp", {})
    if port in neighbors.get("neighbor", {}) or _ip(interfaces[port]).get("address"):
        return PortUse(False, None, None)
    return f"{port} neither bridged nor routed"


@dataclass(slots=True)
class Bridging:
    """The switch-to-switch cables of a design as its switches use them."""

    problems: list[str] = field(default_factory=list)
    group: dict[str, str] = field(default_factory=dict)  # switch -> its MLAG pair, or itself
    # (switch, far group) -> the ways it reaches it: (bridged, bond or lone port)
    uses: dict[tuple[str, str], set[tuple[bool, str | None]]] = field(default_factory=dict)
    bond_groups: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    mlag_ids: dict[tuple[str, str], set[int | None]] = field(default_factory=dict)
    graph: nx.MultiGraph = field(default_factory=nx.MultiGraph)  # groups, one edge per bond

    def bond_key(self, switch: str, use: PortUse) -> str:
        """A bridged bond as one edge: an MLAG bond is one on both peers of a pair."""
        if use.mlag is not None:
            return f"{self.group[switch]}#{use.mlag}"
        return f"{switch}#{use.via}"

    def add_peer(self, out: Outputs, row: dict[str, str]) -> None:
        pair = "+".join(sorted((row["a_device"], row["b_device"])))
        self.group[row["a_device"]] = self.group[row["b_device"]] = pair
        for switch, port in ((row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])):
            use = _port_use(out.nvue.get(switch, {}), cumulus_port(port))
            if not isinstance(use, PortUse) or use.via != "peerlink":
                self.problems.append(f"{switch}:{port}: a peer link outside the peerlink")

    def side(self, out: Outputs, switch: str, port: str, far: str) -> PortUse | None:
        if switch not in out.nvue:
            return None  # SONiC: routed ports (tests/test_configs_sonic.py)
        use = _port_use(out.nvue[switch], cumulus_port(port))
        if not isinstance(use, PortUse):
            self.problems.append(f"{switch}: {use} (towards {far})")
            return None
        self.uses.setdefault((switch, self.group[far]), set()).add((use.bridged, use.via))
        if use.via is not None:
            self.bond_groups.setdefault((switch, use.via), set()).add(self.group[far])
            if "+" in self.group[switch]:
                key = (self.group[switch], self.group[far])
                self.mlag_ids.setdefault(key, set()).add(use.mlag)
        return use

    def add_link(self, out: Outputs, row: dict[str, str]) -> None:
        a_switch, b_switch = row["a_device"], row["b_device"]
        a = self.side(out, a_switch, row["a_port"], b_switch)
        b = self.side(out, b_switch, row["b_port"], a_switch)
        if a is None or b is None:
            return
        if a.bridged != b.bridged:
            self.problems.append(f"cable {row['label']}: bridged on one end only")
        elif a.bridged:
            ends = sorted((self.bond_key(a_switch, a), self.bond_key(b_switch, b)))
            self.graph.add_edge(self.group[a_switch], self.group[b_switch], key=tuple(ends))

    def check(self) -> None:
        for (switch, far), found in sorted(self.uses.items()):
            one_bond = len(found) == 1 and next(iter(found))[1] is not None
            if not (one_bond or found == {(False, None)}):
                ways = sorted(found, key=str)
                self.problems.append(f"{switch} reaches {far} through {ways}")
        for (switch, via), fars in sorted(self.bond_groups.items()):
            if len(fars) > 1:
                self.problems.append(f"{switch}: {via} bundles links to {sorted(fars)}")
        for (pair, far), ids in sorted(self.mlag_ids.items()):
            if len(ids) != 1 or None in ids:
                self.problems.append(f"{pair}: its bonds towards {far} have MLAG ids {ids}")
        if len(self.graph) and not nx.is_forest(self.graph):
            cycles = nx.cycle_basis(nx.Graph(self.graph)) or "parallel bonds"
            self.problems.append(f"bridged loops: {cycles}")


def bridging(out: Outputs) -> Bridging:
    """Each switch reaches each far switch or far MLAG pair through one bond, or through routed
    ports only (a lone bridged port where one cable runs), and the bridged bonds form a forest."""
    bridging = Bridging(group={switch: switch for switch in out.switches})
    links = [
        row
        for row in out.cables
        if row["kind"] != "mgmt" and {row["a_device"], row["b_device"]} <= out.switches
    ]
    for row in links:
        if row["kind"] == "peer":
            bridging.add_peer(out, row)
    for row in links:
        if row["kind"] != "peer":
            bridging.add_link(out, row)
    bridging.check()
    return bridging


def bridging_problems(out: Outputs) -> list[str]:
    return bridging(out).problems


@pytest.mark.parametrize("design", DESIGNS)
def test_no_switch_to_switch_link_is_left_to_spanning_tree(design: str) -> None:
    problems = bridging_problems(outputs(design))
    assert not problems, "\n".join(problems[:20])


def test_the_variations_build_what_they_vary() -> None:
    """The variations reach the shapes they are named after (else they would test nothing)."""

    def spines(design: str) -> int:
        rows = outputs(design).cables
        return len(
            {r["b_device"] for r in rows if r["network"] == "inband" and r["kind"] == "leaf-spine"}
        )

    assert [spines(f"inband-{n}") for n in ("1-spine", "2-spines", "4-spines")] == [1, 2, 4]
    single = outputs("inband-single-homed")  # no MLAG pair: no LACP bond, active-backup
    netplans = [t for p, t in single.files.items() if p.startswith("provisioning/netplan/")]
    assert netplans and not any("802.3ad" in text for text in netplans)
    assert len(outputs("oob-access-switch-per-rack").nvue) > len(outputs(BASE).nvue)
    # no uplink leaves the OOB network (its management tree's links stay inside it)
    oob_switches = set(outputs("oob-not-uplinked").nvue) & {
        r["b_device"] for r in outputs("oob-not-uplinked").cables if r["kind"] == "mgmt"
    }
    assert not any(
        r["kind"] == "uplink" and not {r["a_device"], r["b_device"]} <= oob_switches
        for r in outputs("oob-not-uplinked").cables
    )
    # the bridged designs bridge (so the forest check has edges), the routed ones do not
    for design in (BASE, "inband-1-spine", "inband-single-homed-1-spine", "inband-2-spines"):
        assert bridging(outputs(design)).graph.number_of_edges() >= 3, design
    for design in ("inband-4-spines", "inband-single-homed", "gb300-nvl72-xdr", "inband-3-tiers"):
        assert bridging(outputs(design)).graph.number_of_edges() == 0, design
    for design in ("inband-3-tiers", "inband-3-tiers-small"):
        assert any(r["kind"] == "spine-core" for r in outputs(design).cables)
    assert any(
        "ipv4" in tree["interface"]["eth0"]
        for tree in outputs("mgmt-cumulus-5-15").nvue.values()
        if "eth0" in tree["interface"]
    )
    no_oob = outputs("no-oob")
    assert not any(r["network"] == "oob" for r in no_oob.cables)
    # without DHCP only the seeds (bootstrapped from USB) get ZTP scripts
    scripts = {p.split("/")[2] for p in no_oob.files if p.endswith("/ztp.sh")}
    assert scripts == _seeds(no_oob) and len(scripts) < len(no_oob.nvue)


# -- the checks can fail ---------------------------------------------------------------------


def _mutated(change: Any) -> Outputs:
    """The SuperPOD outputs, changed by `change(out)` (a copy: the cached ones stay)."""
    out = copy.deepcopy(outputs(BASE))
    change(out)
    return out


def _kea(out: Outputs, change: Any) -> None:
    path = "provisioning/kea/kea-dhcp4.conf"
    kea = json.loads(out.files[path])
    change(kea["Dhcp4"])
    out.files[path] = json.dumps(kea)


def test_each_check_finds_what_it_checks() -> None:
    assert not gateway_problems(outputs(BASE)) and not ztp_problems(outputs(BASE))

    def foreign_router(dhcp: dict[str, Any]) -> None:
        dhcp["subnet4"][0]["option-data"][0]["data"] = "10.128.128.62"

    assert gateway_problems(_mutated(lambda out: _kea(out, foreign_router)))

    def netplan_route(out: Outputs) -> None:
        path = "provisioning/netplan/dgx001.yaml"
        out.files[path] = out.files[path].replace("via: 10.64.0.1", "via: 10.64.0.3")

    assert gateway_problems(_mutated(netplan_route))

    def host_on_another_bridge(out: Outputs) -> None:
        # dgx001 cabled to an OOB access switch: routed off the in-band VLAN, its gateway too
        for row in out.cables:
            if row["a_device"] == "dgx001" and row["network"] == "inband":
                row["b_device"] = "oob-leaf001"

    assert any("dgx001" in p for p in gateway_problems(_mutated(host_on_another_bridge)))

    def no_option(dhcp: dict[str, Any]) -> None:
        for reservation in dhcp["subnet4"][0]["reservations"]:
            reservation.pop("option-data", None)

    assert ztp_problems(_mutated(lambda out: _kea(out, no_option)))
    ztp_file = "provisioning/ztp/inband-leaf003/ztp.sh"
    assert ztp_problems(_mutated(lambda out: out.files.pop(ztp_file)))
    assert not relay_problems(outputs(BASE))
    # the access switch of inband-leaf003, which boots by DHCP
    (relay,) = {
        r["b_device"]
        for r in outputs(BASE).cables
        if r["a_device"] == "inband-leaf003" and r["kind"] == "mgmt"
    }

    def no_relay(out: Outputs) -> None:
        del out.nvue[relay]["service"]

    assert any("relays nothing" in p for p in relay_problems(_mutated(no_relay)))

    def no_port_circuit_id(out: Outputs) -> None:
        del out.nvue[relay]["service"]["dhcp-relay"]["default"]["agent"]

    assert any("circuit-id" in p for p in relay_problems(_mutated(no_port_circuit_id)))
    assert bond_problems(_mutated(lambda out: out.files.pop("provisioning/netplan/dgx001.yaml")))

    def take_uplink(out: Outputs) -> tuple[dict[str, Any], dict[str, Any], str]:
        """inband-leaf001's interfaces, its uplink bond and a port taken out of that bond."""
        interfaces: dict[str, Any] = out.nvue["inband-leaf001"]["interface"]
        bond = next(
            e
            for e in interfaces.values()
            if e.get("description") == "inband-spine001+inband-spine002"
        )
        port = sorted(bond["bond"]["member"])[0]
        del bond["bond"]["member"][port]
        return interfaces, bond, port

    def split_uplink_bond(out: Outputs) -> None:
        interfaces, bond, port = take_uplink(out)
        interfaces["uplink9"] = {**bond, "bond": {"member": {port: {}}}}

    assert not bridging_problems(outputs(BASE))
    problems = bridging_problems(_mutated(split_uplink_bond))
    assert any("reaches" in p for p in problems) and any("loops" in p for p in problems)

    def unbond_to_bridge(out: Outputs) -> None:
        # a second spine pair's worth of trouble: one uplink leaves its bond, bridged alone
        interfaces, _, port = take_uplink(out)
        interfaces[port]["bridge"] = {"domain": {"br_default": {}}}

    assert any("loops" in p for p in bridging_problems(_mutated(unbond_to_bridge)))
