"""Twin stage: the routed fabric of one Ethernet network, as the switches would run it.

Consumes the build folder (cabling plan, inventory ASNs, each switch's frr.conf and interface
MTUs) and a Lab; boots one namespace per routed switch with the real zebra and bgpd on the
switch's frr.conf, one per endpoint (so host-facing ports have carrier), one veth per cable; then
produces the findings: every designed BGP session Established with the designed peer and ASN,
loopbacks and host subnets reachable from every leaf, ECMP next hops per leaf and remote leaf as
the cabling gives them, and each cable passing a full-MTU frame both ways.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shutil
import subprocess
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from fabricc.twin import eos, eos_frr
from fabricc.twin.bridging import BRIDGE, Bundles, bundles, wait_forwarding
from fabricc.twin.bridging import apply as apply_bridging
from fabricc.twin.byhand import by_hand, nvue_tree
from fabricc.twin.folder import SWITCH_KINDS, BuildFolder, Row
from fabricc.twin.lab import Lab, inside
from fabricc.twin.names import Namer, os_of
from fabricc.twin.nvue import nvue_set, switch_config
from fabricc.twin.nvue_frr import Tree, addresses, render

FRR_LIB = Path("/usr/lib/frr")
FRR_RUN = Path("/var/run/frr")
Failure = dict[str, object]
SESSION_WAIT = 30.0  # s: hold time 9 s, connect retry 5 s (frr.conf timers) and some rounds
ROUTE_WAIT = 15.0
SESSION_SETTLE = 10.0  # s: two connect retries (5 s) before a missing neighbour counts
ASKERS = 8  # vtysh processes at once
PARALLEL = 16  # fping processes at once (each pings all targets of one namespace)


@dataclass(frozen=True, slots=True)
class Wire:
    cable: str
    a: str
    a_if: str
    b: str
    b_if: str
    kind: str = ""
    bundled: bool = False  # a bond member other than the one that stands for the bond
    a_port: str = ""  # the cabling plan's name of the a end (a host's NIC port)


@dataclass(slots=True)
class Router:
    name: str
    ns: str
    frr: str
    loopback: str | None
    role: str
    component: int = 0
    networks: list[str] = field(default_factory=list)  # prefixes it announces (host subnets)
    bundles: Bundles | None = None  # NVUE bonds, peer link, SVIs (Cumulus)
    rendered: bool = False  # frr.conf rendered from startup.yaml (no frr.conf in the build)
    bridged: set[str] = field(default_factory=set)  # cabled ports in br_default

    @property
    def routes(self) -> bool:
        """It runs routing (a layer-2 switch only bridges: no FRR, no sessions)."""
        return bool(self.frr)

    def layer2(self, port: str) -> bool:
        """The cable port carries no session of its own: the switch runs no routing, or the
        port is bridged (a bond to a layer-2 switch); the MLAG peer link, bridged too, is routed
        on its subinterface where the switch routes."""
        if not self.routes:
            return True
        found = self.bundles
        return port in self.bridged and not (
            found is not None
            and found.peerlink is not None
            and found.bond_of(port) == found.peerlink
        )

    def l3(self, port: str) -> str:
        """The interface that holds the port's addresses: the bridge for a bridged port."""
        return BRIDGE if port in self.bridged else port

    @property
    def host_route(self) -> bool:
        """The router id is a /32 of its loopback (ECMP is counted towards it)."""
        return bool(self.loopback) and bool(
            re.search(
                rf"^interface (?:lo|Loopback0)\n(?: .*\n)*? ip address {re.escape(str(self.loopback))}/32$",
                self.frr,
                re.M,
            )
        )

    def session_interface(self, port: str) -> str:
        return self.bundles.session_interface(port) if self.bundles else port


@dataclass(slots=True)
class Booted:
    network: str
    routers: dict[str, Router] = field(default_factory=dict)
    endpoints: dict[str, str] = field(default_factory=dict)  # device -> namespace
    wires: list[Wire] = field(default_factory=list)  # switch to switch
    edge: list[Wire] = field(default_factory=list)  # endpoint to leaf
    mtu: dict[tuple[str, str], int] = field(default_factory=dict)  # (device, if) -> MTU
    outside: set[tuple[str, str]] = field(default_factory=set)  # (switch, if) cabled off-slice
    uncabled: set[tuple[str, str]] = field(default_factory=set)  # (switch, if) to no plan device
    # cables that passed no packet while their sessions waited, taken down and up
    relinked: list[str] = field(default_factory=list)


def _loopback(frr: str) -> str | None:
    match = re.search(r"^ bgp router-id (\S+)$", frr, re.M)
    return match.group(1) if match else None


def _networks(frr: str) -> list[str]:
    return sorted(set(re.findall(r"^  network (\S+)$", frr, re.M)))


def _components(routers: list[str], wires: list[Wire]) -> dict[str, int]:
    parent = {name: name for name in routers}

    def find(node: str) -> str:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for wire in wires:
        parent[find(wire.a)] = find(wire.b)
    roots: dict[str, int] = {}
    return {name: roots.setdefault(find(name), len(roots)) for name in sorted(routers)}


def _own_uplink(folder: BuildFolder, row: Row, network: str) -> bool:
    """An uplink between two switches of the network itself: the routed links of a management
    tree (out-of-band access switches without `uplink_to` peer with each other)."""
    return row["kind"] == "uplink" and all(
        folder.devices.get(row[end], {}).get("network") == network
        for end in ("a_device", "b_device")
    )


def running_frr(folder: BuildFolder, name: str, tree: Tree | None) -> tuple[str | None, bool]:
    """The frr.conf switch `name` would run, and whether the twin rendered it (not as written)."""
    if folder.has(f"configs/{name}/startup.yaml") and tree is not None:
        # NVUE owns frr.conf on Cumulus: `nv config apply` rewrites /etc/frr/frr.conf from
        # startup.yaml, so a frr.conf beside it never runs (Cumulus Linux user guide, "NVUE
        # and FRR": do not edit frr.conf by hand when NVUE manages the switch)
        return render(tree), True
    if folder.has(f"configs/{name}/frr.conf"):  # SONiC split-unified: frr.conf as installed
        return folder.text(f"configs/{name}/frr.conf"), False
    if tree is not None:  # a seed set up by hand from seeds.txt
        return render(tree), True
    if (blocks := eos.startup_config(folder, name)) is not None:
        return eos_frr.render(blocks), True  # EOS routing as FRR runs it
    return None, False


def boot(lab: Lab, folder: BuildFolder, namer: Namer, network: str) -> Booted:
    booted = Booted(network)
    switch_rows = [
        r
        for r in folder.cables
        if r["network"] == network
        and (r["kind"] in SWITCH_KINDS or _own_uplink(folder, r, network))
    ]
    edge_rows = [
        r for r in folder.cables if r["network"] == network and r["kind"] == "endpoint-leaf"
    ]
    core = {row[end] for row in switch_rows for end in ("a_device", "b_device")}
    # access switches of another network (out-of-band) that route into this one's switches
    switch_rows += [
        r
        for r in folder.cables
        if r["kind"] == "uplink"
        and r["network"] != network
        and (r["a_device"] in core or r["b_device"] in core)
    ]
    names: dict[str, None] = {}
    for row in switch_rows:
        names.setdefault(row["a_device"])
        names.setdefault(row["b_device"])
    trees: dict[str, Tree] = {}
    hands = by_hand(folder, namer)  # switches without an OS: set up from seeds.txt
    for name in names:
        tree = (
            nvue_set(folder, name)
            if folder.has(f"configs/{name}/startup.yaml")
            else nvue_tree(hands[name])
            if name in hands
            else None
        )
        if tree is not None:
            trees[name] = tree
        frr, rendered = running_frr(folder, name, tree)
        if frr is None:
            if tree is None or not bundles(tree).bridged:
                continue
            frr = ""  # a layer-2 switch (bridges only, no routing): booted for its hosts
        role = folder.devices.get(name, {}).get("role", "")
        router = Router(name, "", frr, _loopback(frr), role, 0, _networks(frr))
        router.bundles = bundles(tree) if tree is not None else None
        router.rendered = rendered
        booted.routers[name] = router
    for row in switch_rows:
        a, b = row["a_device"], row["b_device"]
        if a in booted.routers and b in booted.routers:
            wire = Wire(
                row["cable_id"],
                a,
                namer.interface(a, row["a_port"]),
                b,
                namer.interface(b, row["b_port"]),
                row["kind"],
            )
            booted.wires.append(wire)
    for row in edge_rows:
        leaf = row["b_device"]
        if leaf in booted.routers:
            device = row["a_device"]
            wire = Wire(
                row["cable_id"],
                device,
                namer.interface(device, row["a_port"]),
                leaf,
                namer.interface(leaf, row["b_port"]),
                row["kind"],
                a_port=row["a_port"],
            )
            booted.edge.append(wire)
    booted.outside = outside(folder, namer, set(booted.routers))
    booted.uncabled = _uncabled_routed_ports(folder, namer, booted, trees)
    booted.wires = _mark_bundled(booted)
    booted.wires += _peer_subinterfaces(booted)
    for name, component in _components(list(booted.routers), booted.wires).items():
        booted.routers[name].component = component
    for name in booted.routers:
        config = switch_config(folder, name)
        if config is not None:
            for interface, mtu in config.mtu.items():
                booted.mtu[(name, interface)] = mtu
    _start(lab, booted)
    return booted


def outside(folder: BuildFolder, namer: Namer, routers: set[str]) -> set[tuple[str, str]]:
    """(router, interface) of every end of a slice's cut cables and of the border links to the
    site network (nothing boots at their far end): their neighbours are not expected up,
    whichever network the cable belongs to (an out-of-band access switch's uplink into this
    network's spines is the out-of-band network's cable)."""
    return {
        (device, namer.interface(device, row[port]))
        for row in [*folder.left_out, *folder.site_cables]
        for end, port in (("a_device", "a_port"), ("b_device", "b_port"))
        if (device := row[end]) in routers
    }


def _uncabled_routed_ports(
    folder: BuildFolder, namer: Namer, booted: Booted, trees: dict[str, Tree]
) -> set[tuple[str, str]]:
    """(switch, port) of every addressed routed port (NVUE) that no cable of the plan reaches: it
    leads to equipment outside the plan that the operator cables (the provisioning server on a
    management tree's root, ZTP notes), so the twin gives it carrier for its connected prefix."""
    planned = {
        (row[device], namer.interface(row[device], row[port]))
        for row in [*folder.cables, *folder.left_out, *folder.site_cables]
        for device, port in (("a_device", "a_port"), ("b_device", "b_port"))
    }
    found: set[tuple[str, str]] = set()
    for name, tree in trees.items():
        if name not in booted.routers:
            continue
        interfaces = tree.get("interface")
        for port, entry in interfaces.items() if isinstance(interfaces, dict) else ():
            if (
                isinstance(entry, dict)
                and entry.get("type") == "swp"
                and "bridge" not in entry
                and addresses(entry)
                and (name, port) not in planned
            ):
                found.add((name, str(port)))
    return found


def cabled_ports(booted: Booted, device: str) -> set[str]:
    ports = {w.a_if for w in [*booted.wires, *booted.edge] if w.a == device}
    return ports | {w.b_if for w in [*booted.wires, *booted.edge] if w.b == device}


def _peer_subinterfaces(booted: Booted) -> list[Wire]:
    """The routed VLAN subinterfaces of an MLAG peer link (`peerlink.4094`), each its own link
    between the peers: on Cumulus the subinterface is a layer-3 interface outside br_default
    and its spanning tree (Cumulus Linux user guide, "Multi-Chassis Link Aggregation - MLAG":
    the peerlink.4094 subinterface carries the clagd and routed traffic), and the twin's kernel
    has no 802.1Q driver to stack it on the peer link's carrier port. Marked bundled: neither a
    session of its own (the peer cable's) nor an ECMP path; kind `peer`, so that drills take it
    down with its switch and keep it up with the peer link."""
    found: list[Wire] = []
    seen: set[tuple[str, str, str]] = set()
    for wire in booted.wires:
        a, b = booted.routers[wire.a].bundles, booted.routers[wire.b].bundles
        if wire.kind != "peer" or wire.bundled or a is None or b is None:
            continue
        if a.bond_of(wire.a_if) != a.peerlink or b.bond_of(wire.b_if) != b.peerlink:
            continue
        for sub in sorted(set(a.routed_subinterfaces) & set(b.routed_subinterfaces)):
            if sub.partition(".")[0] == a.peerlink == b.peerlink:
                key = (min(wire.a, wire.b), max(wire.a, wire.b), sub)
                if key not in seen:
                    seen.add(key)
                    found.append(
                        Wire(f"{wire.cable}/{sub}", wire.a, sub, wire.b, sub, "peer", True)
                    )
    return found


def _mark_bundled(booted: Booted) -> list[Wire]:
    """Bond members other than the bond's carrier are cabled but carry no session of their own
    (the twin has no bonding driver: one member stands for the bond)."""

    def spare(device: str, port: str) -> bool:
        found = booted.routers[device].bundles
        bond = found.bond_of(port) if found else None
        if found is None or bond is None:
            return False
        return found.carrier(bond, cabled_ports(booted, device)) != port

    return [replace(w, bundled=spare(w.a, w.a_if) or spare(w.b, w.b_if)) for w in booted.wires]


def _start(lab: Lab, booted: Booted) -> None:
    lab.room_for_neighbors(len(booted.wires) + len(booted.edge))
    routers = list(booted.routers.values())
    hosts = list(dict.fromkeys(wire.a for wire in booted.edge))
    for router, ns in zip(routers, lab.namespaces(len(routers), switches=True), strict=True):
        router.ns = ns
    booted.endpoints.update(zip(hosts, lab.namespaces(len(hosts)), strict=True))
    for router in routers:
        for loopback in sorted(set(re.findall(r"^interface (Loopback\d+)$", router.frr, re.M))):
            # SONiC and EOS keep the router id on Loopback0
            lab.stand_in(router.ns, loopback)
    for device, port in sorted(booted.uncabled):
        lab.stand_in(booted.routers[device].ns, port, booted.mtu.get((device, port)))
    pairs = [
        (
            booted.routers[wire.a].ns,
            wire.a_if,
            booted.mtu.get((wire.a, wire.a_if)),
            booted.routers[wire.b].ns,
            wire.b_if,
            booted.mtu.get((wire.b, wire.b_if)),
        )
        for wire in booted.wires
    ]
    for wire in booted.edge:
        # the host end as the leaf port: a bridge is as large as its smallest port
        mtu = booted.mtu.get((wire.b, wire.b_if))
        pairs.append(
            (booted.endpoints[wire.a], wire.a_if, mtu, booted.routers[wire.b].ns, wire.b_if, mtu)
        )
    lab.cables(pairs)
    for router in booted.routers.values():
        if router.bundles is not None:
            router.bridged = set(
                apply_bridging(
                    lab,
                    router.ns,
                    router.bundles,
                    cabled_ports(booted, router.name),
                    max((m for (d, _), m in booted.mtu.items() if d == router.name), default=None),
                )
            )
    start_frrs(lab, [(r.ns, r.frr) for r in booted.routers.values() if r.routes])


def start_frr(lab: Lab, ns: str, frr: str) -> None:
    """zebra and bgpd in `ns` on `frr`."""
    start_frrs(lab, [(ns, frr)])


def start_frrs(lab: Lab, routers: list[tuple[str, str]]) -> None:
    """zebra and bgpd in each (namespace, frr.conf) (they drop to user frr: the config lives in
    their -N run folder, which frr owns): every zebra at once, then every bgpd at once (bgpd
    connects to its zebra), each waited for until it has daemonised."""
    for ns, frr in routers:
        folder = FRR_RUN / ns
        folder.mkdir(parents=True, exist_ok=True)
        lab.frr_dirs.append(folder)
        (folder / "frr.conf").write_text(frr)
        shutil.chown(folder, "frr", "frr")
        shutil.chown(folder / "frr.conf", "frr", "frr")
    for daemon in ("zebra", "bgpd"):
        started = []
        commands: list[list[str]] = []
        for ns, _frr in routers:
            folder = FRR_RUN / ns
            pid = folder / f"{daemon}.pid"
            lab.pid_files.append(pid)
            command = [str(FRR_LIB / daemon), "-d", "-N", ns, "-f", str(folder / "frr.conf"),
                       "-i", str(pid)]  # fmt: skip
            commands.append([*inside(ns), *command])
            started.append(
                subprocess.Popen(
                    [*inside(ns), *command],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        for process, args in zip(started, commands, strict=True):
            try:
                _out, error = process.communicate(timeout=min(30, lab.remaining()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                raise RuntimeError(f"{' '.join(args)} did not start") from None
            if process.returncode != 0:
                raise RuntimeError(f"{' '.join(args)} exited {process.returncode}: {error}")


# -- checks -----------------------------------------------------------------------------------


def _vtysh_json(lab: Lab, router: Router, command: str) -> dict[str, object]:
    result = lab.run("vtysh", "-N", router.ns, "-c", command, check=False)
    try:
        data = json.loads(result.stdout) if result.stdout.strip() else {}
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _peers(lab: Lab, router: Router) -> dict[str, dict[str, object]]:
    if not router.routes:
        return {}  # no bgpd to ask
    data = _vtysh_json(lab, router, "show bgp summary json")
    family = data.get("ipv4Unicast", {})
    peers = family.get("peers", {}) if isinstance(family, dict) else {}
    return (
        {str(k): v for k, v in peers.items() if isinstance(v, dict)}
        if isinstance(peers, dict)
        else {}
    )


def all_peers(lab: Lab, routers: list[Router]) -> dict[str, dict[str, dict[str, object]]]:
    """`show bgp summary json` of each router, asked of their bgpds at once (one vtysh each)."""
    with ThreadPoolExecutor(ASKERS) as pool:
        return dict(
            zip(
                (r.name for r in routers),
                pool.map(lambda router: _peers(lab, router), routers),
                strict=True,
            )
        )


def _described_peer(frr: str, interface: str) -> tuple[str | None, str | None]:
    """The peer device and ASN the config's neighbour description names ("dev:if AS123")."""
    match = re.search(
        rf"^ neighbor {re.escape(interface)} description (\S+?):\S+(?: AS(\d+))?$", frr, re.M
    )
    return (match.group(1), match.group(2)) if match else (None, None)


def _session_failures(lab: Lab, folder: BuildFolder, booted: Booted) -> tuple[int, list[Failure]]:
    failures: list[Failure] = []
    peers = all_peers(lab, list(booted.routers.values()))
    designed = 0
    cabled: set[tuple[str, str]] = set()
    for wire in booted.wires:
        if wire.bundled:
            continue
        if booted.routers[wire.a].layer2(wire.a_if) or booted.routers[wire.b].layer2(wire.b_if):
            continue  # a layer-2 link (bridged at one end at least): no session designed
        for me, port, other in ((wire.a, wire.a_if, wire.b), (wire.b, wire.b_if, wire.a)):
            designed += 1
            my_if = booted.routers[me].session_interface(port)
            cabled.add((me, my_if))
            where: Failure = {"switch": me, "interface": my_if, "peer": other, "cable": wire.cable}
            info = peers[me].get(my_if)
            if info is None:
                problem = "no BGP neighbour on this interface"
                if wire.kind == "peer":
                    problem += (
                        " (MLAG peer link not routed: a peer that loses its uplinks has no "
                        "path; Cumulus MLAG, Peer Link Routing)"
                    )
                failures.append({**where, "problem": problem})
                continue
            state = str(info.get("state", "?"))
            if state != "Established":
                failures.append({**where, "problem": f"session {state}, not Established"})
                continue
            want_as = folder.devices.get(other, {}).get("asn", "")
            seen_as = str(info.get("remoteAs", ""))
            if want_as and seen_as != want_as:
                failures.append({**where, "problem": f"peer AS {seen_as}, designed AS {want_as}"})
            seen_host = str(info.get("hostname", ""))
            if seen_host and seen_host != other:
                failures.append(
                    {**where, "problem": f"peer is {seen_host}, the cabling plan says {other}"}
                )
            described, described_as = _described_peer(booted.routers[me].frr, my_if)
            if described is not None and seen_host and described != seen_host:
                failures.append(
                    {**where, "problem": f"config expects {described} here, found {seen_host}"}
                )
            if described_as is not None and described_as != seen_as:
                failures.append(
                    {**where, "problem": f"config expects AS {described_as}, found AS {seen_as}"}
                )
    for me, table in sorted(peers.items()):
        for peer, info in sorted(table.items()):
            if (me, peer) in booted.outside:
                continue
            if (me, peer) not in cabled and info.get("state") != "Established":
                failures.append(
                    {
                        "switch": me,
                        "interface": peer,
                        "peer": "",
                        "cable": "",
                        "problem": "configured neighbour without a cable, not Established",
                    }
                )
    return designed, failures


def set_links(lab: Lab, booted: Booted, wires: list[Wire], state: str) -> None:
    """Sets both ends of the wires `state` (up or down): one `ip -batch` per namespace."""
    ends: dict[str, list[str]] = {}
    for wire in wires:
        for device, interface in ((wire.a, wire.a_if), (wire.b, wire.b_if)):
            ends.setdefault(booted.routers[device].ns, []).append(interface)
    for ns, interfaces in ends.items():
        commands = "".join(f"link set {interface} {state}\n" for interface in interfaces)
        lab.run("ip", "-n", ns, "-batch", "-", stdin=commands)


def silent_wires(lab: Lab, booted: Booted, wires: list[Wire]) -> list[Wire]:
    """The wires over which neither end answers an echo request to its IPv6 link-local address
    (a ping each way; an end without the address, down, answers none). No configuration makes
    a link do that: the twin's cables are veth pairs that the kernel runs, up and with their
    link-local addresses whatever the config says; a link that passes nothing is the
    machine's fault."""
    names = sorted({d for wire in wires for d in (wire.a, wire.b)})
    local = _all_link_locals(lab, [booted.routers[name] for name in names])
    jobs: list[tuple[str, str, str]] = []
    owners: list[int] = []
    for k, wire in enumerate(wires):
        for me, my_if, other, other_if in (
            (wire.a, wire.a_if, wire.b, wire.b_if),
            (wire.b, wire.b_if, wire.a, wire.a_if),
        ):
            mine, far = booted.routers[me], booted.routers[other]
            target = local[other].get(far.l3(other_if))
            if target is not None and mine.l3(my_if) in local[me]:
                jobs.append((mine.ns, "", f"{target}%{mine.l3(my_if)}"))
                owners.append(k)
    answered = {k for k, ok in zip(owners, _pings(lab, jobs, v6=True), strict=True) if ok}
    return [wire for k, wire in enumerate(wires) if k not in answered]


def _on_its_way(failure: Failure) -> bool:
    """A session not Established (yet), as against a neighbour the config lacks or a wrong
    peer."""
    return str(failure["problem"]).startswith("session ")


def _silent_under(lab: Lab, booted: Booted, failures: list[Failure]) -> list[Wire]:
    """The wires of the sessions still on their way that pass no packet (silent_wires)."""
    pending = {str(f["cable"]) for f in failures if _on_its_way(f)}
    return silent_wires(lab, booted, [w for w in booted.wires if w.cable in pending])


def _relink(lab: Lab, booted: Booted, failures: list[Failure]) -> bool:
    """Takes down and up the wires of sessions still on their way that pass no packet at all
    (the machine's fault, which a new carrier clears: a veth whose queue stalled); they are
    named in booted.relinked. True when any was."""
    silent = _silent_under(lab, booted, failures)
    if silent:
        set_links(lab, booted, silent, "down")
        set_links(lab, booted, silent, "up")
        booted.relinked.extend(sorted(wire.cable for wire in silent))
    return bool(silent)


def _silent_named(lab: Lab, booted: Booted, failures: list[Failure]) -> list[Failure]:
    """The failures, each session still on its way over a wire that passes no packet saying so
    (the machine's fault: the report tells it from a design's)."""
    silent = {wire.cable for wire in _silent_under(lab, booted, failures)}
    return [
        {**f, "problem": f"{f['problem']}; the link passes no packet either way (the machine's)"}
        if f["cable"] in silent and _on_its_way(f)
        else f
        for f in failures
    ]


def wait_sessions(lab: Lab, folder: BuildFolder, booted: Booted) -> tuple[int, list[Failure]]:
    """Polls until every designed session is up and right, or the wait is over; after
    SESSION_SETTLE, also when no failure is a session still on its way (a neighbour the config
    lacks, or a session Established with the wrong peer, stays so). Once, after SESSION_SETTLE,
    the wires of sessions still on their way that pass no packet are taken down and up (the
    machine's fault, not the design's) and the wait goes on for another SESSION_SETTLE at
    least."""
    # the bridges forward first: routed sessions no longer wait for them (peerlink.4094 is a
    # link of its own), the pings through a bridge that follow do
    wait_forwarding(lab, sorted(r.ns for r in booted.routers.values() if r.bridged))
    start = time.monotonic()
    end = start + min(SESSION_WAIT + len(booted.wires) * 0.05, lab.remaining())
    last: list[Failure] | None = None
    relinked = False
    while True:
        designed, failures = _session_failures(lab, folder, booted)
        if not failures:
            return designed, failures
        if time.monotonic() > end:
            return designed, _silent_named(lab, booted, failures)
        pending = [f for f in failures if _on_its_way(f)]
        if pending and not relinked and time.monotonic() - start > SESSION_SETTLE:
            relinked = True
            if _relink(lab, booted, pending):
                end = max(end, time.monotonic() + min(SESSION_SETTLE, lab.remaining()))
                last = None
                continue
        if not pending and failures == last and time.monotonic() - start > SESSION_SETTLE:
            return designed, failures
        last = failures
        time.sleep(1.0)


def _pings(lab: Lab, jobs: list[tuple[str, str, str]], v6: bool = False) -> list[bool]:
    """(namespace, source address, target) -> reached: real echo requests, one fping per
    namespace and source for all its targets, the namespaces in parallel."""
    family = "-6" if v6 else "-4"
    groups: dict[tuple[str, ...], list[str]] = {}
    for ns, source, target in jobs:
        key = (ns, family, *(["-S", source] if source else []))
        groups.setdefault(key, []).append(target)
    alive = _fping(lab, groups)
    return [
        target in alive[(ns, family, *(["-S", source] if source else []))]
        for ns, source, target in jobs
    ]


def _fping(lab: Lab, groups: dict[tuple[str, ...], list[str]]) -> dict[tuple[str, ...], set[str]]:
    """(namespace, fping options...) -> targets; the targets that answered, per group. Each
    target gets up to three echo requests in 1.4 s (-t 300 ms, backoff 1.5, -r 2), as the
    `ping -c3 -W1` they replace."""
    alive: dict[tuple[str, ...], set[str]] = {}
    pending = sorted(groups)
    running: list[tuple[tuple[str, ...], subprocess.Popen[str]]] = []
    while pending or running:
        while pending and len(running) < PARALLEL:
            key = pending.pop(0)
            ns, *options = key
            targets = sorted(set(groups[key]))
            command = [*inside(ns), "fping", "-a", "-q", "-r2", "-t300", "-i1"]
            process = subprocess.Popen(
                [*command, *options, *targets],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            running.append((key, process))
        key, process = running.pop(0)
        try:
            out, _ = process.communicate(timeout=min(30, lab.remaining()))
        except subprocess.TimeoutExpired:
            process.kill()
            out, _ = process.communicate()
        alive[key] = set(out.split())
    return alive


def _leaves(booted: Booted) -> list[Router]:
    return [r for r in booted.routers.values() if r.role == "leaf" and r.loopback]


def reachability(lab: Lab, booted: Booted) -> tuple[int, list[Failure]]:
    """Every loopback of the leaf's plane answers a ping from the leaf's loopback, and every host
    subnet another leaf of its plane announces is in the leaf's routing table."""
    jobs: list[tuple[str, str, str]] = []
    labels: list[Failure] = []
    for leaf in _leaves(booted):
        assert leaf.loopback is not None
        for other in booted.routers.values():
            if other is leaf or other.component != leaf.component or not other.loopback:
                continue
            jobs.append((leaf.ns, leaf.loopback, other.loopback))
            labels.append({"from": leaf.name, "to": other.name, "prefix": f"{other.loopback}/32"})
    reached = _pings(lab, jobs)
    end = time.monotonic() + min(ROUTE_WAIT, lab.remaining())
    last: object = None
    while not all(reached) and time.monotonic() < end:
        # routes still arriving: ask again the ones that did not answer, until BGP has settled
        # (a route that stays and does not forward fails)
        now = settled_state(lab, booted)
        if now is not None and now == last:
            break
        last = now
        time.sleep(1.0)
        again = [k for k, ok in enumerate(reached) if not ok]
        for k, ok in zip(again, _pings(lab, [jobs[k] for k in again]), strict=True):
            reached[k] = ok
    failures = [label for label, ok in zip(labels, reached, strict=True) if not ok]
    checked = len(jobs)
    for leaf in _leaves(booted):
        table = _kernel_routes(lab, leaf)
        for other in _leaves(booted):
            if other is leaf or other.component != leaf.component:
                continue
            for prefix in other.networks:
                checked += 1
                if prefix not in table:
                    failures.append(
                        {
                            "from": leaf.name,
                            "to": other.name,
                            "prefix": prefix,
                            "problem": "not in the routing table",
                        }
                    )
    return checked, failures


def settled_state(lab: Lab, booted: Booted) -> object:
    """What BGP and the kernel hold now, when BGP has nothing in flight (every session's in and
    out queues empty, and every Established session has received its first routes: FRR holds
    a new session's first update back for its coalesce time, so empty queues alone do not tell
    the exchange has begun), else None. Two equal looks a second apart: the routes have
    settled, so a check that still fails will not pass by waiting."""
    routers = list(booted.routers.values())
    peers = all_peers(lab, routers)
    held: list[object] = []
    for router in routers:
        for name, info in sorted(peers[router.name].items()):
            if info.get("inq", 0) or info.get("outq", 0):
                return None
            if info.get("state") == "Established" and not info.get("pfxRcd"):
                return None
            held.append((router.name, name, info.get("state"), info.get("pfxRcd")))
    with ThreadPoolExecutor(ASKERS) as pool:
        held.extend(pool.map(lambda router: sorted(_kernel_routes(lab, router).items()), routers))
    return held


def _kernel_routes(lab: Lab, router: Router) -> dict[str, int]:
    """Destination -> number of next hops, from the namespace's kernel IPv4 table."""
    result = lab.run("ip", "-j", "-n", router.ns, "-4", "route", "show", check=False)
    try:
        routes = json.loads(result.stdout or "[]")
    except json.JSONDecodeError:
        return {}
    table: dict[str, int] = {}
    for route in routes:
        dst = str(route.get("dst", ""))
        if dst and dst != "default" and "/" not in dst:
            dst += "/32"
        table[dst] = len(route.get("nexthops", [])) or 1
    return table


def designed_ecmp(booted: Booted, leaf: str, owners: set[str]) -> int:
    """Cables from `leaf` to neighbours on a shortest path to the nearest of `owners` (BGP
    multipath over an eBGP Clos keeps every shortest AS path: one per such cable; a prefix two
    MLAG peers announce is as near as the nearer peer)."""
    adjacent: dict[str, list[str]] = {}
    for wire in booted.wires:
        if wire.bundled:
            continue
        adjacent.setdefault(wire.a, []).append(wire.b)
        adjacent.setdefault(wire.b, []).append(wire.a)
    distance = dict.fromkeys(owners, 0)
    queue = deque(sorted(owners))
    while queue:
        node = queue.popleft()
        for nxt in adjacent.get(node, []):
            if nxt not in distance:
                distance[nxt] = distance[node] + 1
                queue.append(nxt)
    if leaf not in distance:
        return 0
    return sum(1 for n in adjacent.get(leaf, []) if distance.get(n) == distance[leaf] - 1)


def _interface_networks(router: Router) -> list[ipaddress.IPv4Interface]:
    return [
        ipaddress.IPv4Interface(found)
        for found in re.findall(r"^ ip address (\d+\.\d+\.\d+\.\d+/\d+)$", router.frr, re.M)
    ]


def ecmp_target(booted: Booted, remote: Router) -> tuple[str, set[str]]:
    """The prefix that carries `remote`'s router id and the switches that announce it: its
    loopback /32, or the subnet of the interface that holds it (an access switch's SVI, shared
    by an MLAG pair's VRR), announced by every switch with an address in it."""
    assert remote.loopback is not None
    if remote.host_route:
        return f"{remote.loopback}/32", {remote.name}
    rid = ipaddress.IPv4Address(remote.loopback)
    holding = [i.network for i in _interface_networks(remote) if i.ip == rid]
    if not holding:
        return f"{remote.loopback}/32", {remote.name}  # the router id on a loopback of config_db
    network = holding[0]
    owners = {
        r.name
        for r in booted.routers.values()
        if any(i.ip in network for i in _interface_networks(r))
    }
    return str(network), owners | {remote.name}


def ecmp(lab: Lab, booted: Booted) -> tuple[int, list[Failure]]:
    """The kernel's next hops from every routed leaf to the prefix of each remote leaf's router
    id, against the cables on shortest paths to it."""
    end = time.monotonic() + min(ROUTE_WAIT, lab.remaining())
    last: object = None
    targets = {leaf.name: ecmp_target(booted, leaf) for leaf in _leaves(booted)}
    while True:
        checked, failures = 0, []
        for leaf in _leaves(booted):
            table = _kernel_routes(lab, leaf)
            for other in _leaves(booted):
                if other is leaf or other.component != leaf.component:
                    continue
                prefix, owners = targets[other.name]
                if leaf.name in owners:
                    continue  # its own subnet (an MLAG peer's VRR): connected, not routed
                checked += 1
                want = designed_ecmp(booted, leaf.name, owners)
                found = table.get(prefix, 0)
                if found != want:
                    failures.append(
                        {
                            "leaf": leaf.name,
                            "remote": other.name,
                            "prefix": prefix,
                            "designed": want,
                            "found": found,
                        }
                    )
        if not failures or time.monotonic() > end:
            return checked, failures
        now = settled_state(lab, booted)
        if now is not None and now == last:
            return checked, failures
        last = now
        time.sleep(1.0)


def _link_locals(lab: Lab, ns: str) -> dict[str, str]:
    """Interface -> its IPv6 link-local address, in `ns` (one `ip` for all its interfaces)."""
    result = lab.run("ip", "-j", "-6", "-n", ns, "addr", "show", check=False)
    found: dict[str, str] = {}
    try:
        for link in json.loads(result.stdout or "[]"):
            for info in link.get("addr_info", []):
                if info.get("scope") == "link":
                    found.setdefault(str(link["ifname"]), str(info["local"]))
    except (json.JSONDecodeError, KeyError, TypeError):
        return found
    return found


def _all_link_locals(lab: Lab, routers: list[Router]) -> dict[str, dict[str, str]]:
    """Router name -> _link_locals of its namespace, asked of ASKERS namespaces at once."""
    with ThreadPoolExecutor(ASKERS) as pool:
        return dict(
            zip(
                (r.name for r in routers),
                pool.map(lambda r: _link_locals(lab, r.ns), routers),
                strict=True,
            )
        )


def mtu(lab: Lab, booted: Booted) -> tuple[int, list[Failure]]:
    """Each cable carries a frame of the sender's configured MTU (don't fragment) both ways: a
    side configured larger than its peer shows as lost frames, as on real links."""
    local = _all_link_locals(lab, list(booted.routers.values()))
    jobs: list[tuple[str, str, str]] = []
    labels: list[Failure] = []
    for wire in booted.wires:
        if (
            wire.a_if in booted.routers[wire.a].bridged
            or wire.b_if in booted.routers[wire.b].bridged
        ):
            # bridge to bridge: the kernel's spanning tree, unaware of MLAG, may block a peer
            # link that Cumulus keeps forwarding; a peer cable's other members (plain veths) and
            # the hosts' full-MTU pings to their gateway (fabricc.twin.netplan) cover these links
            continue
        for me, my_if, other, other_if in (
            (wire.a, wire.a_if, wire.b, wire.b_if),
            (wire.b, wire.b_if, wire.a, wire.a_if),
        ):
            size = booted.mtu.get((me, my_if))
            far = booted.routers[other]
            target = local[other].get(far.l3(other_if))
            if size is None or target is None:
                continue
            jobs.append((booted.routers[me].ns, "", f"{target}%{booted.routers[me].l3(my_if)}"))
            labels.append(
                {
                    "switch": me,
                    "interface": my_if,
                    "cable": wire.cable,
                    "mtu": size,
                    "peer_mtu": booted.mtu.get((other, other_if)),
                }
            )
    sized = [(ns, src, target) for ns, src, target in jobs]
    results = _mtu_pings(lab, sized, [int(str(label["mtu"])) for label in labels])
    return len(jobs), [label for label, ok in zip(labels, results, strict=True) if not ok]


def _mtu_pings(lab: Lab, jobs: list[tuple[str, str, str]], sizes: list[int]) -> list[bool]:
    """IPv6 echo requests of the given MTU with don't-fragment, grouped per namespace and size."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for (ns, _src, target), size in zip(jobs, sizes, strict=True):
        groups.setdefault((ns, "-6", "-M", "-b", str(size - 48)), []).append(target)
    alive = _fping(lab, groups)
    return [
        target in alive[(ns, "-6", "-M", "-b", str(size - 48))]
        for (ns, _src, target), size in zip(jobs, sizes, strict=True)
    ]


__all__ = ["Booted", "boot", "ecmp", "mtu", "os_of", "reachability", "wait_sessions"]
