"""cabling/cables.csv (fabricc.emit.cabling.cables_csv): the lines it formats in one step are
csv_text's bytes for the same rows, for every example and for cells that need quotes or a formula
guard (where it hands the table to csv_text)."""

from __future__ import annotations

import dataclasses

import pytest

from fabricc.emit.cabling import HEADER, cables_csv, rows
from fabricc.emit.tables import csv_text
from fabricc.ir import Fabric
from tests.support import EXAMPLES, compiled


@pytest.mark.parametrize("example", sorted(path.stem for path in EXAMPLES.glob("*.yaml")))
def test_cables_csv_is_csv_text_of_the_rows(example: str) -> None:
    fabric, _ = compiled(example)
    assert cables_csv(fabric) == csv_text(HEADER, rows(fabric))


# change -> how csv_text spells the odd cell (quoted, or guarded by an apostrophe)
ODD = {
    "comma": '"1,2"',
    "quote": '"QSFP ""odd"""',
    "formula": "'=SUM(A1:A9)",
    "minus": "'-net",
    "line-start": "'+1,",
    "tab": "'\tb",
    "no-cable": "",
}


def _odd(fabric: Fabric, change: str) -> Fabric:
    """A copy of the fabric whose middle link has a cell csv_text must quote or guard (or has
    no cable); the compiled fabric itself is shared between tests and stays as it is."""
    links = [dataclasses.replace(link) for link in fabric.links]
    link = links[len(links) // 2]
    assert link.cable is not None
    if change == "comma":
        link.a_port = "1,2"
    elif change == "quote":
        link.b_module = 'QSFP "odd"'
    elif change == "formula":
        link.cable = dataclasses.replace(link.cable, part="=SUM(A1:A9)")
    elif change == "minus":
        link.network = "-net"
    elif change == "line-start":
        link.cable = dataclasses.replace(link.cable, id="+1")
    elif change == "tab":
        link.a_module = "\tb"
    else:
        link.cable = None
    return dataclasses.replace(fabric, links=links)


@pytest.mark.parametrize("change", sorted(ODD))
def test_cables_csv_matches_csv_text_where_cells_need_care(change: str) -> None:
    fabric = _odd(compiled("roce-lab")[0], change)
    text = cables_csv(fabric)
    assert text == csv_text(HEADER, rows(fabric))
    assert ODD[change] in text
