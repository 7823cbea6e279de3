"""Power in the BOM: a cord per power supply, PDU outlets and rating per A/B feed, rack weight
against the floor limit, spares as lines of their own - each with its source."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pytest

from fabricc.emit import Artifact
from fabricc.errors import DesignError
from fabricc.synth.power import rack_power
from tests.configs_support import by_path
from tests.support import EXAMPLES, compile_text, compiled

DGX_PSUS = 6  # DGX H100 user guide: six PSUs with C19/C20 cords


def bom_rows(files: dict[str, str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files["bom/bom.csv"])))


def text_files(artifacts: tuple[Artifact, ...] | list[Artifact]) -> dict[str, str]:
    return by_path(artifacts)


def quantity(rows: list[dict[str, str]], part: str, category: str) -> int:
    found = [r for r in rows if r["part_number"] == part and r["category"] == category]
    return int(found[0]["quantity"]) if found else 0


def test_a_cord_per_power_supply() -> None:
    """127 DGX H100 x 6 PSUs = 762 C19-C20 cords (nothing else in the design has C20 inlets);
    the C13-C14 cords are two per 1+1 switch, appliance and server."""
    fabric, artifacts = compiled("superpod-h100-4su")
    rows = bom_rows(text_files(artifacts))
    assert quantity(rows, "PWR-C19-C20-2M", "power-cord") == 127 * DGX_PSUS
    one_plus_one = sum(
        1 for d in fabric.devices.values() if d.kind in ("switch", "node") and d.model != "dgx-h100"
    )
    assert quantity(rows, "PWR-C13-C14-2M", "power-cord") == 2 * one_plus_one
    cords = [r for r in rows if r["category"] == "power-cord"]
    assert all(r["source"] for r in cords)


def test_busbar_trays_take_no_cord() -> None:
    """GB200 NVL72 trays, and the rack's own SN2201 management switches, are fed by the rack
    busbar (NVIDIA Enterprise RA for NVL72, System Hardware & Components): no cord for them."""
    fabric, artifacts = compiled("gb200-nvl72-su")
    rows = bom_rows(text_files(artifacts))
    shelf_racks = {d.rack for d in fabric.devices.values() if d.kind == "power-shelf"}
    plugged = sum(
        2
        for d in fabric.devices.values()
        if d.kind in ("switch", "node") and not (d.network == "oob" and d.rack in shelf_racks)
    )  # 1+1 PSUs of every switch and server; trays are kind "tray"/"nvlink-switch"
    assert 2 * len(shelf_racks) == sum(
        1 for d in fabric.devices.values() if d.network == "oob" and d.rack in shelf_racks
    )
    cords = sum(int(r["quantity"]) for r in rows if r["category"] == "power-cord")
    assert cords == plugged


def test_power_csv_counts_outlets_per_feed() -> None:
    """Each DGX rack on the default three feeds: 4 DGX x 6 PSUs split 2 + 2 + 2 over A, B and
    C, so 8 C19 outlets per feed, and a third of 4 x 10.2 kW on each (plus half of the rack's
    1+1 OOB switch, if any, on two of them)."""
    _, artifacts = compiled("superpod-h100-4su")
    rows = list(csv.DictReader(io.StringIO(text_files(artifacts)["bom/power.csv"])))
    dgx_racks = {r["rack"] for r in rows if r["c19_used"] == "8" and r["kind"] == "pdu"}
    assert len(dgx_racks) >= 31
    for row in rows:
        if row["rack"] in dgx_racks:
            assert row["supply"] in ("A", "B", "C") and int(row["c19_available"]) >= 8
            assert int(row["load_w"]) - 4 * 10200 // 3 in (0, 100 // 2)
            assert int(row["load_w"]) <= int(row["rating_w"])


def small_pdu_spec(tmp_path: Path, outlets_c19: int, rating_w: int) -> str:
    (tmp_path / "pdu.yaml").write_text(
        "parts:\n"
        "  small-pdu:\n"
        "    category: pdu\n"
        "    description: Small PDU\n"
        "    part_number: SMALL-PDU\n"
        '    source: "assumed: test PDU"\n'
        "    outlets_c13: 8\n"
        f"    outlets_c19: {outlets_c19}\n"
        f"    rating_w: {rating_w}\n"
    )
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    text = text.replace("    power_kw: 20\n", "    power_kw: 20\n    pdu_model: small-pdu\n")
    return text.replace("site:\n", "catalog: [pdu.yaml]\nsite:\n", 1)


def pdu_warnings(tmp_path: Path, outlets_c19: int, rating_w: int) -> str:
    fabric, _ = compile_text(small_pdu_spec(tmp_path, outlets_c19, rating_w), tmp_path)
    return "\n".join(d.render() for d in fabric.warnings if "pdu_model" in d.path)


def test_pdu_outlets_are_checked_per_feed(tmp_path: Path) -> None:
    """4 lab servers x 2 C20 PSUs in one rack: 4 C19 outlets per feed; a PDU with 3 is warned
    about (PDU counts are synthesis's, the PDU an assumption), with the rack, the feed and both
    numbers, at site.rack.pdu_model."""
    assert pdu_warnings(tmp_path, 4, 50_000) == ""
    message = pdu_warnings(tmp_path, 3, 50_000)
    assert "site.rack.pdu_model" in message and "spec.yaml:" in message
    assert "feed A needs 4 C19 outlets, its PDUs have 3" in message
    assert "feed B needs 4 C19 outlets, its PDUs have 3" in message


def test_pdus_follow_the_load_a_lost_one_leaves(tmp_path: Path) -> None:
    """The lab's compute rack holds 5 servers of 3.5 kW when full (its 20 kW budget), 17.5 kW
    (4 today): 2 PDUs while one alone carries 17.5 kW; a 17.499 kW PDU gets a third (1 +
    ceil(17.5 / 17.499)), and the servers' two supplies rotate over the three feeds, so losing any one
    leaves every PDU within its rating and no warning. A 6.999 kW PDU gets four: two share
    feed A, and losing it puts more on a PDU than its rating - a warning with the figure."""
    for rating, count in ((50_000, 2), (17_500, 2), (17_499, 3), (6_999, 4)):
        fabric, _ = compile_text(small_pdu_spec(tmp_path, 8, rating), tmp_path)
        rack = fabric.rack_by_name[str(fabric.devices["gpu01"].rack)]
        assert sum(fabric.devices[n].kind == "pdu" for n in rack.devices) == count, rating
        found = [d.message for d in fabric.warnings if "losing" in d.message]
        assert bool(found) == (rating == 6_999), (rating, found)
    assert "losing feed A puts" in found[0] and "rated 7.0 kW" in found[0]


def test_floor_loading(tmp_path: Path) -> None:
    """A DGX rack weighs 4 x 130.45 kg + rack 150 kg + 3 PDUs 12 kg = 707.8 kg on 0.6 x 1.2 m:
    983 kg/m2, as bom/power.csv says (3 PDUs: six DGX supplies, 4 + 2, survive losing one).
    A 900 kg/m2 floor fails: one error for every rack above
    it, with their count and the heaviest named."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    ok = text.replace("  row_pitch_m: 3.0\n", "  row_pitch_m: 3.0\n  floor_load_kg_per_m2: 2000\n")
    assert ok != text
    rows = list(
        csv.DictReader(io.StringIO(text_files(compile_text(ok, tmp_path)[1])["bom/power.csv"]))
    )
    loads = {r["rack"]: (float(r["rack_weight_kg"]), int(r["floor_load_kg_per_m2"])) for r in rows}
    dgx = 4 * 130.45 + 150 + 3 * 12
    assert (round(dgx, 1), round(dgx / 0.72)) in loads.values()
    over = {rack: load for rack, load in loads.items() if load[1] > 900}
    heaviest = max(over.values(), key=lambda load: load[1])
    with pytest.raises(DesignError) as raised:
        compile_text(
            ok.replace("floor_load_kg_per_m2: 2000", "floor_load_kg_per_m2: 900"), tmp_path
        )
    message = str(raised.value)
    assert message.count("error:") == 1
    assert f"{len(over)} alike, the worst: rack " in message
    assert f"weighs {math.ceil(heaviest[0])} kg, {heaviest[1]} kg/m2" in message
    assert "site.floor_load_kg_per_m2" in message


def test_spares_are_lines_of_their_own(tmp_path: Path) -> None:
    text = (EXAMPLES / "roce-lab.yaml").read_text() + (
        "outputs:\n  bom:\n    spares: {transceiver: '10%', cable: 2, power-cord: '50%'}\n"
    )
    _, artifacts = compile_text(text, tmp_path)
    files = text_files(artifacts)
    rows = bom_rows(files)
    base_rows = [
        r for r in bom_rows(text_files(compiled("roce-lab")[1])) if r["category"] != "spare"
    ]
    spares = [r for r in rows if r["category"] == "spare"]
    assert spares
    for row in base_rows:
        spare = [s for s in spares if s["part_number"] == row["part_number"]]
        if row["category"] == "transceiver":
            expected = math.ceil(int(row["quantity"]) * 0.10)
            assert [int(s["quantity"]) for s in spare] == [expected], row
            assert spare[0]["source"] == f"outputs.bom.spares.transceiver: 10% of {row['quantity']}"
        elif row["category"] == "cable":
            assert [int(s["quantity"]) for s in spare] == [2], row
        elif row["category"] == "power-cord":
            assert [int(s["quantity"]) for s in spare] == [math.ceil(int(row["quantity"]) / 2)]
        else:
            assert not spare, row
    # the built quantities stay what they were
    assert [r for r in rows if r["category"] != "spare"] == base_rows
    assert all(float(s["total_power_w"]) == 0 for s in spares)


def test_spares_are_on_by_default_and_stated(tmp_path: Path) -> None:
    """With no outputs.bom.spares, every transceiver and cable part gets 2% spares rounded up
    (at least one), its source naming the default policy, and bom.md states the policy; a
    family written in the spec replaces it (transceiver: 0 orders no spare optics)."""
    files = text_files(compiled("superpod-h100-4su")[1])
    rows = bom_rows(files)
    spares = {r["part_number"]: r for r in rows if r["category"] == "spare"}
    for row in rows:
        if row["category"] in ("transceiver", "cable"):
            spare = spares[row["part_number"]]
            assert int(spare["quantity"]) == math.ceil(int(row["quantity"]) * 0.02)
            assert spare["source"].endswith("(default spares policy)")
    assert int(spares["980-9I510-00NS00"]["quantity"]) == 38  # 2% of 1,888 MMA4Z00-NS
    assert "Spares policy: cable 2%, transceiver 2%" in files["bom/bom.md"]
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    _, artifacts = compile_text(text + "outputs:\n  bom:\n    spares: {transceiver: 0}\n", tmp_path)
    rows = bom_rows(text_files(artifacts))
    kinds = {r["source"].split(":")[0] for r in rows if r["category"] == "spare"}
    assert kinds == {"outputs.bom.spares.cable"}


def test_bom_lengths_sort_as_numbers() -> None:
    """Cables of one family in order of length as a number (1 m, 1.5 m, 2 m, 10 m), and no
    'KW' unit anywhere in the BOM."""
    files = text_files(compiled("superpod-h100-4su")[1])
    rows = bom_rows(files)
    cat6 = [r for r in rows if r["part_number"].startswith("CAT6-") and r["category"] == "cable"]
    lengths = [float(r["description"].rsplit(", ", 1)[1].removesuffix(" m")) for r in cat6]
    assert len(lengths) > 3 and lengths == sorted(lengths)
    assert "KW" not in files["bom/bom.csv"] + files["bom/bom.md"]
    assert "KW" not in text_files(compiled("gb200-nvl72-su")[1])["bom/bom.csv"]


@pytest.mark.parametrize("example", ["mixed-gb200-gb300", "gb300-nvl72-spectrum-x"])
def test_switch_racks_are_packed_within_their_pdu_outlets(example: str) -> None:
    """Central and network racks are packed by outlets as well as units and power: every cord
    of their switches and appliances - the access switch's included - finds an outlet on its
    feed (both examples once put 48 C13 or 24 C19 cords on 36 or 18 outlets)."""
    fabric, _ = compiled(example)
    roles = {rack.name: rack.role for rack in fabric.racks}
    packed = [p for p in rack_power(fabric) if roles[p.rack] in ("central", "network")]
    assert packed
    for power in packed:
        for feed in power.feeds:
            for outlet, used in feed.used.items():
                assert used <= feed.outlets[outlet], (power.rack, feed.name, outlet)
