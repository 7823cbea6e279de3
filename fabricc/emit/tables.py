"""Emit helper: deterministic CSV, JSON and Markdown text for the table-shaped artifacts.

Consumes rows as sequences of cells; produces text with '\n' line endings and no locale or
platform dependence, so that the same design always gives the same bytes.
"""

from __future__ import annotations

import csv
import io
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


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Cell]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    # csv formats str and int itself; only None and floats need our spelling.
    writer.writerows(
        [v if type(v) is str or type(v) is int else cell(v) for v in row] for row in rows
    )
    return buffer.getvalue()


def json_text(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def markdown_table(
    header: Sequence[str], rows: Iterable[Sequence[Cell]], right: Sequence[int] = ()
) -> str:
    lines = ["| " + " | ".join(header) + " |"]
    lines.append("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|")
    for row in rows:
        lines.append("| " + " | ".join(cell(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines) + "\n"
