"""Twin stage: the generated netplan files applied in the host namespaces of a booted network.

Consumes a Booted network (its endpoint namespaces, cabled to their leaves like the cabling
plan) and each endpoint's provisioning/netplan/<host>.yaml with its model's udev rules
(<model>.rules) from the build folder. netplan's own generator renders each file into a scratch
root (`netplan generate --root-dir`: DIR/etc/netplan/ in, systemd-networkd units under
DIR/run/systemd/network/ out), and the twin applies those units in the host's namespace with the
real `ip` (fabricc.twin.networkd), after naming the host's cabled ports as its udev rules do
(each rule follows a comment naming its port; the rules match by PCI address or RDMA device,
which a veth has not). Without the kernel's bonding driver one member stands for each bond.
Produces the findings, per host and interface the units configure: its addresses,
MTU, bond master, routes (the default via its gateway) and policy rules present; and from each
addressed interface with a gateway, pings from its address to the gateway and to a host on
other leaves of the same plane.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from fabricc.twin.bridging import wait_forwarding
from fabricc.twin.folder import BuildFolder
from fabricc.twin.lab import Lab
from fabricc.twin.networkd import Expected, Plan, translate
from fabricc.twin.routing import Booted, _fping, _pings

Failure = dict[str, object]
NETPLAN = "provisioning/netplan"
GENERATE_BATCH = 8
# the generator `netplan generate` runs (netplan.io installs both); called directly it skips the
# CLI's Python start-up, a tenth of a second per host
GENERATOR = Path("/usr/lib/netplan/generate")
_NAME = re.compile(r'NAME="([^"]+)"')
_PORT = re.compile(r"^# (?P<port>[^\s:]+)(?::|$)")


def has_files(root: Path) -> bool:
    """The build holds netplan files (the twin then needs netplan.io)."""
    return any((root / NETPLAN).glob("*.yaml"))


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    ns: str
    ports: dict[str, str]  # interface in the namespace -> the cabling plan's port
    leaves: dict[str, str]  # interface in the namespace -> the leaf it is cabled to
    renames: dict[str, str]  # the twin's name of a cabled port -> the udev rules' name


def udev_names(rules: str) -> dict[str, str]:
    """Port -> the name the model's udev rules give it: each rule's NAME= (also in the comment
    that asks the operator to write a rule) under the comment naming its port."""
    names: dict[str, str] = {}
    port: str | None = None
    for line in rules.splitlines():
        comment = _PORT.match(line)
        if comment:
            port = comment["port"]
        name = _NAME.search(line)
        if name and port is not None:
            names.setdefault(port, name.group(1))
            port = None
    return names


def _names(folder: BuildFolder, host: str) -> dict[str, str]:
    """Port -> its name, by the udev rules of the host's model; empty without a netplan file."""
    model = folder.devices.get(host, {}).get("model", "")
    rules = f"{NETPLAN}/{model}.rules"
    if not folder.has(f"{NETPLAN}/{host}.yaml") or not model or not folder.has(rules):
        return {}
    return udev_names(folder.text(rules))


def _hosts(folder: BuildFolder, booted: Booted) -> list[Host]:
    """The booted network's endpoints with a netplan file for it (its udev rules name a port the
    host has cabled into the network), their ports named as udev names them."""
    out: list[Host] = []
    for host, ns in sorted(booted.endpoints.items()):
        names = _names(folder, host)
        if not any(wire.a == host and wire.a_port in names for wire in booted.edge):
            continue  # the file configures ports of another network of the host
        ports: dict[str, str] = {}
        leaves: dict[str, str] = {}
        renames: dict[str, str] = {}
        for wire in booted.edge:
            if wire.a == host:
                name = renames[wire.a_if] = names.get(wire.a_port, wire.a_if)
                ports[name], leaves[name] = wire.a_port, wire.b
        out.append(Host(host, ns, ports, leaves, renames))
    return out


def _generate(lab: Lab, folder: BuildFolder, hosts: list[Host]) -> dict[str, dict[str, str]]:
    """Host -> its networkd units as netplan generates them (file name -> text); a host whose
    file netplan rejects gets {"error": netplan's message}."""
    units: dict[str, dict[str, str]] = {}
    for start in range(0, len(hosts), GENERATE_BATCH):
        batch: list[tuple[Host, Path, subprocess.Popen[str]]] = []
        for host in hosts[start : start + GENERATE_BATCH]:
            root = lab.workdir / "netplan" / host.name
            (root / "etc/netplan").mkdir(parents=True, exist_ok=True)
            target = root / "etc/netplan/60-fabricc-inband.yaml"
            target.write_bytes(folder.data(f"{NETPLAN}/{host.name}.yaml"))
            target.chmod(0o600)
            generate = [str(GENERATOR)] if GENERATOR.is_file() else ["netplan", "generate"]
            process = subprocess.Popen(
                [*generate, "--root-dir", str(root)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            batch.append((host, root, process))
        for host, root, process in batch:
            try:
                _, stderr = process.communicate(timeout=min(60, lab.remaining()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                stderr, process.returncode = "timed out", 124
            if process.returncode != 0:
                lines = [line for line in stderr.splitlines() if line.strip()]
                units[host.name] = {"error": " ".join(lines[-3:]) or f"exit {process.returncode}"}
                continue
            directory = root / "run/systemd/network"
            units[host.name] = {
                path.name: path.read_text()
                for path in sorted(directory.glob("*"))
                if path.is_file()
            }
    return units


def _links(lab: Lab, ns: str) -> dict[str, str]:
    result = lab.run("ip", "-j", "-n", ns, "link", "show", check=False)
    return {
        str(link["ifname"]): str(link.get("address", ""))
        for link in json.loads(result.stdout or "[]")
        if link.get("ifname") != "lo"
    }


def _apply(lab: Lab, host: Host, plan: Plan) -> dict[int, str]:
    """Runs the plan's commands in one `ip -batch` (continuing past a failure); returns the
    error of each failed command by its index."""
    script = lab.workdir / "netplan" / host.name / "ip.batch"
    script.write_text("".join(" ".join(command) + "\n" for command in plan.commands))
    result = lab.run("ip", "-n", host.ns, "-force", "-batch", str(script), check=False)
    errors: dict[int, str] = {}
    last = ""
    for line in result.stderr.splitlines():
        found = re.search(r"Command failed \S+:(\d+)", line)
        if found:
            errors[int(found.group(1)) - 1] = last
        elif line.strip():
            last = line.strip()
    return errors


def _has_bonding(lab: Lab, ns: str) -> bool:
    """The kernel offers the bonding driver (a namespace cannot load it)."""
    probe = "fabriccprobe"
    if lab.run("ip", "-n", ns, "link", "add", probe, "type", "bond", check=False).returncode:
        return False
    lab.run("ip", "-n", ns, "link", "del", probe, check=False)
    return True


def _rename(lab: Lab, host: Host) -> None:
    """Names the host's cabled ports as its udev rules do (before networkd starts)."""
    commands = [
        f"link set {old} down\nlink set {old} name {new}\n"
        for old, new in sorted(host.renames.items())
        if old != new
    ]
    if commands:  # one `ip -batch` for the host, continuing past a failure as one by one did
        lab.run("ip", "-n", host.ns, "-force", "-batch", "-", stdin="".join(commands), check=False)


def _state(lab: Lab, ns: str) -> tuple[dict[str, dict[str, object]], set[str], set[str]]:
    """Links (name -> ip -j link), "table to via dev" routes and "from table" rules."""
    links: dict[str, dict[str, object]] = {}
    result = lab.run("ip", "-j", "-n", ns, "addr", "show", check=False)
    for link in json.loads(result.stdout or "[]"):
        links[str(link.get("ifname"))] = link
    routes: set[str] = set()
    rules: set[str] = set()
    for family in ("-4", "-6"):
        result = lab.run("ip", "-j", "-n", ns, family, "route", "show", "table", "all", check=False)
        for route in json.loads(result.stdout or "[]"):
            table = str(route.get("table", "main"))
            to, via = route.get("dst"), route.get("gateway", "")
            routes.add(f"{table} {to} {via} {route.get('dev')}")
        result = lab.run("ip", "-j", "-n", ns, family, "rule", "show", check=False)
        for rule in json.loads(result.stdout or "[]"):
            rules.add(f"{rule.get('src', 'all')} {rule.get('table')}")
    return links, routes, rules


def _missing(
    plan: Plan,
    expected: Expected,
    links: dict[str, dict[str, object]],
    routes: set[str],
    rules: set[str],
) -> list[str]:
    link = links.get(expected.interface)
    if link is None:
        return [f"no interface {expected.interface}"]
    problems: list[str] = []
    infos = link.get("addr_info", [])
    have = {
        f"{info['local']}/{info['prefixlen']}"
        for info in (infos if isinstance(infos, list) else [])
        if isinstance(info, dict)
    }
    problems += [f"no address {a}" for a in expected.addresses if a not in have]
    if expected.mtu is not None and link.get("mtu") != expected.mtu:
        problems.append(f"MTU {link.get('mtu')}, not {expected.mtu}")
    stood_in = expected.master in plan.stood_in  # no bonding driver: nothing to be a member of
    if expected.master is not None and not stood_in and link.get("master") != expected.master:
        problems.append(f"not a member of {expected.master}")
    for to, via, table in expected.routes:
        if f"{table} {to} {via} {expected.interface}" not in routes:
            where = "" if table == "main" else f" in table {table}"
            problems.append(f"no route {to} via {via or 'the link'}{where}")
    for source, table in expected.rules:
        if f"{source} {table}" not in rules:
            problems.append(f"no rule from {source} to table {table}")
    return problems


@dataclass(frozen=True, slots=True)
class Nic:
    host: str
    interface: str
    address: str  # without prefix
    gateway: str
    leaves: frozenset[str]
    mtu: int | None = None  # as the file sets it


def check(lab: Lab, folder: BuildFolder, booted: Booted) -> dict[str, object]:
    failures: list[Failure] = []
    hosts = _hosts(folder, booted)
    units = _generate(lab, folder, hosts)
    nics: list[Nic] = []
    bonding = bool(hosts) and _has_bonding(lab, hosts[0].ns)
    for host in hosts:
        found = units[host.name]
        if "error" in found:
            failures.append({"host": host.name, "problem": f"netplan generate: {found['error']}"})
            continue
        _rename(lab, host)
        plan = translate(found, _links(lab, host.ns), bonding=bonding)
        errors = _apply(lab, host, plan)
        failures += [{"host": host.name, "problem": problem} for problem in plan.problems]
        failures += [
            {"host": host.name, "problem": f"ip {' '.join(plan.commands[k])}: {error}"}
            for k, error in sorted(errors.items())
        ]
        links, routes, rules = _state(lab, host.ns)
        for expected in plan.expected.values():
            where: Failure = {"host": host.name, "nic": expected.interface}
            ports = sorted(
                host.ports[i] for i in plan.members(expected.interface) if i in host.ports
            )
            if ports:
                where["ports"] = ports
            failures += [
                {**where, "problem": p} for p in _missing(plan, expected, links, routes, rules)
            ]
            gateways = [via for to, via, _ in expected.routes if to == "default" and via]
            for address in expected.addresses[:1]:
                leaves = frozenset(
                    host.leaves[i] for i in plan.members(expected.interface) if i in host.leaves
                )
                nics.append(
                    Nic(
                        host.name,
                        expected.interface,
                        address.split("/")[0],
                        gateways[0] if gateways else "",
                        leaves,
                        expected.mtu,
                    )
                )
    # renaming a host's ports (as udev does) drops the carrier of the leaves' bridge ports
    wait_forwarding(lab, sorted({r.ns for r in booted.routers.values() if r.bridged}))
    checked, unreachable = _reach(lab, booted, hosts, nics)
    entry: dict[str, object] = {
        "bonds": "kernel bonding driver"
        if bonding
        else "one member stands for each bond (no bonding driver in this kernel)",
        "hosts": len(hosts),
        "nics": len(nics),
        "checked": checked,
        "failures": failures + unreachable,
    }
    entry.update(_not_booted(folder, booted))
    return entry


def _reach(
    lab: Lab, booted: Booted, hosts: list[Host], nics: list[Nic]
) -> tuple[int, list[Failure]]:
    """Pings from each addressed interface with a gateway to the gateway and to a host on other
    leaves of the same plane; a miss is tried once more."""
    jobs: list[tuple[str, str, str]] = []
    labels: list[Failure] = []
    gateway_jobs: list[tuple[Nic, int]] = []
    plane = {name: router.component for name, router in booted.routers.items()}
    ns_of = {host.name: host.ns for host in hosts}
    for nic in nics:
        if nic.gateway:
            gateway_jobs.append((nic, len(jobs)))
            jobs.append((ns_of[nic.host], nic.address, nic.gateway))
            labels.append({"host": nic.host, "nic": nic.interface, "to": f"gateway {nic.gateway}"})
        planes = {plane.get(leaf) for leaf in nic.leaves}
        far = next(
            (
                other
                for other in nics
                if other.host != nic.host
                and nic.leaves
                and not other.leaves & nic.leaves
                and {plane.get(leaf) for leaf in other.leaves} & planes
            ),
            None,
        )
        if far is not None and nic.gateway:
            jobs.append((ns_of[nic.host], nic.address, far.address))
            labels.append(
                {
                    "host": nic.host,
                    "nic": nic.interface,
                    "to": f"{far.host} {far.interface} ({', '.join(sorted(far.leaves))})",
                }
            )
    reached = _pings(lab, jobs)
    again = [k for k, ok in enumerate(reached) if not ok]
    for k, ok in zip(again, _pings(lab, [jobs[k] for k in again]), strict=True):
        reached[k] = ok
    failures: list[Failure] = [
        {**label, "problem": "unreachable"}
        for label, ok in zip(labels, reached, strict=True)
        if not ok
    ]
    # a frame of the NIC's MTU to its gateway, don't-fragment: the host, its leaf port and the
    # gateway's path agree on the MTU (where the small echo got through)
    sized = [nic for nic, k in gateway_jobs if reached[k] and nic.mtu]
    whole = _full_mtu(lab, [(ns_of[n.host], n.address, n.gateway, n.mtu or 0) for n in sized])
    failures += [
        {
            "host": nic.host,
            "nic": nic.interface,
            "to": f"gateway {nic.gateway}",
            "problem": f"a {nic.mtu}-byte packet (its MTU, don't fragment) is lost: an MTU "
            "mismatch between the host, its leaf port and the gateway",
        }
        for nic, ok in zip(sized, whole, strict=True)
        if not ok
    ]
    return len(jobs) + len(sized), failures


def _full_mtu(lab: Lab, jobs: list[tuple[str, str, str, int]]) -> list[bool]:
    """(namespace, source, target, MTU) -> an IPv4 echo of the whole MTU with don't-fragment got
    its answer (fping -M, -b: the payload, MTU less the IPv4 and ICMP headers); tried twice."""

    def key(ns: str, source: str, mtu: int) -> tuple[str, ...]:
        return (ns, "-4", "-S", source, "-M", "-b", str(mtu - 28))

    reached = [False] * len(jobs)
    for _ in range(2):
        groups: dict[tuple[str, ...], list[str]] = {}
        for (ns, source, target, mtu), ok in zip(jobs, reached, strict=True):
            if not ok:
                groups.setdefault(key(ns, source, mtu), []).append(target)
        if not groups:
            break
        alive = _fping(lab, groups)
        reached = [
            ok or target in alive.get(key(ns, source, mtu), set())
            for (ns, source, target, mtu), ok in zip(jobs, reached, strict=True)
        ]
    return reached


def _not_booted(folder: BuildFolder, booted: Booted) -> dict[str, object]:
    """Hosts with a netplan file cabled into the network whose leaves the routing stage did not
    boot (they run no BGP: layer-2 leaves under routed spines); not failures, but not silent."""
    leaves: dict[str, set[str]] = {}
    for row in folder.cables:
        if row["network"] == booted.network and row["kind"] == "endpoint-leaf":
            host, leaf = row["a_device"], row["b_device"]
            if host not in booted.endpoints and row["a_port"] in _names(folder, host):
                leaves.setdefault(host, set()).add(leaf)
    if not leaves:
        return {}
    under = ", ".join(sorted(set().union(*leaves.values())))
    return {
        "not_booted": len(leaves),
        "not_booted_because": f"their leaves ({under}) run no routing the twin boots (layer 2 "
        "only): no namespace to apply the netplan files in",
    }
