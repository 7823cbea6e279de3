"""Emit stage: the explicit, ordered list of artifact families.

Each emitter is a pure function from the Fabric IR to (relative path, content) pairs - a list,
or an iterator where it makes thousands of files one after another (configs), so that the build
hands them to the writer as they come; only fabricc.writer touches the disk. Adding an artifact
family is a module, a line in EMITTERS, its templates and its golden files - no change to the
core.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from fabricc.ir import Fabric
from fabricc.writer import Artifact

__all__ = ["Artifact", "Emitter", "always", "emitters", "never"]


def always(_: Fabric) -> bool:
    return True


def never(_: Fabric) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class Emitter:
    name: str  # also the output folder and the golden folder
    emit: Callable[[Fabric], Iterable[Artifact]]
    # Whether its files, for this design, read the cable selection (cables, their IDs and
    # lengths, optics, runs): one that reads none may run before it (fabricc.build), and
    # tests/test_cable_free.py holds it to the same bytes as after
    cables: Callable[[Fabric], bool] = always


def emitters() -> tuple[Emitter, ...]:
    from fabricc.emit import (
        analysis,
        bom,
        cabling,
        configs,
        diagrams,
        inventory,
        nccl,
        provisioning,
        report,
        summary,
    )

    # Emitters of many or large files first: the writer thread writes them while the others
    # compute (fabricc.writer.OutputTree). The order changes no output.
    return (
        Emitter("cabling", cabling.emit),
        Emitter("provisioning", provisioning.emit, never),
        Emitter("netbox", provisioning.emit_netbox, never),
        Emitter("netbox-cables", provisioning.emit_netbox_cables),
        Emitter("configs", configs.switches(0), configs.reads_cables),
        Emitter("configs-2", configs.switches(1), configs.reads_cables),
        Emitter("configs-3", configs.switches(2), configs.reads_cables),
        Emitter("configs-hosts", configs.emit_hosts, never),
        Emitter("inventory", inventory.emit, never),
        Emitter("bom", bom.emit),
        Emitter("nccl", nccl.emit, never),
        Emitter("summary", summary.emit),
        Emitter("analysis", analysis.emit),
        Emitter("diagrams", diagrams.emit, never),
        Emitter("report", report.emit),
    )
