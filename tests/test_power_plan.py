"""The rack power plan (synth/power.py): every rack's supplies add up to the design's power,
NVL72 racks carry 8 power shelves with their input circuits on a DC busbar, and the cord map
survives the loss of any one feed or PDU (or the check says by how much it does not)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from fabricc.checks.power import lost_supplies
from fabricc.errors import SpecError
from fabricc.synth.power import rack_power
from tests.configs_support import by_path
from tests.support import EXAMPLE_NAMES, EXAMPLES, compile_text, compiled

SHELVES = 8  # NVIDIA BCM manual, "BCM Power Shelf Integration": 8 shelves x 6 PSUs x 5.5 kW


def table(files: dict[str, str], path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files[path])))


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_rack_power_adds_up_to_the_summary(example: str) -> None:
    """power.csv's supply loads and rack-power.csv's rack totals each add up to summary.json's
    power within 1 % (gb200-nvl72-su once listed 74.4 of 1,024.8 kW: the shelves carried 0)."""
    _, artifacts = compiled(example)
    files = by_path(artifacts)
    summary_w = json.loads(files["summary.json"])["power_kw"] * 1000
    supplies = sum(float(r["load_w"] or 0) for r in table(files, "bom/power.csv"))
    racks = sum(float(r["total_w"]) for r in table(files, "bom/rack-power.csv"))
    assert abs(supplies - summary_w) <= 0.01 * summary_w
    assert abs(racks - summary_w) <= 0.01 * summary_w


@pytest.mark.parametrize("example", ["gb200-nvl72-su", "gb300-nvl72-xdr", "mixed-gb200-gb300"])
def test_nvl72_racks_list_eight_shelves_with_their_feeds(example: str) -> None:
    """Each NVL72 rack: 8 shelves of 33 kW (6 x 5.5 kW), alternating over feeds A and B, each
    with its whip's plug, phases, voltage and breaker; the busbar carries the 18 compute trays,
    9 switch trays and the rack's two SN2201 management switches, evenly over the shelves, and
    losing either feed leaves 4 shelves (132 kW) for it."""
    fabric, artifacts = compiled(example)
    rows = table(by_path(artifacts), "bom/power.csv")
    shelf_racks = sorted({str(d.rack) for d in fabric.devices.values() if d.kind == "power-shelf"})
    assert shelf_racks
    plans = {p.rack: p for p in rack_power(fabric)}
    for rack in shelf_racks:
        assert rack is not None
        shelves = [r for r in rows if r["rack"] == rack and r["kind"] == "power-shelf"]
        assert len(shelves) == SHELVES
        assert [r["supply"][-2] for r in shelves] == ["A", "B"] * (SHELVES // 2)
        for row in shelves:
            assert row["rating_w"] == "33000" and row["phases"] == "3"
            assert row["input"].startswith("IEC 60309") and int(row["breaker_a"]) > 0
            # the whip carries its shelf: 33 kW at 415 V 3-phase is 45.9 A, under 80 % of it
            assert 33000 / (3**0.5 * int(row["voltage_v"])) <= 0.8 * int(row["breaker_a"])
        devices = [fabric.devices[n] for n in fabric.rack_by_name[rack].devices]
        busbar = sum(d.power_w for d in devices if d.kind not in ("pdu", "power-shelf"))
        plan = plans[rack]
        assert plan.busbar_w == busbar and plan.pdu_w == 0
        assert sum(d.kind == "tray" for d in devices) == 18
        assert 100_000 < busbar <= SHELVES // 2 * 33000


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_losing_any_feed_or_pdu_keeps_every_device_running(example: str) -> None:
    """Each rack of each example, each feed and each PDU removed in turn: every device keeps its
    minimum supplies and every PDU left carries its load, and the build has no failover warning
    (with A/B feeds the DGX H100 racks of superpod-h100-4su kept 3 of the 4 supplies they need,
    and A01 put 44.8 kW on one 34.6 kW PDU)."""
    fabric, _ = compiled(example)
    assert not [d for d in fabric.warnings if d.message.startswith("losing one feed")]
    for power in rack_power(fabric):
        ratings = {p.name: p.rating_w for f in power.feeds for p in f.pdus}
        for lost in [f.name for f in power.feeds] + list(ratings):
            short, load = lost_supplies(power, lost)
            assert short == [], (power.rack, lost)
            assert all(w <= ratings[n] for n, w in load.items()), (power.rack, lost, load)


def test_dgx_h100_on_two_feeds_cannot_hold_and_says_so(tmp_path: Path) -> None:
    """A site with only A/B feeds (site.rack.feeds: 2): a DGX H100's 6 supplies, 4 needed,
    3 per feed - one warning for the design with the rack count and the worst rack's figure."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    text = text.replace("    power_kw: 45", "    power_kw: 45\n    feeds: 2")
    fabric, _ = compile_text(text, tmp_path)
    found = [d.message for d in fabric.warnings if "short of power supplies" in d.message]
    assert len(found) == 1, found
    assert "in 8 racks; the worst: rack B01: losing feed A leaves dgx001 3 of the 4" in found[0]


def test_an_overloaded_pdu_is_warned_with_its_figure(tmp_path: Path) -> None:
    """PDUs sized for a lost PDU but not for a lost feed: a 20 kW PDU model (site catalog) gives
    the 40.8 kW DGX racks 1 + ceil(40.8 / 20) = 4 PDUs on the three feeds, A holding two; losing
    feed A leaves 40.8 kW on the two PDUs of B and C, 20.4 kW each - the check names the PDU
    and both figures."""
    (tmp_path / "pdu.yaml").write_text(
        "parts:\n  pdu-small:\n    category: pdu\n    description: small PDU\n"
        "    part_number: PDU-SMALL\n    source: test\n    outlets_c13: 36\n"
        "    outlets_c19: 18\n    rating_w: 20000\n"
    )
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    text = text.replace("    power_kw: 45", "    power_kw: 45\n    pdu_model: pdu-small")
    fabric, _ = compile_text(text.replace("site:\n", "catalog: [pdu.yaml]\nsite:\n", 1), tmp_path)
    found = [d.message for d in fabric.warnings if "overloads a PDU" in d.message]
    assert len(found) == 1, [d.message for d in fabric.warnings]
    assert "the worst: rack A01: losing feed A puts 23.5 kW on a01-pdu2, rated 20.0 kW" in found[0]
    plan = {p.rack: p for p in rack_power(fabric)}["B01"]
    assert sum(len(f.pdus) for f in plan.feeds) == 4
    _, load = lost_supplies(plan, "A")
    assert sorted(round(w) for w in load.values()) == [0, 0, 20400, 20400]


def test_three_feeds_hold_dgx_h100(tmp_path: Path) -> None:
    """The default three feeds put each of a DGX H100's three PDUs on a feed of its own, two
    supplies each: losing any feed or PDU leaves every DGX 4 of 6; the cord map lists every
    supply once, on an outlet of its PDU; a switch rack's 1+1 switches rotate over the feed
    pairs so no feed is left idle."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    assert "feeds:" not in text  # the default is the rule
    fabric, artifacts = compile_text(text, tmp_path)
    assert not [d for d in fabric.warnings if "power supplies it needs" in d.message]
    cords = table(by_path(artifacts), "bom/power-cords.csv")
    for power in rack_power(fabric):
        for lost in [f.name for f in power.feeds] + [p.name for f in power.feeds for p in f.pdus]:
            short, _ = lost_supplies(power, lost)
            assert short == []
        if len(power.feeds) == 3:
            assert all(feed.load_w > 0 for feed in power.feeds), power.rack
    dgx = [r for r in cords if r["device"] == "dgx001"]
    assert sorted(int(r["psu"]) for r in dgx) == [1, 2, 3, 4, 5, 6]
    assert sorted(r["feed"] for r in dgx) == ["A", "A", "B", "B", "C", "C"]
    places = [(r["pdu"], r["outlet"]) for r in cords]
    assert len(places) == len(set(places))
    assert all(r["outlet"].startswith(("C13-", "C19-")) for r in cords)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_switch_racks_keep_air_and_cable_room(example: str) -> None:
    """Every central and network rack holds at most site.rack.air_cooled_kw of air-cooled gear
    and leaves site.rack.cable_u units for cable managers (gb300-nvl72-xdr once had 48 of 48 U
    and 60 kW of switches in A01), unless a warning names it."""
    fabric, _ = compiled(example)
    site = fabric.loaded.spec.site
    warned = "\n".join(d.message for d in fabric.warnings)
    for power in rack_power(fabric):
        rack = fabric.rack_by_name[power.rack]
        if rack.role not in ("central", "network"):
            continue
        used = sum(fabric.devices[n].height_u for n in rack.devices)
        if used > rack.height_u - site.rack.reserved_u - site.rack.cable_u:
            assert "cable managers" in warned, power.rack
        if power.pdu_w > site.rack.air_cooled_kw * 1000:
            assert "heat to the air" in warned, power.rack


def test_a_lower_air_limit_spreads_the_switches(tmp_path: Path) -> None:
    """gb300-nvl72-xdr's switch racks within 45 kW (default) and, with air_cooled_kw: 25, within
    25 kW over more racks; a compute rack of air-cooled nodes above the limit is warned about
    with its figure (4 HGX B300 at 58 kW in spectrum-x-2plane)."""
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    counts = []
    for limit in (None, 25):
        extra = "" if limit is None else f"    air_cooled_kw: {limit}\n"
        spec = text.replace("  rack:\n", "  rack:\n" + extra, 1)
        assert limit is None or spec != text
        fabric, _ = compile_text(spec, tmp_path)
        switch_racks = [r for r in fabric.racks if r.role in ("central", "network")]
        plans = {p.rack: p for p in rack_power(fabric)}
        assert all(plans[r.name].pdu_w <= (limit or 45) * 1000 for r in switch_racks)
        counts.append(len(switch_racks))
    assert counts[1] > counts[0]
    fabric, _ = compiled("spectrum-x-2plane")
    assert any(
        "gives 58.0 kW of heat to the air; the room cools 45 kW per rack" in d.message
        for d in fabric.warnings
    )


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_liquid_cooled_racks_are_covered_by_n_plus_1_cdus(example: str) -> None:
    """Every rack with liquid heat sits in a row whose CDUs carry the row's liquid heat with one
    unit out (N+1); the BOM orders exactly those CDUs; bom/cooling.csv gives each rack's split
    (adding up to its power) and each row's water flow at the design rise; the floor plan names
    the CDUs of each such row. 8 NVL72 racks (about 1 MW) are no longer without cooling."""
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    rows = table(files, "bom/cooling.csv")
    cdu = fabric.loaded.catalog.catalog.parts[fabric.loaded.spec.site.cooling.cdu_model]
    racks = [r for r in rows if r["rack"]]
    per_row = {r["row"]: r for r in rows if not r["rack"]}
    for row in racks:
        rack = fabric.rack_by_name[row["rack"]]
        power = sum(fabric.devices[n].power_w for n in rack.devices)
        assert abs(int(row["liquid_w"]) + int(row["air_w"]) - power) <= 1
        if int(row["liquid_w"]):
            cooling = per_row[row["row"]]
            liquid = int(cooling["liquid_w"])
            assert (int(cooling["cdus"]) - 1) * cdu.cooling_w >= liquid
            water = float(cooling["water_lpm"])
            assert abs(water - liquid * 60 / (4186 * 10)) < 0.1
    ordered = sum(int(r["quantity"]) for r in table(files, "bom/bom.csv") if r["category"] == "cdu")
    assert ordered == sum(int(r["cdus"]) for r in per_row.values())
    shelves = any(d.kind == "power-shelf" for d in fabric.devices.values())
    assert bool(per_row) == shelves  # the NVL72 racks are this catalog's liquid-cooled ones
    if per_row:
        assert "(N+1)" in files["diagrams/floorplan.svg"]


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_liquid_cooled_racks_and_cdus_get_their_cooling_parts(example: str) -> None:
    """Every liquid-cooled rack lists and the BOM orders its manifold, rack-level leak detection,
    two hoses and two quick-disconnect pairs, and a tray-level leak sensor per liquid-cooled
    tray (an NVL72 rack: 18 compute + 9 NVLink switch trays = 27); every CDU two hoses and two
    quick-disconnect pairs; air-cooled racks none (gb200-nvl72-su once had CDUs and nothing
    between them and the racks)."""
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    rows = table(files, "bom/cooling.csv")
    bom = {
        r["part_number"]: int(r["quantity"])
        for r in table(files, "bom/bom.csv")
        if r["category"] == "cooling"
    }
    expected: dict[str, int] = {}

    def add(cell: str) -> None:
        for item in filter(None, cell.split("; ")):
            part, n = item.split(" x ")
            expected[part] = expected.get(part, 0) + int(n)

    for row in rows:
        parts = dict(item.split(" x ") for item in filter(None, row["cooling_parts"].split("; ")))
        if row["rack"] and int(row["liquid_w"]):
            trays = sum(
                fabric.devices[n].kind in ("tray", "nvlink-switch")
                for n in fabric.rack_by_name[row["rack"]].devices
            )
            assert parts == {
                "MGX-44RU-MANIFOLD": "1",
                "LEAK-DET-RACK": "1",
                "LEAK-SENSOR-TRAY": str(trays),
                "HOSE-RACK-SEC": "2",
                "UQD-PAIR-RACK": "2",
            }
            assert trays == 27
        elif row["rack"]:
            assert parts == {}
        else:
            cdus = int(row["cdus"])
            assert parts == {"HOSE-CDU-SEC": str(2 * cdus), "UQD-PAIR-CDU": str(2 * cdus)}
        add(row["cooling_parts"])
    assert bom == expected


def test_inter_rack_runs_carry_a_routing_allowance_and_runs_at_reach_are_warned() -> None:
    """A cable leaving its rack is at least both drops' tray height, the slack and the route to
    each rack's vertical manager (0.5 m) long; gb200-nvl72-su orders some 5 m ACC splitters,
    the family's longest, and the build says how many."""
    fabric, artifacts = compiled("gb200-nvl72-su")
    site = fabric.loaded.spec.site
    for link in fabric.links:
        if fabric.devices[link.a].rack != fabric.devices[link.b].rack:
            assert link.distance_m >= 2 * site.tray_height_m + site.slack_m + 0.5 - 1e-9
    rows = table(by_path(artifacts), "bom/bom.csv")
    at_five = sum(
        int(r["quantity"])
        for r in rows
        if r["part_number"] == "MCA7J60-N005" and r["category"] == "cable"
    )
    assert at_five
    assert any(
        f"{at_five} mca7j60 cables of network compute are ordered at the family's longest"
        in d.message
        for d in fabric.warnings
    )


@pytest.mark.parametrize("example", ["superpod-h100-4su", "gb300-nvl72-xdr"])
def test_optics_power_is_counted_per_rack(example: str) -> None:
    """rack-power.csv's optics column: the catalog power of every transceiver in each rack's
    cages, adding up over the racks to the BOM's transceivers (1,888 MMA4Z00-NS at 15 W ...)."""
    _, artifacts = compiled(example)
    files = by_path(artifacts)
    bom = [r for r in table(files, "bom/bom.csv") if r["category"] == "transceiver"]
    expected = sum(int(r["quantity"]) * float(r["unit_power_w"]) for r in bom)
    racks = table(files, "bom/rack-power.csv")
    assert expected > 0
    assert abs(sum(int(r["optics_w"]) for r in racks) - expected) <= len(racks)


def test_a_site_catalog_cdu_replaces_the_default(tmp_path: Path) -> None:
    """site.cooling.cdu_model names a site catalog's CDU: a 500 kW unit for one GB200 NVL72
    rack (101 kW to liquid) is ordered twice (N+1); a CDU without its capacity is refused at
    its catalog line."""
    part = (
        "parts:\n  my-cdu:\n    category: cdu\n    description: Site CDU\n"
        '    part_number: MY-CDU\n    source: "site: test"\n'
    )
    spec = (
        "metadata: {name: x}\ncatalog: [cat.yaml]\n"
        "site: {cooling: {cdu_model: my-cdu}, rack: {power_kw: 140}}\n"
        "nodes:\n  g: {model: gb200-nvl72, count: 1}\n"
        "networks:\n  c: {role: compute, fabric: infiniband}\n"
    )
    (tmp_path / "cat.yaml").write_text(part + "    cooling_w: 500000\n")
    _, artifacts = compile_text(spec, tmp_path)
    files = by_path(artifacts)
    row = [r for r in table(files, "bom/cooling.csv") if not r["rack"]]
    assert [(r["cdus"], r["cdu_model"]) for r in row] == [("2", "my-cdu")]
    assert [r["quantity"] for r in table(files, "bom/bom.csv") if r["category"] == "cdu"] == ["2"]
    (tmp_path / "cat.yaml").write_text(part)
    with pytest.raises(SpecError) as refused:
        compile_text(spec, tmp_path)
    assert "cat.yaml:3:5" in str(refused.value) and "needs cooling_w" in str(refused.value)


def test_a_site_catalog_replaces_or_drops_a_cooling_part(tmp_path: Path) -> None:
    """A site catalog entry under a cooling part's key replaces it (4 hoses per rack instead of
    2) or drops it (per_quantity: 0: no tray sensors); a cooling part without `per` is refused
    at its catalog line."""
    spec = (
        "metadata: {name: x}\ncatalog: [cat.yaml]\n"
        "site: {rack: {power_kw: 140}}\n"
        "nodes:\n  g: {model: gb200-nvl72, count: 1}\n"
        "networks:\n  c: {role: compute, fabric: infiniband}\n"
    )
    head = '    category: cooling\n    description: x\n    source: "site: test"\n'
    (tmp_path / "cat.yaml").write_text(
        "parts:\n  hose-rack-secondary:\n"
        + head
        + "    part_number: SITE-HOSE\n    per: liquid-rack\n    per_quantity: 4\n"
        "  leak-sensor-tray:\n"
        + head
        + "    part_number: LEAK-SENSOR-TRAY\n    per: liquid-tray\n    per_quantity: 0\n"
    )
    _, artifacts = compile_text(spec, tmp_path)
    bom = {r["part_number"]: r["quantity"] for r in table(by_path(artifacts), "bom/bom.csv")}
    assert bom["SITE-HOSE"] == "4" and "HOSE-RACK-SEC" not in bom
    assert "LEAK-SENSOR-TRAY" not in bom and bom["LEAK-DET-RACK"] == "1"
    (tmp_path / "cat.yaml").write_text(
        "parts:\n  hose-rack-secondary:\n" + head + "    part_number: SITE-HOSE\n"
    )
    with pytest.raises(SpecError) as refused:
        compile_text(spec, tmp_path)
    assert "cat.yaml:3:5" in str(refused.value) and "needs `per`" in str(refused.value)
