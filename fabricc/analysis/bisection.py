"""Analysis, part 3: bisection bandwidth of a plane by max-flow between two halves of its endpoints.

Consumes a PlaneGraph; produces the max-flow (Gb/s, one direction) from one half of the endpoint
ports to the other for each natural split - by position in the design (whole scalable units and
pods on each side) and, in rail-optimized planes, by rail - and their minimum: the bisection.
Endpoints are contracted into their switch (a source/sink edge as wide as their ports), the graph
into its colour-refinement classes (fabricc.analysis.refine), and networkx computes max-flow on
that quotient, which has the same value as on the full graph.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from fabricc.analysis.graph import Attachment, PlaneGraph
from fabricc.analysis.refine import Weighted, refine

SOURCE = -1
SINK = -2


@dataclass(frozen=True, slots=True)
class Split:
    name: str  # "units" (endpoints in design order) or "rails"
    first: frozenset[int]  # attachment indices of the first half
    first_gbps: tuple[int, ...]  # per switch, endpoint Gb/s of the first half attached to it
    second_gbps: tuple[int, ...]  # the same for the second half


def splits(graph: PlaneGraph) -> list[Split]:
    """Halves of the endpoint ports, each half carrying as close to half the endpoint bandwidth
    as whole ports allow."""
    ports = graph.attachments
    if len(ports) < 2:
        return []
    units = [_unit_key(port) for port in ports]
    found = [_split(graph, "units", _half(ports, sorted(range(len(ports)), key=units.__getitem__)))]
    rails = {p.rail for p in ports if p.rail is not None}
    if len(rails) > 1:
        keyed = [(_rail_key(port), unit) for port, unit in zip(ports, units, strict=True)]
        ordered = sorted(range(len(ports)), key=keyed.__getitem__)
        found.append(_split(graph, "rails", _half(ports, ordered)))
    return found


def _split(graph: PlaneGraph, name: str, first: frozenset[int]) -> Split:
    """The split with its per-switch endpoint Gb/s on either side, summed once."""
    one = [0] * len(graph.names)
    two = [0] * len(graph.names)
    for number, port in enumerate(graph.attachments):
        (one if number in first else two)[port.switch] += port.gbps
    return Split(name, first, tuple(one), tuple(two))


def _unit_key(port: Attachment) -> tuple[int, str]:
    return port.order, port.port


def _rail_key(port: Attachment) -> tuple[bool, int]:
    return port.rail is None, port.rail or 0


def _half(ports: Sequence[Attachment], ordered: list[int]) -> frozenset[int]:
    total = sum(p.gbps for p in ports)
    best, best_gap, running = 0, total, 0
    for count, index in enumerate(ordered, start=1):
        running += ports[index].gbps
        gap = abs(total - 2 * running)
        if gap < best_gap:
            best, best_gap = count, gap
    return frozenset(ordered[:best])


def max_flow(
    graph: PlaneGraph,
    weighted: Weighted,
    start: Sequence[int],
    split: Split,
    lost: frozenset[int] = frozenset(),
    touched: Collection[int] | None = None,
) -> tuple[int, list[int]]:
    """Gb/s from the first half of the endpoints to the second (`lost` attachments are gone),
    and the refinement classes used.

    `start` is any colouring of the switches (the refinement classes of the undamaged graph
    make it fast); refining it with each switch's endpoint bandwidth on either side gives an
    equitable partition, and max-flow on its quotient graph is max-flow on the whole.
    `touched` (when given) says `start` is equitable for `weighted` but at those switches,
    which lets refinement begin where the halves and the changes are."""
    first = list(split.first_gbps)
    second = list(split.second_gbps)
    for number in lost:
        port = graph.attachments[number]
        (first if number in split.first else second)[port.switch] -= port.gbps
    coloured = list(zip(start, first, second, strict=True))
    classes = refine(weighted, coloured, None if touched is None else start, touched or ())
    colours = classes.colours
    if not any(first) or not any(second):
        return 0, colours
    capacity = dict(classes.capacity)
    for v, colour in enumerate(colours):
        if first[v]:
            capacity[(SOURCE, colour)] = capacity.get((SOURCE, colour), 0) + first[v]
        if second[v]:
            capacity[(colour, SINK)] = capacity.get((colour, SINK), 0) + second[v]
    # networkx loads here, not at import: 0.2 s a build whose analysis runs in its worker
    # process (fabricc.analysis.worker) would otherwise pay for nothing
    import networkx as nx
    from networkx.algorithms.flow import shortest_augmenting_path

    network = nx.DiGraph()
    network.add_nodes_from((SOURCE, SINK))
    for (a, b), gbps in sorted(capacity.items()):
        network.add_edge(a, b, capacity=gbps)
    # shortest augmenting paths: the fastest of networkx's on these small quotients (measured)
    flow = nx.maximum_flow_value(network, SOURCE, SINK, flow_func=shortest_augmenting_path)
    return int(flow), colours
