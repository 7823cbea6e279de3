"""Analysis, part 5: what one failure costs - a switch of each tier, one link, a whole plane.

Consumes the plane graphs of a network with their refinement classes and bisections; produces,
per failure, the endpoint ports cut off, the nodes that lose every path on the network (all of
their ports on that network were behind the failed part), the endpoint bandwidth lost and the
bisection that remains (max-flow again on the damaged graph, same halves). Within a tier the
worst switch is the one that cuts off the most nodes, then ports, then bandwidth; ties go to the
first in design order.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from fabricc.analysis.bisection import Split, max_flow
from fabricc.analysis.graph import PlaneGraph
from fabricc.analysis.refine import Weighted


@dataclass(frozen=True, slots=True)
class Plane:
    """One analysed plane: its graph, each pair of halves with its refinement classes (none
    with fewer than two endpoints), and the bisection."""

    graph: PlaneGraph
    weighted: Weighted
    halves: Sequence[tuple[Split, Sequence[int]]]
    bisection_gbps: int


@dataclass(frozen=True, slots=True)
class Impact:
    what: str  # the failed part, e.g. "compute-spine001" or "compute-leaf001 - compute-spine001"
    endpoints_lost: int  # endpoint ports cut off
    nodes_lost: int  # nodes without any path left on this network
    endpoint_gbps_lost: int
    bisection_gbps_after: int


def endpoint_switches(planes: Sequence[Plane]) -> dict[str, set[tuple[int, int]]]:
    """Per endpoint device, the (plane, switch) pairs its ports land on."""
    found: dict[str, set[tuple[int, int]]] = {}
    for plane in planes:
        for port in plane.graph.attachments:
            found.setdefault(port.device, set()).add((plane.graph.plane, port.switch))
    return found


def _bisection_after(
    plane: Plane, weighted: Weighted, lost: frozenset[int], touched: Collection[int]
) -> int:
    """The smallest max-flow between the same halves once part of the plane is gone (every
    pair of halves again: a failure can hurt one more than another). `touched`: the switches
    whose links differ between `weighted` and the plane's."""
    values = [
        max_flow(plane.graph, weighted, c, split, lost, touched)[0] for split, c in plane.halves
    ]
    return min(values, default=0)


def switch_failure(
    planes: Sequence[Plane], names: Sequence[str], homes: dict[str, set[tuple[int, int]]]
) -> Impact | None:
    """The worst single failure among the switches `names` (one tier of the network)."""
    wanted = set(names)
    lone: dict[tuple[int, int], int] = {}
    for places in homes.values():
        if len(places) == 1:
            (place,) = places
            lone[place] = lone.get(place, 0) + 1
    best: tuple[tuple[int, int, int], int, int] | None = None
    for position, plane in enumerate(planes):
        graph = plane.graph
        ports = [0] * len(graph.names)
        gbps = [0] * len(graph.names)
        for port in graph.attachments:
            ports[port.switch] += 1
            gbps[port.switch] += port.gbps
        for v, name in enumerate(graph.names):
            if name not in wanted:
                continue
            score = (lone.get((graph.plane, v), 0), ports[v], gbps[v])
            if best is None or score > best[0]:
                best = (score, position, v)
    if best is None:
        return None
    (nodes, ports_lost, gbps_lost), position, v = best
    plane = planes[position]
    weighted = plane.weighted.without_node(v)
    lost = frozenset(i for i, p in enumerate(plane.graph.attachments) if p.switch == v)
    after = _bisection_after(plane, weighted, lost, {v, *plane.weighted.neighbours[v]})
    others = sum(p.bisection_gbps for i, p in enumerate(planes) if i != position)
    return Impact(plane.graph.names[v], ports_lost, nodes, gbps_lost, others + after)


def switch_link_failure(planes: Sequence[Plane]) -> Impact | None:
    """The worst loss of one switch-to-switch link: the first link between each pair of tiers
    is tried in the first plane (links of a tier pair are alike in a symmetric fat-tree)."""
    if not planes:
        return None
    plane = planes[0]
    graph = plane.graph
    tried: set[tuple[str, str]] = set()
    worst: Impact | None = None
    for v, neighbours in enumerate(graph.adjacency):
        for u in sorted(neighbours):
            pair = (graph.roles[v], graph.roles[u])
            if u < v or pair in tried:
                continue
            tried.add(pair)
            tried.add((pair[1], pair[0]))
            links, gbps = neighbours[u]
            damaged = plane.weighted.with_weight(v, u, gbps - gbps // links)
            after = _bisection_after(plane, damaged, frozenset(), (v, u))
            others = sum(p.bisection_gbps for p in planes[1:])
            impact = Impact(f"{graph.names[v]} - {graph.names[u]}", 0, 0, 0, others + after)
            if worst is None or impact.bisection_gbps_after < worst.bisection_gbps_after:
                worst = impact
    return worst


def endpoint_link_failure(planes: Sequence[Plane]) -> Impact | None:
    """The worst loss of one endpoint cable: a node with a single port on the network is cut
    off; otherwise the port's bandwidth is lost."""
    counts: dict[str, int] = {}
    for plane in planes:
        for port in plane.graph.attachments:
            counts[port.device] = counts.get(port.device, 0) + 1
    best: tuple[tuple[int, int], int, int] | None = None
    for position, plane in enumerate(planes):
        for number, port in enumerate(plane.graph.attachments):
            score = (1 if counts[port.device] == 1 else 0, port.gbps)
            if best is None or score > best[0]:
                best = (score, position, number)
    if best is None:
        return None
    (nodes, gbps), position, number = best
    plane = planes[position]
    port = plane.graph.attachments[number]
    after = _bisection_after(plane, plane.weighted, frozenset({number}), ())
    others = sum(p.bisection_gbps for i, p in enumerate(planes) if i != position)
    where = f"{port.device}/{port.port}"
    return Impact(where, 1, nodes, gbps, others + after)


def plane_failure(planes: Sequence[Plane], homes: dict[str, set[tuple[int, int]]]) -> Impact | None:
    """Losing a whole plane of a multi-plane network (the first; planes are built alike)."""
    if len(planes) < 2:
        return None
    lost = planes[0]
    number = lost.graph.plane
    nodes = sum(1 for places in homes.values() if all(p == number for p, _ in places))
    return Impact(
        f"plane {number + 1}",
        len(lost.graph.attachments),
        nodes,
        lost.graph.endpoint_gbps(),
        sum(p.bisection_gbps for p in planes[1:]),
    )
