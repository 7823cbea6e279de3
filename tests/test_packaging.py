"""The wheel carries everything a build needs: catalog data, schemas and templates, found from
the installed package with no source tree around."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(folder),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (found,) = folder.glob("fabricc-*.whl")
    return found


def test_wheel_contains_data_and_templates(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "fabricc/catalog/data/nodes.yaml" in names
    assert "fabricc/schemas/fabricc.schema.json" in names
    templates = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").rglob("*") if p.is_file()
    )
    for template in templates:
        assert f"fabricc/{template}" in names, template


def test_installed_wheel_builds_outside_the_repository(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(target),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "lab.yaml").write_text((ROOT / "examples" / "roce-lab.yaml").read_text())
    env = {**os.environ, "PYTHONPATH": str(target), "PYTHONSAFEPATH": "1"}
    script = "import fabricc, sys; from fabricc.cli import main; print(fabricc.__file__, file=sys.stderr); main()"
    result = subprocess.run(
        [sys.executable, "-c", script, "build", "lab.yaml", "-o", "out"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0].startswith(str(target)), "imported the installed copy"
    assert json.loads((work / "out" / "summary.json").read_text())["gpus"] == 16
