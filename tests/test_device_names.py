"""Every output that names a node's NIC devices names the same device for the same port.

Per node model of each example (DGX H100, GB200 and GB300 trays, HGX B300, the lab server):
NCCL_IB_HCA of nccl/<model>.env, the <net> names of nccl/<model>.xml, the rails of the Ansible
inventory, the Kubernetes rail udev rules and the netplan in-band udev rules are read back and
compared with each other and with the catalog port that carries them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.catalog.loader import load_catalog
from fabricc.catalog.models import NodeModel
from fabricc.errors import FabriccError
from fabricc.ir import Fabric
from tests.support import EXAMPLES as EXAMPLE_DIR
from tests.support import ROOT, compile_text, compiled

EXAMPLES = (
    "gb200-nvl72-su",
    "gb300-nvl72-xdr",
    "gb300-nvl72-spectrum-x",
    "mixed-gb200-gb300",
    "superpod-h100-4su",
    "spectrum-x-2plane",
    "roce-lab",
)
RULE = re.compile(
    r'(?:KERNELS=="(?P<pci>[^"]+)"|RESULT=="(?P<rdma>[^"]+)"), NAME="(?P<name>[^"]+)"'
)


def _rules(text: str) -> dict[str, tuple[str, str]]:
    """udev rules -> interface name -> ('pci' or 'rdma', the value matched)."""
    out: dict[str, tuple[str, str]] = {}
    for match in RULE.finditer(text):
        kind = "pci" if match["pci"] else "rdma"
        out[match["name"]] = (kind, match[kind])
    return out


def _function(fabric: Fabric, model: str, rdma: str) -> str | None:
    """PCI address of the function the catalog gives the RDMA device (port or host topology)."""
    node = fabric.loaded.catalog.catalog.nodes[model]
    for port in node.ports:
        for name, pci in (
            (port.rdma_device, port.pci),
            *((g.rdma_device, g.pci) for g in port.leg_devices),
        ):
            if name == rdma and pci is not None:
                return pci
    topology = fabric.loaded.catalog.catalog.host_topologies.get(model)
    nic = topology.nic_nodes().get(rdma) if topology is not None else None
    return nic.busid if nic is not None else None


def _same_function(fabric: Fabric, model: str, rule: tuple[str, str], rdma: str) -> bool:
    kind, value = rule
    return value == rdma if kind == "rdma" else value == _function(fabric, model, rdma)


@pytest.mark.parametrize("example", EXAMPLES)
def test_outputs_name_the_same_devices_for_the_same_ports(example: str) -> None:
    fabric, artifacts = compiled(example)
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    catalog = fabric.loaded.catalog.catalog
    inventory = yaml.safe_load(files["provisioning/ansible/inventory.yaml"])
    hosts: dict[str, dict[str, Any]] = {}

    def walk(group: dict[str, Any]) -> None:
        for name, host in (group.get("hosts") or {}).items():
            if host:  # a group lists its members by name only
                hosts[name] = host
        for child in (group.get("children") or {}).values():
            walk(child)

    for group in inventory.values():
        walk(group)
    rails_of: dict[str, dict[str, str]] = {}  # model -> port -> rdma device (Ansible)
    for host in hosts.values():
        for rail in host.get("rails") or []:
            model = str(host["model"])
            found = rails_of.setdefault(model, {}).setdefault(rail["port"], rail["rdma_device"])
            assert found == rail["rdma_device"], (model, rail)
    assert rails_of, "no rails in the inventory"
    checked = 0
    for model, rails in sorted(rails_of.items()):
        node: NodeModel = catalog.nodes[model]
        for port, rdma in rails.items():
            assert node.port_devices(port)[0] == rdma, (model, port)
        devices = set(rails.values())
        env = files.get(f"nccl/{model}.env")
        if env is not None:
            (hca,) = re.findall(r"^NCCL_IB_HCA==(.*)$", env, re.MULTILINE)
            assert set(hca.split(",")) == devices, model
        xml = files.get(f"nccl/{model}.xml")
        if xml is not None:
            assert set(re.findall(r'<net name="([^"]+)"', xml)) == devices, model
        rules = _rules(files[f"provisioning/k8s/udev/{model}.rules"])
        for rdma in devices:
            assert any(_same_function(fabric, model, r, rdma) for r in rules.values()), (
                model,
                rdma,
            )
        inband = files.get(f"provisioning/netplan/{model}.rules")
        if inband is not None:
            named = _rules(inband)
            ports = [p for p in node.ports if p.role == "inband"]
            for rule in named.values():
                # an in-band rule never takes a rail's function
                assert not any(_same_function(fabric, model, rule, rdma) for rdma in devices), rule
                assert any(
                    rule == ("pci", p.pci) or rule == ("rdma", p.rdma_device) for p in ports
                ), rule
        checked += 1
    assert checked


def test_gb200_tray_names_follow_the_mission_control_table() -> None:
    """NVIDIA Mission Control North-South Network GB200 Deployment Guide 2.3.0, Compute Tray
    Network Ports: OSFP at 0000/0002/0010/0012:03:00.0 = mlx5_0, mlx5_1, mlx5_4, mlx5_5;
    BlueField-3 at 0006:03:00.0/.1 = mlx5_2/mlx5_3 and 0016:03:00.0/.1 = mlx5_6/mlx5_7."""
    fabric, artifacts = compiled("gb200-nvl72-su")
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    assert "NCCL_IB_HCA==mlx5_0,mlx5_1,mlx5_4,mlx5_5\n" in files["nccl/gb200-compute-tray.env"]
    node = fabric.loaded.catalog.catalog.nodes["gb200-compute-tray"]
    table = {
        "0000:03:00.0": "mlx5_0",
        "0002:03:00.0": "mlx5_1",
        "0006:03:00.0": "mlx5_2",
        "0006:03:00.1": "mlx5_3",
        "0010:03:00.0": "mlx5_4",
        "0012:03:00.0": "mlx5_5",
        "0016:03:00.0": "mlx5_6",
        "0016:03:00.1": "mlx5_7",
    }
    assert {p.pci: p.rdma_device for p in node.ports if p.pci} == table
    # the kernel numbers them in PCI address order
    assert [table[a] for a in sorted(table)] == [f"mlx5_{i}" for i in range(8)]
    rails = _rules(files["provisioning/k8s/udev/gb200-compute-tray.rules"])
    assert sorted(v for _, v in rails.values()) == [
        "0000:03:00.0",
        "0002:03:00.0",
        "0010:03:00.0",
        "0012:03:00.0",
    ]
    inband = _rules(files["provisioning/netplan/gb200-compute-tray.rules"])
    assert sorted(v for _, v in inband.values()) == ["0006:03:00.1", "0016:03:00.1"]


def test_ipoib_in_band_ports_bond_active_backup_only(tmp_path: Path) -> None:
    """In-band over InfiniBand: every host bond is active-backup (the bonding driver enslaves
    IPoIB interfaces in no other mode, Linux commit 1533e773), decided by the ports' type."""
    text = (EXAMPLE_DIR / "superpod-h100-4su.yaml").read_text()
    for old, new in (
        ("    dual_homed: true", "    fabric: infiniband  #"),
        ("    endpoints: {dgx: {}, ufm: {}, mgmt: {}}", "    endpoints: {dgx: {}}"),
        ("    uplink_to: inband\n", ""),
    ):
        assert old in text
        text = text.replace(old, new)
    # the in-band border links are Ethernet (site_uplinks): not on an InfiniBand in-band network
    border = text.index("    site_uplinks:")
    text = text[:border] + text[text.index("  oob:", border) :]
    _, artifacts = compile_text(text, tmp_path)
    plans = [
        yaml.safe_load(t)["network"]
        for p, t in artifacts
        if p.startswith("provisioning/netplan/") and p.endswith(".yaml") and isinstance(t, str)
    ]
    modes = [
        bond["parameters"]["mode"] for plan in plans for bond in plan.get("bonds", {}).values()
    ]
    assert modes
    assert set(modes) == {"active-backup"}


def _tray_catalog(tmp_path: Path, change: dict[str, str]) -> Path:
    """A user catalog whose gb200-compute-tray gives some ports other PCI addresses."""
    data = yaml.safe_load((ROOT / "fabricc/catalog/data/nodes.yaml").read_text())
    tray = data["nodes"]["gb200-compute-tray"]
    for port in tray["ports"]:
        if port["name"] in change:
            port["pci"] = change[port["name"]]
    path = tmp_path / "site.yaml"
    path.write_text(yaml.safe_dump({"nodes": {"gb200-compute-tray": tray}}))
    return path


def test_a_port_address_must_match_the_host_topology(tmp_path: Path) -> None:
    path = _tray_catalog(tmp_path, {"OSFP3": "0011:03:00.0"})
    with pytest.raises(FabriccError) as caught:
        load_catalog([(path, "site.yaml")])
    assert "port OSFP3 gives mlx5_4 the PCI address 0011:03:00.0" in str(caught.value)


def test_a_pci_address_is_given_once(tmp_path: Path) -> None:
    path = _tray_catalog(tmp_path, {"BF3-2/P1": "0006:03:00.0"})
    with pytest.raises(FabriccError) as caught:
        load_catalog([(path, "site.yaml")])
    assert "ports share the PCI addresses 0006:03:00.0" in str(caught.value)
