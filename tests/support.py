"""Shared test helpers: example paths, cached compiles, golden-file locations, tool detection."""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
from pathlib import Path
from typing import Literal

import pytest

from fabricc.build import compile_design
from fabricc.emit import Artifact
from fabricc.ir import Fabric
from fabricc.spec.loader import LoadedSpec, load_spec

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
GOLDEN = ROOT / "tests" / "golden"
ERRORS = ROOT / "tests" / "errors"
EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))
# Examples whose every artifact is kept as a golden file; the larger ones keep a selection.
GOLDEN_FULL = ("roce-lab",)
# Examples whose goldens hold what pyavd renders (the EOS CLI, its ZTP): compared where pyavd is
GOLDEN_PYAVD = ("roce-lab-eos",)
GOLDEN_SELECTED = {
    # EOS: the AVD structured configs, the CLI pyavd renders from them, and their ZTP
    "roce-lab-eos": (
        "summary.json",
        "bom/bom.csv",
        "configs/fabric-leaf001/structured_config.yaml",
        "configs/fabric-leaf001/startup-config",
        "configs/fabric-spine001/structured_config.yaml",
        "configs/fabric-spine001/startup-config",
        "configs/hosts/gpu01.sh",
        "provisioning/kea/kea-dhcp4.conf",
        "provisioning/ztp/fabric-leaf001/bootstrap",
    ),
    "dragonfly-plus-h100": (
        "summary.json",
        "analysis/analysis.json",
        "bom/bom.csv",
        "configs/compute-sm/opensm.conf",
        "diagrams/topology-compute.dot",
    ),
    "torus-3d-h100": (
        "summary.json",
        "analysis/analysis.json",
        "bom/bom.csv",
        "configs/compute-sm/opensm.conf",
        "configs/compute-sm/nvidia-sm.conf",
        "diagrams/topology-compute.dot",
    ),
    "rail-only-h100": (
        "summary.json",
        "analysis/analysis.json",
        "configs/compute-rail1-sm/opensm.conf",
        "diagrams/topology-compute.dot",
    ),
    "megascale-roce": ("summary.json", "bom/bom.csv", "provisioning/ztp/seeds.txt"),
    "superpod-h100-4su": (
        "summary.json",
        "analysis/analysis.json",
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
        "diagrams/overview-compute.dot",
        "diagrams/nvlink-dgx-h100.dot",
        "diagrams/management.dot",
        "provisioning/slurm/topology.conf",
    ),
    "gb200-nvl72-su": (
        "summary.json",
        "analysis/analysis.json",
        "bom/bom.csv",
        "nccl/gb200-compute-tray.xml",
        "nccl/gb200-compute-tray.env",
        "configs/compute-sm/opensm.conf",
        "diagrams/overview-compute.dot",
        "diagrams/nvlink-gb200-nvl72.dot",
        "provisioning/slurm/topology-block.conf",
        "provisioning/k8s/nic-cluster-policy.yaml",
    ),
    "gb300-nvl72-xdr": (
        "summary.json",
        "bom/bom.csv",
        "nccl/gb300-compute-tray.xml",
        "nccl/gb300-compute-tray.env",
        "configs/compute-sm/opensm.conf",
        "configs/storage-sm/opensm.conf",
        "configs/inband-leaf001/startup.yaml",
        "configs/oob-leaf001/startup.yaml",
        "diagrams/overview-compute.dot",
        "diagrams/nvlink-gb300-nvl72.dot",
    ),
    "gb300-nvl72-spectrum-x": (
        "summary.json",
        "bom/bom.csv",
        "nccl/gb300-compute-tray.xml",
        "nccl/gb300-compute-tray.env",
        "configs/p1-leaf01/startup.yaml",
        "configs/p1-leaf01/frr.conf",
        "configs/p2-spine09/frr.conf",
        "configs/storage-leaf001/frr.conf",
        "configs/hosts/gb300-01-c01.sh",
        "configs/supernic/gb300-compute-tray.sh",
        "configs/supernic/gb300-compute-tray-runtime.sh",
        "configs/supernic/gb300-compute-tray.yaml",
        "configs/inband-leaf001/startup.yaml",
        "configs/oob-leaf001/startup.yaml",
        "diagrams/planes-compute.dot",
        "diagrams/nvlink-gb300-nvl72.dot",
    ),
    "mixed-gb200-gb300": (
        "summary.json",
        "bom/bom.csv",
        "nccl/gb200-compute-tray.xml",
        "nccl/gb200-compute-tray.env",
        "nccl/gb300-compute-tray.xml",
        "nccl/gb300-compute-tray.env",
        "configs/compute-sm/opensm.conf",
    ),
    "spectrum-x-2plane": (
        "summary.json",
        "analysis/analysis.json",
        "bom/bom.csv",
        "configs/p1-leaf01/startup.yaml",
        "configs/p1-leaf01/frr.conf",
        "configs/p1-spine01/startup.yaml",
        "configs/p1-spine01/frr.conf",
        "configs/hosts/b300-01.sh",
        "configs/supernic/hgx-b300.sh",
        "diagrams/overview-compute.dot",
        "diagrams/planes-compute.dot",
        "diagrams/nvlink-hgx-b300.dot",
        "provisioning/k8s/udev/hgx-b300.rules",
        "provisioning/k8s/node-labels.yaml",
    ),
}
# Goldens are compiled with Graphviz rendering off, so that they are the same bytes whether or
# not `dot` is installed (and whatever its version): DOT sources, the SVG that fabricc draws
# itself, and a report whose graph figures are placeholders. Rendered SVG is tested apart.
GOLDEN_RENDER: Literal["never"] = "never"
Render = Literal["auto", "always", "never"]


@functools.cache
def compiled(name: str, render: Render | None = None) -> tuple[Fabric, tuple[Artifact, ...]]:
    """Compile an example once per test session (specs and fabrics are treated as read-only);
    `render` overrides the spec's outputs.diagrams.render."""
    path = EXAMPLES / f"{name}.yaml"
    loaded = load_spec(path, f"examples/{name}.yaml")
    if render is not None:
        loaded = with_render(loaded, render)
    fabric, artifacts = compile_design(loaded)
    return fabric, tuple(artifacts)


def with_render(loaded: LoadedSpec, render: Render) -> LoadedSpec:
    outputs = loaded.spec.outputs
    diagrams = outputs.diagrams.model_copy(update={"render": render})
    spec = loaded.spec.model_copy(
        update={"outputs": outputs.model_copy(update={"diagrams": diagrams})}
    )
    return dataclasses.replace(loaded, spec=spec)


def compile_text(
    text: str, tmp_path: Path, name: str = "spec.yaml"
) -> tuple[Fabric, list[Artifact]]:
    path = tmp_path / name
    path.write_text(text)
    return compile_design(load_spec(path, name))


def torus_2qos_storage_spec() -> str:
    """The torus example as a storage torus routed by torus-2QoS: the engine stays for networks
    that carry no NCCL (a compute torus under it is refused: checks/service_levels.py)."""
    text = (EXAMPLES / "torus-3d-h100.yaml").read_text()
    old = "    role: compute\n    fabric: infiniband\n    topology: torus\n"
    assert old in text
    text = text.replace(old, "    role: storage\n    fabric: infiniband\n    topology: torus\n")
    sm = "      sm_nodes: [dgx-sm]"
    assert sm in text
    return text.replace(sm, "      routing_engine: torus-2QoS\n" + sm)


def golden_artifacts(name: str) -> dict[str, str | bytes]:
    _, artifacts = compiled(name, GOLDEN_RENDER)
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


def require_pyavd() -> None:
    """Skip when Arista's pyavd (the eos extra) is missing - except in CI, where the test extra
    installs it and its absence is a failure."""
    from fabricc.emit.configs import avd

    if avd.available():
        return
    message = "needs pyavd (pip install 'fabricc[eos]'; the test extra installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI: {message}")
    pytest.skip(message)
