"""Twin output for reviewers: OUT/report/twin.html, the twin's findings beside the design review.

Consumes a Report; produces one self-contained page in the style of report/index.html (the same
inline CSS, no scripts, opens from file://): the verdict, switches provisioned by DHCP, by USB,
by hand and not at all, per network or InfiniBand subnet each check with its counts and every failure named,
the failure drills, and what the twin does not model. The design review links to it; `fabricc
build` does not write it (the twin runs after the build, on the folder as deployed).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from fabricc import __version__
from fabricc.emit.templating import environment
from fabricc.twin.report import Report

PATH = "report/twin.html"
SHOWN = 200  # failures listed per check; report.json has them all


def failure_text(failure: object) -> str:
    """One failure as a line: its named fields in order (device, session, prefix, problem)."""
    if not isinstance(failure, dict):
        return str(failure)
    return ", ".join(f"{k}={v}" for k, v in failure.items() if v not in ("", None))


def _counts(check: dict[str, object]) -> str:
    counted = {k: v for k, v in check.items() if isinstance(v, int) and not isinstance(v, bool)}
    return ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in sorted(counted.items()))


def _failures(check: dict[str, object]) -> tuple[list[str], int]:
    failures = check.get("failures")
    items = failures if isinstance(failures, list) else []
    return [failure_text(f) for f in items[:SHOWN]], max(0, len(items) - SHOWN)


def _check(name: str, check: dict[str, object]) -> dict[str, Any]:
    shown, more = _failures(check)
    listed = check.get("failures")
    failing = len(listed) if isinstance(listed, list) else 0
    notes = [
        f"{k.replace('_', ' ')}: {v if isinstance(v, str) else ', '.join(map(str, v))}"
        for k, v in sorted(check.items())
        if (isinstance(v, str) and v)
        or (
            k != "failures"
            and isinstance(v, list)
            and v
            and k != "lost_by_design"
            and all(isinstance(x, str) for x in v)
        )
    ]
    return {
        "name": name.replace("_", " "),
        "counts": _counts(check),
        "notes": notes,
        "failing": failing,
        "failures": shown,
        "more": more,
    }


def _drill(drill: dict[str, object]) -> dict[str, Any]:
    row = _check(str(drill.get("drill", "drill")), drill)
    down = drill.get("down")
    row["down"] = ", ".join(str(d) for d in down) if isinstance(down, list) else ""
    lost = drill.get("lost_by_design")
    row["lost_by_design"] = [str(x) for x in lost] if isinstance(lost, list) else []
    return row


def _network(name: str, checks: dict[str, object]) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "fabric": str(checks.get("fabric", "ethernet")),
        "booted": checks.get("booted") is not False,
        "reason": str(checks.get("reason", "")),
        "checks": [],
        "drills": [],
    }
    for key, value in checks.items():
        if isinstance(value, dict):
            entry["checks"].append(_check(key, value))
        elif isinstance(value, list) and key == "drills":
            entry["drills"] = [_drill(d) for d in value if isinstance(d, dict)]
    return entry


def context(report: Report) -> dict[str, Any]:
    p = report.provisioning
    provisioned = [
        {"how": key.replace("_", " "), "count": len(value), "names": ", ".join(map(str, value))}
        for key, value in sorted(p.items())
        if isinstance(value, list) and key != "failures"
    ]
    return {
        "version": __version__,
        "design": report.design,
        "scope": report.scope,
        "holds": report.holds,
        "failures": report.failures(),
        "provisioned": provisioned,
        "provisioning": _check("provisioning", p) if p else None,
        "networks": [_network(n, c) for n, c in sorted(report.networks.items())],
        "not_modelled": report.not_modelled,
        "lab": report.lab,
    }


def write_page(out: Path, report: Report) -> Path:
    """OUT/report/twin.html, written atomically (the folder is made when the build had none)."""
    folder = out / "report"
    folder.mkdir(exist_ok=True)
    page = environment().get_template("report/twin.html.j2").render(context(report))
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".twin-")
    with os.fdopen(fd, "w") as handle:
        handle.write(page)
    Path(temporary).chmod(0o644)
    target = out / PATH
    Path(temporary).replace(target)
    return target
