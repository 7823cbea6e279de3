"""DHCP end to end in network namespaces: a device on an access port asks, the access switch's
relay adds option 82, the real kea-dhcp4 on the provisioning server answers with the generated
config - and the device gets the address, router and ZTP URL the design planned for its port.

The lab follows the generated management plan (synth/mgmtnet.py): a namespace for the
provisioning server (its in-band address, the in-band gateway as default route), one for the
in-band top tier (the router between in-band and out-of-band, holding the VRR gateway), one per
access switch (its subnet's gateway on the access port, Debian's dhcrelay -a: circuit-id = the
interface a request came in on, named like the switch port - as Cumulus's relay does with
use-pif-circuit-id) and one per device (dhclient, asking for option 239). The routes between the
top tier and the access switches are static here (the configs use BGP unnumbered).
"""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from fabricc.ir import Fabric
from fabricc.synth.mgmtnet import management_net
from tests.frr_support import cumulus_port, require_root, run
from tests.support import compiled, require_tool


@contextmanager
def namespaces() -> Iterator[list[str]]:
    """The namespaces a test makes; each is removed, its processes killed, on exit."""
    made: list[str] = []
    try:
        yield made
    finally:
        for ns in made:
            for pid in run("ip", "netns", "pids", ns, check=False).stdout.split():
                run("kill", pid, check=False)
            run("ip", "netns", "del", ns, check=False)


def _ns(made: list[str], name: str) -> str:
    run("ip", "netns", "add", name)
    made.append(name)
    run("ip", "-n", name, "link", "set", "lo", "up")
    return name


def _cable(a: str, a_if: str, b: str, b_if: str) -> None:
    tmp_a, tmp_b = f"t{uuid.uuid4().hex[:8]}", f"t{uuid.uuid4().hex[:8]}"
    run("ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b)
    for tmp, ns, name in ((tmp_a, a, a_if), (tmp_b, b, b_if)):
        run("ip", "link", "set", tmp, "netns", ns)
        run("ip", "-n", ns, "link", "set", tmp, "name", name)
        run("ip", "-n", ns, "link", "set", name, "up")


def _lease(path: Path) -> dict[str, str]:
    """The last lease of a dhclient lease file: fixed-address and the options."""
    text = path.read_text()
    block = text[text.rindex("lease {") :]
    values: dict[str, str] = {}
    for line in block.splitlines():
        words = line.strip().rstrip(";").split(None, 2)
        if len(words) >= 2 and words[0] == "fixed-address":
            values["address"] = words[1]
        elif len(words) == 3 and words[0] == "option":
            values[words[1]] = words[2].strip('"')
    return values


def _clients(fabric: Fabric, cables: str) -> list[tuple[str, str, str]]:
    """Two managed devices on two different access switches, a switch (ZTP) among them:
    (device, access switch, access port)."""
    net = management_net(fabric)
    chosen: dict[str, tuple[str, str, str]] = {}
    for row in csv.DictReader(io.StringIO(cables)):
        if row["kind"] != "mgmt" or row["b_device"] not in net.subnets:
            continue
        device = fabric.devices[row["a_device"]]
        key = "switch" if device.kind == "switch" else "other"
        if key in chosen or any(c[1] == row["b_device"] for c in chosen.values()):
            continue
        chosen[key] = (row["a_device"], row["b_device"], row["b_port"])
    return list(chosen.values())


@pytest.mark.tool
def test_devices_get_their_port_address_through_the_relay(tmp_path: Path) -> None:
    require_tool("kea-dhcp4", "dhcrelay", "dhclient")
    require_root()
    fabric, artifacts = compiled("superpod-h100-4su")
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    net = management_net(fabric)
    assert net.inband is not None and net.server_device is not None
    clients = _clients(fabric, files["cabling/cables.csv"])
    assert len(clients) == 2
    config = json.loads(files["provisioning/kea/kea-dhcp4.conf"])
    dhcp4 = config["Dhcp4"]
    dhcp4["interfaces-config"]["interfaces"] = ["srv0"]
    dhcp4["lease-database"] = {"type": "memfile", "persist": False}
    dhcp4["loggers"] = [
        {
            "name": "kea-dhcp4",
            "severity": "DEBUG",
            "debuglevel": 40,
            "output_options": [{"output": str(tmp_path / "kea.log")}],
        }
    ]
    (tmp_path / "kea.conf").write_text(json.dumps(config))
    inband = net.inband
    tag = uuid.uuid4().hex[:5]
    processes: list[subprocess.Popen[bytes]] = []
    with namespaces() as made:
        try:
            server = _ns(made, f"k{tag}srv")
            top = _ns(made, f"k{tag}top")
            _cable(top, "vlan10", server, "srv0")
            prefixlen = inband.prefix.prefixlen
            run("ip", "-n", server, "addr", "add", f"{net.server}/{prefixlen}", "dev", "srv0")
            run("ip", "-n", server, "route", "add", "default", "via", inband.virtual)
            run("ip", "-n", top, "addr", "add", f"{inband.virtual}/{prefixlen}", "dev", "vlan10")
            run("ip", "netns", "exec", top, "sysctl", "-qw", "net.ipv4.ip_forward=1")
            env = {
                **os.environ,
                "KEA_PIDFILE_DIR": str(tmp_path),
                "KEA_LOCKFILE_DIR": str(tmp_path),
            }
            kea = ["ip", "netns", "exec", server, "kea-dhcp4", "-c", str(tmp_path / "kea.conf")]
            processes.append(subprocess.Popen(kea, env=env, stdout=subprocess.DEVNULL))
            for k, (_device, switch, port) in enumerate(clients):
                access = net.subnets[switch]
                ns = _ns(made, f"k{tag}a{k}")
                client = _ns(made, f"k{tag}c{k}")
                swp = cumulus_port(port)
                uplink = cumulus_port(access.uplinks[0])
                _cable(ns, uplink, top, f"down{k}")
                _cable(client, "eth0", ns, swp)
                transit = f"192.0.2.{2 * k}"
                run("ip", "-n", top, "addr", "add", f"{transit}/31", "dev", f"down{k}")
                run("ip", "-n", ns, "addr", "add", f"192.0.2.{2 * k + 1}/31", "dev", uplink)
                run("ip", "-n", ns, "route", "add", "default", "via", transit)
                run(
                    "ip",
                    "-n",
                    top,
                    "route",
                    "add",
                    str(access.network),
                    "via",
                    f"192.0.2.{2 * k + 1}",
                )
                gateway = f"{access.gateway}/{access.network.prefixlen}"
                run("ip", "-n", ns, "addr", "add", gateway, "dev", swp)
                run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv4.ip_forward=1")
                relay = [
                    "ip", "netns", "exec", ns, "dhcrelay", "-d", "-4", "-a",
                    "-pf", str(tmp_path / f"relay{k}.pid"),
                    "-id", swp, "-iu", uplink, net.server,
                ]  # fmt: skip
                processes.append(
                    subprocess.Popen(relay, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                )
            time.sleep(1.0)  # kea and the relays open their sockets
            for k, (device, switch, _port) in enumerate(clients):
                client = f"k{tag}c{k}"
                conf = tmp_path / f"dhclient{k}.conf"
                conf.write_text(
                    "option ztp-url code 239 = text;\n"
                    "timeout 20;\nretry 1;\n"
                    "request subnet-mask, routers, host-name, ztp-url;\n"
                )
                lease = tmp_path / f"lease{k}"
                result = run(
                    "ip", "netns", "exec", client, "dhclient", "-1", "-v", "-cf", str(conf),
                    "-lf", str(lease), "-pf", str(tmp_path / f"dhclient{k}.pid"),
                    "-sf", "/bin/true", "eth0",
                    check=False, timeout=40,
                )  # fmt: skip
                log = (tmp_path / "kea.log").read_text() if (tmp_path / "kea.log").exists() else ""
                assert result.returncode == 0, result.stderr + log[-3000:]
                got = _lease(lease)
                access = net.subnets[switch]
                assert got["address"] == fabric.devices[device].mgmt_ip, (device, got)
                assert got["routers"] == access.gateway
                assert ipaddress.ip_address(got["address"]) in access.network
                assert got["subnet-mask"] == str(access.network.netmask)
                if fabric.devices[device].kind == "switch":
                    assert got["ztp-url"].endswith(f"/provisioning/ztp/{device}/ztp.sh"), got
                    assert got["ztp-url"].startswith(f"http://{net.server}/")
        finally:
            for proc in processes:
                proc.terminate()
            for proc in processes:
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
