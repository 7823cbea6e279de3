"""Check stage: nodes whose every port on a data network lands on one leaf.

Consumes a Fabric; produces a warning per compute or storage network where nodes with two or
more ports there have all of them on one leaf (a storage node's two ports side by side): one
leaf failure takes those nodes off the network, which the analysis' failure table shows but the
build did not say. A network on one switch is left to checks/rules.single_switch.
"""

from __future__ import annotations

from collections import defaultdict

from fabricc.errors import Diagnostic, warning
from fabricc.ir import ENDPOINT_LEAF, Fabric
from fabricc.spec.yamlsource import format_path


def check_exposure(fabric: Fabric) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for name, network in fabric.loaded.networks.items():
        if network.spec.role not in ("compute", "storage"):
            continue
        leaves_of: dict[str, set[str]] = defaultdict(set)
        ports: dict[str, int] = defaultdict(int)
        for link in fabric.links_of(name):
            if link.kind == ENDPOINT_LEAF:
                leaves_of[link.a].add(link.b)
                ports[link.a] += 1
        if len({leaf for leaves in leaves_of.values() for leaf in leaves}) < 2:
            continue
        stranded: dict[str, list[str]] = defaultdict(list)  # leaf -> nodes all on it
        for node, leaves in sorted(leaves_of.items()):
            if ports[node] >= 2 and len(leaves) == 1:
                stranded[next(iter(leaves))].append(node)
        if not stranded or max(len(nodes) for nodes in stranded.values()) < 2:
            continue  # one node per leaf (a torus, a switch per node) is the design itself
        total = sum(len(nodes) for nodes in stranded.values())
        leaf, worst = max(sorted(stranded.items()), key=lambda item: len(item[1]))
        groups = sorted({fabric.devices[n].group or "" for ns in stranded.values() for n in ns})
        hint = (
            "set spread_ports: true: each node's ports alternate over a pair of leaves, every "
            "port routed on its own /31, so one leaf failure leaves each node a port (an MLAG "
            "pair, dual_homed, is for the in-band network; these leaves route)"
            if network.fabric == "ethernet"
            else "fabricc fills an InfiniBand leaf node by node and has no option yet that "
            "splits one node's ports over two leaves: plan for the loss (the analysis' failure "
            "table shows it) or cable those nodes by hand"
        )
        found.append(
            warning(
                f"{total} node(s) of {name} ({', '.join(groups)}) have every port on one leaf: "
                f"one leaf failure takes them off the network (up to {len(worst)} at once: "
                f"{leaf} serves {', '.join(worst[:3])}{' and more' if len(worst) > 3 else ''})",
                path=format_path(network.path),
                location=fabric.loaded.source.key(network.path),
                hint=hint,
            )
        )
    return found
