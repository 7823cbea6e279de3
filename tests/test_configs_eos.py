"""Arista EOS (os: eos): every AVD structured config passes pyavd's own schema validation with no
violation, renders with pyavd, and the rendered CLI - not the dict, since pyavd drops unknown keys
silently - carries the design: per switch its ASN, router id, one BGP session per switch-to-switch
cable to the far end's ASN (by interface when unnumbered, by the far address when numbered), ECMP
over them, the host /31s announced, and the lossless RoCE QoS of the network (DSCP -> traffic
class, PFC no-drop on the RoCE priority, ECN thresholds on its queue, CNP strict)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricc.emit.configs import avd
from fabricc.emit.configs.eos_files import notices
from fabricc.emit.configs.ports import eos_lanes, eos_name
from fabricc.emit.configs.qos import QosPlan, qos_plan
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, Fabric
from tests.configs_support import CUSTOM_QOS, by_path
from tests.support import EXAMPLES, compile_text, compiled, require_pyavd

SWITCH_LINKS = (LEAF_SPINE, SPINE_CORE)


def two_plane_text() -> str:
    """examples/spectrum-x-2plane.yaml on Arista 7060X6-64PE leaves and spines with EOS."""
    text = (EXAMPLES / "spectrum-x-2plane.yaml").read_text()
    assert "    os: cumulus\n" in text
    return text.replace(
        "    os: cumulus\n",
        "    os: eos\n    switches: {leaf: dcs-7060x6-64pe, spine: dcs-7060x6-64pe}\n",
    )


def numbered_text() -> str:
    return (EXAMPLES / "roce-lab-eos.yaml").read_text() + "\naddressing:\n  p2p: 10.255.0.0/24\n"


def blocks(cli: str) -> dict[str, list[str]]:
    """Top-level EOS CLI sections: the unindented line -> its indented lines, stripped."""
    out: dict[str, list[str]] = {}
    current: list[str] = []
    for line in cli.splitlines():
        if not line.strip() or line.strip() == "!":
            continue
        if line[0] != " ":
            current = out.setdefault(line, [])
        else:
            current.append(line.strip())
    return out


def eos_switches(fabric: Fabric) -> list[str]:
    return sorted(
        d.name
        for d in fabric.devices.values()
        if d.kind == "switch"
        and d.network is not None
        and fabric.loaded.networks[d.network].fabric == "ethernet"
        and fabric.loaded.networks[d.network].spec.os == "eos"
    )


def tx_queue(profile: list[str], queue: int) -> list[str]:
    """The lines of one tx-queue of a QoS profile (up to the next tx-queue)."""
    start = profile.index(f"tx-queue {queue}") + 1
    end = next((i for i in range(start, len(profile)) if profile[i].startswith("tx-queue")), None)
    return profile[start:end]


def check_switch(fabric: Fabric, name: str, cli: str, plan: QosPlan) -> None:
    """The rendered CLI of one switch against the design (the IR's links, ASNs and addresses)."""
    device = fabric.devices[name]
    assert device.network is not None
    mtu = fabric.loaded.networks[device.network].spec.port_mtu
    assert mtu == 9214  # the examples' 9216, capped at EOS's most
    sections = blocks(cli)
    assert f"hostname {name}" in sections
    # far end of every routed interface, read from its description ("<device>:<port>")
    far_of: dict[str, str] = {}
    for header, lines in sections.items():
        if header.startswith("interface Ethernet"):
            described = [line.split(" ", 1)[1] for line in lines if line.startswith("description")]
            far_of[header.split()[1]] = described[0].split(":")[0]
            # every data port: routed, the network's MTU (capped at EOS's 9214), the RoCE profile
            assert "no switchport" in lines and "service-profile ROCE" in lines, header
            assert f"mtu {mtu}" in lines, header

    # what the design says: switch links (far device, far address when numbered), host /31s
    want_far: Counter[str] = Counter()
    want_numbered: dict[str, str] = {}
    host_networks: set[str] = set()
    for link in fabric.links_of(device.network or ""):
        if name not in (link.a, link.b):
            continue
        mine_a = link.a == name
        far = link.b if mine_a else link.a
        far_ip = link.b_ip if mine_a else link.a_ip
        if link.kind in SWITCH_LINKS:
            want_far[far] += 1
            if far_ip is not None:
                want_numbered[far_ip] = far
        elif link.kind == ENDPOINT_LEAF and not mine_a:
            local = link.b_ip
            assert local is not None
            last = int(local.rsplit(".", 1)[1]) & ~1
            host_networks.add(f"{local.rsplit('.', 1)[0]}.{last}/31")

    [bgp_header] = [h for h in sections if h.startswith("router bgp ")]
    assert bgp_header == f"router bgp {device.asn}"
    bgp = sections[bgp_header]
    assert f"router-id {device.loopback}" in bgp
    width = sum(want_far.values())
    assert f"maximum-paths {width} ecmp {width}" in bgp
    got_far: Counter[str] = Counter()
    for line in bgp:
        found = re.fullmatch(r"neighbor interface (\S+) peer-group FABRIC remote-as (\d+)", line)
        if found:
            far = far_of[found[1]]
            assert int(found[2]) == fabric.devices[far].asn, line
            got_far[far] += 1
    for address, far in want_numbered.items():
        assert f"neighbor {address} peer group FABRIC" in bgp
        assert f"neighbor {address} remote-as {fabric.devices[far].asn}" in bgp
        got_far[far] += 1
    assert got_far == want_far
    if want_numbered:
        assert not any(line.startswith("neighbor interface") for line in bgp)
    else:
        assert "neighbor FABRIC next-hop address-family ipv6 originate" in bgp
        assert "ip routing ipv6 interfaces" in sections
    assert "neighbor FABRIC activate" in bgp
    announced = {line.split()[1] for line in bgp if line.startswith("network ")}
    assert announced == {f"{device.loopback}/32", *host_networks}

    # QoS: every DSCP mapped, RoCE and CNP to their classes, the rest to class 0
    dscp_class: dict[int, int] = {}
    for header in sections:
        found = re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", header)
        if found:
            for dscp in found[1].split():
                assert int(dscp) not in dscp_class
                dscp_class[int(dscp)] = int(found[2])
    assert sorted(dscp_class) == list(range(64))
    for dscp, traffic_class in dscp_class.items():
        want = {plan.roce_dscp: plan.roce_priority, plan.cnp_dscp: plan.cnp_priority}.get(dscp, 0)
        assert traffic_class == want, dscp
    profile = sections["qos profile ROCE"]
    assert "qos trust dscp" in profile and "priority-flow-control on" in profile
    no_drop = [line for line in profile if line.endswith(" no-drop")]
    assert no_drop == [f"priority-flow-control priority {plan.pfc_priority} no-drop"]
    assert tx_queue(profile, plan.roce_priority) == [
        "no priority",
        f"bandwidth percent {plan.roce_weight}",
        f"random-detect ecn minimum-threshold {plan.ecn_min_kb} kbytes maximum-threshold "
        f"{plan.ecn_max_kb} kbytes max-mark-probability {plan.ecn_probability}",
    ]
    assert tx_queue(profile, plan.cnp_priority) == ["priority strict"]


def check_build(fabric: Fabric, files: dict[str, str]) -> int:
    switches = eos_switches(fabric)
    assert switches
    for name in switches:
        structured: dict[str, Any] = yaml.safe_load(files[f"configs/{name}/structured_config.yaml"])
        assert avd.violations(structured) == []
        cli = files[f"configs/{name}/startup-config"]
        assert avd.eos_cli(name, structured) == cli
        device = fabric.devices[name]
        assert device.network is not None
        check_switch(fabric, name, cli, qos_plan(fabric, device.network))
    return len(switches)


def test_roce_lab_eos_validates_and_matches_the_design() -> None:
    require_pyavd()
    fabric, artifacts = compiled("roce-lab-eos")
    files = by_path(artifacts)
    assert check_build(fabric, files) == 4
    # the hosts send no frame the leaves drop: their NIC MTU is the leaves' (9214, not 9216)
    for host in ("gpu01", "gpu02", "gpu03", "gpu04"):
        lines = [line.split() for line in files[f"configs/hosts/{host}.sh"].splitlines()]
        mtus = {fields[9] for fields in lines if len(fields) > 9 and fields[1].startswith("IF_")}
        assert mtus == {"9214"}, host


def test_two_plane_eos_fabric_validates_and_matches_the_design(tmp_path: Path) -> None:
    require_pyavd()
    fabric, artifacts = compile_text(two_plane_text(), tmp_path)
    assert check_build(fabric, by_path(artifacts)) == 24  # 2 planes x (8 leaves + 4 spines)


def test_three_tier_eos_fabric_validates_and_matches_the_design(tmp_path: Path) -> None:
    """megascale-roce (leaves, spines and cores of 64 x 400G QSFP-DD from its site catalog) on
    EOS: the spine-core sessions too, on 8-lane 400G ports."""
    require_pyavd()
    shutil.copytree(EXAMPLES / "megascale", tmp_path / "megascale")
    # the site catalog's Tomahawk-4 box is the Arista 7060DX5-64S: it runs EOS too
    site = tmp_path / "megascale" / "site-catalog.yaml"
    catalog = site.read_text()
    sonic = "    operating_systems:\n      - {os: sonic,"
    assert sonic in catalog
    site.write_text(
        catalog.replace(
            sonic,
            "    operating_systems:\n      - {os: eos, platform: DCS-7060DX5-64S, "
            'source: "Arista 7060X5 series data sheet"}\n      - {os: sonic,',
        )
    )
    text = (EXAMPLES / "megascale-roce.yaml").read_text()
    assert "    tiers: 3\n" in text and "\n    os: sonic " in text
    fabric, artifacts = compile_text(text.replace("\n    os: sonic ", "\n    os: eos "), tmp_path)
    assert any(link.kind == SPINE_CORE for link in fabric.links)
    assert check_build(fabric, by_path(artifacts)) == 40


def test_numbered_links_peer_by_address(tmp_path: Path) -> None:
    require_pyavd()
    fabric, artifacts = compile_text(numbered_text(), tmp_path)
    files = by_path(artifacts)
    assert check_build(fabric, files) == 4
    assert "ipv6 enable" not in files["configs/fabric-leaf001/startup-config"]


def test_custom_qos_reaches_the_cli(tmp_path: Path) -> None:
    require_pyavd()
    text = (
        (EXAMPLES / "roce-lab-eos.yaml")
        .read_text()
        .replace("    os: eos\n", "    os: eos\n" + CUSTOM_QOS)
    )
    fabric, artifacts = compile_text(text, tmp_path)
    plan = qos_plan(fabric, "fabric")
    assert (plan.roce_dscp, plan.pfc_priority, plan.cnp_priority) == (24, 5, 7)
    assert check_build(fabric, by_path(artifacts)) == 4


def test_same_spec_same_bytes(tmp_path: Path) -> None:
    require_pyavd()
    text = (EXAMPLES / "roce-lab-eos.yaml").read_text()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = by_path(compile_text(text, tmp_path / "a")[1])
    second = by_path(compile_text(text, tmp_path / "b")[1])
    eos = [p for p in first if p.startswith("configs/fabric-")]
    assert eos and all(first[p] == second[p] for p in eos)
    for path in eos:
        assert str(tmp_path) not in first[path] and "/tmp" not in first[path]


def test_ztp_hands_eos_switches_a_boot_script() -> None:
    require_pyavd()
    fabric, artifacts = compiled("roce-lab-eos")
    files = by_path(artifacts)
    kea = files["provisioning/kea/kea-dhcp4.conf"]
    for name in eos_switches(fabric):
        script = files[f"provisioning/ztp/{name}/bootstrap"]
        assert script.startswith("#!/bin/bash\n")
        url = f"http://[\\d.]+/fabricc/configs/{name}/startup-config"
        assert re.search(rf"^curl -fsS -o /tmp/startup-config '{url}'$", script, re.M)
        users = "http://[\\d.]+/fabricc/provisioning/ztp/eos-users.cfg"
        assert re.search(rf"^curl -fsS -o /tmp/eos-users.cfg '{users}'$", script, re.M)
        assert script.rstrip().endswith("/mnt/flash/startup-config")
        boot = f"/fabricc/provisioning/ztp/{name}/bootstrap"
        assert re.search(rf'"name": "boot-file-name",\s+"data": "http://[\d.]+{boot}"', kea)


FAKE_CURL = """#!/bin/sh
# curl -fsS -o FILE URL, served from the build folder $SERVED (URL path after /fabricc/)
out=$3; url=$4
cp "$SERVED/${url#*/fabricc/}" "$out" 2>/dev/null || exit 22
"""


def test_the_boot_script_installs_accounts_and_startup_config(tmp_path: Path) -> None:
    """The boot script run as ZTP runs it (bash), its curl served from the build folder and
    /mnt/flash a folder: without the site's accounts it fails; with them, flash holds the
    accounts, then the switch's startup-config."""
    require_pyavd()
    _, artifacts = compiled("roce-lab-eos")
    served = tmp_path / "served"
    for path, text in by_path(artifacts).items():
        (served / path).parent.mkdir(parents=True, exist_ok=True)
        (served / path).write_text(text)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "curl").write_text(FAKE_CURL)
    (tools / "curl").chmod(0o755)
    flash = tmp_path / "flash"
    flash.mkdir()
    script = (served / "provisioning/ztp/fabric-leaf001/bootstrap").read_text()
    runnable = tmp_path / "bootstrap"
    runnable.write_text(script.replace("/tmp/", f"{tmp_path}/").replace("/mnt/flash", str(flash)))
    env = {"PATH": f"{tools}:/usr/bin:/bin", "SERVED": str(served)}
    failed = subprocess.run(["bash", str(runnable)], env=env, capture_output=True, check=False)
    assert failed.returncode == 22 and not (flash / "startup-config").exists()  # curl -f: 404
    users = "username admin privilege 15 role network-admin secret sha512 $6$site$hash\n"
    (served / "provisioning/ztp/eos-users.cfg").write_text(users)
    subprocess.run(["bash", str(runnable)], env=env, check=True)
    startup = served / "configs/fabric-leaf001/startup-config"
    assert (flash / "startup-config").read_text() == users + startup.read_text()


def test_without_pyavd_the_structured_config_is_written_and_the_cli_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(avd, "available", lambda: False)
    fabric, artifacts = compile_text((EXAMPLES / "roce-lab-eos.yaml").read_text(), tmp_path)
    files = by_path(artifacts)
    switches = eos_switches(fabric)
    assert len(switches) == 4
    for name in switches:
        assert f"configs/{name}/structured_config.yaml" in files
        assert f"configs/{name}/startup-config" not in files
        assert f"provisioning/ztp/{name}/bootstrap" not in files  # nothing to install
    [line] = notices(fabric)
    assert "EOS CLI (startup-config) of 4 Arista switches was skipped" in line
    assert "pip install 'fabricc[eos]'" in line


def test_eos_port_names_follow_the_first_lane() -> None:
    fabric, _ = compiled("roce-lab-eos")
    model = fabric.loaded.catalog.catalog.switches["dcs-7060x6-64pe"]
    assert eos_name(model, "5", 1) == "Ethernet5/1"
    assert [eos_name(model, f"1/{k}", 2) for k in (1, 2)] == ["Ethernet1/1", "Ethernet1/5"]
    assert [eos_name(model, f"3/{k}", 4) for k in (1, 2, 3, 4)] == [
        "Ethernet3/1",
        "Ethernet3/3",
        "Ethernet3/5",
        "Ethernet3/7",
    ]
    assert eos_name(model, "2/8", 8) == "Ethernet2/8"
    assert eos_name(model, "Management1", 1) == "Management1"
    assert [eos_lanes(model, "1/1", ways) for ways in (1, 2, 4, 8)] == [8, 4, 2, 1]
