"""DHCP/ZTP feed: Kea's own parser (`kea-dhcp4 -t`) accepts the generated config; every cabled
management port gets its device's address by circuit-id, and every Ethernet switch fabricc
configures is handed the ZTP file that fetches that config (SONiC option 67, Cumulus 239).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fabricc.ir import MGMT
from tests.provisioning_support import provisioning
from tests.support import EXAMPLE_NAMES, compiled, require_tool


def kea_check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["kea-dhcp4", "-t", str(path)], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.tool
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_kea_accepts_the_config(example: str, tmp_path: Path) -> None:
    require_tool("kea-dhcp4")
    text = provisioning(example)["kea/kea-dhcp4.conf"]
    path = tmp_path / "kea-dhcp4.conf"
    path.write_text(text)
    result = kea_check(path)
    assert result.returncode == 0, result.stdout + result.stderr
    # the check bites: two reservations of one address in a subnet are refused
    config = json.loads(text)
    reservations = config["Dhcp4"]["subnet4"][0]["reservations"]
    reservations[1]["ip-address"] = reservations[0]["ip-address"]
    path.write_text(json.dumps(config))
    assert kea_check(path).returncode != 0


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_management_port_is_reserved(example: str) -> None:
    fabric, _ = compiled(example)
    files = provisioning(example)
    config = json.loads(files["kea/kea-dhcp4.conf"])["Dhcp4"]
    assert "circuit-id" in config["host-reservation-identifiers"]
    (subnet,) = config["subnet4"]
    by_ip = {r["ip-address"]: r for r in subnet["reservations"]}
    cabled = [
        fabric.devices[link.a]
        for link in fabric.links
        if link.kind == MGMT and fabric.devices[link.a].mgmt_ip is not None
    ]
    assert sorted(by_ip) == sorted(str(d.mgmt_ip) for d in cabled)
    ids = [r["circuit-id"] for r in subnet["reservations"]]
    assert len(set(ids)) == len(ids)
    for device in cabled:
        entry = by_ip[str(device.mgmt_ip)]
        assert entry["hostname"].startswith(device.name)
        if (
            device.kind != "switch"
            or fabric.loaded.networks[str(device.network)].fabric != "ethernet"
        ):
            assert "option-data" not in entry
            continue
        os = fabric.loaded.networks[str(device.network)].spec.os
        (option,) = entry["option-data"]
        if os == "sonic":
            assert option["name"] == "boot-file-name"  # option 67: the ztp.json URL
            ztp = json.loads(files[f"ztp/{device.name}/ztp.json"])
            source = ztp["ztp"]["configdb-json"]["url"]["source"]
            assert source.endswith(f"/configs/{device.name}/config_db.json")
        else:
            assert option["code"] == 239  # Cumulus ZTP script URL
            script = files[f"ztp/{device.name}/ztp.sh"]
            assert "# CUMULUS-AUTOPROVISIONING" in script
            assert f"/configs/{device.name}/startup.yaml" in script
        assert option["data"].endswith(
            f"/provisioning/ztp/{device.name}/" + ("ztp.json" if os == "sonic" else "ztp.sh")
        )


def test_circuit_ids_name_the_access_port_as_cumulus_does() -> None:
    config = json.loads(provisioning("roce-lab")["kea/kea-dhcp4.conf"])["Dhcp4"]
    gpu01 = next(r for r in config["subnet4"][0]["reservations"] if r["hostname"] == "gpu01-bmc")
    # cables.csv: gpu01:BMC > oob-gpu-leaf001:3
    assert gpu01["circuit-id"] == "'oob-gpu-leaf001:swp3'"
