"""What a new user meets: no silent gaps in the figures, warnings that name what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

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


def test_catalog_lists_every_model_by_kind_with_key_facts() -> None:
    result = CliRunner().invoke(cli, ["catalog"])
    assert result.exit_code == 0, result.output
    catalog = load_catalog().catalog
    lines = result.output.splitlines()
    for section in ("nodes", "switches", "transceivers", "cables", "parts"):
        assert section in lines
        for key in getattr(catalog, section):
            assert any(f"│ {key} " in line for line in lines), key
    h200 = next(line for line in lines if "│ dgx-h200 " in line)
    for fact in ("gpu-node", "8x H200-SXM5-141GB", "8x 400G/200G osfp-rhs compute", "10.2"):
        assert fact in h200
    nvl72 = next(line for line in lines if "│ gb300-nvl72 " in line)
    assert "72x B300-288GB" in nvl72 and "│ 48 │ 131.4 │" in nvl72  # its members' power
    q3400 = next(line for line in lines if "│ q3400 " in line)
    assert "72x 1600G osfp (2x800G)" in q3400 and "Quantum-X800" in q3400


def test_catalog_model_prints_an_entry_a_site_catalog_takes(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["catalog", "dgx-h200"])
    assert result.exit_code == 0, result.output
    assert "host_topologies:" in result.output
    (tmp_path / "site.yaml").write_text(result.output.replace("dgx-h200", "site-h200"))
    fabric, artifacts = compile_text(
        "metadata: {name: x}\ncatalog: [site.yaml]\n"
        "nodes:\n  g: {model: site-h200, count: 4}\n"
        "networks:\n  c: {role: compute, fabric: infiniband}\n",
        tmp_path,
    )
    nodes = fabric.loaded.catalog.catalog.nodes
    assert nodes["site-h200"] == nodes["dgx-h200"]  # the whole entry, nothing lost
    assert "nccl/site-h200.xml" in dict(artifacts)
    # nothing about the copied entry (the one finding left is the subnet's missing SM host)
    assert [w for w in _warnings(fabric) if "subnet-manager host" not in w] == []


def test_unknown_model_suggestions_consider_every_kind() -> None:
    result = CliRunner().invoke(cli, ["catalog", "hgx-h200"])
    assert result.exit_code == 1
    assert "did you mean 'dgx-h200'?" in result.output


def test_unknown_node_model_in_a_spec(tmp_path: Path) -> None:
    for model, hint in (
        ("hgx-h200", "did you mean 'dgx-h200'?"),
        ("qm9700", "'qm9700' is a switch model, not a node model"),
    ):
        (tmp_path / "s.yaml").write_text(
            f"metadata: {{name: x}}\nnodes:\n  g: {{model: {model}, count: 4}}\n"
        )
        result = CliRunner().invoke(cli, ["validate", str(tmp_path / "s.yaml")])
        assert result.exit_code == 1
        assert f"unknown node model {model!r}" in result.output and hint in result.output
        assert "`fabricc catalog` lists every model" in result.output


def test_the_documented_site_catalog_entry_builds(tmp_path: Path) -> None:
    page = (Path(__file__).parent.parent / "docs" / "catalog.md").read_text()
    entry = next(b for b in page.split("```yaml\n")[1:] if b.startswith("nodes:"))
    (tmp_path / "site-catalog.yaml").write_text(entry.split("```")[0])
    fabric, _ = compile_text(
        "metadata: {name: x}\ncatalog: [site-catalog.yaml]\n"
        "nodes:\n  g: {model: hgx-h200, count: 8}\n  s: {model: storage-node, count: 4}\n"
        "networks:\n  c: {role: compute, fabric: infiniband}\n"
        "  st: {role: storage, fabric: ethernet}\n",
        tmp_path,
    )
    assert fabric.gpus() == 64
    figures = [w for w in _warnings(fabric) if "nvlink_gbs" in w]
    assert not figures


def test_a_huge_count_is_one_error_with_the_design_size(tmp_path: Path) -> None:
    from fabricc.spec.loader import load_spec
    from fabricc.spec.size import check_size

    spec = tmp_path / "big.yaml"
    spec.write_text(
        "metadata: {name: big}\nnodes:\n  gpu: {model: dgx-h100, count: 1000000}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband}\n"
    )
    loaded = load_spec(spec, "big.yaml")
    [problem] = check_size(loaded, available=2 * 2**30)
    text = problem.render()
    assert text.startswith("big.yaml:3:33: error: nodes.gpu.count: 1,000,000 dgx-h100")
    assert "8,000,000 GPUs" in text and "24,000,000 links" in text
    assert "GiB of memory; this process may use 2.0 GiB" in text and "at least" in text
    assert not check_size(loaded, available=2**50)
    # and through the CLI under a 2 GiB address-space limit: the error, not a MemoryError
    import subprocess
    import sys

    code = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
        "from fabricc.cli import cli; sys.argv = ['fabricc', 'validate', sys.argv[1]]; cli()"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(spec)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 1, result.stderr
    assert "nodes.gpu.count: 1,000,000 dgx-h100 make a design" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_guid_file_that_is_a_fifo_is_reported_at_the_spec_line(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "guids.yaml")
    (tmp_path / "s.yaml").write_text(
        "metadata: {name: g}\nnodes:\n  gpu: {model: dgx-h100, count: 4}\n"
        "networks:\n  compute:\n    role: compute\n    fabric: infiniband\n"
        "    subnet_manager: {guids: guids.yaml}\n"
    )
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "s.yaml")])
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith(f"{tmp_path / 's.yaml'}:8:29: error: ")
    assert "networks.compute.subnet_manager.guids:" in first and "FIFO" in first


def test_output_naming_a_file_exits_1_with_a_clear_message(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("keep me")
    result = CliRunner().invoke(cli, ["build", str(EXAMPLES / "roce-lab.yaml"), "-o", str(target)])
    assert result.exit_code == 1
    assert "exists and is not a folder" in result.output and "hint: -o names" in result.output
    assert target.read_text() == "keep me"


STORAGE_SPEC = (
    "metadata: {name: x}\nnodes:\n  g: {model: dgx-h100, count: 4}\n"
    "  s: {model: storage-node, count: 4}\n"
    "networks:\n  c: {role: compute, fabric: infiniband}\n  st: {role: storage, fabric: %s%s}\n"
)


def test_storage_network_on_one_leaf_is_a_single_point_of_failure(tmp_path: Path) -> None:
    for fabric, hint in (("ethernet", "spread_ports: true"), ("infiniband", "leaf_downlinks")):
        fabric_, _ = compile_text(STORAGE_SPEC % (fabric, ""), tmp_path)
        [spof] = [w for w in _warnings(fabric_) if "single point of failure" in w]
        assert spof.startswith("spec.yaml:7:3: warning: networks.st: every node of st ")
        assert "(g001, g002, g003, g004 and 4 more)" in spof and "st-leaf001" in spof
        assert hint in spof
    spread = ", endpoints: {g: {leaf_downlinks: 4}, s: {leaf_downlinks: 4}}"
    fixed, _ = compile_text(STORAGE_SPEC % ("infiniband", spread), tmp_path)
    assert not [w for w in _warnings(fixed) if "single point of failure" in w]
    fixed, _ = compile_text(STORAGE_SPEC % ("ethernet", ", spread_ports: true"), tmp_path)
    assert not [w for w in _warnings(fixed) if "single point of failure" in w]


# The README's minimal spec (tests/test_docs.py builds it as README.md writes it) with the
# out-of-band access switches uplinked into the in-band network, as its text suggests.
MINIMAL = """\
metadata: {name: minimal}
nodes:
  dgx: {model: dgx-h100, count: 63}
  ufm: {model: ufm-3.1, count: 2}
networks:
  compute: {role: compute, fabric: infiniband, subnet_manager: {sm_nodes: [ufm]}}
  inband: {role: inband, dual_homed: true}
  oob: {role: oob, uplink_to: inband}
"""


def test_the_readme_minimal_spec_builds_without_warnings(tmp_path: Path) -> None:
    fabric, _ = compile_text(MINIMAL, tmp_path)
    assert fabric.gpus() == 504
    assert _warnings(fabric) == []


def test_inband_defaults_to_the_published_ratio(tmp_path: Path) -> None:
    from fabricc.ir import LEAF_SPINE

    fabric, _ = compile_text(MINIMAL, tmp_path)
    uplinks: dict[str, int] = {}
    hosts: dict[str, int] = {}
    for link in fabric.links_of("inband"):
        if link.kind == LEAF_SPINE:
            uplinks[link.a] = uplinks.get(link.a, 0) + 1
        elif link.kind == "endpoint-leaf":
            hosts[link.b] = hosts.get(link.b, 0) + 1
    assert uplinks and set(uplinks.values()) == {4}  # RA-11333 Table 8: 4 per in-band leaf
    assert max(hosts.values()) <= 48
    # a ratio written in the spec still wins
    fabric, _ = compile_text(
        MINIMAL.replace("dual_homed: true}", "dual_homed: true, oversubscription: '1:1'}"),
        tmp_path,
    )
    written = sum(1 for link in fabric.links_of("inband") if link.kind == LEAF_SPINE)
    assert written > sum(uplinks.values())


def test_every_warning_says_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(OEM_SERVER)
    fabric, _ = compile_text(SITE_SPEC, tmp_path)
    found = [*fabric.loaded.warnings, *fabric.warnings]
    assert found and all(d.hint for d in found)


# 64 -> 96 DGX moves central devices unless the earlier build's places are kept (48 -> 64 no
# longer does: top-of-rack leaves stand beside their nodes, docs/floor.md)
GROW = """\
metadata: {name: grow}
nodes:
  dgx: {model: dgx-h100, count: 64}
networks:
  compute: {role: compute, fabric: infiniband}
  inband: {role: inband, dual_homed: true}
  oob: {role: oob, uplink_to: inband}
"""


def _grow(count: int) -> str:
    return GROW.replace("count: 64", f"count: {count}")


def _cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_a_build_grows_in_place_by_default(tmp_path: Path) -> None:
    from fabricc.change.compare import diff, moves
    from fabricc.change.snapshot import load

    small, large = tmp_path / "small.yaml", tmp_path / "large.yaml"
    small.write_text(_grow(64))
    large.write_text(_grow(96))
    out, first = tmp_path / "out", tmp_path / "first"
    assert _cli("build", str(small), "-o", str(out)).exit_code == 0
    assert _cli("build", str(small), "-o", str(first)).exit_code == 0
    again = _cli("build", str(small), "-o", str(out))  # the same spec again: the same bytes
    assert again.exit_code == 0 and "grown in place" in again.output
    assert load(out).devices == load(first).devices
    grown = _cli("build", str(large), "-o", str(out))
    assert grown.exit_code == 0, grown.output
    assert "grown in place" in grown.output and "--fresh" in grown.output
    assert moves(diff(load(first), load(out))) == 0
    fresh = tmp_path / "fresh"
    assert _cli("build", str(small), "-o", str(fresh)).exit_code == 0
    laid = _cli("build", str(large), "-o", str(fresh), "--fresh")
    assert laid.exit_code == 0 and "grown in place" not in laid.output
    assert moves(diff(load(first), load(fresh))) > 0  # what growing in place avoided


def test_a_folder_of_another_design_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _cli("build", str(EXAMPLES / "roce-lab.yaml"), "-o", str(out)).exit_code == 0
    spec = tmp_path / "other.yaml"
    spec.write_text(_grow(8))
    refused = _cli("build", str(spec), "-o", str(out))
    assert refused.exit_code == 1
    assert "holds a build of another design ('roce-lab', this is 'grow')" in refused.output
    assert (out / "summary.json").read_text().count('"roce-lab"') == 1  # left as it was
    assert _cli("build", str(spec), "-o", str(out), "--fresh").exit_code == 0
    assert _cli("build", str(spec), "--keep", str(out), "--fresh").exit_code == 2


def test_diff_says_when_keep_would_avoid_moves(tmp_path: Path) -> None:
    small, large = tmp_path / "small.yaml", tmp_path / "large.yaml"
    small.write_text(_grow(64))
    large.write_text(_grow(96))
    out = tmp_path / "out"
    assert _cli("build", str(small), "-o", str(out)).exit_code == 0
    plain = _cli("diff", str(out), str(large))
    assert plain.exit_code == 0, plain.output
    assert "existing devices move; with OLD's places kept, 0 would" in plain.output
    kept = _cli("diff", "--keep", str(out), str(large))
    assert "note:" not in kept.output
