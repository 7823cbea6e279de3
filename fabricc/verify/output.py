"""Verification output: findings as terminal text and CSV; discovery file naming.

Consumes a Verdict; produces the text `fabricc verify` prints (every finding that is not ok, then
one summary line) and a CSV of every finding in cable-ID order. lldp_files turns --lldp arguments
(files named <device>.json, or folders of them) into (device, path) pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from fabricc.emit.tables import csv_text
from fabricc.errors import printable
from fabricc.verify.model import OK, STATUSES, Finding
from fabricc.verify.run import Verdict

HEADER = ("cable_id", "status", "planned", "found", "detail")


def findings_csv(findings: Iterable[Finding]) -> str:
    """One row per finding, through the project's CSV writer (formula cells neutralised: the
    names come from a discovered, untrusted network)."""
    return csv_text(HEADER, ([printable(str(cell)) for cell in f.row()] for f in findings))


def findings_text(verdict: Verdict) -> str:
    lines = []
    for finding in verdict.findings:
        if finding.status == OK:
            continue
        head = f"{finding.cable or '-'}: {finding.status}"
        parts = [
            f"planned {finding.planned}" if finding.planned else "",
            f"found {finding.found}" if finding.found else "",
            finding.detail,
        ]
        lines.append(printable(f"{head}: " + "; ".join(p for p in parts if p)))
    counts = verdict.counts()
    summary = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts.get(s))
    cables = sum(1 for f in verdict.findings if f.cable)
    lines.append(
        f"network {printable(verdict.scope)}: {cables} planned cables: {summary or 'nothing found'}"
    )
    return "\n".join(lines) + "\n"


def lldp_files(paths: Iterable[Path]) -> Iterator[tuple[str, Path]]:
    for path in paths:
        if path.is_dir():
            for child in sorted(path.glob("*.json")):
                yield child.stem, child
        else:
            yield path.stem, path
