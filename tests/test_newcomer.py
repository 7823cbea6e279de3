"""What a new user meets: no silent gaps in the figures, warnings that name what to do."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fabricc.analysis.design import analyze
from fabricc.catalog.loader import load_catalog
from fabricc.cli import cli
from fabricc.errors import Severity
from tests.support import EXAMPLES, compile_text

OEM_SERVER = (
    "nodes:\n"
    "  oem-server:\n"
    "    kind: gpu-node\n"
    "    description: OEM 4-GPU server\n"
    "    part_number: OEM-4GPU\n"
    "    source: 'vendor datasheet'\n"
    "    height_u: 4\n"
    "    power_w: 6000\n"
    "    gpus: 4\n"
    "    gpu: {model: X100, sm: 90, memory_gb: 80, nvlink_links: 18, nvlink_generation: 4}\n"
    "    nvlink: {scope: node, switch_chips: 2, gpus: 4}\n"
    "    ports:\n"
    "      - {name: NIC0, cage: NIC0, form: osfp-rhs, speeds: [400], role: compute, gpu: 0}\n"
    "      - {name: NIC1, cage: NIC1, form: osfp-rhs, speeds: [400], role: compute, gpu: 1}\n"
)
SITE_SPEC = (
    "metadata: {name: site}\ncatalog: [site.yaml]\nnodes:\n  gpu: {model: oem-server, count: 4}\n"
    "networks:\n  compute: {role: compute, fabric: infiniband}\n"
)


def _warnings(fabric: object) -> list[str]:
    loaded = fabric.loaded  # type: ignore[attr-defined]
    found = [*loaded.warnings, *fabric.warnings]  # type: ignore[attr-defined]
    return [d.render() for d in found if d.severity is Severity.WARNING]


def test_blackwell_ultra_figures_are_sourced() -> None:
    nodes = load_catalog().catalog.nodes
    for key, nvlink, fp16, fp8 in (
        ("gb300-compute-tray", 1800, 2500, 5000),
        ("dgx-b300", 1800, 2250, 4500),
        ("hgx-b300", 1800, 2250, 4500),
    ):
        gpu = nodes[key].gpu
        assert gpu is not None and not gpu.missing_figures(), key
        assert (gpu.nvlink_gbs, gpu.fp16_dense_tflops, gpu.fp8_dense_tflops) == (nvlink, fp16, fp8)
        assert gpu.figures_source and not gpu.figures_source.startswith("assumed"), key
        assert "NVIDIA" in gpu.figures_source


def test_missing_gpu_figures_are_a_named_warning_never_zero(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(OEM_SERVER)
    fabric, _ = compile_text(SITE_SPEC, tmp_path)
    warnings = _warnings(fabric)
    figures = [w for w in warnings if "nvlink_gbs" in w]
    assert len(figures) == 1
    assert "'oem-server'" in figures[0] and "X100" in figures[0]
    assert "fp16_dense_tflops, fp8_dense_tflops" in figures[0]
    assert "spec.yaml:4:" in figures[0] and "hint:" in figures[0]
    data = analyze(fabric)
    assert data["all_reduce"] == {}  # no estimate from an NVLink bandwidth of 0
    assert data["capacity"]["fp8_dense_pflops"] is None
    assert data["capacity"]["missing"] == {
        "X100": ["nvlink_gbs", "fp16_dense_tflops", "fp8_dense_tflops"]
    }


def test_node_model_without_host_topology_warns(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(OEM_SERVER)
    fabric, artifacts = compile_text(SITE_SPEC, tmp_path)
    topology = [w for w in _warnings(fabric) if "host topology" in w]
    assert len(topology) == 1 and "'oem-server'" in topology[0]
    assert "no NCCL topology file" in topology[0] and "host_topologies" in topology[0]
    assert not any(path.startswith("nccl/") and path.endswith(".xml") for path, _ in artifacts)


def test_catalog_models_have_host_topologies_and_figures(tmp_path: Path) -> None:
    fabric, _ = compile_text(
        "metadata: {name: x}\nsite: {rack: {power_kw: 140}}\nnodes:\n  gpu: {model: gb300-nvl72, count: 1}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband}\n",
        tmp_path,
    )
    assert not [w for w in _warnings(fabric) if "host topology" in w or "nvlink_gbs" in w]


LONG = "training-fabric-east-hall"


def _long_named(tmp_path: Path, name: str) -> Path:
    spec = tmp_path / f"{name}.yaml"
    spec.write_text((EXAMPLES / "roce-lab.yaml").read_text().replace("  fabric:\n", f"  {LONG}:\n"))
    return spec


def test_analyze_and_compare_print_whole_cells_when_piped(tmp_path: Path) -> None:
    spec = _long_named(tmp_path, "a")
    shown = CliRunner().invoke(cli, ["analyze", str(spec)])  # not a terminal
    assert shown.exit_code == 0, shown.output
    assert LONG in shown.output and "..." not in shown.output and "…" not in shown.output
    other = _long_named(tmp_path, "b")
    compared = CliRunner().invoke(cli, ["compare", str(spec), str(other)])
    assert compared.exit_code == 0, compared.output
    assert f"{LONG}: bisection / half endpoint bw" in compared.output
    assert "…" not in compared.output


def test_compare_offers_json(tmp_path: Path) -> None:
    spec = _long_named(tmp_path, "a")
    result = CliRunner().invoke(cli, ["compare", "--json", "-", str(spec), str(spec)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["a"] == data["b"] == spec.as_posix()
    row = next(r for r in data["figures"] if r["figure"] == f"{LONG}: bisection Gb/s")
    assert row["a"] == row["b"] == 1600 and row["b_over_a"] == 1.0
