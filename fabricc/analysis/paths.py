"""Analysis, part 4: switch hops and equal-cost paths between the endpoints of a plane.

Consumes a PlaneGraph and its colour-refinement classes; produces the most switches on a
shortest path between two endpoint ports (endpoints on one switch: 1; two tiers: 3; three: 5)
and the number of equal-cost shortest paths between the farthest endpoints, counted by switch
sequence and by link (parallel links are separate next hops). Breadth-first search runs from
every endpoint switch in small planes and from one switch of each refinement class in large
ones (classes of a symmetric fat-tree are alike; the tests check both ways agree). The classes are
refined from the tiers and from which switches have endpoints, not how many Gb/s of them: paths
do not depend on that, and out-of-band leaves that differ only in their BMC count (hundreds of
classes at 100k GPUs) are then one class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabricc.analysis.graph import PlaneGraph
from fabricc.analysis.refine import Weighted, refine

EXACT_SOURCES = 64  # up to this many endpoint switches, search from each of them


@dataclass(frozen=True, slots=True)
class PathStats:
    max_switch_hops: int
    ecmp_paths: int  # fewest switch-level shortest paths between two farthest endpoints
    ecmp_link_paths: int  # the same, counting parallel links
    connected: bool  # every endpoint reaches every other


def path_classes(graph: PlaneGraph, weighted: Weighted) -> list[int]:
    """Refinement classes for the search sources: from each switch's tier and whether it has
    endpoints."""
    attached = graph.attached()
    return refine(
        weighted, [(role, gbps > 0) for role, gbps in zip(graph.roles, attached, strict=True)]
    ).colours


def path_stats(graph: PlaneGraph, base: Sequence[int]) -> PathStats | None:
    """`base`: path_classes of the graph (or a finer partition)."""
    attached = graph.attached()
    targets = [v for v, gbps in enumerate(attached) if gbps]
    if not targets:
        return None
    if len(targets) <= EXACT_SOURCES:
        sources = targets
    else:
        first: dict[int, int] = {}
        for v in targets:
            first.setdefault(base[v], v)
        sources = sorted(first.values())
    links = [tuple((u, n) for u, (n, _) in near.items()) for near in graph.adjacency]
    farthest = -1
    paths = 0
    link_paths = 0
    connected = True
    for source in sources:
        dist, count, link_count = _search(links, source)
        for target in targets:
            d = dist[target]
            if d < 0:
                connected = False
                continue
            if d > farthest:
                farthest, paths, link_paths = d, count[target], link_count[target]
            elif d == farthest:
                paths = min(paths, count[target])
                link_paths = min(link_paths, link_count[target])
    return PathStats(farthest + 1, paths, link_paths, connected)


def _search(
    links: Sequence[tuple[tuple[int, int], ...]], source: int
) -> tuple[list[int], list[int], list[int]]:
    """Breadth-first from `source`: per node its distance (-1: unreachable) and the number of
    shortest paths to it, by switch sequence and by link (`links`: per node, its neighbours
    with the number of parallel links to each)."""
    size = len(links)
    dist = [-1] * size
    count = [0] * size
    link_count = [0] * size
    dist[source], count[source], link_count[source] = 0, 1, 1
    frontier = [source]
    step = 0
    while frontier:
        step += 1
        following: list[int] = []
        for v in frontier:
            paths, link_paths = count[v], link_count[v]
            for u, parallel in links[v]:
                d = dist[u]
                if d < 0:
                    dist[u] = step
                    count[u] = paths
                    link_count[u] = link_paths * parallel
                    following.append(u)
                elif d == step:
                    count[u] += paths
                    link_count[u] += link_paths * parallel
        frontier = following
    return dist, count, link_count
