"""`fabricc twin` on every example: each design boots as deployed and everything holds.

Each example is built (`fabricc build`) and booted by the twin as a user runs it (`fabricc twin
OUT`, in its own process, the default slice for the large designs); the test asserts exit 0 and
a report.json that holds, and shows the twin's summary (each failure named) when it does not.
Booting needs root and the tools: skipped outside CI, failures in CI (tests.support).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.twin.requirements import missing
from tests.support import EXAMPLE_NAMES, EXAMPLES

BOUND = 600  # s: the twin's own time bound per example (docs/performance.md: under 60 s each)


def _requirements() -> None:
    """Skip when the twin cannot run here (root, its tools: the twin's own list, each with its
    package) - except in CI, where .ci/run installs them and a missing one is a failure."""
    lacking = missing(infiniband=True)
    if not lacking:
        return
    message = "; ".join(lacking)
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {message}")
    pytest.skip(message)


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_twin_holds_on_every_example(example: str, tmp_path: Path) -> None:
    _requirements()
    out = tmp_path / "out"
    built = CliRunner().invoke(cli, ["build", str(EXAMPLES / f"{example}.yaml"), "-o", str(out)])
    assert built.exit_code == 0, built.output
    # `ip netns exec` and the daemons that drop to user frr read the folder
    tmp_path.chmod(0o755)
    out.chmod(0o755)
    result = subprocess.run(
        [sys.executable, "-m", "fabricc", "twin", str(out), "--timeout", str(BOUND)],
        capture_output=True,
        text=True,
        timeout=BOUND + 60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    report = json.loads((out / "twin" / "report.json").read_text())
    assert report["holds"] is True, output
    assert report["failures"] == 0, output
    assert report["networks"], output  # something was booted
