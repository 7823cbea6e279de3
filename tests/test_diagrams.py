"""Diagrams: every example gets its pictures, each well-formed and showing what it should,
the same bytes every time, rendered or not as outputs.diagrams.render says, and small at scale."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest

from fabricc.build import compile_design
from fabricc.emit.diagrams import diagrams
from fabricc.emit.diagrams.groups import unit_numbers
from fabricc.emit.diagrams.model import DRAWN, PINNED, RANKED, Diagram
from fabricc.emit.diagrams.render import notices, render_dot, to_svg
from fabricc.emit.diagrams.su import SHAPES_SHOWN, su_shapes
from fabricc.errors import OutputError
from fabricc.spec.loader import load_spec
from tests.support import (
    EXAMPLE_NAMES,
    EXAMPLES,
    ROOT,
    compile_text,
    compiled,
    require_tool,
    with_render,
)

SVG = "{http://www.w3.org/2000/svg}"
TIMES = "\N{MULTIPLICATION SIGN}"


def summary_of(example: str) -> dict[str, object]:
    _, artifacts = compiled(example, "never")
    text = dict(artifacts)["summary.json"]
    assert isinstance(text, str)
    data: dict[str, object] = json.loads(text)
    return data


def svg_text(svg: str) -> str:
    """All text a viewer sees in an SVG (text elements and tooltips), one line each."""
    root = ET.fromstring(svg.encode("utf-8"))
    assert root.tag == f"{SVG}svg"
    return "\n".join(
        (element.text or "")
        for element in root.iter()
        if element.tag in (f"{SVG}text", f"{SVG}title")
    )


def node_count(diagram: Diagram) -> int:
    return len(re.findall(r'^  "[^"]+" \[', diagram.source, re.M))


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_every_diagram_has_its_files(example: str) -> None:
    fabric, artifacts = compiled(example, "never")
    files = dict(artifacts)
    found = diagrams(fabric)
    names = [d.name for d in found]
    assert len(names) == len(set(names))
    for diagram in found:
        if diagram.engine == DRAWN:
            assert files[f"diagrams/{diagram.name}.svg"] == diagram.source
        else:
            assert files[f"diagrams/{diagram.name}.dot"] == diagram.source
            assert f"diagrams/{diagram.name}.svg" not in files, "render: never renders nothing"
    expected = {f"diagrams/{d.name}.{'svg' if d.engine == DRAWN else 'dot'}" for d in found}
    assert {p for p in files if p.startswith("diagrams/")} == expected


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_diagram_kinds_follow_the_design(example: str) -> None:
    fabric, _ = compiled(example, "never")
    names = {d.name for d in diagrams(fabric)}
    networks = fabric.loaded.spec.networks
    for name, network in networks.items():
        assert (f"overview-{name}" in names) == (network.role != "oob")
        assert (f"planes-{name}" in names) == (network.planes > 1)
    assert ("management" in names) == any(n.role == "oob" for n in networks.values())
    catalog = fabric.loaded.catalog.catalog
    models = {group.model for group in fabric.loaded.spec.nodes.values()}
    for model in models:
        assert (f"nvlink-{model}" in names) == (catalog.nodes[model].nvlink is not None)
    rows = {rack.row for rack in fabric.racks}
    assert sum(name.startswith("racks-row-") for name in names) == len(rows)
    assert "floorplan" in names


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_one_su_diagram_per_su_shape(example: str) -> None:
    fabric, _ = compiled(example, "never")
    names = {d.name for d in diagrams(fabric)}
    for name, topology in fabric.networks.items():
        shapes = su_shapes(fabric, name)
        covered = sorted(su for shape in shapes for su in shape)
        if shapes:
            assert covered == list(range(topology.sus)), "every SU has a shape"
        drawn = sorted(int(n.rsplit("-", 1)[1]) for n in names if n.startswith(f"su-{name}-"))
        assert drawn == [shape[0] + 1 for shape in shapes[:SHAPES_SHOWN]]
        for shape in shapes:  # SUs of one shape hold the same nodes
            sizes = {
                sum(1 for d in fabric.devices.values() if d.su == su and d.kind in ("node", "tray"))
                for su in shape
            }
            assert len(sizes) == 1


def test_superpod_units_one_and_two_to_four() -> None:
    """RA-11333: unit 1 gives a node slot to the UFM appliances, units 2-4 are alike."""
    fabric, _ = compiled("superpod-h100-4su", "never")
    assert su_shapes(fabric, "compute") == [[0], [1, 2, 3]]


def test_pods_are_named_as_their_leaf_class_counts_them() -> None:
    """Two GPU groups on one 3-tier fabric: each counts its own pods (inventory, Slurm), so the
    diagrams name the second group's pod by its group, as Slurm's tree does."""
    _, artifacts = compiled("mixed-gb200-gb300", "never")
    files = dict(artifacts)
    overview = str(files["diagrams/overview-compute.dot"])
    assert "Pod 1 spines" in overview and "gb300 pod 1 spines" in overview
    assert "Pod 2" not in overview
    topology = str(files["provisioning/slurm/topology.conf"])
    assert "SwitchName=compute-pod1 " in topology and "SwitchName=compute-gb300-pod1 " in topology
    su_titles = [
        str(files[p]) for p in files if p.startswith("diagrams/su-compute-") and p.endswith(".dot")
    ]
    assert any("gb300 pod 1 spines" in text for text in su_titles)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_drawn_svgs_parse_and_show_every_device(example: str) -> None:
    fabric, _ = compiled(example, "never")
    drawn = [d for d in diagrams(fabric) if d.engine == DRAWN]
    for diagram in drawn:
        text = svg_text(diagram.source)
        missing = [label for label in diagram.labels if label not in text]
        assert not missing, f"{diagram.name} lacks {missing[:5]}"
    elevations = [d for d in drawn if d.name.startswith("racks-row-")]
    placed = {d.name for d in fabric.devices.values() if d.u is not None and d.height_u > 0}
    assert set().union(*(set(d.labels) for d in elevations)) == placed, "every racked device"
    floor = next(d for d in drawn if d.name == "floorplan")
    assert set(floor.labels) == {r.name for r in fabric.racks}


@pytest.mark.tool
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_graphviz_svgs_parse_and_show_their_labels(example: str) -> None:
    require_tool("dot")
    fabric, _ = compiled(example)
    for diagram in diagrams(fabric):
        if diagram.engine == DRAWN:
            continue
        done = subprocess.run(
            diagram.command, input=diagram.source.encode(), capture_output=True, check=True
        )
        assert done.stderr == b"", f"{diagram.name}: {done.stderr.decode()[:300]}"
        text = svg_text(to_svg(diagram))
        missing = [label for label in diagram.labels if label not in text]
        assert not missing, f"{diagram.name} lacks {missing[:5]}"


@pytest.mark.tool
def test_overview_shows_the_link_totals_of_the_summary() -> None:
    require_tool("dot")
    fabric, _ = compiled("superpod-h100-4su")
    summary = summary_of("superpod-h100-4su")
    networks = summary["networks"]
    assert isinstance(networks, dict)
    by_name = {d.name: d for d in diagrams(fabric)}
    for name, data in networks.items():
        if data["role"] == "oob":
            continue
        text = svg_text(to_svg(by_name[f"overview-{name}"]))
        for kind in ("endpoint-leaf", "leaf-spine"):
            assert f"{data['links'][kind]:,} {TIMES} " in text, (name, kind)
        for tier in ("leaf", "spine"):
            assert f"{data['switches'][tier]} {TIMES} " in text, (name, tier)


@pytest.mark.tool
def test_superpod_diagrams_render_well_within_ten_seconds() -> None:
    """Issue budget: all diagrams of the 4-SU SuperPOD in 10 s on 2 cores (about 0.3 s here)."""
    require_tool("dot")
    fabric, _ = compiled("superpod-h100-4su", "never")
    start = time.perf_counter()
    for diagram in diagrams(fabric):
        if diagram.engine != DRAWN:
            render_dot.__wrapped__(diagram.command, diagram.source)
    assert time.perf_counter() - start < 10


@pytest.mark.tool
def test_graphviz_output_is_deterministic() -> None:
    require_tool("dot")
    fabric, _ = compiled("spectrum-x-2plane")
    for diagram in diagrams(fabric):
        if diagram.engine in (PINNED, RANKED):
            once = render_dot.__wrapped__(diagram.command, diagram.source)
            again = render_dot.__wrapped__(diagram.command, diagram.source)
            assert once == again, diagram.name


def test_sources_are_the_same_bytes_whatever_the_hash_seed() -> None:
    code = (
        "import hashlib, sys; from pathlib import Path;"
        "from fabricc.spec.loader import load_spec; from fabricc.build import compile_design;"
        "from tests.support import with_render;"
        "f, a = compile_design(with_render(load_spec(Path(sys.argv[1])), 'never'));"
        "print(hashlib.sha256(repr(sorted(p for p in a if p[0].startswith(('diagrams/', 'report/'))))"
        ".encode()).hexdigest())"
    )
    digests = set()
    for seed in ("1", "977"):
        done = subprocess.run(
            [sys.executable, "-c", code, str(EXAMPLES / "superpod-h100-4su.yaml")],
            cwd=ROOT,
            env={"PYTHONHASHSEED": seed, "PATH": ""},
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(done.stdout)
    assert len(digests) == 1


def test_render_always_without_graphviz_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("fabricc.emit.diagrams.render.shutil.which", lambda name: None)
    loaded = with_render(load_spec(EXAMPLES / "roce-lab.yaml", "examples/roce-lab.yaml"), "always")
    with pytest.raises(OutputError, match=r"outputs\.diagrams\.render") as caught:
        compile_design(loaded)
    assert "install Graphviz" in str(caught.value)


def test_render_auto_without_graphviz_writes_sources_and_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("fabricc.emit.diagrams.render.shutil.which", lambda name: None)
    loaded = load_spec(EXAMPLES / "roce-lab.yaml", "examples/roce-lab.yaml")
    assert loaded.spec.outputs.diagrams.render == "auto"
    fabric, artifacts = compile_design(loaded)
    files = dict(artifacts)
    for diagram in diagrams(fabric):
        if diagram.engine != DRAWN:
            assert f"diagrams/{diagram.name}.dot" in files
            assert f"diagrams/{diagram.name}.svg" not in files
    (line,) = notices(fabric)
    assert "dot" in line and "install Graphviz" in line


def test_build_prints_the_report_path_last(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "fabricc", "build", "examples/roce-lab.yaml", "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    last = done.stdout.strip().splitlines()[-1]
    assert last == f"report: {(out / 'report' / 'index.html').as_posix()}"
    assert (out / "report" / "index.html").is_file()


ODD_SPECS = {
    "no-networks": """\
metadata: {name: bare}
nodes:
  gpu: {model: dgx-h100, count: 2}
""",
    "single-tier": """\
metadata: {name: onetier}
nodes:
  gpu: {model: dgx-h100, count: 4}
networks:
  compute: {role: compute, fabric: infiniband, tiers: 1, rail_optimized: false}
""",
    "oob-only": """\
metadata: {name: oobonly}
nodes:
  gpu: {model: lab-server, count: 3}
networks:
  oob: {role: oob}
""",
}


@pytest.mark.tool
@pytest.mark.parametrize("name", sorted(ODD_SPECS))
def test_unusual_designs_render_cleanly(name: str, tmp_path: Path) -> None:
    """Designs without the usual tiers still give valid pictures and a report."""
    require_tool("dot")
    fabric, artifacts = compile_text(ODD_SPECS[name], tmp_path)
    files = dict(artifacts)
    assert "report/index.html" in files
    for diagram in diagrams(fabric):
        if diagram.engine == DRAWN:
            svg_text(diagram.source)
            continue
        done = subprocess.run(
            diagram.command, input=diagram.source.encode(), capture_output=True, check=False
        )
        assert done.returncode == 0 and done.stderr == b"", (diagram.name, done.stderr[:300])
        assert f"diagrams/{diagram.name}.svg" in files


SCALE_SPEC = """\
metadata: {name: scale-8k}
site: {racks_per_row: 40, rack: {power_kw: 60}}
nodes:
  gpu: {model: dgx-h100, count: 1023, nodes_per_rack: 4}
  ufm: {model: ufm-3.1, count: 4}
networks:
  compute:
    role: compute
    fabric: infiniband
    reserved_slots: 1
    endpoints: {gpu: {}, ufm: {reserved: true}}
  oob: {role: oob}
outputs: {diagrams: {render: never}}
"""


@pytest.mark.slow
def test_a_large_fabric_gives_a_handful_of_small_diagrams(tmp_path: Path) -> None:
    """8,184 GPUs in 32 scalable units and a 3-tier fabric: the pictures aggregate."""
    spec = tmp_path / "scale.yaml"
    spec.write_text(SCALE_SPEC)
    fabric, _ = compile_design(load_spec(spec, "scale.yaml"))
    topology = fabric.networks["compute"]
    assert topology.tiers == 3 and topology.sus > 8
    start = time.perf_counter()
    found = diagrams(fabric)
    assert time.perf_counter() - start < 20
    for diagram in found:
        if diagram.engine in (PINNED, RANKED):
            assert node_count(diagram) <= 300, (diagram.name, node_count(diagram))
    overview = next(d for d in found if d.name == "overview-compute")
    assert "⋯" in overview.source, "pods beyond the first few collapse into one box"
    su = [d for d in found if d.name.startswith("su-compute-")]
    assert 1 <= len(su) <= SHAPES_SHOWN < topology.sus
    kinds = Counter(d.section for d in found)
    assert kinds["su"] == len(su)


@pytest.mark.parametrize(
    ("numbers", "text"),
    [
        ([3], "3"),
        ([2, 3, 4], "2\u20134"),  # an en dash
        ([1, 3], "1, 3"),
        ([1, 2, 4, 5, 6, 7, 8, 9, 10], "1, 2, … (9 units)"),
    ],
)
def test_unit_numbers_read_as_written(numbers: list[int], text: str) -> None:
    """Unit numbers kept from an earlier build need not run in a row; a range is only written
    for numbers that do."""
    assert unit_numbers(numbers) == text
