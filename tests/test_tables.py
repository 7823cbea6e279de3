"""Table text of the artifacts (fabricc.emit.tables): csv_text, which checks whole columns at a
time, writes every cell exactly as the cell-by-cell rule says (hypothesis), over chunk borders."""

from __future__ import annotations

import csv
import io

from hypothesis import given
from hypothesis import strategies as st

from fabricc.emit import tables
from fabricc.emit.tables import Cell, cell, csv_text

CELL = st.one_of(
    st.none(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=6),
    st.sampled_from(["=1+2", "+x", "-y", "@z", "\tt", "\rr", "a\n=b", "ok", "x,y", '"q"']),
)


def expected(header: tuple[str, ...], rows: list[tuple[Cell, ...]]) -> str:
    """The rule, one cell at a time: cell()'s spelling, an apostrophe before formula-like text."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(
            ["'" + v if isinstance(v, str) and v[:1] in "=+-@\t\r" and v else cell(v) for v in row]
        )
    return buffer.getvalue()


@given(st.integers(1, 4).flatmap(lambda n: st.lists(st.tuples(*[CELL] * n), max_size=12)))
def test_csv_text_is_the_cell_by_cell_rule(rows: list[tuple[Cell, ...]]) -> None:
    header = tuple(f"h{i}" for i in range(len(rows[0]) if rows else 1))
    assert csv_text(header, rows) == expected(header, rows)


def test_csv_text_over_chunk_borders() -> None:
    count = tables._CHUNK * 2 + 3
    rows: list[tuple[Cell, ...]] = [
        (f"n{i}", i, None if i % 7 else "-neg", i / 4) for i in range(count)
    ]
    header = ("name", "i", "note", "quarter")
    assert csv_text(header, rows) == expected(header, rows)
    assert csv_text(header, iter(rows)).count("\n") == count + 1


def test_csv_text_quotes_only_where_the_csv_writer_does() -> None:
    """Chunks with no cell to quote are joined directly, the others go through the csv writer;
    both give its bytes, and a one-column table keeps its quoted empty rows."""
    count = tables._CHUNK + 5
    rows: list[tuple[Cell, ...]] = [
        (f"d{i}", "a,b" if i == count - 1 else "x", i) for i in range(count)
    ]
    header = ("name", "note", "i")
    text = csv_text(header, rows)
    assert text == expected(header, rows)
    assert text.endswith(f'd{count - 1},"a,b",{count - 1}\n')
    assert csv_text(("only",), [("",), ("x",)]) == 'only\n""\nx\n'


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(), st.text(max_size=4), st.just("-x")),
            st.one_of(st.none(), st.floats(allow_nan=False)),
        ),
        max_size=12,
    )
)
def test_csv_text_columns_of_text_and_numbers_or_of_floats(rows: list[tuple[Cell, ...]]) -> None:
    """The column shapes with their own fast path: text mixed with whole numbers (a leg column:
    1, 2 or "") and floats with gaps (a length column)."""
    header = ("mixed", "floats")
    assert csv_text(header, rows) == expected(header, rows)


TEXT = st.one_of(
    st.text(max_size=5),
    st.sampled_from(["=1+2", "+x", "-y", "@z", "\tt", "\rr", "a\nb", "x,y", '"q"', "a-b", "ok"]),
)


@given(st.integers(2, 4).flatmap(lambda n: st.lists(st.tuples(*[TEXT] * n), max_size=12)))
def test_csv_text_of_text_only_tables_is_the_cell_by_cell_rule(
    rows: list[tuple[Cell, ...]],
) -> None:
    """A list of text-only rows is joined in one step when no cell needs quotes or a guard;
    otherwise it falls back to the column pass: the same bytes either way."""
    header = tuple(f"h{i}" for i in range(len(rows[0]) if rows else 2))
    assert csv_text(header, rows) == expected(header, rows)


def test_text_only_tables_are_joined_in_one_step() -> None:
    rows: list[tuple[Cell, ...]] = [(f"gpu{i:03d}", "eth0", "") for i in range(5)]
    header = ("host", "port", "lag")
    joined = "host,port,lag\n" + "".join(f"gpu{i:03d},eth0,\n" for i in range(5))
    assert tables._plain_text(header, rows) == joined
    assert tables._plain_text(header, [("a", "-b", "")]) is None  # a formula guard is needed
    assert tables._plain_text(header, [("a", "b", ""), ("a", 1, "")]) is None  # a number later
    assert tables._plain_text(header, [("a", "b", None)]) is None  # not tried: a gap in row 1
