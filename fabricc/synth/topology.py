"""Synthesis pass 2 entry point: one network -> its switches and links, by topology family.

Consumes a ResolvedNetwork and the node plans; dispatches on `topology` to the family's pass
(fattree.py, railonly.py, dragonfly.py, torus.py) and records the NetworkTopology it built.
"""

from __future__ import annotations

from fabricc.errors import Diagnostic
from fabricc.ir import Fabric, NetworkTopology
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.spec.topology import DRAGONFLY_PLUS, RAIL_ONLY, TORUS
from fabricc.synth.dragonfly import DragonflyBuilder
from fabricc.synth.family import FamilyBuilder
from fabricc.synth.fattree import FatTreeBuilder
from fabricc.synth.nodes import GroupPlan
from fabricc.synth.portbook import PortBook
from fabricc.synth.railonly import RailOnlyBuilder
from fabricc.synth.sizing import Guests
from fabricc.synth.torus import TorusBuilder

FAMILIES: dict[str, type[FamilyBuilder]] = {
    RAIL_ONLY: RailOnlyBuilder,
    DRAGONFLY_PLUS: DragonflyBuilder,
    TORUS: TorusBuilder,
}


def build_network(
    fabric: Fabric,
    network: ResolvedNetwork,
    plans: dict[str, GroupPlan],
    book: PortBook,
    problems: list[Diagnostic],
    guests: Guests | None = None,
) -> NetworkTopology:
    family = FAMILIES.get(network.spec.topology)
    builder: FatTreeBuilder | FamilyBuilder = (
        FatTreeBuilder(fabric, network, plans, book, problems, guests)
        if family is None
        else family(fabric, network, plans, book, problems)
    )
    builder.build()
    fabric.networks[network.name] = builder.topology
    return builder.topology
