"""Synthesis stage: LoadedSpec -> Fabric IR, as one ordered list of passes.

Each pass is a function over the Fabric; problems are collected per phase and raised together at
the phase boundary, so the user sees every error of a phase at once. The order matters and is
explained beside each call.
"""

from __future__ import annotations

from collections.abc import Callable

from fabricc.checks.rules import check
from fabricc.errors import DesignError, Diagnostic, Severity, error, raise_if_errors
from fabricc.ir import Fabric
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.yamlsource import format_path
from fabricc.synth.addressing import assign_addresses
from fabricc.synth.cabling import cable_design
from fabricc.synth.fattree import PortBook, build_network
from fabricc.synth.nodes import expand_nodes, plan_groups
from fabricc.synth.oob import build_oob, connect_uplinks
from fabricc.synth.racks import layout


def _raise(problems: list[Diagnostic]) -> None:
    raise_if_errors(problems, DesignError)


Stage = Callable[[str], None]


def quiet(_: str) -> None:
    pass


def synthesize(loaded: LoadedSpec, stage: Stage = quiet) -> Fabric:
    """Run every pass; `stage` is told the name of each phase as it starts (for progress)."""
    fabric = Fabric(loaded)
    problems: list[Diagnostic] = []
    book = PortBook()
    networks = loaded.networks

    stage("nodes")
    # 1. Scalable units and nodes first: every network wires node ports by unit and slot.
    plans = plan_groups(fabric, problems)
    expand_nodes(fabric, plans)
    _raise(problems)

    stage("networks")
    # 2. Data and in-band networks. Out-of-band waits: it manages every switch built here.
    for network in networks.values():
        if network.spec.role != "oob":
            build_network(fabric, network, plans, book, problems)
    _raise(problems)

    stage("racks")
    # 3. Racks and U positions: needs every node and switch; OOB switches later take free space.
    racks = [plan for block in layout(fabric, plans, problems) for plan in block]
    _raise(problems)

    stage("out-of-band")
    # 4. Out-of-band: one access port per managed device in every placed rack.
    for network in networks.values():
        if network.spec.role == "oob":
            build_oob(fabric, network, racks, book, problems)
    # 5. Uplinks between the other networks (OOB did its own): every switch now exists.
    for network in networks.values():
        if network.spec.role != "oob" and network.spec.uplink_to is not None:
            topology = fabric.networks[network.name]
            top = next((t for t in ("core", "spine", "leaf") if topology.switches.get(t)), None)
            if top is not None:
                connect_uplinks(fabric, network, topology.switches[top], book, problems)
    for device in fabric.duplicates:
        path = device.spec_path
        problems.append(
            error(
                f"hostname {device.name!r} is generated twice",
                path=format_path(path),
                location=loaded.source.value(path),
                hint="make the hostname patterns of different groups and networks distinct",
            )
        )
    _raise(problems)

    stage("cables")
    # 6. Cables and optics: needs final positions of both ends of every link.
    cable_design(fabric, problems)
    # 7. Addresses: derive from the final, ordered device and link lists.
    assign_addresses(fabric, problems)
    _raise(problems)

    stage("design rules")
    # 8. Design rules over the finished IR.
    findings = check(fabric)
    _raise(findings)
    fabric.warnings.extend(d for d in findings if d.severity is Severity.WARNING)
    return fabric
