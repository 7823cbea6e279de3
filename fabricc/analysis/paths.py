"""Analysis, part 4: switch hops and equal-cost paths between the endpoints of a plane.

Consumes a PlaneGraph and its colour-refinement classes; produces the most switches on a
shortest path between two endpoint ports (endpoints on one switch: 1; two tiers: 3; three: 5)
and the number of equal-cost shortest paths between the farthest endpoints, counted by switch
sequence and by link (parallel links are separate next hops). Breadth-first search runs from
every endpoint switch in small planes and from one switch of each refinement class in large
ones (classes of a symmetric fat-tree are alike; the tests check both ways agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fabricc.analysis.graph import PlaneGraph

EXACT_SOURCES = 64  # up to this many endpoint switches, search from each of them


@dataclass(frozen=True, slots=True)
class PathStats:
    max_switch_hops: int
    ecmp_paths: int  # fewest switch-level shortest paths between two farthest endpoints
    ecmp_link_paths: int  # the same, counting parallel links
    connected: bool  # every endpoint reaches every other


def path_stats(graph: PlaneGraph, base: Sequence[int]) -> PathStats | None:
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
    farthest = -1
    paths = 0
    link_paths = 0
    connected = True
    for source in sources:
        dist, count, link_count = _search(graph, source)
        for target in targets:
            if target not in dist:
                connected = False
                continue
            d = dist[target]
            if d > farthest:
                farthest, paths, link_paths = d, count[target], link_count[target]
            elif d == farthest:
                paths = min(paths, count[target])
                link_paths = min(link_paths, link_count[target])
    return PathStats(farthest + 1, paths, link_paths, connected)


def _search(
    graph: PlaneGraph, source: int
) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    dist = {source: 0}
    count = {source: 1}
    link_count = {source: 1}
    frontier = [source]
    while frontier:
        following: list[int] = []
        for v in frontier:
            step = dist[v] + 1
            for u, (links, _) in graph.adjacency[v].items():
                if u not in dist:
                    dist[u] = step
                    count[u] = 0
                    link_count[u] = 0
                    following.append(u)
                if dist[u] == step:
                    count[u] += count[v]
                    link_count[u] += link_count[v] * links
        frontier = following
    return dist, count, link_count
