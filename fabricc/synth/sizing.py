"""Synthesis helper: the sizing rules of a fat-tree, as pure functions of block shapes.

Consumes counts (leaves and their uplinks and free ports, switch ports after breakout, guest
links from other networks, units of leaves); produces switch counts, uplinks per leaf and
spine-leaf groups. One fit rule (`fits`) answers "do these switches fit" for every tier and
path. No device is built here: the fat-tree pass (fattree.py) asks these rules for every
block's shape, then builds and wires it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from fabricc.catalog.models import SwitchModel
from fabricc.spec.resolve import LeafBudget, switch_port_speeds

T = TypeVar("T")

# No spine is a single point of failure: a leaf with two or more uplinks reaches at least two.
MIN_SPINES = 2


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def ports_needed(
    uplinks: Sequence[tuple[int, int]],
    width: int,
    breakout: int = 1,
    guest_ports: Callable[[int], int] | None = None,
) -> int:
    """Ports each of `width` upper switches needs when L leaves spread their U uplinks evenly
    over them (U / width links from each leaf to each switch), in whole cages of `breakout`
    ports, plus the ports guests of other networks take on each (`guest_ports(width)`)."""
    used = -(-sum(leaves * u // width for leaves, u in uplinks) // breakout) * breakout
    return used + (guest_ports(width) if guest_ports else 0)


def fits(
    uplinks: Sequence[tuple[int, int]],
    width: int,
    ports: int,
    breakout: int = 1,
    guest_ports: Callable[[int], int] | None = None,
) -> bool:
    """The one "do these switches fit" rule, for every tier and every path (chosen or written
    counts, spines of a 2-tier tree, spines of a spine-leaf group, cores of a core group): a
    symmetric tree of `width` upper switches exists when every leaf's uplink count U is k *
    width (k links from each leaf to each switch) and the L * k links of all leaves, in whole
    cages, with the guests' ports, fit a switch's `ports`. A switch may leave ports free."""
    if width < 1 or any(u % width for _, u in uplinks if u > 0):
        return False
    return ports_needed(uplinks, width, breakout, guest_ports) <= ports


def symmetric_width(
    uplinks: Sequence[tuple[int, int]],
    ports: int,
    breakout: int = 1,
    guest_ports: Callable[[int], int] | None = None,
    minimum: int = 1,
) -> int | None:
    """Smallest switch count S that `fits` (S divides every leaf's uplinks U, and the upper
    switches have the ports), at least `minimum` where the uplinks allow it."""
    counts = [u for _, u in uplinks if u > 0]
    if not counts:
        return None
    common = math.gcd(*counts)
    widths = [w for w in divisors(common) if w >= minimum] or divisors(common)
    for width in widths:
        if fits(uplinks, width, ports, breakout, guest_ports):
            return width
    return None


@dataclass(frozen=True, slots=True)
class LeafRow:
    """The leaves of one class as the tier above sees them: how many, the uplinks each needs
    for its oversubscription ratio, and the free ports each could add as uplinks."""

    leaves: int
    uplinks: int
    spare: int = 0


@dataclass(frozen=True, slots=True)
class TreeWidth:
    """A symmetric tier above leaf rows: its switch count and each row's uplinks per leaf (its
    own count, or more where spare ports make the tree possible)."""

    switches: int
    uplinks: tuple[int, ...]


def tree_width(
    rows: Sequence[LeafRow],
    ports: int,
    breakout: int = 1,
    guest_ports: Callable[[int], int] | None = None,
    minimum: int = 1,
) -> TreeWidth | None:
    """The upper tier of a symmetric tree over leaves of several classes, or None if none
    exists. First the smallest count that spreads every leaf's own uplinks evenly
    (symmetric_width). Where the classes' counts share no such divisor (DGX storage leaves at
    4:3 with 24 uplinks beside storage-array leaves at 1:1 with 16), a leaf may run better than
    its ratio: each class takes the fewest k * S uplinks at or above its own count that its free
    ports allow, and the count S that adds the fewest uplinks in all (then the smallest) wins."""
    own = [(r.leaves, r.uplinks) for r in rows]
    width = symmetric_width(own, ports, breakout, guest_ports, minimum)
    if width is not None:
        return TreeWidth(width, tuple(r.uplinks for r in rows))
    live = [r for r in rows if r.uplinks > 0]
    if not live:
        return None
    best: tuple[int, int, tuple[int, ...]] | None = None
    for switches in range(max(1, minimum), min(r.uplinks + r.spare for r in live) + 1):
        raised = tuple(-(-r.uplinks // switches) * switches for r in rows)
        if any(u > r.uplinks + r.spare for u, r in zip(raised, rows, strict=True)):
            continue
        grown = [(r.leaves, u) for r, u in zip(rows, raised, strict=True)]
        if not fits(grown, switches, ports, breakout, guest_ports):
            continue
        added = sum(r.leaves * (u - r.uplinks) for r, u in zip(rows, raised, strict=True))
        if best is None or (added, switches) < best[:2]:
            best = (added, switches, raised)
    return TreeWidth(best[1], best[2]) if best is not None else None


def spare_uplinks(budget: LeafBudget, cages: int) -> int:
    """Ports a leaf of `cages` general cages leaves free beyond its endpoint ports, peer link and
    uplinks: the uplinks it could add (tree_width) at its uplink breakout."""
    free = cages - budget.reserved_cages - budget.down_cages
    return max(0, free * budget.up_breakout - budget.up_ports)


def pack_groups(
    units: Sequence[Sequence[T]],
    max_leaves: int,
    *,
    units_per_group: int | None = None,
    one_per_group: bool = False,
) -> list[list[T]]:
    """Consecutive units (the leaves of a scalable unit, or one leaf or MLAG pair) packed into
    spine-leaf groups of at most `max_leaves` leaves and at most `units_per_group` units; with
    `one_per_group`, every unit a group of its own. A unit is never split."""
    groups: list[list[T]] = []
    current: list[T] = []
    count = 0
    for unit in units:
        full = (
            len(current) + len(unit) > max_leaves
            or (units_per_group is not None and count >= units_per_group)
            or one_per_group
        )
        if current and full:
            groups.append(current)
            current, count = [], 0
        current.extend(unit)
        count += 1
    if current:
        groups.append(current)
    return groups


@dataclass(frozen=True, slots=True)
class Guests:
    """Links from other networks (uplink_to) that land on a network's top tier, spread
    round-robin over its switches; their ports are reserved before the tier is sized."""

    links: int
    speed: int  # Gb/s per link

    def ports(self, model: SwitchModel, fabric_speed: int, switches: int) -> int:
        """Ports (at fabric speed, whole cages) one of `switches` top-tier switches gives up."""
        if self.links <= 0 or switches <= 0:
            return 0
        speeds = switch_port_speeds(model)
        per_switch = -(-self.links // switches)
        cages = -(-per_switch // speeds.get(self.speed, 1))
        return cages * speeds[fabric_speed]
