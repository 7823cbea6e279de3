"""Synthesis pass 2 helper: the state and diagnostics every network builder shares.

Consumes a ResolvedNetwork, the node plans, the port book and the problem list; provides the
NetworkTopology a builder fills in (fat-tree in fattree.py, the other families through
family.py) and its positioned errors and warnings.
"""

from __future__ import annotations

from fabricc.catalog.models import SwitchModel
from fabricc.errors import Diagnostic, error, warning
from fabricc.ir import Fabric, NetworkTopology
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.spec.topology import FAT_TREE
from fabricc.spec.yamlsource import DataPath, format_path
from fabricc.synth.nodes import GroupPlan
from fabricc.synth.portbook import PortBook
from fabricc.synth.switches import SeriesKey


class NetworkBuilder:
    """Base of the network builders: `build()` is theirs, the shared plumbing is here."""

    family = FAT_TREE

    def __init__(
        self,
        fabric: Fabric,
        network: ResolvedNetwork,
        plans: dict[str, GroupPlan],
        book: PortBook,
        problems: list[Diagnostic],
        *,
        dual_homed: bool = False,
    ) -> None:
        self.fabric = fabric
        self.net = network
        self.spec = network.spec
        self.plans = plans
        self.book = book
        self.problems = problems
        self.catalog = fabric.loaded.catalog.catalog
        self.source = fabric.loaded.source
        self.leaf_model: SwitchModel = self.catalog.switches[network.switch_models["leaf"]]
        self.counts: dict[SeriesKey, int] = {}  # switches added per series (synth/switches.py)
        self.topology = NetworkTopology(
            name=network.name,
            role=self.spec.role,
            fabric=network.fabric,
            tiers=1,
            planes=self.spec.planes,
            rail_optimized=network.rail_optimized,
            dual_homed=dual_homed,
            oversubscription=network.oversubscription,
            switch_models={str(tier): model for tier, model in network.switch_models.items()},
            spec_path=network.path,
            topology=self.family,
        )

    def build(self) -> None:
        raise NotImplementedError

    def fail(self, message: str, path: DataPath, hint: str | None = None) -> None:
        self.problems.append(
            error(message, path=format_path(path), location=self.source.value(path), hint=hint)
        )

    def warn(self, message: str, path: DataPath, hint: str | None = None) -> None:
        self.fabric.warnings.append(
            warning(message, path=format_path(path), location=self.source.value(path), hint=hint)
        )
