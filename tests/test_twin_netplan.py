"""`fabricc twin`: the generated netplan files applied in the host namespaces of a booted fabric.

The unit tests translate networkd units as netplan 0.106 (Debian bookworm) writes them into `ip`
commands (no root). The boot test is a real build of gb200-nvl72-su, whose in-band hosts
(trays, management servers, UFM appliances) bond two ports over an MLAG leaf pair; the fault is
a hand edit of one netplan file. It needs root, FRR and netplan (tests.support).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.twin import netplan, requirements, routing
from fabricc.twin.folder import BuildFolder, load
from fabricc.twin.lab import lab, leftovers
from fabricc.twin.names import Namer
from fabricc.twin.networkd import milliseconds, parse, translate
from tests.frr_support import require_root
from tests.support import require_tool
from tests.test_twin import _built

# `netplan generate` of a tray's file: an LACP bond over inband1 and inband2, the default route
# through the leaf pair's VRR gateway
BOND = {
    "10-netplan-bond0.netdev": "[NetDev]\nName=bond0\nMTUBytes=9000\nKind=bond\n\n[Bond]\n"
    "Mode=802.3ad\nLACPTransmitRate=fast\nMIIMonitorSec=100ms\nTransmitHashPolicy=layer3+4\n",
    "10-netplan-bond0.network": "[Match]\nName=bond0\n\n[Link]\nMTUBytes=9000\n\n[Network]\n"
    "LinkLocalAddressing=ipv6\nAddress=10.64.0.6/26\nConfigureWithoutCarrier=yes\n\n[Route]\n"
    "Destination=0.0.0.0/0\nGateway=10.64.0.1\n",
    **{
        f"10-netplan-inband{k}.link": f"[Match]\nOriginalName=inband{k}\n\n[Link]\n"
        "WakeOnLan=off\nMTUBytes=9000\n"
        for k in (1, 2)
    },
    **{
        f"10-netplan-inband{k}.network": f"[Match]\nName=inband{k}\n\n[Link]\nMTUBytes=9000\n\n"
        "[Network]\nLinkLocalAddressing=no\nBond=bond0\n"
        for k in (1, 2)
    },
}
# a NIC matched by MAC address and renamed (set-name), source routing through table 101, and a
# VLAN on another port with the deprecated gateway4
ROUTED = {
    "10-netplan-nic0.link": "[Match]\nPermanentMACAddress=aa:bb:cc:00:00:01\n\n[Link]\n"
    "Name=data0\nWakeOnLan=off\n",
    "10-netplan-nic0.network": "[Match]\nPermanentMACAddress=aa:bb:cc:00:00:01\nName=data0\n\n"
    "[Network]\nAddress=10.0.0.2/31\n\n[Route]\nDestination=0.0.0.0/0\nGateway=10.0.0.1\n"
    "Table=101\n\n[Route]\nDestination=10.9.0.0/16\nGateway=10.0.0.1\n\n"
    "[RoutingPolicyRule]\nFrom=10.0.0.2\nTable=101\nPriority=100\n",
    "10-netplan-eth1.network": "[Match]\nName=eth1\n\n[Network]\nVLAN=vlan10\n",
    "10-netplan-vlan10.netdev": "[NetDev]\nName=vlan10\nKind=vlan\n\n[VLAN]\nId=10\n",
    "10-netplan-vlan10.network": "[Match]\nName=vlan10\n\n[Network]\nAddress=10.1.0.2/24\n"
    "Gateway=10.1.0.1\n",
}


def test_units_keep_repeated_sections_and_keys() -> None:
    sections = parse(
        "# c\n[Network]\nAddress=a\nAddress=b\n\n[Route]\nGateway=x\n[Route]\nGateway=y\n"
    )
    assert sections == [
        ("Network", [("Address", "a"), ("Address", "b")]),
        ("Route", [("Gateway", "x")]),
        ("Route", [("Gateway", "y")]),
    ]
    assert [milliseconds(s) for s in ("100ms", "1s", "2", "1min 500ms")] == [100, 1000, 2000, 60500]


def test_a_bond_becomes_ip_commands_in_networkd_order() -> None:
    plan = translate(BOND, {"inband1": "02:00:00:00:00:01", "inband2": "02:00:00:00:00:02"})
    assert plan.problems == []
    assert [" ".join(c) for c in plan.commands] == [
        "link add bond0 type bond mode 802.3ad xmit_hash_policy layer3+4 lacp_rate fast miimon 100",
        "link set bond0 mtu 9000",
        "link set inband1 down",
        "link set inband1 master bond0",
        "link set inband1 mtu 9000",
        "link set inband2 down",
        "link set inband2 master bond0",
        "link set inband2 mtu 9000",
        "link set inband1 up",
        "link set inband2 up",
        "link set bond0 up",
        "address add 10.64.0.6/26 dev bond0",
        "route add default via 10.64.0.1 dev bond0 table main proto static",
    ]
    bond = plan.expected["bond0"]
    assert (bond.addresses, bond.routes, bond.mtu) == (
        ["10.64.0.6/26"],
        [("default", "10.64.0.1", "main")],
        9000,
    )
    assert plan.expected["inband2"].master == "bond0"
    assert plan.members("bond0") == {"bond0", "inband1", "inband2"}


def test_without_the_bonding_driver_the_first_member_stands_for_the_bond() -> None:
    plan = translate(BOND, {"inband1": "", "inband2": ""}, bonding=False)
    commands = [" ".join(c) for c in plan.commands]
    assert commands[:2] == ["link set inband1 down", "link set inband1 name bond0"]
    assert not any("type bond" in c or "master" in c for c in commands)
    assert "address add 10.64.0.6/26 dev bond0" in commands
    assert "link set bond0 mtu 9000" in commands and "link set inband2 mtu 9000" in commands
    assert plan.stood_in == {"bond0": "inband1"}
    assert "inband1" not in plan.expected  # it is bond0 now
    assert plan.members("bond0") == {"bond0", "inband1", "inband2"}


def test_renames_vlans_and_source_routing() -> None:
    plan = translate(ROUTED, {"p0": "AA:BB:CC:00:00:01", "eth1": "02:00:00:00:00:09"})
    commands = [" ".join(c) for c in plan.commands]
    assert commands[:3] == [
        "link set p0 down",
        "link set p0 name data0",
        "link add link eth1 name vlan10 type vlan id 10",
    ]
    assert "route add default via 10.0.0.1 dev data0 table 101 proto static" in commands
    assert "route add 10.9.0.0/16 via 10.0.0.1 dev data0 table main proto static" in commands
    assert "rule add from 10.0.0.2 priority 100 table 101" in commands
    assert "route add default via 10.1.0.1 dev vlan10 table main proto static" in commands
    assert plan.expected["data0"].rules == [("10.0.0.2", "101")]
    assert plan.problems == []


def test_what_the_twin_cannot_apply_is_named() -> None:
    units = {
        "a.netdev": "[NetDev]\nName=wg0\nKind=wireguard\n",
        "b.network": "[Match]\nName=ens9\n\n[Network]\nAddress=10.0.0.1/24\n",
        "c.network": "[Match]\nName=eth0\n\n[Network]\nDHCP=ipv4\n",
    }
    plan = translate(units, {"eth0": ""})
    assert plan.problems == [
        "a.netdev: Kind=wireguard is not applied by the twin",
        "b.network: no interface ens9 in the namespace",
        "eth0: DHCP=ipv4 is not applied by the twin",
    ]


def test_udev_rules_name_each_port() -> None:
    rules = (
        "# In-band interface names of m (d), generated by fabricc.\n# Install as x; y.\n"
        '# BF3-1/P2\nACTION=="add", SUBSYSTEM=="net", KERNELS=="0006:03:00.1", NAME="inband1"\n'
        '# ETH2: no RDMA device in the catalog - name it inband2 yourself, e.g. NAME="inband2"\n'
    )
    assert netplan.udev_names(rules) == {"BF3-1/P2": "inband1", "ETH2": "inband2"}


def test_netplan_is_required_only_for_a_build_with_netplan_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(requirements, "_found", lambda program: program != "netplan")
    assert not any("netplan" in line for line in requirements.missing(infiniband=False))
    lines = requirements.missing(infiniband=False, netplan=True)
    assert [line for line in lines if "netplan" in line] == [
        "netplan not found: install the Debian package netplan.io"
    ]
    assert not netplan.has_files(tmp_path)
    (tmp_path / "provisioning/netplan").mkdir(parents=True)
    (tmp_path / "provisioning/netplan/host01.yaml").write_text("network: {version: 2}\n")
    assert netplan.has_files(tmp_path)
    result = CliRunner().invoke(cli, ["twin", str(tmp_path)])
    assert result.exit_code == 2 and "netplan.io" in result.output, result.output


def test_hosts_under_leaves_the_twin_does_not_boot_are_named(tmp_path: Path) -> None:
    (tmp_path / "provisioning/netplan").mkdir(parents=True)
    for host in ("dgx01", "dgx02", "dgx03"):
        (tmp_path / f"provisioning/netplan/{host}.yaml").write_text("network: {version: 2}\n")
    (tmp_path / "provisioning/netplan/m.rules").write_text(
        '# P1\nNAME="inband1"\n# P2\nNAME="inband2"\n'
    )
    row = {"network": "inband", "kind": "endpoint-leaf", "a_port": "P1"}
    cables = [
        {**row, "a_device": "dgx01", "b_device": "leaf1"},  # booted
        {**row, "a_device": "dgx02", "b_device": "leaf2"},  # a layer-2 leaf
        {**row, "a_device": "dgx02", "b_device": "leaf3", "a_port": "P2"},
        {**row, "a_device": "dgx03", "b_device": "leaf4", "a_port": "S1"},  # a storage port
        {**row, "a_device": "ufm01", "b_device": "leaf2"},  # no netplan file
    ]
    devices = {host: {"model": "m"} for host in ("dgx01", "dgx02", "dgx03", "ufm01")}
    booted = routing.Booted("inband", endpoints={"dgx01": "ns1"})
    folder = BuildFolder(tmp_path, devices=devices, cables=cables)
    entry = netplan._not_booted(folder, booted)
    assert entry["not_booted"] == 1
    assert "(leaf2, leaf3)" in str(entry["not_booted_because"])


# nvl72-01-c01's address moved into a /30 that leaves out its gateway 10.64.0.1
PREFIX = ("- 10.64.0.6/26\n", "- 10.64.0.6/30\n")


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("fault", [False, True])
def test_netplan_files_route_every_host_through_its_leaf_pair(
    fault: bool, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    require_tool("vtysh", "ping", "netplan")
    require_root()
    root = tmp_path / "out"
    shutil.copytree(_built("gb200-nvl72-su", tmp_path_factory), root)
    file = root / "provisioning/netplan/nvl72-01-c01.yaml"
    if fault:
        text = file.read_text()
        assert PREFIX[0] in text
        file.write_text(text.replace(*PREFIX))
    folder = load(root)
    with lab(300) as the_lab:
        tag = the_lab.tag
        booted = routing.boot(the_lab, folder, Namer(folder), "inband")
        routing.wait_sessions(the_lab, folder, booted)
        routing.ecmp(the_lab, booted)  # waits for the routes
        result = netplan.check(the_lab, folder, booted)
    # 8 racks of 18 trays, 2 management servers and 2 UFM appliances: one bond0 each
    assert (result["hosts"], result["nics"]) == (148, 148)
    # its gateway, a host on another leaf pair, and a packet of its MTU to the gateway (where the
    # gateway answered: not the faulty host's)
    assert result["checked"] == 3 * 148 - (1 if fault else 0)
    failures = result["failures"]
    assert isinstance(failures, list)
    if not fault:
        assert failures == [], failures[:5]
        return
    # named on the host's bond, or as the far end another host cannot reach
    assert failures and all(
        (f["host"], f.get("nic")) == ("nvl72-01-c01", "bond0")
        or str(f.get("to")).startswith("nvl72-01-c01 bond0")
        or f["host"] == "nvl72-01-c01"
        for f in failures
    ), failures
    text = json.dumps(failures)
    assert "no route default via 10.64.0.1" in text, failures
    mine = [f for f in failures if f.get("nic") == "bond0" and f["host"] == "nvl72-01-c01"]
    assert {"host": "nvl72-01-c01", "nic": "bond0", "ports": ["BF3-1/P2", "BF3-2/P2"]}.items() <= (
        mine[0].items()
    )
    assert not leftovers(f"ftw{tag}")
