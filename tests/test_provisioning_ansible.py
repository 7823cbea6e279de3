"""Ansible feed: `ansible-inventory --list` reads the generated inventory without a warning, and
the hosts, groups and host vars it reports are the design's: every device, grouped by rack,
scalable unit and role, GPU hosts with one rail entry per compute cable.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.emit.provisioning.ansible import inventory
from fabricc.emit.provisioning.common import compute_networks, is_gpu_host
from fabricc.ir import ENDPOINT_LEAF, EXTERNAL
from tests.provisioning_support import provisioning
from tests.support import EXAMPLE_NAMES, compiled, require_tool


def listed(text: str, folder: Path) -> tuple[dict[str, Any], str]:
    path = folder / "inventory.yaml"
    path.write_text(text)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder),
        "ANSIBLE_LOCAL_TEMP": str(folder / "tmp"),
        "ANSIBLE_INVENTORY_UNPARSED_FAILED": "True",
        "ANSIBLE_INVENTORY_ENABLED": "yaml",
    }
    result = subprocess.run(
        ["ansible-inventory", "-i", str(path), "--list"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def members(data: dict[str, Any], group: str) -> list[str]:
    return sorted(data.get(group, {}).get("hosts", []))


@pytest.mark.tool
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_ansible_reads_the_inventory(example: str, tmp_path: Path) -> None:
    require_tool("ansible-inventory")
    fabric, _ = compiled(example)
    text = provisioning(example)["ansible/inventory.yaml"]
    assert yaml.safe_load(text) == inventory(fabric)  # the hand-written YAML reads back
    data, stderr = listed(text, tmp_path)
    assert "WARNING" not in stderr.upper(), stderr
    hostvars = data["_meta"]["hostvars"]
    # every device but the site network (kind external), which Ansible does not manage
    ours = [d for d in fabric.devices.values() if d.kind != EXTERNAL]
    assert sorted(hostvars) == sorted(d.name for d in ours)
    for rack in fabric.racks:
        assert members(data, f"rack_{rack.name.lower()}") == sorted(rack.devices), rack.name
    sus = {d.su for d in fabric.devices.values() if d.su is not None}
    for su in sus:
        expected = sorted(d.name for d in fabric.devices.values() if d.su == su)
        assert members(data, f"su{su + 1}") == expected
    for name, topology in fabric.networks.items():
        for tier, switches in topology.switches.items():
            assert members(data, f"{name}_{tier}".replace("-", "_")) == sorted(switches)
    for device in ours:
        vars_ = hostvars[device.name]
        address = device.inband_ip if device.kind in ("node", "tray") else device.mgmt_ip
        assert vars_.get("ansible_host") == address, device.name
        assert vars_["rack"] == device.rack if device.rack else "rack" not in vars_
    # one rail per compute cable of a GPU host, naming the leaf port it lands on
    cables = {
        (link.a, link.a_port): (link.b, link.b_port)
        for network in compute_networks(fabric)
        for link in fabric.links_of(network)
        if link.kind == ENDPOINT_LEAF and is_gpu_host(fabric, fabric.devices[link.a])
    }
    listed_rails = {
        (host, rail["port"]): (rail["leaf"], rail["leaf_port"])
        for host, vars_ in hostvars.items()
        for rail in vars_.get("rails", [])
    }
    assert listed_rails == cables and cables


def test_two_plane_rails_name_a_device_per_plane() -> None:
    data = yaml.safe_load(provisioning("spectrum-x-2plane")["ansible/inventory.yaml"])
    rails = data["all"]["hosts"]["b300-01"]["rails"]
    assert len(rails) == 16
    assert len({r["rdma_device"] for r in rails}) == 16
    assert {r["plane"] for r in rails} == {1, 2}
