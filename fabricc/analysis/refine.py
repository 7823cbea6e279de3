"""Analysis, part 2: colour refinement - classes of switches that the graph cannot tell apart.

Consumes a weighted adjacency and starting colours; produces a stable colouring (1-dimensional
Weisfeiler-Leman with edge weights): members of a class have the same multiset of (neighbour
class, link Gb/s), hence the same total capacity to every class - an equitable partition.
Max-flow on the quotient graph of an equitable partition equals max-flow on the full graph
(spread each quotient flow evenly over the members of a class: conservation and capacities
hold because every member sees the same capacities), so a symmetric fat-tree of 6,000 switches
reduces to a handful of classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import add, itemgetter
from typing import Any


@dataclass(frozen=True, slots=True)
class Classes:
    colours: list[int]  # class per node, numbered in node order (deterministic)
    capacity: dict[tuple[int, int], int]  # (class, other class) -> total Gb/s between them


def refine(adjacency: Sequence[dict[int, tuple[int, int]]], start: Sequence[Any]) -> Classes:
    neighbours = [tuple(links) for links in adjacency]
    weights = [tuple(map(_gbps, links.values())) for links in adjacency]
    colours = _number(start)
    classes = max(colours, default=-1) + 1
    while True:
        # A neighbour's class and the link's Gb/s packed into one int sort fast (Gb/s < 2**40).
        scaled = [colour << _SHIFT for colour in colours]
        lookup = scaled.__getitem__
        signatures = [
            (colours[v], tuple(sorted(map(add, map(lookup, neighbours[v]), weights[v]))))
            for v in range(len(neighbours))
        ]
        refined = _number(signatures)
        count = max(refined, default=-1) + 1
        if count == classes:
            return Classes(colours, _quotient(colours, signatures))
        colours, classes = refined, count


_SHIFT = 40
_gbps = itemgetter(1)
_MASK = (1 << _SHIFT) - 1


def _number(values: Sequence[Any]) -> list[int]:
    """Number distinct values in order of first appearance (node order is stable)."""
    ids: dict[Any, int] = {}
    return [ids.setdefault(value, len(ids)) for value in values]


def _quotient(
    colours: list[int], signatures: list[tuple[int, tuple[int, ...]]]
) -> dict[tuple[int, int], int]:
    """Capacity between classes: members of a class are alike, so one member's links times
    the class size. In the final round the signatures carry the final colours."""
    size: dict[int, int] = {}
    member: dict[int, int] = {}
    for v, colour in enumerate(colours):
        size[colour] = size.get(colour, 0) + 1
        member.setdefault(colour, v)
    capacity: dict[tuple[int, int], int] = {}
    for colour, v in member.items():
        for packed in signatures[v][1]:
            other, gbps = packed >> _SHIFT, packed & _MASK
            if other != colour:
                key = (colour, other)
                capacity[key] = capacity.get(key, 0) + gbps * size[colour]
    return capacity
