"""Test helper: boot a generated BGP underlay in network namespaces with the real FRR.

One namespace per routed switch running zebra and bgpd (-N <ns>, VALIDATORS.md section 2) on the
switch's generated frr.conf, one veth pair per switch-to-switch cable of the generated cabling
plan, with interface names taken from the generated switch configs (SONiC PORT aliases, Cumulus
swp names). Everything it creates - namespaces, daemons, /var/run/frr/<ns> - is removed on exit.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from fabricc.twin.lab import lab as twin_lab
from fabricc.twin.lab import make_room_for_neighbors
from fabricc.twin.names import cumulus_port as cumulus_port  # re-exported for the tests
from fabricc.twin.names import sonic_ports
from fabricc.twin.routing import start_frr

FRR_LIB = Path("/usr/lib/frr")
SWITCH_KINDS = ("leaf-spine", "spine-core")
LAB_SECONDS = 600  # bound on one boot (the twin's lab removes everything when it is reached)


def require_root() -> None:
    """Network namespaces need root (CAP_NET_ADMIN): skip without it - except in CI, like
    tests.support.require_tool."""
    if os.geteuid() == 0:
        return
    message = "needs root to create network namespaces"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


def run(*args: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=False)
    if check and result.returncode != 0:
        raise AssertionError(
            f"{' '.join(args)} exited {result.returncode}: {result.stderr.strip() or result.stdout.strip()}"
        )
    return result


def sonic_port(config_db: dict[str, object], port: str) -> str:
    """SONiC port name of a front-panel port (the twin's own mapping: fabricc.twin.names)."""
    name = sonic_ports(config_db["PORT"]).get(port)
    assert name is not None, f"no SONiC port for front-panel port {port}"
    return name


@dataclass(slots=True)
class Switch:
    name: str
    ns: str
    os: str
    frr: str
    loopback: str
    loopback_v6: str | None
    config_db: dict[str, object] | None = None
    neighbors: int = 0


@dataclass(slots=True)
class Lab:
    switches: dict[str, Switch]
    cables: list[tuple[str, str, str, str]]  # a switch, a interface, b switch, b interface
    hosts: dict[str, str] = field(default_factory=dict)  # host -> namespace

    def vtysh(self, switch: str, command: str) -> str:
        ns = self.switches[switch].ns
        return run("vtysh", "-N", ns, "-c", command, check=False).stdout

    def sessions(self) -> dict[tuple[str, str], str]:
        """(switch, peer) -> BGP state, for every neighbor every switch has configured."""
        states: dict[tuple[str, str], str] = {}
        for name in self.switches:
            text = self.vtysh(name, "show bgp summary json")
            try:
                data = json.loads(text) if text.strip() else {}
            except json.JSONDecodeError:
                data = {}
            peers = data.get("ipv4Unicast", {}).get("peers", {})
            for peer, info in peers.items():
                states[(name, peer)] = info.get("state", "?")
        return states

    def ping(self, source: str, target: str, *, v6: bool = False) -> bool:
        """One echo from the source's loopback to the target's loopback."""
        src, dst = self.switches[source], self.switches[target]
        a, b = (src.loopback_v6, dst.loopback_v6) if v6 else (src.loopback, dst.loopback)
        assert a is not None and b is not None
        result = run(
            "ip", "netns", "exec", src.ns, "ping", "-6" if v6 else "-4", "-c1", "-W1", "-I", a, b,
            check=False,
        )  # fmt: skip
        return result.returncode == 0

    def routes(self, switch: str) -> set[str]:
        """Destinations in the switch's kernel IPv4 routing table."""
        output = run("ip", "-n", self.switches[switch].ns, "-4", "route", "show").stdout
        return {line.split()[0] for line in output.splitlines() if line.strip()}


def _loopback_v6(frr: str) -> str | None:
    match = re.search(
        r"^interface (?:lo|Loopback0)\n(?: .*\n)*? ipv6 address ([0-9a-f:]+)/128$", frr, re.M
    )
    return match.group(1) if match else None


def _bgp_neighbor_count(frr: str) -> int:
    return sum(
        1
        for line in frr.splitlines()
        if line.startswith(" neighbor ") and " peer-group FABRIC" in line
    )


def _loopback(frr: str) -> str:
    for line in frr.splitlines():
        if line.startswith(" bgp router-id "):
            return line.split()[-1]
    raise AssertionError("frr.conf has no router-id")


def lab_switches(
    artifacts: dict[str, str | bytes], network: str
) -> tuple[list[str], list[tuple[str, str, str, str]]]:
    """Routed switches and switch-to-switch cables of `network` from the cabling plan."""
    text = artifacts["cabling/cables.csv"]
    assert isinstance(text, str)
    cables = []
    names: dict[str, None] = {}
    for row in csv.DictReader(io.StringIO(text)):
        if row["network"] == network and row["kind"] in SWITCH_KINDS:
            cables.append((row["a_device"], row["a_port"], row["b_device"], row["b_port"]))
            names.setdefault(row["a_device"])
            names.setdefault(row["b_device"])
    return list(names), cables


def host_cables(
    artifacts: dict[str, str | bytes], network: str, host: str
) -> list[tuple[str, str, str]]:
    """(host port, leaf, leaf port) of every cable from `host` to a leaf of `network`."""
    text = artifacts["cabling/cables.csv"]
    assert isinstance(text, str)
    return [
        (row["a_port"], row["b_device"], row["b_port"])
        for row in csv.DictReader(io.StringIO(text))
        if row["network"] == network and row["kind"] == "endpoint-leaf" and row["a_device"] == host
    ]


@contextlib.contextmanager
def booted(
    artifacts: dict[str, str | bytes],
    network: str,
    hosts: dict[str, dict[str, str]] | None = None,
) -> Iterator[Lab]:
    """`hosts`: host -> (its port -> the interface name the host sees): each gets a namespace
    cabled to its leaves like the cabling plan, unconfigured (the test configures it)."""
    names, cables = lab_switches(artifacts, network)
    switches: dict[str, Switch] = {}
    for name in names:
        frr = artifacts[f"configs/{name}/frr.conf"]
        assert isinstance(frr, str)
        db_text = artifacts.get(f"configs/{name}/config_db.json")
        config_db = json.loads(db_text) if isinstance(db_text, str) else None
        switches[name] = Switch(
            name=name,
            ns="",  # given when booted
            os="sonic" if config_db is not None else "cumulus",
            frr=frr,
            loopback=_loopback(frr),
            loopback_v6=_loopback_v6(frr),
            config_db=config_db,
            neighbors=_bgp_neighbor_count(frr),
        )

    def interface(switch: str, port: str) -> str:
        sw = switches[switch]
        return sonic_port(sw.config_db, port) if sw.config_db is not None else cumulus_port(port)

    links = [(a, interface(a, ap), b, interface(b, bp)) for a, ap, b, bp in cables]
    make_room_for_neighbors(len(links))
    # namespaces, cables, daemons and their removal are the twin's (fabricc.twin.lab, routing)
    with twin_lab(LAB_SECONDS) as the_lab:
        for sw in switches.values():
            sw.ns = the_lab.namespace()
            if sw.os == "sonic":
                the_lab.stand_in(sw.ns, "Loopback0")  # SONiC keeps the loopback on Loopback0
        for a, a_if, b, b_if in links:
            the_lab.cable(switches[a].ns, a_if, switches[b].ns, b_if)
        lab = Lab(switches, links)
        for host, ports in sorted((hosts or {}).items()):
            lab.hosts[host] = ns = the_lab.namespace()
            for port, leaf, leaf_port in host_cables(artifacts, network, host):
                the_lab.cable(ns, ports[port], switches[leaf].ns, interface(leaf, leaf_port))
        for sw in switches.values():
            start_frr(the_lab, sw.ns, sw.frr)
        yield lab


@contextlib.contextmanager
def frr_readable_folder() -> Iterator[Path]:
    """A scratch folder the frr user can read (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="fabricc-frr-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_readable(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text)
    path.chmod(0o644)
    return path


def bgpd_part(frr: str) -> str:
    """The bgpd section of an integrated frr.conf: header lines and `router bgp` to the end
    (bgpd -C flags zebra's `ip address` lines, VALIDATORS.md)."""
    lines = frr.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("router bgp "))
    header = [line for line in lines[:start] if line.startswith(("hostname ", "frr defaults"))]
    return "\n".join([*header, "!", *lines[start:]]) + "\n"


def check_frr_config(folder: Path, name: str, frr: str) -> list[str]:
    """Problems FRR's own parsers report: `vtysh -C -f` (exit 2 on error) and
    `bgpd -C -Z -f` on the bgpd part (exit 0 always; errors only on its output)."""
    problems = []
    path = write_readable(folder, f"{name}.conf", frr)
    dry = run("vtysh", "-C", "-f", str(path), check=False)
    if dry.returncode != 0:
        problems.append(f"vtysh -C: exit {dry.returncode}: {dry.stderr.strip()}")
    bgp = write_readable(folder, f"{name}.bgpd.conf", bgpd_part(frr))
    checked = run(str(FRR_LIB / "bgpd"), "-C", "-Z", "-f", str(bgp), check=False)
    output = checked.stdout + checked.stderr
    for line in output.splitlines():
        if re.search(r"No such command|Config Failed|Unknown command", line):
            problems.append(f"bgpd -C: {line.strip()}")
    return problems


def components(cables: list[tuple[str, str, str, str]]) -> dict[str, int]:
    """Connected components of the switch graph (planes of a multi-plane fabric)."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, _, b, _ in cables:
        parent[find(a)] = find(b)
    roots: dict[str, int] = {}
    return {node: roots.setdefault(find(node), len(roots)) for node in sorted(parent)}
