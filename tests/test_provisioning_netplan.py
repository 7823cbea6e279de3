"""Host bonds: every host dual-homed to an in-band MLAG leaf pair gets a netplan file bonding its
cabled in-band ports with LACP, its in-band address and the gateway the in-band top tier owns;
the real netplan (`netplan generate`) turns it into a systemd-networkd 802.3ad bond. A host the
leaves bond nothing for (single-homed) gets an active-backup bond instead.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from fabricc.ir import ENDPOINT_LEAF, Fabric
from fabricc.synth.mgmtnet import management_net
from fabricc.twin.netplan import udev_names
from tests.configs_support import ipv4, nvue
from tests.provisioning_support import provisioning
from tests.support import EXAMPLES, compile_text, compiled, require_tool


def test_every_dual_homed_host_has_its_bond() -> None:
    fabric, artifacts = compiled("superpod-h100-4su")
    files = provisioning("superpod-h100-4su")
    trees = nvue({path: text for path, text in artifacts if isinstance(text, str)})
    net = management_net(fabric)
    assert net.inband is not None
    cabled: dict[str, list[str]] = {}
    for link in fabric.links:
        if link.network == "inband" and link.kind == ENDPOINT_LEAF:
            cabled.setdefault(link.a, []).append(link.b)
    assert len(cabled) == 127 + 4 + 4
    spine_vrr = ipv4(trees["inband-spine001"]["interface"]["vlan10"])["vrr"]["address"]
    for host, leaves in cabled.items():
        plan = yaml.safe_load(files[f"netplan/{host}.yaml"])["network"]
        bond = plan["bonds"]["bond0"]
        assert len(bond["interfaces"]) == len(leaves) == 2
        assert set(bond["interfaces"]) == set(plan["ethernets"])
        assert bond["addresses"] == [f"{fabric.devices[host].inband_ip}/16"]
        # the default route is the VRR address the spine pair owns
        (route,) = bond["routes"]
        assert f"{route['via']}/16" in spine_vrr and route["to"] == "default"
        assert bond["parameters"]["mode"] == "802.3ad"
        assert bond["parameters"]["transmit-hash-policy"] == "layer3+4"
    rules = files["netplan/dgx-h100.rules"]
    assert 'RESULT=="mlx5_2", NAME="inband1"' in rules  # SLOT1/P2, the catalog's RDMA device
    # each rule under the comment naming its port (the twin names its veths from it)
    assert udev_names(rules) == {"SLOT1/P2": "inband1", "SLOT2/P2": "inband2"}, rules


def netplan_generate(root: Path, text: str) -> Path:
    """Install one netplan file under `root` as the README says and run the real `netplan
    generate` on it; the folder of the systemd-networkd files it wrote."""
    config = root / "etc" / "netplan" / "60-fabricc-inband.yaml"
    config.parent.mkdir(parents=True)
    config.write_text(text)
    config.chmod(0o600)
    result = subprocess.run(
        ["netplan", "generate", "--root-dir", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return root / "run" / "systemd" / "network"


def _single_homed(tmp_path: Path) -> tuple[Fabric, dict[str, str]]:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    marker = "    dual_homed: true"
    assert marker in text
    fabric, artifacts = compile_text(text.replace(marker, "    dual_homed: false  #"), tmp_path)
    return fabric, {p: t for p, t in artifacts if isinstance(t, str)}


def test_hosts_the_leaves_bond_nothing_for_get_an_active_backup_bond(tmp_path: Path) -> None:
    """Single-homed (no MLAG pair): the leaves bond none of a host's ports, so LACP would not
    come up; an active-backup bond "does not require any special switch support" (Linux
    bonding.rst) and keeps the host up when one port or cable fails."""
    fabric, files = _single_homed(tmp_path)
    net = management_net(fabric)
    assert net.inband is not None
    cabled: dict[str, set[str]] = {}
    for link in fabric.links:
        if link.network == net.inband.network and link.kind == ENDPOINT_LEAF:
            cabled.setdefault(link.a, set()).add(link.b)
    assert cabled
    for host, leaves in cabled.items():
        plan = yaml.safe_load(files[f"provisioning/netplan/{host}.yaml"])["network"]
        assert len(leaves) == 1  # both ports on one leaf: one subnet
        (bond,) = plan["bonds"].values()
        assert bond["parameters"]["mode"] == "active-backup"
        assert bond["parameters"]["primary"] == "inband1"
        prefixlen, gateway = net.inband.host_gateway(fabric.devices[host].inband_ip or "")
        assert bond["addresses"] == [f"{fabric.devices[host].inband_ip}/{prefixlen}"]
        assert bond["routes"] == [{"to": "default", "via": gateway}]


@pytest.mark.tool
def test_netplan_renders_an_active_backup_bond(tmp_path: Path) -> None:
    require_tool("netplan")
    (tmp_path / "build").mkdir()
    _, files = _single_homed(tmp_path / "build")
    network = netplan_generate(tmp_path, files["provisioning/netplan/dgx001.yaml"])
    assert "Mode=active-backup" in (network / "10-netplan-bond0.netdev").read_text()


@pytest.mark.tool
def test_netplan_renders_an_lacp_bond(tmp_path: Path) -> None:
    require_tool("netplan")
    fabric, _ = compiled("superpod-h100-4su")
    files = provisioning("superpod-h100-4su")
    network = netplan_generate(tmp_path, files["netplan/dgx001.yaml"])
    netdev = (network / "10-netplan-bond0.netdev").read_text()
    assert "Kind=bond" in netdev and "Mode=802.3ad" in netdev
    assert "TransmitHashPolicy=layer3+4" in netdev
    bond = (network / "10-netplan-bond0.network").read_text()
    assert f"Address={fabric.devices['dgx001'].inband_ip}/16" in bond
    assert "Gateway=10.64.0.1" in bond
    for member in ("inband1", "inband2"):
        assert "Bond=bond0" in (network / f"10-netplan-{member}.network").read_text()
