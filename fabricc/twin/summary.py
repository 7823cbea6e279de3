"""Twin output for people: the report written into the build folder and a short text summary.

Consumes a Report; writes OUT/twin/report.json atomically (a temporary file renamed into place)
and produces the lines the CLI prints: per stage its counts and the first failures it names.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from fabricc.twin.report import Report

SHOWN = 5  # failures printed per check; report.json has them all


def write_report(out: Path, report: Report) -> Path:
    folder = out / "twin"
    folder.mkdir(exist_ok=True)
    target = folder / "report.json"
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".report-")
    with os.fdopen(fd, "w") as handle:
        handle.write(report.text())
    Path(temporary).chmod(0o644)
    Path(temporary).replace(target)
    # the stages' wall times change from run to run: beside the report, not in it
    (folder / "timings.json").write_text(report.timings_text())
    return target


def _failure_text(failure: object) -> str:
    if not isinstance(failure, dict):
        return str(failure)
    return ", ".join(f"{k}={v}" for k, v in failure.items() if v not in ("", None))


def _lines(name: str, check: dict[str, object]) -> list[str]:
    failures = check.get("failures")
    failures = failures if isinstance(failures, list) else []
    counted = {k: v for k, v in check.items() if isinstance(v, int) and not isinstance(v, bool)}
    counts = " ".join(f"{k} {v}" for k, v in sorted(counted.items()))
    lines = [f"  {name}: {counts + ', ' if counts else ''}{len(failures)} failing"]
    if isinstance(check.get("skipped"), str):
        lines = [f"  {name}: skipped, {check['skipped']}"]
    relinked = check.get("relinked")
    if isinstance(relinked, list) and relinked:
        lines.append(
            f"    relinked (passed no packet, taken down and up): {', '.join(map(str, relinked))}"
        )
    lines.extend(f"    {_failure_text(f)}" for f in failures[:SHOWN])
    if len(failures) > SHOWN:
        lines.append(f"    ... {len(failures) - SHOWN} more in twin/report.json")
    return lines


def summary_text(report: Report) -> str:
    lines = [f"twin of {report.design} ({report.scope})"]
    p = report.provisioning
    counts = {k: len(v) for k, v in p.items() if isinstance(v, list) and k != "failures"}
    lines.append(
        "provisioning: "
        + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in sorted(counts.items()))
    )
    lines.extend(_lines("provisioning", p)[1:])
    for network, checks in sorted(report.networks.items()):
        if checks.get("booted") is False:
            if "out_of_scope" in checks:
                lines.append(
                    f"network {network}: not booted, out of scope: {checks['out_of_scope']}"
                )
            else:
                lines.append(f"network {network}: NOT BOOTED")
                lines.extend(_lines("routing", checks))
            continue
        lines.append(f"network {network}:")
        for name, check in checks.items():
            if isinstance(check, dict):
                lines.extend(_lines(name, check))
            elif isinstance(check, list):
                for drill in check:
                    if isinstance(drill, dict):
                        lines.extend(_lines(f"drill {drill.get('drill')}", drill))
    lines.extend(f"lab: {note}" for note in report.lab)
    lines.append(("holds" if report.holds else f"FAILS: {report.failures()} failures") + "")
    return "\n".join(lines) + "\n"
