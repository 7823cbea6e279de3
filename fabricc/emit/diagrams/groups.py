"""Diagrams helper: aggregation, so that a picture stays readable at any scale.

Consumes devices and links of the Fabric IR; produces groups of devices (one box each), elided
runs of groups (the first few, one '... N more' box, the last) and link bundles between boxes
with their link count, speeds and rails. Everything keeps the order of its input, which is the
IR's stable order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TypeVar

from fabricc.ir import Link

K = TypeVar("K", bound=Hashable)
_speed = attrgetter("speed")
_rail = attrgetter("rail")
_kind = attrgetter("kind")


@dataclass(slots=True)
class Group:
    """Devices drawn as one box. `hidden` counts the groups an ellipsis box stands for."""

    key: Hashable
    members: list[str]
    hidden: int = 0
    first_key: Hashable = None
    last_key: Hashable = None

    @property
    def is_ellipsis(self) -> bool:
        return self.hidden > 0


def group_by(items: Iterable[str], key: Callable[[str], K]) -> list[Group]:
    """Group in order of first appearance."""
    groups: dict[K, Group] = {}
    for item in items:
        k = key(item)
        if k not in groups:
            groups[k] = Group(k, [])
        groups[k].members.append(item)
    return list(groups.values())


def elide(groups: Sequence[Group], cap: int) -> list[Group]:
    """At most `cap` groups: the first cap-2, one ellipsis for the middle, and the last."""
    if len(groups) <= cap:
        return list(groups)
    head = list(groups[: cap - 2])
    middle = groups[cap - 2 : -1]
    merged = Group(
        ("more", middle[0].key),
        [m for g in middle for m in g.members],
        hidden=len(middle),
        first_key=middle[0].key,
        last_key=middle[-1].key,
    )
    return [*head, merged, groups[-1]]


@dataclass(slots=True)
class Bundle:
    """The links between two boxes."""

    a: str
    b: str
    links: int = 0
    gbps: int = 0
    speeds: Counter[int] = field(default_factory=Counter)
    rails: Counter[int | None] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def rail(self) -> int | None:
        """The rail when every link of the bundle is on the same one."""
        return next(iter(self.rails)) if len(self.rails) == 1 else None


def bundle(links: Iterable[Link], box_of: Mapping[str, str]) -> list[Bundle]:
    """Links between boxes, one bundle per pair; links inside one box are left out."""
    members: dict[tuple[str, str], list[Link]] = {}
    for link in links:
        a, b = box_of.get(link.a), box_of.get(link.b)
        if a is None or b is None or a == b:
            continue
        found = members.get((a, b))
        if found is None:
            members[(a, b)] = [link]
        else:
            found.append(link)
    return [
        Bundle(
            a,
            b,
            len(group),
            sum(map(_speed, group)),
            Counter(map(_speed, group)),
            Counter(map(_rail, group)),
            Counter(map(_kind, group)),
        )
        for (a, b), group in members.items()
    ]


def ordinal_range(first: int, last: int) -> str:
    return f"{first}" if first == last else f"{first}–{last}"


def unit_numbers(numbers: list[int]) -> str:
    """Sorted unit numbers as a reader writes them: 3, 2–4, 2, 5, 9, or 2, 3, … (254 units)
    for a long irregular list (units kept from an earlier build need not number in a row)."""
    if numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return ordinal_range(numbers[0], numbers[-1])
    if len(numbers) <= 8:
        return ", ".join(map(str, numbers))
    return f"{numbers[0]}, {numbers[1]}, … ({len(numbers)} units)"
