"""Twin stage: the generated host scripts applied in the host namespaces of a booted network.

Consumes a Booted network (its endpoint namespaces, cabled to their leaves like the cabling plan)
and each endpoint's configs/hosts/<node>.sh from the build folder; runs the script as written
in the host's namespace with the real `ip` and `sysctl`, the NIC tools that need the NIC driver
(mlnx_qos, cma_roce_tos) stubbed, and FABRICC_ROOT pointing at a scratch sysfs with the ECN
folders the script writes to; each NIC is named to the script through its IF_<port> variable
(the script's own override), as the cabling plan connects it. Produces the findings: every NIC
of the network has the script's address, a policy rule `from <source>` to its table, whose
default route goes via its gateway on that NIC; every NIC reaches its gateway and a NIC of
another host on another leaf of the same plane (rail), from its own source address.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from fabricc.twin.folder import BuildFolder
from fabricc.twin.lab import Lab
from fabricc.twin.routing import Booted, _pings

Failure = dict[str, object]
BOOTERS = 8  # host scripts running at once
STUBBED = ("mlnx_qos", "cma_roce_tos")  # need the NIC driver (MLNX_OFED / DOCA-OFED)
_ROW = re.compile(
    r"^(?P<port>\S+) (?P<variable>IF_\w+) \S+ \S+ \S+ (?P<address>\S+) (?P<source>\S+) "
    r"(?P<gateway>\S+) (?P<table>\d+) (?P<mtu>\d+) \S+ \S+ (?P<leaf>\S+)$",
    re.M,
)


@dataclass(frozen=True, slots=True)
class Nic:
    host: str
    port: str
    interface: str  # in the host's namespace
    address: str
    source: str
    gateway: str
    table: int
    leaf: str


def _nics(folder: BuildFolder, booted: Booted, host: str) -> list[Nic]:
    relative = f"configs/hosts/{host}.sh"
    if not folder.has(relative):
        return []
    ports = {wire.a_port: wire for wire in booted.edge if wire.a == host}
    nics: list[Nic] = []
    for match in _ROW.finditer(folder.text(relative)):
        wire = ports.get(match["port"])
        if wire is None:
            continue  # a NIC of another network
        nics.append(
            Nic(
                host,
                match["port"],
                wire.a_if,
                match["address"],
                match["source"],
                match["gateway"],
                int(match["table"]),
                wire.b,
            )
        )
    return nics


def _stubs(lab: Lab) -> Path:
    """The folder of the stubbed NIC tools (written once: scripts may run them meanwhile)."""
    bin_dir = lab.workdir / "hosts" / "bin"
    if not bin_dir.is_dir():
        bin_dir.mkdir(parents=True)
        for tool in STUBBED:
            stub = bin_dir / tool
            stub.write_text("#!/bin/sh\nexit 0\n")
            stub.chmod(0o755)
    return bin_dir


def _apply(lab: Lab, folder: BuildFolder, ns: str, host: str, nics: list[Nic]) -> str:
    root = lab.workdir / "hosts" / host
    bin_dir = _stubs(lab)
    (root / "etc").mkdir(parents=True, exist_ok=True)
    for nic in nics:
        for side in ("roce_np", "roce_rp"):
            (root / "sys/class/net" / nic.interface / "ecn" / side / "enable").mkdir(
                parents=True, exist_ok=True
            )
    script = root / "host.sh"
    script.write_bytes(folder.data(f"configs/hosts/{host}.sh"))
    variables = [f"IF_{re.sub(r'[^A-Za-z0-9]', '_', nic.port)}={nic.interface}" for nic in nics]
    result = lab.exec(
        ns,
        "env",
        "-i",
        f"PATH={bin_dir}:/usr/sbin:/usr/bin:/sbin:/bin",
        f"FABRICC_ROOT={root}",
        *variables,
        "sh",
        str(script),
        check=False,
        timeout=60,
    )
    return result.stderr


def _state(lab: Lab, ns: str) -> tuple[set[tuple[str, str]], dict[str, int], set[str]]:
    """(interface, address/prefix), source -> table, and "table gateway dev" of the namespace."""
    addresses: set[tuple[str, str]] = set()
    result = lab.run("ip", "-j", "-n", ns, "-4", "addr", "show", check=False)
    for link in json.loads(result.stdout or "[]"):
        for info in link.get("addr_info", []):
            addresses.add((str(link.get("ifname")), f"{info['local']}/{info['prefixlen']}"))
    rules: dict[str, int] = {}
    result = lab.run("ip", "-j", "-n", ns, "-4", "rule", "show", check=False)
    for rule in json.loads(result.stdout or "[]"):
        if "src" in rule and str(rule.get("table", "")).isdecimal():
            rules[str(rule["src"])] = int(rule["table"])
    routes: set[str] = set()
    result = lab.run("ip", "-j", "-n", ns, "-4", "route", "show", "table", "all", check=False)
    for route in json.loads(result.stdout or "[]"):
        if route.get("dst") == "default" and "gateway" in route:
            routes.add(f"{route.get('table')} {route['gateway']} {route.get('dev')}")
    return addresses, rules, routes


def check(lab: Lab, folder: BuildFolder, booted: Booted) -> dict[str, object]:
    failures: list[Failure] = []
    all_nics: list[Nic] = []
    found = {host: _nics(folder, booted, host) for host in sorted(booted.endpoints)}
    booting = {host: nics for host, nics in found.items() if nics}
    _stubs(lab)

    def boot(host: str) -> tuple[str, tuple[set[tuple[str, str]], dict[str, int], set[str]]]:
        ns = booted.endpoints[host]
        return _apply(lab, folder, ns, host, booting[host]), _state(lab, ns)

    with ThreadPoolExecutor(BOOTERS) as pool:  # the hosts boot at once, as in a data centre
        applied = dict(zip(booting, pool.map(boot, booting), strict=True))
    for host, nics in booting.items():
        errors, (addresses, rules, routes) = applied[host]
        for nic in nics:
            where: Failure = {"host": host, "nic": nic.port, "interface": nic.interface}
            if (nic.interface, nic.address) not in addresses:
                failures.append({**where, "problem": f"no address {nic.address}: {errors[-200:]}"})
                continue
            if rules.get(nic.source) != nic.table:
                failures.append(
                    {**where, "problem": f"no rule from {nic.source} to table {nic.table}"}
                )
            if f"{nic.table} {nic.gateway} {nic.interface}" not in routes:
                failures.append(
                    {**where, "problem": f"table {nic.table} has no default via {nic.gateway}"}
                )
            all_nics.append(nic)
    jobs: list[tuple[str, str, str]] = []
    labels: list[Failure] = []
    plane = {name: router.component for name, router in booted.routers.items()}
    for nic in all_nics:
        ns = booted.endpoints[nic.host]
        jobs.append((ns, nic.source, nic.gateway))
        labels.append({"host": nic.host, "nic": nic.port, "to": f"gateway {nic.gateway}"})
        far = next(
            (
                other
                for other in all_nics
                if other.host != nic.host
                and other.leaf != nic.leaf
                and plane.get(other.leaf) == plane.get(nic.leaf)
            ),
            None,
        )
        if far is not None:
            jobs.append((ns, nic.source, far.source))
            labels.append(
                {"host": nic.host, "nic": nic.port, "to": f"{far.host} {far.port} ({far.leaf})"}
            )
    reached = _pings(lab, jobs)
    again = [k for k, ok in enumerate(reached) if not ok]
    for k, ok in zip(again, _pings(lab, [jobs[k] for k in again]), strict=True):
        reached[k] = ok
    failures.extend(
        {**label, "problem": "unreachable"}
        for label, ok in zip(labels, reached, strict=True)
        if not ok
    )
    return {
        "hosts": len({nic.host for nic in all_nics}),
        "nics": len(all_nics),
        "checked": len(jobs),
        "failures": failures,
    }
