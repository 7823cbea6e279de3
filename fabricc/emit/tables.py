"""Emit helper: deterministic CSV, JSON and Markdown text for the table-shaped artifacts.

Consumes rows as sequences of cells; produces text with '\n' line endings and no locale or
platform dependence, so that the same design always gives the same bytes.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterable, Sequence
from typing import Any

from fabricc.emit.jsontext import json_dumps

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
# with a few C-level passes (its types, one regex and a few character scans over its joined text)
# and turned into its cells' text in one go; only a column that holds floats or a formula-like text
# gets per-cell work. A chunk none of whose cells needs quoting (no comma, quote or line break:
# nearly always) is joined into lines directly, which gives the csv writer's bytes at a fraction of
# its per-row cost; any other chunk goes through the csv writer.
_CHUNK = 4096
# Searched in "\n" + the column's cells joined by "\n": a cell that starts like a formula. (A literal
# first character lets the regex engine skip ahead; "^" with MULTILINE tries every position.)
_FORMULA_LINE = re.compile("\n[=+\\-@\t\r]")
_FLOAT = "{:g}".format  # cell()'s spelling of a float
_TEXT = frozenset({str})
_INT = frozenset({int})
_FLOATS = frozenset({float})


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    if len(header) > 1 and isinstance(rows, list):
        plain = _plain_text(header, rows)
        if plain is not None:
            return plain
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    # A row of one empty cell is written as "" by the csv writer: one-column tables keep to it.
    direct = len(header) > 1
    iterator = iter(rows)
    while chunk := list(itertools.islice(iterator, _CHUNK)):
        columns = [_csv_column(column) for column in zip(*chunk, strict=True)]
        if direct and not any(quoted for _, quoted in columns):
            buffer.write("\n".join(map(",".join, zip(*(c for c, _ in columns), strict=True))))
            buffer.write("\n")
        else:
            writer.writerows(zip(*(c for c, _ in columns), strict=True))
    return buffer.getvalue()


def _plain_text(header: Sequence[str], rows: Sequence[Sequence[Cell]]) -> str | None:
    """The table in one step - the header and the rows' lines joined into the one string of
    the file (a large table is not copied again) - when every cell is text and none needs the
    csv writer's quotes or a formula guard (tables of names, ports and spelled values: the big
    ones); None otherwise, and the rows go column by column. A table with a number or None in
    its first row is not tried."""
    if not rows or not all(type(value) is str for value in rows[0]):
        return None
    if set(map(len, rows)) != {len(header)}:
        return None  # csv_text's column pass says which row
    lines = itertools.chain((",".join(header),), map(",".join, rows), ("",))  # type: ignore[arg-type]
    try:
        text = "\n".join(lines)
    except TypeError:  # a cell further down is not text
        return None
    return text if plain_lines(text, len(rows) + 1, len(header)) else None


def plain_lines(text: str, count: int, width: int) -> bool:
    """Whether `text`, `count` lines of `width` text cells joined by commas, is what csv_text
    writes for those cells: none holds a comma, a quote or a line break, and none starts like
    a formula (a cell csv_text would give its apostrophe)."""
    if text.count("\n") != count or text.count(",") != (width - 1) * count:
        return False
    if '"' in text or "\r" in text or "\t" in text:
        return False
    # (a character test first: finding a rare character is much faster than a pair; a pair is
    # looked for from the end, which tests its first character, the rare one, at each place:
    # from the start, it tests the second, and every name has hyphens (35 ms against 11 ms
    # for a 38 MB cabling plan))
    return not any(
        char in text
        and (text.startswith(char) or text.rfind("\n" + char) >= 0 or text.rfind("," + char) >= 0)
        for char in "=+-@"
    )


def _csv_column(column: tuple[Cell, ...]) -> tuple[Sequence[str], bool]:
    """The column's cells as the text the csv writer would write for them (before quoting):
    str and int as themselves, None as empty; floats need our spelling and formula-like text its
    apostrophe. And whether a cell needs the csv writer's quotes."""
    types = frozenset(map(type, column))
    if types == _TEXT:
        text = "\n" + "\n".join(column)  # type: ignore[arg-type]
        if not _FORMULA_LINE.search(text):
            return column, _needs_quotes(text, len(column))  # type: ignore[return-value]
    elif types == _INT:
        return list(map(str, column)), False
    elif types == _FLOATS:
        # lengths and the like: few distinct values, each spelled once (not 0.0, which equals
        # -0.0 but is spelled differently)
        distinct = set(column)
        if len(distinct) * 8 < len(column) and 0.0 not in distinct:
            spelled = {value: _FLOAT(value) for value in distinct}
            return list(map(spelled.__getitem__, column)), False
        return list(map(_FLOAT, column)), False
    elif types == {type(None)}:
        return [""] * len(column), False
    cells = [
        ("'" + v if v[:1] in _FORMULA_START else v)
        if type(v) is str
        else ("" if v is None else (str(v) if type(v) is int else cell(v)))
        for v in column
    ]
    return cells, _needs_quotes("\n" + "\n".join(cells), len(cells))


def _needs_quotes(text: str, count: int) -> bool:
    """Whether one of `count` cells, joined after a line break each, holds a comma, a quote or a
    line break: a few single-character scans."""
    return text.count("\n") != count or "," in text or '"' in text or "\r" in text


def json_text(data: Any) -> str:
    """json.dumps(data, indent=2, ensure_ascii=False) and a final line break."""
    return json_dumps(data) + "\n"


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
