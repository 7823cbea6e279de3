"""The rack layout's outlet count (synth/racks._Layout.outlets_fit): its running count per
switch rack (_Tally) gives at every placement tried the answer of the recount over the rack's
devices (pdu_count, outlets_hold)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricc.ir import Device
from fabricc.synth import racks
from tests.support import EXAMPLES, compile_text

SMALL_PDU = (
    "parts:\n  pdu-small:\n    category: pdu\n    description: small PDU\n"
    "    part_number: PDU-SMALL\n    source: test\n    outlets_c13: 12\n"
    "    outlets_c19: 6\n    rating_w: 9000\n"
)


def _variants() -> list[tuple[str, str]]:
    dgx = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    small = dgx.replace("    power_kw: 45", "    power_kw: 45\n    pdu_model: pdu-small")
    small = small.replace("site:\n", "catalog: [pdu.yaml]\nsite:\n", 1)
    xdr = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    return [
        ("dgx", dgx),
        ("small-pdus", small),
        ("two-feeds", small.replace("  rack:\n", "  rack:\n    feeds: 2\n", 1)),
        ("xdr-25kw", xdr.replace("  rack:\n", "  rack:\n    air_cooled_kw: 25\n", 1)),
    ]


@pytest.mark.parametrize(("name", "text"), _variants(), ids=[n for n, _ in _variants()])
def test_the_running_count_answers_as_the_recount(
    name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pdu.yaml").write_text(SMALL_PDU)
    counted = racks._Layout.outlets_fit
    answers: list[bool] = []

    def both(layout: racks._Layout, rack: racks.RackPlan, extra: list[Device]) -> bool:
        answer = counted(layout, rack, extra)
        devices = [*rack.devices, *extra]
        pdus = racks.pdu_count(layout.fabric, devices, rack.role, rack.capacity)
        cords = [c for c in map(layout.cords_of, devices) if c is not None]
        held = 1 if rack.held_outlets else 0
        assert answer == racks.outlets_hold(layout.fabric, pdus, cords, held), rack.name
        answers.append(answer)
        return answer

    monkeypatch.setattr(racks._Layout, "outlets_fit", both)
    compile_text(text, tmp_path)
    assert any(answers), name
    if name in ("small-pdus", "two-feeds"):  # PDUs of 12 C13s fill: some placements refused
        assert not all(answers), name
