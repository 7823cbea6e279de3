"""Shared test helpers: example paths, cached compiles, golden-file locations, tool detection."""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

import pytest

from fabricc.build import compile_design
from fabricc.emit import Artifact
from fabricc.ir import Fabric
from fabricc.spec.loader import load_spec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"
ERRORS = ROOT / "tests" / "errors"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
# Examples whose every artifact is kept as a golden file; the larger ones keep a selection.
GOLDEN_FULL = ("roce-lab",)
GOLDEN_SELECTED = {
    "superpod-h100-4su": (
        "summary.json",
        "bom/bom.csv",
        "nccl/dgx-h100.xml",
        "nccl/dgx-h100.env",
        "configs/compute-sm/opensm.conf",
        "configs/compute-sm/partitions.conf",
        "configs/compute-sm/root_guids.conf",
        "configs/storage-sm/opensm.conf",
        "configs/inband-leaf001/startup.yaml",
        "configs/inband-spine001/startup.yaml",
        "configs/oob-leaf001/startup.yaml",
    ),
    "gb200-nvl72-su": (
        "summary.json",
        "bom/bom.csv",
        "nccl/gb200-compute-tray.xml",
        "nccl/gb200-compute-tray.env",
        "configs/compute-sm/opensm.conf",
    ),
    "spectrum-x-2plane": (
        "summary.json",
        "bom/bom.csv",
        "configs/p1-leaf01/startup.yaml",
        "configs/p1-leaf01/frr.conf",
        "configs/p1-spine01/startup.yaml",
        "configs/p1-spine01/frr.conf",
        "configs/hosts/b300-01.sh",
    ),
}


@functools.cache
def compiled(name: str) -> tuple[Fabric, tuple[Artifact, ...]]:
    """Compile an example once per test session (specs and fabrics are treated as read-only)."""
    path = EXAMPLES / f"{name}.yaml"
    loaded = load_spec(path, f"examples/{name}.yaml")
    fabric, artifacts = compile_design(loaded)
    return fabric, tuple(artifacts)


def compile_text(
    text: str, tmp_path: Path, name: str = "spec.yaml"
) -> tuple[Fabric, list[Artifact]]:
    path = tmp_path / name
    path.write_text(text)
    return compile_design(load_spec(path, name))


def golden_artifacts(name: str) -> dict[str, str | bytes]:
    _, artifacts = compiled(name)
    if name in GOLDEN_FULL:
        return dict(artifacts)
    wanted = GOLDEN_SELECTED.get(name, ())
    return {path: content for path, content in artifacts if path in wanted}


def require_tool(*names: str) -> None:
    """Skip when a system tool is missing - except in CI, where a missing tool is a failure."""
    missing = [n for n in names if shutil.which(n) is None]
    if not missing:
        return
    message = f"needs {', '.join(missing)} (Debian packages; .ci/run installs them)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {message}")
    pytest.skip(message)
