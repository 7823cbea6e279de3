"""Emit helper: deterministic CSV, JSON and Markdown text for the table-shaped artifacts.

Consumes rows as sequences of cells; produces text with '\n' line endings and no locale or
platform dependence, so that the same design always gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Iterable, Sequence
from typing import Any

Cell = str | int | float | None


def cell(value: Cell) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# A cell that starts with one of these is a formula to Excel, LibreOffice and Google Sheets
# (OWASP "CSV injection"); such text cells get a leading apostrophe, which spreadsheets show as
# text. Numbers are written as numbers, so a negative number stays one.
_FORMULA_START = frozenset({"=", "+", "-", "@", "\t", "\r"})


# Rows are written in chunks, column by column: each column is spelled as text with a few C-level
# passes (its types, then str() or the float format over it), and the chunk joined by commas and
# lines. When that text holds nothing the csv writer would quote (a delimiter, a quote, a line
# break inside a cell) and no cell starts like a formula - a few substring searches - it is the
# output. Any other chunk (a negative number, a comma in a cell...) gets the exact rule cell by
# cell and the csv writer.
_CHUNK = 4096
_FLOAT = "{:g}".format  # cell()'s spelling of a float
_NONE = type(None)
_SPELLED_TYPES = frozenset({str, int, float, _NONE})


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    width = len(header)
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, _CHUNK)):
        columns = list(zip(*chunk, strict=True))
        if width > 1:  # (the writer quotes a row of one empty cell)
            spelled = list(map(_spelled, columns))
            if None not in spelled:
                text = "\n".join(map(",".join, zip(*spelled, strict=True)))
                if _plain(text, len(chunk), width):
                    buffer.write(text)
                    buffer.write("\n")
                    continue
        writer.writerows(zip(*map(_csv_column, columns), strict=True))
    return buffer.getvalue()


def _spelled(column: tuple[Cell, ...]) -> Sequence[str] | None:
    """The column's cells as the csv writer and cell() spell them, formula-like text untouched;
    None for a column of other types."""
    types = frozenset(map(type, column))
    if types == {str}:
        return column  # type: ignore[return-value]
    if types == {int}:
        return list(map(str, column))
    if types == {float}:
        return list(map(_FLOAT, column))
    if not types <= _SPELLED_TYPES:
        return None
    return [
        v if type(v) is str else ("" if v is None else (_FLOAT(v) if type(v) is float else str(v)))
        for v in column
    ]


def _plain(text: str, rows: int, width: int) -> bool:
    """Whether the joined chunk is the csv writer's output and cell()'s: no cell holds a quote, a
    line break or a comma (the counts tell), and none starts like a formula."""
    return (
        '"' not in text
        and "\r" not in text
        and text.count("\n") == rows - 1
        and text.count(",") == rows * (width - 1)
        and text[:1] not in _FORMULA_START
        # a one-character search (memchr) first: most formula characters never occur at all
        and not any(c in text and ("\n" + c in text or "," + c in text) for c in _FORMULA_START)
    )


def _csv_column(column: tuple[Cell, ...]) -> list[str]:
    """The exact rule for one column, cell by cell: cell()'s spelling, an apostrophe before
    formula-like text."""
    return [
        ("'" + v if v[:1] in _FORMULA_START else v)
        if type(v) is str
        else ("" if v is None else (str(v) if type(v) is int else cell(v)))
        for v in column
    ]


def json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[Cell]], right: Sequence[int] = ()
) -> str:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|")
    for row in rows:
        lines.append("| " + " | ".join(markdown_cell(v) for v in row) + " |")
    return "\n".join(lines) + "\n"


# Markdown passes raw HTML through to the page it renders; a cell is text, so the characters that
# start HTML, entities, table cells or escapes are written as entities.
_MARKDOWN_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|", "\\": "\\\\", "`": "\\`"}
)


def markdown_cell(value: Cell) -> str:
    return cell(value).translate(_MARKDOWN_ESCAPES)
