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
from typing import TypeVar

from fabricc.ir import Link

K = TypeVar("K", bound=Hashable)


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
    bundles: dict[tuple[str, str], Bundle] = {}
    for link in links:
        a, b = box_of.get(link.a), box_of.get(link.b)
        if a is None or b is None or a == b:
            continue
        entry = bundles.get((a, b))
        if entry is None:
            entry = bundles[(a, b)] = Bundle(a, b)
        entry.links += 1
        entry.gbps += link.speed
        entry.speeds[link.speed] += 1
        entry.rails[link.rail] += 1
        entry.kinds[link.kind] += 1
    return list(bundles.values())


def ordinal_range(first: int, last: int) -> str:
    return f"{first}" if first == last else f"{first}–{last}"
