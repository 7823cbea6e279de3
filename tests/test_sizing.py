"""The sizing rules (fabricc/synth/sizing.py) as properties: every width they return spreads
every leaf's uplinks evenly and fits the switch's ports with its guests."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from fabricc.spec.resolve import LeafBudget
from fabricc.synth.sizing import (
    LeafRow,
    TreeWidth,
    divisors,
    fits,
    pack_groups,
    ports_needed,
    spare_uplinks,
    symmetric_width,
    tree_width,
)

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


def test_one_fit_rule_counts_whole_cages_and_leaves_ports_free() -> None:
    """RA-11333, 3 SU: 24 leaves x 32 uplinks on 16 spines take 48 of 64 ports (free ports are
    fine); 31 leaves x 2 links on twin-port cages need 62 ports, 33 need 66 (whole cages)."""
    assert fits([(24, 32)], 16, 64)
    assert ports_needed([(24, 32)], 16) == 48
    assert not fits([(24, 32)], 12, 64)  # 12 does not divide 32
    assert ports_needed([(33, 2)], 1, 2) == 66
    assert ports_needed([(31, 1)], 1, 2) == 32  # 31 links round up to 16 cages
    assert not fits([(64, 1)], 1, 64, 2, lambda w: 1)  # a guest's port needs a cage too


def test_tree_width_keeps_own_uplinks_where_they_divide() -> None:
    rows = [LeafRow(24, 32, 0)]
    assert tree_width(rows, 64, 2, minimum=2) == TreeWidth(16, (32,))


def test_tree_width_raises_uplinks_from_spare_ports_for_two_tiers() -> None:
    """DGX storage leaves at 4:3 (24 uplinks, 8 spare) beside array leaves at 1:1 (16 uplinks,
    32 spare): no count divides 24 and 16 and fits (8 spines need 128 ports each), but 24 spines
    with one link from every leaf do, once the array leaves run 24 uplinks."""
    rows = [LeafRow(32, 24, 8), LeafRow(16, 16, 32)]
    assert symmetric_width([(r.leaves, r.uplinks) for r in rows], 64, 2, minimum=2) is None
    assert tree_width(rows, 64, 2, minimum=2) == TreeWidth(24, (24, 24))
    # without spare ports no such tree exists
    assert tree_width([LeafRow(32, 24), LeafRow(16, 16)], 64, 2, minimum=2) is None
    # and too many leaves for one link each: none either
    assert tree_width([LeafRow(64, 24, 8), LeafRow(4, 16, 32)], 64, 2, minimum=2) is None


def test_tree_width_raises_spine_uplinks_for_a_core() -> None:
    """The core above three spine-leaf groups (one each): two GPU groups' spines with 32
    uplinks and no free port, a storage group's 16 spines over 17 leaves with 17 uplinks (29
    free). 17 shares no divisor with 32, and one core would need 81 of its 64 ports; with an
    18th uplink two cores per group take 16 + 16 + 9 = 41 ports each."""
    rows = [LeafRow(1, 32, 0), LeafRow(1, 32, 0), LeafRow(1, 17, 29)]
    assert symmetric_width([(r.leaves, r.uplinks) for r in rows], 64, 2) is None
    assert tree_width(rows, 64, 2) == TreeWidth(2, (32, 32, 18))


@given(
    st.lists(st.tuples(st.integers(1, 40), st.integers(1, 32), st.integers(0, 32)), max_size=3),
    st.integers(1, 128),
)
def test_tree_width_is_symmetric_within_spare_ports(
    rows: list[tuple[int, int, int]], ports: int
) -> None:
    leaf_rows = [LeafRow(*row) for row in rows]
    width = tree_width(leaf_rows, ports, minimum=2)
    if width is None:
        return
    for row, up in zip(leaf_rows, width.uplinks, strict=True):
        assert row.uplinks <= up <= row.uplinks + row.spare
        assert up % width.switches == 0
    assert fits(
        [(r.leaves, u) for r, u in zip(leaf_rows, width.uplinks, strict=True)],
        width.switches,
        ports,
    )


def test_pack_groups_keeps_units_whole_and_caps_them() -> None:
    units = [[1, 2], [3, 4], [5, 6], [7]]
    assert pack_groups(units, 4) == [[1, 2, 3, 4], [5, 6, 7]]
    assert pack_groups(units, 5) == [[1, 2, 3, 4], [5, 6, 7]]  # a unit is never split
    assert pack_groups(units, 8, units_per_group=3) == [[1, 2, 3, 4, 5, 6], [7]]
    assert pack_groups(units, 8, one_per_group=True) == [[1, 2], [3, 4], [5, 6], [7]]


def test_spare_uplinks_are_the_free_ports_after_down_peer_and_up() -> None:
    """A QM9700 storage-array leaf at 1:1 with 16 endpoint ports (8 cages) and 16 uplinks: 24
    cages free after the endpoints, so 48 ports, 32 of them spare."""
    budget = LeafBudget(16, 400, 2, 16, 400, 2, 0)
    assert spare_uplinks(budget, 32) == 32
    assert spare_uplinks(LeafBudget(32, 400, 2, 32, 400, 2, 0), 32) == 0
