"""Emit helper: deterministic CSV, JSON and Markdown text for the table-shaped artifacts.

Consumes rows as sequences of cells; produces text with '\n' line endings and no locale or
platform dependence, so that the same design always gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
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


# Rows are written in chunks, column by column: a column of only text, or only numbers, is checked
# with a few C-level passes (its types, one regex over its joined text) and handed to the csv
# writer untouched; only a column that holds floats or a formula-like text gets per-cell work.
_CHUNK = 4096
_FORMULA_LINE = re.compile("^[=+\\-@\t\r]", re.MULTILINE)
_FLOAT = "{:g}".format  # cell()'s spelling of a float
_PLAIN_TYPES = (frozenset({int}), frozenset({int, type(None)}), frozenset({type(None)}))
_TEXT_AND_NUMBERS = frozenset({str, int, type(None)})
_FLOATS = frozenset({float, type(None)})


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, _CHUNK)):
        writer.writerows(zip(*map(_csv_column, zip(*chunk, strict=True)), strict=True))
    return buffer.getvalue()


def _csv_column(column: tuple[Cell, ...]) -> Sequence[Cell]:
    """The column's cells as the csv writer should see them: csv itself writes str, int and None
    (as empty) the way cell() does; floats need our spelling and formula-like text its
    apostrophe."""
    types = frozenset(map(type, column))
    if types in _PLAIN_TYPES:
        return column
    if types == {float}:
        return list(map(_FLOAT, column))
    if types == {str} and not _FORMULA_LINE.search("\n".join(column)):  # type: ignore[arg-type]
        return column
    if types <= _TEXT_AND_NUMBERS and not _FORMULA_LINE.search(
        "\n".join([v for v in column if type(v) is str])
    ):
        return column  # e.g. a leg column: 1, 2 or ""; only its text can look like a formula
    if types <= _FLOATS:
        return [None if v is None else _FLOAT(v) for v in column]
    return [
        ("'" + v if v[:1] in _FORMULA_START else v)
        if type(v) is str
        else (v if type(v) is int else cell(v))
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
