"""Twin driver: the stages in order, each in the same bounded Lab, into one Report.

Consumes a build folder path and a time bound; produces the Report (the CLI writes it). Order:
management plane first (switches must get their files before they route), then each Ethernet
network's routing, then its failure drills (they disturb the booted fabric, so they come last).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fabricc.twin import clab, drills, hosts, ib, mlag, netplan, provisioning, routing, scope
from fabricc.twin.folder import BuildFolder, load
from fabricc.twin.lab import Lab, lab
from fabricc.twin.names import Namer
from fabricc.twin.report import Report
from fabricc.twin.slice import MAX_DEVICES, choose

NOT_MODELLED = [
    "ASIC buffers, PFC, ECN and RoCE congestion control (config_db and NVUE QoS are read, "
    "not simulated)",
    "adaptive routing and SHARP",
    "link speeds and FEC (veth pairs have neither)",
    "the routed path between DHCP relays and the provisioning server (joined directly; "
    "see docs/twin.md)",
    "MLAG's control plane (clagd), bonds (one member stands for each) and VLAN separation "
    "inside br_default (see docs/twin.md)",
]


def _design(folder: BuildFolder) -> str:
    summary = folder.json("summary.json") if folder.has("summary.json") else {}
    name = summary.get("name") if isinstance(summary, dict) else None
    return str(name) if name else folder.root.name


def ethernet_networks(folder: BuildFolder) -> list[str]:
    """The networks the cabling plan names, less the InfiniBand ones (booted in ibsim)."""
    infiniband = ib.networks(folder)
    return [network for network in folder.networks() if network not in infiniband]


def export(root: Path) -> list[Path]:
    """The containerlab topology of each Ethernet network (OUT/twin/<network>.clab.yml)."""
    folder = load(root)
    return clab.write(root, folder, ethernet_networks(folder), _design(folder))


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Adds the wall time of the block to `timings[stage]` (OUT/twin/timings.json)."""
    start = time.monotonic()
    try:
        yield
    finally:
        timings[stage] = round(timings.get(stage, 0.0) + time.monotonic() - start, 1)


def twin(
    root: Path,
    seconds: float,
    *,
    drill: bool = True,
    su: str | None = None,
    limit: int = MAX_DEVICES,
) -> Report:
    start = time.monotonic()
    whole = load(root)
    ethernet = ethernet_networks(whole)
    # a design larger than the machine boots is sliced: one SU with every spine and core
    folder, boots = choose(whole, ethernet, su, limit)
    report = Report(_design(whole), scope=boots.text(), not_modelled=list(NOT_MODELLED))
    namer = Namer(folder)
    timings = report.timings
    with _timed(timings, "provisioning"), lab(seconds) as the_lab:
        report.provisioning = provisioning.provision(the_lab, folder, namer)
    for subnet in ib.subnets(whole):  # ibsim runs a subnet whole, however large
        with _timed(timings, f"{subnet.name}: infiniband"), lab(seconds) as the_lab:
            report.networks[subnet.name] = ib.check(the_lab, whole, subnet, drill=drill)
    for network in ethernet:
        begun = time.monotonic()
        with lab(seconds) as the_lab:
            checks = _network(the_lab, folder, namer, network, drill, timings)
        report.networks[network] = checks
        if checks.get("booted") is not False:
            timings[f"{network}: total"] = round(time.monotonic() - begun, 1)
    timings["total"] = round(time.monotonic() - start, 1)
    return report


def _network(
    the_lab: Lab,
    folder: BuildFolder,
    namer: Namer,
    network: str,
    drill: bool,
    timings: dict[str, float],
) -> dict[str, object]:
    """Boots one Ethernet network and runs its checks, each stage timed as `<network>: stage`."""
    with _timed(timings, f"{network}: boot"):
        booted = routing.boot(the_lab, folder, namer, network)
    if not booted.routers:
        del timings[f"{network}: boot"]
        return scope.not_booted(folder, network)
    with _timed(timings, f"{network}: sessions"):
        designed, failures = routing.wait_sessions(the_lab, folder, booted)
    checks: dict[str, object] = {
        "switches": len(booted.routers),
        "sessions": {"designed": designed, "failures": failures},
    }
    # ECMP first: it waits for the routes to settle, which the pings need
    with _timed(timings, f"{network}: ecmp"):
        checked, failures = routing.ecmp(the_lab, booted)
    checks["ecmp"] = {"checked": checked, "failures": failures}
    with _timed(timings, f"{network}: reachability"):
        checked, failures = routing.reachability(the_lab, booted)
    checks["reachability"] = {"checked": checked, "failures": failures}
    with _timed(timings, f"{network}: mtu"):
        checked, failures = routing.mtu(the_lab, booted)
    checks["mtu"] = {"checked": checked, "failures": failures}
    with _timed(timings, f"{network}: hosts"):
        host_check = hosts.check(the_lab, folder, booted)
    if host_check["nics"]:
        checks["hosts"] = host_check
    with _timed(timings, f"{network}: netplan"):
        netplan_check = netplan.check(the_lab, folder, booted)
    if netplan_check["hosts"] or netplan_check.get("not_booted"):
        checks["netplan"] = netplan_check
    if drill:
        with _timed(timings, f"{network}: drills"):
            results = drills.run(the_lab, booted) + mlag.run(the_lab, booted)
        for result in results:
            seconds = result.pop("seconds", None)
            if isinstance(seconds, tuple):
                settle, recover = seconds
                timings[f"{network}: drill {result['drill']}"] = settle
                timings[f"{network}: drill {result['drill']}, back up"] = recover
        checks["drills"] = results
    return checks
