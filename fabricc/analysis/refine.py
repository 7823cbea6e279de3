"""Analysis, part 2: colour refinement - classes of switches that the graph cannot tell apart.

Consumes a weighted graph and starting colours; produces a stable colouring (1-dimensional
Weisfeiler-Leman with edge weights): members of a class have the same multiset of (neighbour
class, link Gb/s), hence the same total capacity to every class - an equitable partition.
Max-flow on the quotient graph of an equitable partition equals max-flow on the full graph
(spread each quotient flow evenly over the members of a class: conservation and capacities
hold because every member sees the same capacities), so a symmetric fat-tree of 6,000 switches
reduces to a handful of classes. Refinement is incremental: after the first round only the
neighbours of switches whose class changed are looked at again (a class that splits keeps its
colour on its largest part, so most of a split needs no second look: Hopcroft's rule), and given a colouring already
equitable for the graph (the classes before the halves were coloured, or before a failure), the
first round too looks only at the switches near what changed.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from operator import add, itemgetter
from typing import Any

_SHIFT = 40  # a neighbour's class and the link's Gb/s packed into one int (Gb/s < 2**40)
_MASK = (1 << _SHIFT) - 1
_gbps = itemgetter(1)


@dataclass(frozen=True, slots=True)
class Weighted:
    """A graph as flat arrays: per node, its neighbours and the Gb/s to each."""

    neighbours: list[tuple[int, ...]]
    weights: list[tuple[int, ...]]

    @classmethod
    def of(cls, adjacency: Sequence[dict[int, tuple[int, int]]]) -> Weighted:
        return cls(
            [tuple(links) for links in adjacency],
            [tuple(map(_gbps, links.values())) for links in adjacency],
        )

    def without_node(self, node: int) -> Weighted:
        neighbours, weights = list(self.neighbours), list(self.weights)
        for other in self.neighbours[node]:
            pairs = [
                (u, w)
                for u, w in zip(self.neighbours[other], self.weights[other], strict=True)
                if u != node
            ]
            neighbours[other] = tuple(u for u, _ in pairs)
            weights[other] = tuple(w for _, w in pairs)
        neighbours[node], weights[node] = (), ()
        return Weighted(neighbours, weights)

    def with_weight(self, a: int, b: int, gbps: int) -> Weighted:
        """The same graph with the a-b edge set to `gbps` (0 removes it)."""
        neighbours, weights = list(self.neighbours), list(self.weights)
        for x, y in ((a, b), (b, a)):
            pairs = [
                (u, gbps if u == y else w)
                for u, w in zip(self.neighbours[x], self.weights[x], strict=True)
            ]
            pairs = [(u, w) for u, w in pairs if w]
            neighbours[x] = tuple(u for u, _ in pairs)
            weights[x] = tuple(w for _, w in pairs)
        return Weighted(neighbours, weights)


@dataclass(frozen=True, slots=True)
class Classes:
    colours: list[int]  # class per node, numbered in order of appearance (deterministic)
    capacity: dict[tuple[int, int], int]  # (class, other class) -> total Gb/s between them


def refine(
    graph: Weighted,
    start: Sequence[Any],
    stable: Sequence[int] | None = None,
    touched: Collection[int] = (),
) -> Classes:
    """The coarsest equitable partition that refines `start`.

    `stable`, when given, is a colouring that `start` refines and that is equitable for this
    graph except at the `touched` nodes (whose links changed since). The first round then
    looks only at the touched nodes and the neighbours of classes that `start` splits: every
    other member of a class has the same signature as any other such member."""
    neighbours, weights = graph.neighbours, graph.weights
    colours = _number(start)
    members: dict[int, list[int]] = {}
    for v, colour in enumerate(colours):
        members.setdefault(colour, []).append(v)
    count = len(members)
    scaled = [colour << _SHIFT for colour in colours]
    lookup = scaled.__getitem__
    signatures: list[tuple[int, ...]] = [()] * len(colours)
    dirty: Sequence[int] = range(len(colours))
    if stable is not None:
        dirty = _first_dirty(graph, colours, stable, touched)
        shared: dict[int, tuple[int, ...]] = {}
        marked = set(dirty)
        for v, colour in enumerate(colours):
            if v in marked:
                continue
            found = shared.get(colour)
            if found is None:
                found = shared[colour] = tuple(
                    sorted(map(add, map(lookup, neighbours[v]), weights[v]))
                )
            signatures[v] = found
    while True:
        for v in dirty:
            signatures[v] = tuple(sorted(map(add, map(lookup, neighbours[v]), weights[v])))
        changed: list[int] = []
        for colour in sorted({colours[v] for v in dirty}):
            groups: dict[tuple[int, ...], list[int]] = {}
            for v in members[colour]:
                groups.setdefault(signatures[v], []).append(v)
            if len(groups) == 1:
                continue
            # The largest part (the first of equals) keeps the colour: the signatures of its
            # neighbours still read true, so only the other parts' neighbours are looked at
            # again (Hopcroft's rule; the colours are renumbered in node order at the end).
            parts = list(groups.values())
            kept = max(parts, key=len)
            members[colour] = kept
            for part in parts:
                if part is kept:
                    continue
                members[count] = part
                for v in part:
                    colours[v] = count
                    scaled[v] = count << _SHIFT
                changed.extend(part)
                count += 1
        if not changed:
            return _numbered(colours, _quotient(members, signatures))
        dirty = sorted({u for v in changed for u in neighbours[v]})


def _first_dirty(
    graph: Weighted, colours: Sequence[int], stable: Sequence[int], touched: Collection[int]
) -> list[int]:
    """The touched nodes and the neighbours of every node in a class of `stable` that the
    starting colours split."""
    first: dict[int, int] = {}
    split: set[int] = set()
    for old, colour in zip(stable, colours, strict=True):
        if first.setdefault(old, colour) != colour:
            split.add(old)
    found = set(touched)
    neighbours = graph.neighbours
    for v, old in enumerate(stable):
        if old in split:
            found.update(neighbours[v])
    return sorted(found)


def _numbered(colours: list[int], capacity: dict[tuple[int, int], int]) -> Classes:
    """The classes with their colours numbered in order of first appearance: the same partition
    gives the same Classes whichever order its classes were split in."""
    numbered = _number(colours)
    ids = dict(zip(colours, numbered, strict=True))
    return Classes(numbered, {(ids[a], ids[b]): gbps for (a, b), gbps in capacity.items()})


def _number(values: Sequence[Any]) -> list[int]:
    """Number distinct values in order of first appearance (node order is stable)."""
    ids: dict[Any, int] = {}
    return [ids.setdefault(value, len(ids)) for value in values]


def _quotient(
    members: dict[int, list[int]], signatures: list[tuple[int, ...]]
) -> dict[tuple[int, int], int]:
    """Capacity between classes: members of a class are alike, so one member's links times
    the class size (the signatures are current once nothing changes)."""
    capacity: dict[tuple[int, int], int] = {}
    for colour, group in members.items():
        for packed in signatures[group[0]]:
            other, gbps = packed >> _SHIFT, packed & _MASK
            if other != colour:
                key = (colour, other)
                capacity[key] = capacity.get(key, 0) + gbps * len(group)
    return capacity
