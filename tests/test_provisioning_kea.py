"""DHCP/ZTP feed: Kea's own parser (`kea-dhcp4 -t`) accepts the generated config; every access
switch's subnet is one Kea subnet routed by that switch; every cabled management port gets its
device's address by the circuit-id its access switch's relay adds, and every Ethernet switch
fabricc configures is handed the ZTP file that fetches that config (SONiC option 67, Cumulus
239). tests/test_kea_relay.py runs it with a relay and a client in network namespaces.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from fabricc.emit.configs import avd
from fabricc.ir import MGMT
from fabricc.synth.mgmtnet import management_net
from fabricc.synth.switchos import has_config
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
    reservations = next(s for s in config["Dhcp4"]["subnet4"] if len(s["reservations"]) > 1)[
        "reservations"
    ]
    reservations[1]["ip-address"] = reservations[0]["ip-address"]
    path.write_text(json.dumps(config))
    assert kea_check(path).returncode != 0


def check_ztp_script(script: str) -> None:
    """The Cumulus ZTP page's hygiene: output logged, failures trapped, the release checked, the
    default password replaced by a hash - and bash parses the script."""
    assert "exec >>/var/log/autoprovision 2>&1" in script
    assert "trap error ERR" in script
    assert "/etc/lsb-release" in script and "TARGET_RELEASE=5." in script
    assert 'echo "cumulus:$HASH" | chpasswd -e' in script
    result = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_management_port_is_reserved(example: str) -> None:
    fabric, _ = compiled(example)
    files = provisioning(example)
    config = json.loads(files["kea/kea-dhcp4.conf"])["Dhcp4"]
    assert "circuit-id" in config["host-reservation-identifiers"]
    net = management_net(fabric)
    subnets = {s["subnet"]: s for s in config["subnet4"]}
    # each access switch's subnet, and the /31 of each management tree's root cabled to an
    # in-band switch (synth/rootlinks.py), reserved by that switch's port
    roots = {str(r.network): (root, r) for root, r in net.root_links.items()}
    assert sorted(subnets) == sorted([*(str(a.network) for a in net.subnets.values()), *roots])
    for prefix, (root, r) in roots.items():
        assert subnets[prefix]["option-data"] == [{"name": "routers", "data": r.relay}]
        [entry] = subnets[prefix]["reservations"]
        assert (entry["circuit-id"], entry["ip-address"]) == (f"'swp{r.port}'", r.address)
        assert entry["hostname"] == root and fabric.devices[root].mgmt_ip == r.address
    by_ip: dict[str, dict[str, Any]] = {}
    for access in net.subnets.values():
        subnet = subnets[str(access.network)]
        # the access switch routes its subnet: the devices' router
        assert subnet["option-data"] == [{"name": "routers", "data": access.gateway}]
        # the pool lies after the last port's address: it never hands out a reserved one
        if access.pool is not None:
            first, last = (
                ipaddress.IPv4Address(a.strip()) for a in subnet["pools"][0]["pool"].split("-")
            )
            assert first in access.network and last in access.network
            reserved = [ipaddress.IPv4Address(r["ip-address"]) for r in subnet["reservations"]]
            assert all(r < first for r in reserved)
        ids = [r["circuit-id"] for r in subnet["reservations"]]
        assert len(set(ids)) == len(ids)
        for r in subnet["reservations"]:
            assert ipaddress.ip_address(r["ip-address"]) in access.network
            by_ip[r["ip-address"]] = r
    links = [
        link
        for link in fabric.links
        if link.kind == MGMT and fabric.devices[link.a].mgmt_ip and link.b in net.subnets
    ]
    # every cable a reservation: the access switch's address + the port, keyed by the port as
    # Cumulus names it (swp<port>); a device's own address is that of its first cable
    addresses = {
        str(ipaddress.IPv4Address(net.subnets[link.b].gateway) + int(link.b_port)): link
        for link in links
    }
    assert sorted(by_ip) == sorted(addresses)
    for address, link in addresses.items():
        assert by_ip[address]["circuit-id"] == f"'swp{link.b_port}'"
    cabled = list({link.a: fabric.devices[link.a] for link in links}.values())
    assert all(str(d.mgmt_ip) in by_ip for d in cabled)
    for device in cabled:
        entry = by_ip[str(device.mgmt_ip)]
        assert entry["hostname"].startswith(device.name)
        if (
            device.kind != "switch"
            or fabric.loaded.networks[str(device.network)].fabric != "ethernet"
            or not has_config(fabric, device)  # its model names no OS: no file to boot
        ):
            assert "option-data" not in entry
            continue
        os = fabric.loaded.networks[str(device.network)].spec.os
        if os == "eos" and not avd.available():
            assert "option-data" not in entry  # no startup-config to install without pyavd
            continue
        (option,) = entry["option-data"]
        if os == "eos":
            assert option["name"] == "boot-file-name"  # option 67: the EOS boot script URL
            script = files[f"ztp/{device.name}/bootstrap"]
            assert script.startswith("#!/bin/bash\n")
            assert f"/configs/{device.name}/startup-config'" in script
        elif os == "sonic":
            assert option["name"] == "boot-file-name"  # option 67: the ztp.json URL
            ztp = json.loads(files[f"ztp/{device.name}/ztp.json"])
            source = ztp["ztp"]["configdb-json"]["url"]["source"]
            assert source.endswith(f"/configs/{device.name}/config_db.json")
        else:
            assert option["code"] == 239  # Cumulus ZTP script URL
            script = files[f"ztp/{device.name}/ztp.sh"]
            assert script.splitlines()[1] == "# CUMULUS-AUTOPROVISIONING"
            check_ztp_script(script)
            assert f"/configs/{device.name}/startup.yaml" in script
        ztp_file = {"sonic": "ztp.json", "eos": "bootstrap"}.get(os, "ztp.sh")
        assert option["data"].endswith(f"/provisioning/ztp/{device.name}/{ztp_file}")


def test_circuit_ids_name_the_access_port_as_cumulus_does() -> None:
    config = json.loads(provisioning("roce-lab")["kea/kea-dhcp4.conf"])["Dhcp4"]
    reservations = [r for s in config["subnet4"] for r in s["reservations"]]
    gpu01 = next(r for r in reservations if r["hostname"] == "gpu01-bmc")
    # cables.csv: gpu01:BMC > oob-gpu-leaf001:3; Cumulus's relay with use-pif-circuit-id sends
    # the port's name, the subnet (picked by the relay's address) tells the switch
    assert gpu01["circuit-id"] == "'swp3'"


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_ztp_switch_gets_its_script(example: str) -> None:
    """A switch with a ZTP file gets it by DHCP (a reservation with its URL) or is a seed,
    bootstrapped first from a USB drive (seeds.txt). Of the access switches only the roots of
    the management trees (their management port cabled to no other access switch) are seeds:
    every other one is cabled to a relaying access switch and gets its script by DHCP (issue
    41: no USB drive per access switch)."""
    fabric, _ = compiled(example)
    files = provisioning(example)
    scripts = {p.split("/")[1] for p in files if p.startswith("ztp/") and p.count("/") == 2}
    if not scripts:
        return
    config = json.loads(files["kea/kea-dhcp4.conf"])["Dhcp4"]
    handed = {
        r["option-data"][0]["data"].split("/")[-2]
        for s in config["subnet4"]
        for r in s["reservations"]
        if "option-data" in r
    }
    seeds = {
        line.split("\t")[0]
        for line in files["ztp/seeds.txt"].splitlines()
        if line[:1] != "#" and "\tby hand\t" not in line
    }
    assert scripts <= handed | seeds
    net = management_net(fabric)
    # access switches whose model names no OS get no script: seeds.txt lists them by hand
    configured = {s for s in net.subnets if has_config(fabric, fabric.devices[s])}
    # (a root cabled to an in-band switch that relays for it gets its script by DHCP too)
    roots = {s for s in configured if s not in net.served_by and s not in net.root_links}
    assert roots <= seeds
    assert configured - roots <= handed - seeds
    assert len(roots) <= 2 + len(net.subnets) // 3  # a few, not one per access switch


def test_nvlink_switch_trays_have_three_management_cables() -> None:
    """ComE1, ComE2 and BMC of every NVLink switch tray go to the rack's access switch (Mission
    Control North-South guide, NVLink Switch physical connectivity), each with a reservation."""
    fabric, _ = compiled("gb300-nvl72-spectrum-x")
    config = json.loads(provisioning("gb300-nvl72-spectrum-x")["kea/kea-dhcp4.conf"])["Dhcp4"]
    names = {r["hostname"] for s in config["subnet4"] for r in s["reservations"]}
    trays = [d for d in fabric.devices.values() if d.kind == "nvlink-switch"]
    assert len(trays) == 8 * 9
    for tray in trays:
        ports = sorted(
            link.a_port for link in fabric.links if link.kind == MGMT and link.a == tray.name
        )
        assert ports == ["BMC", "ComE1", "ComE2"]
        assert {tray.name, f"{tray.name}-come2", f"{tray.name}-bmc"} <= names


def _sonic_ztp_files(example: str) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(switch, its ztp.json, every file of the build by path) per SONiC switch with ZTP."""
    _, artifacts = compiled(example)
    files = {path: str(text) for path, text in artifacts}
    return [
        (path.split("/")[2], json.loads(text), files)
        for path, text in sorted(files.items())
        if path.startswith("provisioning/ztp/") and path.endswith("/ztp.json")
    ]


def _built(files: dict[str, str], url: str) -> str:
    """The build's file a provisioning-server URL names (http://<server>/fabricc/<path>)."""
    assert url.startswith("http://") and "/fabricc/" in url, url
    path = url.partition("/fabricc/")[2]
    assert path in files, f"{url}: no such file in the build"
    return files[path]


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_sonic_ztp_installs_the_switch_frr_conf(example: str) -> None:
    """config_db.json sets docker_routing_config_mode split-unified, where bgp reads
    /etc/sonic/frr/frr.conf as written: ZTP must put the generated frr.conf there and restart
    bgp, after the configdb-json section (sections run in lexical order of their names, SONiC
    doc/ztp/ztp.md); the plugin it downloads and the frr.conf that fetches are in the build."""
    for switch, ztp, files in _sonic_ztp_files(example):
        db = json.loads(files[f"configs/{switch}/config_db.json"])
        assert db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
        sections = sorted(k for k, v in ztp["ztp"].items() if isinstance(v, dict))
        assert sections[0] == "configdb-json", sections
        plugins = {
            s: _built(files, ztp["ztp"][s]["plugin"]["url"]["source"])
            for s in sections
            if "url" in ztp["ztp"][s].get("plugin", {})
        }
        installers = [s for s, text in plugins.items() if "/etc/sonic/frr/frr.conf" in text]
        assert len(installers) == 1, f"{switch}: no ZTP section installs frr.conf"
        plugin = plugins[installers[0]]
        assert plugin.startswith("#!/bin/bash\n") and "set -euo pipefail" in plugin
        fetch = next(line for line in plugin.splitlines() if line.startswith("curl "))
        url = fetch.split("'")[1]
        assert _built(files, url) == files[f"configs/{switch}/frr.conf"]
        assert "/etc/sonic/frr/frr.conf" in plugin.split(url)[1]
        assert plugin.rstrip().endswith("systemctl restart bgp")


BASE_CUMULUS = "superpod-h100-4su"  # Cumulus switches that boot by DHCP


def _run_ztp(script: str, release: str, tmp_path: Path) -> tuple[int, list[str]]:
    """Run a Cumulus ztp.sh as ZTP would over DHCP on a switch running `release`, with its
    switch commands stubbed (each records its arguments): exit code, commands run."""
    root = tmp_path / release
    (root / "bin").mkdir(parents=True)
    calls = root / "calls"
    for tool in ("onie-install", "reboot", "curl", "nv", "chpasswd"):
        stub = root / "bin" / tool
        # chpasswd reads its input, as the real one does: a stub that exits first would break
        # the pipe into it (`echo ... | chpasswd -e` under pipefail), depending on who runs first
        reads = "cat >/dev/null\n" if tool == "chpasswd" else ""
        stub.write_text(f'#!/bin/sh\n{reads}echo "{tool}${{*:+ $*}}" >>{calls}\n')
        stub.chmod(0o755)
    (root / "lsb-release").write_text(f"DISTRIB_ID=Cumulus Linux\nDISTRIB_RELEASE={release}\n")
    text = (
        script.replace("/etc/lsb-release", str(root / "lsb-release"))
        .replace("/var/log/autoprovision", str(root / "log"))
        .replace("/tmp/startup.yaml", str(root / "startup.yaml"))
    )
    env = {"PATH": f"{root / 'bin'}:/usr/bin:/bin"}
    result = subprocess.run(
        ["bash", "-c", text], env=env, stdin=subprocess.DEVNULL, timeout=30, check=False
    )
    ran = calls.read_text().splitlines() if calls.exists() else []
    return result.returncode, ran


def test_cumulus_ztp_installs_the_target_release_on_another_one(tmp_path: Path) -> None:
    """Cumulus "Zero Touch Provisioning - ZTP", "Check the Cumulus Linux Release": on another
    release the script installs the target one (onie-install with this script as the ZTP URL
    of the new install) and reboots, exit 0 - not exit 1; on the target release (any patch
    level) it applies startup.yaml and installs nothing."""
    files = provisioning(BASE_CUMULUS)
    path = "ztp/inband-leaf003/ztp.sh"
    script = files[path]
    target = next(line for line in script.splitlines() if line.startswith("TARGET_RELEASE="))
    target = target.partition("=")[2]
    major, minor = (int(part) for part in target.split("."))
    other = f"{major}.{minor - 1}.0"
    code, ran = _run_ztp(script, other, tmp_path)
    assert code == 0, ran
    (install,) = [c for c in ran if c.startswith("onie-install ")]
    assert install.startswith("onie-install -fa -i http://")
    assert f"/cumulus-linux-{target}-mlx-amd64.bin -z http://" in install
    assert install.endswith(f"/fabricc/provisioning/{path}")
    assert ran[-1] == "reboot" and not any(c.startswith("nv ") for c in ran)
    code, ran = _run_ztp(script, f"{target}.1", tmp_path)
    assert code == 0, ran
    assert not any(c.startswith(("onie-install", "reboot")) for c in ran)
    assert ran[-1] == "nv config apply --assume-yes"
