"""Synthesis helper: the sizing rules of a fat-tree, as pure functions of block shapes.

Consumes counts (leaves and their uplinks, switch ports after breakout, guest links from other
networks); produces switch counts. No device is built here: the fat-tree pass (fattree.py) asks
these rules for every block's shape, then builds it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fabricc.catalog.models import SwitchModel
from fabricc.spec.resolve import switch_port_speeds

# No spine is a single point of failure: a leaf with two or more uplinks reaches at least two.
MIN_SPINES = 2


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def symmetric_width(
    uplinks: Sequence[tuple[int, int]],
    ports: int,
    breakout: int = 1,
    guest_ports: Callable[[int], int] | None = None,
    minimum: int = 1,
) -> int | None:
    """Smallest switch count S such that each of L leaves spreads its U uplinks evenly over S
    switches (S divides every U) and no switch needs more than `ports` ports, counting whole
    cages of `breakout` ports and the ports that guests of other networks take on each of S
    switches (`guest_ports(S)`, whole cages too). S is at least `minimum` where the uplinks
    allow it."""
    counts = [u for _, u in uplinks if u > 0]
    if not counts:
        return None
    common = math.gcd(*counts)
    widths = [w for w in divisors(common) if w >= minimum] or divisors(common)
    for width in widths:
        used = ports_used(uplinks, width, breakout)
        if used + (guest_ports(width) if guest_ports else 0) <= ports:
            return width
    return None


def ports_used(uplinks: Sequence[tuple[int, int]], width: int, breakout: int = 1) -> int:
    """Ports each of `width` switches gives L leaves' U uplinks spread evenly over them, in
    whole cages of `breakout` ports."""
    return -(-sum(leaves * u // width for leaves, u in uplinks) // breakout) * breakout


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
