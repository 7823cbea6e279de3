"""`fabricc twin` on Arista EOS: the FRR configuration rendered from each switch's startup-config,
the EOS port names, the whole twin on roce-lab-eos, and faults injected into its files.

The folder is a real build of examples/roce-lab-eos.yaml (its startup-config is the EOS CLI pyavd
renders, installed through the test extra). Rendering is checked against the design's inventory
and cabling plan and against FRR's own parser; booting needs root and the tools.
"""

from __future__ import annotations

import ipaddress
import json
import re
import subprocess
from pathlib import Path

import pytest

from fabricc.twin import eos, eos_frr
from fabricc.twin.folder import BuildFolder, load
from fabricc.twin.lab import own_leftovers
from fabricc.twin.names import Namer, eos_linux, eos_port
from fabricc.twin.nvue import switch_config
from fabricc.twin.provisioning import boot_files
from fabricc.twin.run import twin
from fabricc.twin.scope import not_booted
from tests.frr_support import frr_readable_folder, write_readable
from tests.support import require_tool
from tests.test_twin import _booting, _built, _checks, _copy, _edit

EXAMPLE = "roce-lab-eos"
SWITCHES = ("fabric-leaf001", "fabric-leaf002", "fabric-spine001", "fabric-spine002")


def _render(folder: BuildFolder, switch: str) -> str:
    blocks = eos.startup_config(folder, switch)
    assert blocks is not None, switch
    frr = eos_frr.render(blocks)
    assert frr is not None, switch
    return frr


def test_eos_port_names_follow_the_lanes_of_the_config() -> None:
    # an 800G cage of 8 lanes split in two: Ethernet1/1 and Ethernet1/5; unsplit: Ethernet5/1
    assert eos_port("1/2", {1: 4}, set()) == "Ethernet1/5"
    assert eos_port("5", {5: 8}, set()) == "Ethernet5/1"
    assert eos_port("3/4", {3: 2}, set()) == "Ethernet3/7"
    assert eos_port("33", {}, {33}) == "Ethernet33"  # a one-lane cage
    assert eos_linux("Ethernet5/1") == "et5_1"
    assert eos_linux("Ethernet33") == "et33"
    assert eos_linux("Vlan10") == "vlan10"
    assert eos_linux("Port-Channel7") == "po7"
    assert eos_linux("Loopback0") == "Loopback0"
    assert eos_linux("Management1") == "eth0"


def test_cabling_plan_ports_read_to_the_config_interfaces(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = load(_built(EXAMPLE, tmp_path_factory))
    namer = Namer(folder)
    for row in folder.cables:
        for device, port in ((row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])):
            if device not in SWITCHES or port == "Management1":
                continue
            # the plan's far end is the description the config gives the port
            far = row["b_device"] if device == row["a_device"] else row["a_device"]
            interface = namer.interface(device, port)
            ports = {eos_linux(n): p for n, p in eos.interfaces(_blocks(folder, device)).items()}
            assert interface in ports, (device, port, interface)
            assert ports[interface].description.startswith(f"{far}:"), (device, port)


def _blocks(folder: BuildFolder, switch: str) -> list[eos.Block]:
    blocks = eos.startup_config(folder, switch)
    assert blocks is not None
    return blocks


def test_rendered_frr_carries_the_designed_bgp(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = load(_built(EXAMPLE, tmp_path_factory))
    namer = Namer(folder)
    for switch in SWITCHES:
        frr = _render(folder, switch)
        device = folder.devices[switch]
        assert re.findall(r"^router bgp (\d+)$", frr, re.M) == [device["asn"]]
        assert f" bgp router-id {device['loopback']}\n" in frr
        assert "interface Loopback0\n description router id and BGP next hop\n ip address " in frr
        assert f" ip address {device['loopback']}/32\n" in frr
        # one unnumbered session per switch cable, on the Linux name of its port, with the
        # remote AS of the device at the far end
        designed = {}
        for row in folder.cables:
            if row["kind"] != "leaf-spine" or switch not in (row["a_device"], row["b_device"]):
                continue
            me, far = ("a", "b") if row["a_device"] == switch else ("b", "a")
            interface = namer.interface(switch, row[f"{me}_port"])
            designed[interface] = folder.devices[row[f"{far}_device"]]["asn"]
        assert len(designed) == 4
        sessions = dict(re.findall(r"^ neighbor (\S+) remote-as (\d+)$", frr, re.M))
        assert sessions == designed, switch
        assert sorted(re.findall(r"^ neighbor (\S+) interface peer-group FABRIC$", frr, re.M)) == (
            sorted(designed)
        )
        # the peer group as EOS has it: timers, send-community, IPv4 with IPv6 next hops
        for line in (
            " neighbor FABRIC peer-group\n",
            " neighbor FABRIC timers 3 9\n",
            " neighbor FABRIC capability extended-nexthop\n",
            " no bgp default ipv4-unicast\n",
            " timers bgp 3 9\n",
            " no bgp ebgp-requires-policy\n",
            "  maximum-paths 4\n",
            "  neighbor FABRIC activate\n",
            "  neighbor FABRIC send-community\n",
        ):
            assert line in frr, (switch, line)
        # networks: every `network` of the config; a leaf's are its loopback and host subnets
        cli = folder.text(f"configs/{switch}/startup-config")
        networks = re.findall(r"^  network (\S+)$", frr, re.M)
        assert networks == re.findall(r"^      network (\S+)$", cli, re.M)
        assert f"{device['loopback']}/32" in networks
        if device["role"] == "leaf":
            hosts = re.findall(
                r"^interface (et\d+_\d+)\n description gpu\d+:NIC\d\n ip address (\S+)", frr, re.M
            )
            assert len(hosts) == 4
            assert all(str(_network(address)) in networks for _, address in hosts)
        assert "Management1" not in frr and "10.128." not in frr  # VRF MGMT stays out


def _network(address: str) -> str:
    return str(ipaddress.ip_interface(address).network)


def test_switch_config_reads_the_eos_mtus(tmp_path_factory: pytest.TempPathFactory) -> None:
    folder = load(_built(EXAMPLE, tmp_path_factory))
    config = switch_config(folder, "fabric-leaf001")
    assert config is not None and config.os == "eos"
    # EOS `mtu 9214` on every routed port, keyed by the name the veths carry
    assert config.mtu["et5_1"] == config.mtu["et1_5"] == 9214
    assert "eth0" not in config.addresses  # Management1 is in VRF MGMT
    assert boot_files(folder, "fabric-leaf001") == ["configs/fabric-leaf001/startup-config"]


def test_render_covers_the_eos_bgp_settings() -> None:
    cli = """\
hostname sw1
!
interface Ethernet3
   description sw2:Ethernet3
   mtu 9000
   no switchport
   ip address 10.1.0.0/31
!
interface Ethernet4/1
   no switchport
   shutdown
   ip address 10.1.0.2/31
!
interface Loopback0
   ip address 10.0.0.9/32
!
interface Management1
   vrf MGMT
   ip address 192.0.2.9/24
!
interface Vlan10
   ip address 10.9.0.1/24
!
router bgp 65009
   router-id 10.0.0.9
   maximum-paths 16 ecmp 16
   bgp bestpath as-path multipath-relax
   neighbor UP peer group
   neighbor UP remote-as 65100
   neighbor UP ebgp-multihop 2
   neighbor UP update-source Loopback0
   neighbor 10.1.0.1 peer group UP
   neighbor 10.1.0.3 remote-as 65010
   neighbor 10.1.0.3 description sw3:Ethernet1 AS65010
   neighbor 10.1.0.3 next-hop-self
   neighbor interface Ethernet3 peer group UP remote-as 65011
   redistribute connected
   !
   address-family ipv6
      neighbor UP activate
      network fd00::9/128
"""
    blocks = eos.parse(cli)
    frr = eos_frr.render(blocks)
    assert frr is not None
    for line in (
        "no ip forwarding\n",  # no `ip routing`: EOS does not route
        "interface et3\n description sw2:Ethernet3\n ip address 10.1.0.0/31\n",
        "interface et4_1\n ip address 10.1.0.2/31\n shutdown\n",
        "interface vlan10\n ip address 10.9.0.1/24\n",
        "router bgp 65009\n bgp router-id 10.0.0.9\n",
        " bgp bestpath as-path multipath-relax\n",
        " neighbor UP peer-group\n neighbor UP remote-as 65100\n neighbor UP ebgp-multihop 2\n"
        " neighbor UP update-source Loopback0\n",
        " neighbor 10.1.0.1 peer-group UP\n",
        " neighbor 10.1.0.3 remote-as 65010\n neighbor 10.1.0.3 description sw3:Ethernet1 AS65010\n",
        " neighbor et3 interface peer-group UP\n neighbor et3 remote-as 65011\n"
        " neighbor et3 description sw2:Ethernet3\n",
        " address-family ipv4 unicast\n  redistribute connected\n  maximum-paths 16\n",
        "  neighbor 10.1.0.3 next-hop-self\n",
        " address-family ipv6 unicast\n  network fd00::9/128\n  maximum-paths 16\n"
        "  neighbor UP activate\n",
    ):
        assert line in frr, line
    assert "192.0.2.9" not in frr  # the management port is in VRF MGMT
    assert eos_frr.render(eos.parse("hostname sw1\ninterface Loopback0\n")) is None
    assert "no ip forwarding" not in (eos_frr.render(eos.parse("ip routing\n" + cli)) or "")


def test_rendered_frr_is_accepted_by_frr(tmp_path_factory: pytest.TempPathFactory) -> None:
    require_tool("vtysh")
    folder = load(_built(EXAMPLE, tmp_path_factory))
    with frr_readable_folder() as scratch:
        for switch in SWITCHES:
            path = write_readable(scratch, f"{switch}.conf", _render(folder, switch))
            result = subprocess.run(
                ["vtysh", "-C", "-f", str(path)], capture_output=True, text=True, check=False
            )
            assert result.returncode == 0, (switch, result.stdout, result.stderr)


def test_eos_without_its_cli_is_a_failure_not_out_of_scope(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    # a build without pyavd writes only the structured config: the switches route, but the twin
    # has no EOS CLI to boot, and says so per switch
    root = _copy(EXAMPLE, tmp_path_factory, tmp_path)
    for switch in SWITCHES:
        (root / f"configs/{switch}/startup-config").unlink()
    entry = not_booted(load(root), "fabric")
    assert "out_of_scope" not in entry
    failures = entry["failures"]
    assert isinstance(failures, list)
    assert sorted(f["switch"] for f in failures) == list(SWITCHES)


@pytest.mark.tool
@pytest.mark.slow
def test_roce_lab_eos_boots_as_designed(tmp_path_factory: pytest.TempPathFactory) -> None:
    _booting()
    report = json.loads(twin(_built(EXAMPLE, tmp_path_factory), 300).text())
    assert report["holds"] is True, json.dumps(report)[:2000]
    fabric = report["networks"]["fabric"]
    assert fabric["switches"] == 4
    assert fabric["sessions"] == {"designed": 16, "failures": []}  # 8 cables, both ends
    assert fabric["ecmp"] == {"checked": 2, "failures": []}  # 4 uplinks, 4 paths, each way
    assert fabric["reachability"]["failures"] == []
    assert fabric["mtu"] == {"checked": 16, "failures": []}
    assert fabric["hosts"]["nics"] == 8 and fabric["hosts"]["failures"] == []
    drills = {d["drill"]: d for d in fabric["drills"]}
    assert drills["one spine down"]["still_reach"] == drills["one spine down"]["pairs"] == 2
    # the EOS switches come up by DHCP: option 67 names their boot script, which installs the
    # startup-config (the site's accounts file is the operator's)
    provisioning = report["provisioning"]
    assert provisioning["by_dhcp"] == list(SWITCHES)
    assert provisioning["failures"] == [] and provisioning["not_provisioned"] == []
    assert "provisioning/ztp/eos-users.cfg" in provisioning["operator_files"]
    assert not own_leftovers()


def _remote_as(text: str) -> str:
    return text.replace(
        "neighbor interface Ethernet5/1 peer-group FABRIC remote-as 4200099999",
        "neighbor interface Ethernet5/1 peer-group FABRIC remote-as 4200099998",
    )


def _mtu(text: str) -> str:
    return re.sub(r"(interface Ethernet1/1\n(?:   .*\n)*?   mtu )9214", r"\g<1>1500", text, count=1)


def _no_startup_config(text: str) -> str:
    return re.sub(r"^curl .*/startup-config'\n", "", text, flags=re.M)


FAULTS = {
    # fault: (file, edit, where in the report, words one failure must name)
    "remote-as-changed": (
        "configs/fabric-leaf001/startup-config", _remote_as, ("networks", "fabric", "sessions"),
        ("fabric-leaf001", "et5_1", "fabric-spine001", "not Established"),
    ),
    "mtu-mismatch": (
        "configs/fabric-spine001/startup-config", _mtu, ("networks", "fabric", "mtu"),
        ("fabric-leaf001", "et5_1", "9214"),
    ),
    "boot-script-installs-no-config": (
        "provisioning/ztp/fabric-spine002/bootstrap", _no_startup_config, ("provisioning",),
        ("fabric-spine002", "installs no configs/fabric-spine002/startup-config"),
    ),
}  # fmt: skip


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_eos_faults_are_named(
    fault: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    _booting()
    folder = _copy(EXAMPLE, tmp_path_factory, tmp_path)
    relative, edit, where, words = FAULTS[fault]
    _edit(folder / relative, edit)
    report = json.loads(twin(folder, 300, drill=False).text())
    assert report["holds"] is False
    failures = (
        _checks(report, where[1], where[2])
        if where[0] == "networks"
        else report["provisioning"]["failures"]
    )
    text = json.dumps(failures)
    assert any(all(w in json.dumps(f) for w in words) for f in failures), text
    assert not own_leftovers()
