"""The sizing rules (fabricc/synth/sizing.py) as properties: every width they return spreads
every leaf's uplinks evenly and fits the switch's ports with its guests."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from fabricc.synth.sizing import divisors, symmetric_width

UPLINKS = st.lists(st.tuples(st.integers(1, 64), st.integers(1, 64)), min_size=1, max_size=4)


@given(UPLINKS, st.integers(1, 256), st.integers(0, 32), st.integers(1, 4))
def test_width_is_symmetric_and_fits(
    uplinks: list[tuple[int, int]], ports: int, guests: int, minimum: int
) -> None:
    width = symmetric_width(uplinks, ports, 1, lambda w: -(-guests // w), minimum)
    common = math.gcd(*(u for _, u in uplinks))
    if width is None:
        # no divisor of the common uplink count fits
        assert all(
            sum(n * u // w for n, u in uplinks) + -(-guests // w) > ports for w in divisors(common)
        )
        return
    assert common % width == 0
    assert sum(n * u // width for n, u in uplinks) + -(-guests // width) <= ports
    if width < minimum:
        assert all(d < minimum for d in divisors(common))


def test_ra_11333_three_units_need_16_spines() -> None:
    """24 leaves x 32 uplinks on 64-port spines: 12 would not divide 32, so 16."""
    assert symmetric_width([(24, 32)], 64) == 16


def test_guests_grow_the_tier() -> None:
    assert symmetric_width([(6, 12)], 64) == 2
    assert symmetric_width([(6, 12)], 64, 1, lambda w: 60 // w) == 3
