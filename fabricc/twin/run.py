"""Twin driver: the stages, each in its own bounded Lab, into one Report.

Consumes a build folder path and a time bound; produces the Report (the CLI writes it). The
stages share nothing booted (each Lab has its own namespaces): the management plane (every
switch gets its files), each InfiniBand subnet and each Ethernet network (its routing, then its
failure drills, which disturb the booted fabric, so they come last) run at the same time, one
thread each, and their findings join the Report in this order whatever order they end in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from pathlib import Path

from fabricc.twin import clab, drills, hosts, ib, mlag, netplan, provisioning, routing, scope
from fabricc.twin.folder import BuildFolder, load
from fabricc.twin.lab import Lab, lab, neighbor_overflows
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


Findings = dict[str, object]
Stage = Callable[[Lab, dict[str, float]], Findings]


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

    def provision(the_lab: Lab, timings: dict[str, float]) -> Findings:
        with _timed(timings, "provisioning"):
            return provisioning.provision(the_lab, folder, namer)

    def infiniband(subnet: ib.Subnet) -> Stage:
        def stage(the_lab: Lab, timings: dict[str, float]) -> Findings:
            with _timed(timings, f"{subnet.name}: infiniband"):
                return ib.check(the_lab, whole, subnet, drill=drill)

        return stage

    def routed(network: str) -> Stage:
        def stage(the_lab: Lab, timings: dict[str, float]) -> Findings:
            begun = time.monotonic()
            checks = _network(the_lab, folder, namer, network, drill, timings)
            if checks.get("booted") is not False:
                timings[f"{network}: total"] = round(time.monotonic() - begun, 1)
            return checks

        return stage

    subnets = ib.subnets(whole)  # ibsim runs a subnet whole, however large
    stages: list[Stage] = [provision, *map(infiniband, subnets), *map(routed, ethernet)]
    refused = neighbor_overflows()
    outcomes = _concurrently(stages, seconds)
    report.lab = _refused_neighbors(refused, neighbor_overflows())
    found = iter(outcomes)
    report.provisioning, _ = next(found)
    for name in [subnet.name for subnet in subnets] + ethernet:
        report.networks[name], _ = next(found)
    for _, timings in outcomes:
        report.timings.update(timings)
    report.timings["total"] = round(time.monotonic() - start, 1)
    return report


def _refused_neighbors(before: dict[str, int], after: dict[str, int]) -> list[str]:
    """A note per kernel neighbour table that refused entries while the twin ran (counted for the
    whole machine: another program's namespaces count too)."""
    return [
        f"the kernel refused {after[table] - before[table]} new {table} neighbour entries during "
        "the run (neighbor table overflow, gc_thresh3): a failure to reach a neighbour may be "
        "the machine's, not the design's"
        for table in sorted(after)
        if table in before and after[table] > before[table]
    ]


def _concurrently(stages: list[Stage], seconds: float) -> list[tuple[Findings, dict[str, float]]]:
    """Each stage in a Lab of its own, all at once (one thread each: they mostly wait on the
    daemons they started); returns (result, timings) per stage, in the stages' order. The Labs
    are opened and closed here, in the main thread (their cleanup holds the signals); when a
    stage fails or the run is interrupted, the others' Labs are expired, so that they stop at
    their next command, and every Lab is closed once they have."""
    timings: list[dict[str, float]] = [{} for _ in stages]
    with ExitStack() as stack:
        labs = [stack.enter_context(lab(seconds)) for _ in stages]
        with ThreadPoolExecutor(len(stages)) as pool:
            futures: list[Future[Findings]] = [
                pool.submit(stage, the_lab, times)
                for stage, the_lab, times in zip(stages, labs, timings, strict=True)
            ]
            try:
                wait(futures, return_when=FIRST_EXCEPTION)
                for future in futures:
                    error = future.exception() if future.done() else None
                    if error is not None:
                        raise error
                results = [future.result() for future in futures]
            except BaseException:
                # the others stop at their next command, or when their daemons are gone
                for the_lab in labs:
                    the_lab.expire()
                    the_lab.close()
                wait(futures)
                raise
    return list(zip(results, timings, strict=True))


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
    sessions: dict[str, object] = {"designed": designed, "failures": failures}
    if booted.relinked:
        sessions["relinked"] = booted.relinked  # the machine's fault, cleared: not failures
    checks: dict[str, object] = {"switches": len(booted.routers), "sessions": sessions}
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
            # the network's last stage: its last drill need not wait for the sessions back
            results = drills.run(the_lab, booted, final=not mlag.pairs(booted))
            results += mlag.run(the_lab, booted, final=True)
        for result in results:
            seconds = result.pop("seconds", None)
            if isinstance(seconds, tuple):
                settle, recover = seconds
                timings[f"{network}: drill {result['drill']}"] = settle
                timings[f"{network}: drill {result['drill']}, back up"] = recover
        checks["drills"] = results
    return checks
