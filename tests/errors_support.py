"""The bad-spec corpus: run `fabricc validate` on a spec and capture what the user would see."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from fabricc.cli import cli
from tests.support import ROOT


def render_error(spec: Path) -> str:
    """stderr of `fabricc validate tests/errors/<name>.yaml`, run from the repository root."""
    previous = Path.cwd()
    os.chdir(ROOT)
    try:
        result = CliRunner().invoke(cli, ["validate", spec.relative_to(ROOT).as_posix()])
    finally:
        os.chdir(previous)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 1, (
        f"{spec.name}: expected exit 1, got {result.exit_code}: {result.output}"
    )
    return result.stderr
