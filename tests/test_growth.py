"""Stable identity under growth (hypothesis): grow a generated design and diff the two.

Growing the node count (more nodes, SUs, leaves) must keep every existing device name and every
cable ID of a cable whose two ends stay; a data-network cable may only move or go when the
topology has to change (a spine count or the tier count), and then `diff` must say so. Leaf
loopbacks and ASNs of a routed fabric stay while its spines do. Rack positions - and with them
PDU names, out-of-band ports and management addresses - follow the rack layout, which may move
when a design grows; diff reports those as identity changes and this test leaves them out.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricc.change.compare import ADDED, CHANGED, RENUMBERED, Diff, diff
from fabricc.change.snapshot import Snapshot, compile_files, from_files
from tests.test_properties import Case, cases


def snapshot(case: Case, folder: Path, name: str) -> Snapshot:
    spec = folder / f"{name}.yaml"
    spec.write_text(case.text())
    return from_files(name, compile_files(spec))


def topology_changed(result: Diff, network: str) -> bool:
    return any(
        note.startswith(f"network {network}: ") and ("tiers" in note or "s " in note.split(": ")[1])
        for note in result.topology
        if "rewire" not in note
    )


@st.composite
def growths(draw: st.DrawFn) -> tuple[Case, Case]:
    # One endpoint group per network: a top-of-rack network (in-band) places a second group's
    # ports after the first group's, so those move when the first grows (README, known gap).
    case = dataclasses.replace(draw(cases()), ufm=0)
    limit = 6 if case.model == "gb200-nvl72" else 100
    if case.count >= limit:
        case = dataclasses.replace(case, count=limit - 1)
    grown = dataclasses.replace(case, count=draw(st.integers(case.count + 1, limit)))
    return case, grown


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(growths())
def test_growth_keeps_identities(pair: tuple[Case, Case]) -> None:
    small, large = pair
    with tempfile.TemporaryDirectory() as tmp:
        old = snapshot(small, Path(tmp), "old")
        new = snapshot(large, Path(tmp), "new")
    result = diff(old, new)

    # PDUs are named after their rack, which follows the rack layout
    kept = {name for name, row in old.devices.items() if row["kind"] != "pdu"}
    assert kept <= set(new.devices)
    for network in sorted({c.network for c in result.cables} - {"oob"}):
        if not topology_changed(result, network):
            renumbered = [
                c for c in result.cables if c.network == network and c.change == RENUMBERED
            ]
            assert not renumbered, f"{network}: {renumbered[0]}"
        moved = [
            c for c in result.cables if c.network == network and c.change not in (ADDED, CHANGED)
        ]
        if moved and not topology_changed(result, network):
            raise AssertionError(
                f"{network}: {len(moved)} cables moved without a topology change, e.g. {moved[0]}"
            )
        if not topology_changed(result, network):
            for name, row in old.devices.items():
                if row["network"] == network and row["role"] == "leaf":
                    after = new.devices[name]
                    assert (after["loopback"], after["asn"]) == (row["loopback"], row["asn"])
    assert any(c.change == ADDED for c in result.cables)
