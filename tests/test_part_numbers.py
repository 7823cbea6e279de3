"""One part number, one thing: across the built-in catalog every part number names one
description, one medium and one kind, and the BOM orders by NVIDIA's ordering number with the
legacy OPN beside it."""

from __future__ import annotations

import csv
import io

import pytest

from fabricc.catalog.assumed import assumed_records, record_gaps
from fabricc.catalog.loader import load_catalog
from fabricc.catalog.models import Catalog, ordering_numbers
from fabricc.catalog.reference import assumed_values, page
from tests.support import EXAMPLE_NAMES, compiled

Thing = tuple[str, str, str]  # (what it is: catalog entry and length, medium, kind)


def _things(catalog: Catalog) -> list[tuple[str, Thing]]:
    out: list[tuple[str, Thing]] = []
    for key, switch in catalog.switches.items():
        out.append((switch.part_number, (f"switch {key}", "-", "switch")))
    for key, node in catalog.nodes.items():
        out.append((node.part_number, (f"node {key}", "-", node.kind)))
    for key, item in catalog.parts.items():
        out.append((item.part_number, (f"part {key}", "-", item.category)))
    for key, module in catalog.transceivers.items():
        for number in {key, module.part_number or key}:
            out.append((number, (f"transceiver {key}", module.media, "transceiver")))
    for key, cable in catalog.cables.items():
        for length, part in cable.lengths.items():
            thing = (f"cable {key} {length:g} m", cable.media, cable.kind)
            out.append((part, thing))
            if length in cable.ordering:
                out.append((cable.ordering[length], thing))
    return out


def test_every_part_number_names_one_thing() -> None:
    seen: dict[str, Thing] = {}
    for number, thing in _things(load_catalog().catalog):
        assert seen.setdefault(number, thing) == thing, (number, seen[number], thing)


def test_ordering_and_legacy_numbers_pair_one_to_one() -> None:
    catalog = load_catalog().catalog
    pairs = [
        ordering_numbers(key, module.part_number) for key, module in catalog.transceivers.items()
    ]
    pairs += [
        ordering_numbers(part, cable.ordering.get(length))
        for cable in catalog.cables.values()
        for length, part in cable.lengths.items()
    ]
    legacy_of: dict[str, str] = {}
    ordering_of: dict[str, str] = {}
    for number, legacy in pairs:
        if legacy:
            assert legacy_of.setdefault(number, legacy) == legacy
            assert ordering_of.setdefault(legacy, number) == number
            assert number.startswith("980-"), number  # NVIDIA LinkX ordering numbers


def test_xdr_transceivers_carry_nvidia_ordering_numbers() -> None:
    modules = load_catalog().catalog.transceivers
    xdr = {key: m.part_number for key, m in modules.items() if m.lane_speed == 200}
    assert xdr == {"MMS4A00": "980-9IAH1-00XM00", "MMS4A20": "980-9IAT0-00XM00"}
    assert modules["MMA1Z00-NS400"].part_number == "980-9I693-00NS00"  # RA-11333 Table 8


@pytest.mark.parametrize("example", [n for n in EXAMPLE_NAMES if not n.startswith("megascale")])
def test_bom_lines_name_one_part_each(example: str) -> None:
    _, artifacts = compiled(example)
    text = dict(artifacts)["bom/bom.csv"]
    assert isinstance(text, str)
    rows = list(csv.DictReader(io.StringIO(text)))
    described: dict[str, tuple[str, str]] = {}
    for row in rows:
        if row["category"] == "spare":
            continue
        thing = (row["description"], row["legacy_part_number"])
        assert described.setdefault(row["part_number"], thing) == thing, row["part_number"]
        # an ordering number never appears as a legacy OPN of another line, nor the reverse
        assert row["legacy_part_number"] not in described or not row["legacy_part_number"]


def test_catalog_reference_lists_every_assumed_value() -> None:
    """docs/reference/catalog.md ends with the assumed values, one row per source that says
    `assumed`, generated from the catalog (tests/test_docs.py keeps the page fresh)."""
    catalog = load_catalog().catalog
    rows = assumed_values(catalog)
    text = page(catalog)
    section = text[text.index("## Assumed values") :]
    assert f"{len(rows)} sources name a value" in section
    table = [line for line in section.splitlines() if line.startswith("| ")]
    table = table[table.index("| section | entry | where | source | reason | searched |") + 1 :]
    assert len(table) == len(rows)
    for (kind, key, _, _), line in zip(rows, table, strict=True):
        assert line.startswith(f"| {kind} | `{key}` |")
    texts = {text for *_, text in rows}
    # what NVIDIA's documents give is no longer assumed
    assert not any("part number assumed" in t for t in texts if "MMS4A" in t)
    for key, module in catalog.transceivers.items():
        if module.part_number is not None:
            assert "part number assumed" not in module.source, key


def test_every_assumed_value_has_a_reason_and_what_was_searched() -> None:
    """Each assumed value of the built-in catalog has exactly one record saying why it stays
    assumed and what was searched; a value that gained a source has no stale record left."""
    catalog = load_catalog().catalog
    listed = [(section, key, where) for section, key, where, _ in assumed_values(catalog)]
    records = assumed_records()
    recorded = [(r.section, r.entry, r.where) for r in records.values]
    assert len(set(recorded)) == len(recorded), "a value recorded twice"
    missing, stale = record_gaps(listed)
    skeleton = "\n".join(
        f"  - {{section: {s}, entry: {e}, where: {w}, reason: ..., searched: '...'}}"
        for s, e, w in missing
    )
    assert not missing, f"add to fabricc/catalog/assumed.yaml:\n{skeleton}"
    assert not stale, f"no longer assumed, drop from fabricc/catalog/assumed.yaml: {stale}"
    for record in records.values:
        assert record.reason in records.reasons
        assert len(record.searched) > 20, record
    # the page shows the reason and the search beside each value
    text = page(catalog)
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.count(" | ") >= 5]
    for record in records.values:
        head = record.searched.split('"')[0][:30]
        assert any(f"| {record.reason} | {head}" in line for line in rows), record
