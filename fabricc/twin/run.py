"""Twin driver: the stages in order, each in the same bounded Lab, into one Report.

Consumes a build folder path and a time bound; produces the Report (the CLI writes it). Order:
management plane first (switches must get their files before they route), then each Ethernet
network's routing, then its failure drills (they disturb the booted fabric, so they come last).
"""

from __future__ import annotations

from pathlib import Path

from fabricc.twin import clab, drills, hosts, ib, mlag, netplan, provisioning, routing, scope
from fabricc.twin.folder import BuildFolder, load
from fabricc.twin.lab import lab
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


def twin(
    root: Path,
    seconds: float,
    *,
    drill: bool = True,
    su: str | None = None,
    limit: int = MAX_DEVICES,
) -> Report:
    whole = load(root)
    ethernet = ethernet_networks(whole)
    # a design larger than the machine boots is sliced: one SU with every spine and core
    folder, boots = choose(whole, ethernet, su, limit)
    report = Report(_design(whole), scope=boots.text(), not_modelled=list(NOT_MODELLED))
    namer = Namer(folder)
    with lab(seconds) as the_lab:
        report.provisioning = provisioning.provision(the_lab, folder, namer)
    for subnet in ib.subnets(whole):  # ibsim runs a subnet whole, however large
        with lab(seconds) as the_lab:
            report.networks[subnet.name] = ib.check(the_lab, whole, subnet, drill=drill)
    for network in ethernet:
        with lab(seconds) as the_lab:
            booted = routing.boot(the_lab, folder, namer, network)
            if not booted.routers:
                report.networks[network] = scope.not_booted(folder, network)
                continue
            designed, failures = routing.wait_sessions(the_lab, folder, booted)
            checks: dict[str, object] = {
                "switches": len(booted.routers),
                "sessions": {"designed": designed, "failures": failures},
            }
            # ECMP first: it waits for the routes to settle, which the pings need
            checked, failures = routing.ecmp(the_lab, booted)
            checks["ecmp"] = {"checked": checked, "failures": failures}
            checked, failures = routing.reachability(the_lab, booted)
            checks["reachability"] = {"checked": checked, "failures": failures}
            checked, failures = routing.mtu(the_lab, booted)
            checks["mtu"] = {"checked": checked, "failures": failures}
            host_check = hosts.check(the_lab, folder, booted)
            if host_check["nics"]:
                checks["hosts"] = host_check
            netplan_check = netplan.check(the_lab, folder, booted)
            if netplan_check["hosts"] or netplan_check.get("not_booted"):
                checks["netplan"] = netplan_check
            if drill:
                checks["drills"] = drills.run(the_lab, booted) + mlag.run(the_lab, booted)
            report.networks[network] = checks
    return report
