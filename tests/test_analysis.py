"""Design analysis: bisection, tiers, paths, failures, collectives, capacity, power and cost
against hand-computed values, and the quotient max-flow against max-flow on the whole graph."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabricc.build
import fabricc.emit.cabling
import fabricc.forked
from fabricc.analysis import network, paths, worker
from fabricc.analysis.bisection import Split, splits
from fabricc.analysis.collectives import Link, all_reduce, gpu_counts
from fabricc.analysis.design import Options, analysis, analyze
from fabricc.analysis.graph import PlaneGraph, plane_graphs
from fabricc.analysis.network import tier_switches
from fabricc.analysis.refine import Weighted, refine
from fabricc.cli import cli
from fabricc.emit import Artifact
from fabricc.errors import DesignError, Diagnostic, error
from fabricc.ir import Fabric
from fabricc.spec.loader import load_spec
from fabricc.synth import pipeline
from fabricc.synth.bom import bom_lines
from tests.support import EXAMPLE_NAMES, EXAMPLES, compile_text, compiled

QM9700_SPEC = """\
metadata: {{name: {name}}}
site: {{racks_per_row: 12, rack: {{power_kw: 45}}}}
nodes:
  dgx: {{model: dgx-h100, count: {nodes}, nodes_per_rack: 4}}
networks:
  compute: {{role: compute, fabric: infiniband, oversubscription: "{ratio}"{extra}}}
"""


def fabric_of(tmp_path: Path, nodes: int, ratio: str = "1:1", extra: str = "") -> Fabric:
    text = QM9700_SPEC.format(name="t", nodes=nodes, ratio=ratio, extra=extra)
    fabric, _ = compile_text(text, tmp_path)
    return fabric


def compute_of(fabric: Fabric) -> dict[str, Any]:
    result: dict[str, Any] = analysis(fabric)["networks"]["compute"]
    return result


def test_superpod_compute_bisection_is_half_its_endpoint_bandwidth() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    net = compute_of(fabric)
    # 127 DGX x 8 + 4 UFM ports at 400G (RA-11333: 1,020 node and UFM cables).
    assert net["endpoint_ports"] == 1020
    assert net["endpoint_gbps"] == 1020 * 400
    assert net["bisection_gbps"] == pytest.approx(net["endpoint_gbps"] / 2, rel=0.02)
    assert net["bisection_gbps"] == 204_000
    assert net["oversubscription"] == {"leaf": 1.0}
    assert net["max_switch_hops"] == 3
    # 16 spines, 2 links from every leaf to every spine: 16 switch paths, 16 x 2 x 2 link paths.
    assert net["ecmp_paths"] == 16
    assert net["ecmp_link_paths"] == 64


@pytest.mark.parametrize(
    ("ratio", "nodes", "leaf_down", "leaf_up"),
    [
        ("1:1", 128, 32, 32),  # QM9700: 64 ports, 32 down and 32 up, 4 full units of 32
        ("2:1", 160, 40, 20),  # 2m + m cages <= 32: m = 10, 40 ports down, 20 up; units of 40
        ("3:1", 192, 48, 16),  # 3m + m <= 32: m = 8, 48 down, 16 up; 4 units of 48
    ],
)
def test_oversubscribed_full_units_scale_bisection_by_the_ratio(
    tmp_path: Path, ratio: str, nodes: int, leaf_down: int, leaf_up: int
) -> None:
    net = compute_of(fabric_of(tmp_path, nodes, ratio))
    ports = nodes * 8
    assert net["endpoint_gbps"] == ports * 400
    # Leaves of half the units send through their uplinks only: 16 leaves x leaf_up x 400G.
    assert net["bisection_gbps"] == 16 * leaf_up * 400
    a, b = (int(x) for x in ratio.split(":"))
    assert net["bisection_ratio"] == pytest.approx(b / a, abs=1e-4)
    assert net["oversubscription"]["leaf"] == pytest.approx(leaf_down / leaf_up, abs=1e-3)


def test_a_2_to_1_variant_halves_bisection(tmp_path: Path) -> None:
    full = compute_of(fabric_of(tmp_path, 160, "1:1"))  # 5 full units of 32
    half = compute_of(fabric_of(tmp_path, 160, "2:1"))  # 4 full units of 40
    assert full["endpoint_gbps"] == half["endpoint_gbps"]
    assert half["bisection_gbps"] == pytest.approx(full["bisection_gbps"] / 2, rel=0.02)


def full_graph_flow(graph: PlaneGraph, split: Split, lost_switch: int | None = None) -> int:
    """Max-flow on the whole graph, every endpoint port a node of its own."""
    network = nx.DiGraph()
    for v, neighbours in enumerate(graph.adjacency):
        for u, (_, gbps) in neighbours.items():
            if lost_switch not in (u, v):
                network.add_edge(("switch", v), ("switch", u), capacity=gbps)
    for number, port in enumerate(graph.attachments):
        if port.switch == lost_switch:
            continue
        node = ("port", number)
        network.add_edge(node, ("switch", port.switch), capacity=port.gbps)
        network.add_edge(("switch", port.switch), node, capacity=port.gbps)
        if number in split.first:
            network.add_edge("s", node)  # no capacity: unbounded
        else:
            network.add_edge(node, "t")
    if "s" not in network or "t" not in network:
        return 0
    return int(nx.maximum_flow_value(network, "s", "t"))


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_quotient_max_flow_equals_max_flow_on_the_whole_graph(example: str) -> None:
    fabric, _ = compiled(example, "never")
    for name, net in analysis(fabric)["networks"].items():
        for graph, plane in zip(plane_graphs(fabric, name), net["per_plane"], strict=True):
            for split in splits(graph):
                expected = full_graph_flow(graph, split)
                assert plane["bisection_by_split"][split.name] == expected, (name, split.name)


def test_spine_failure_matches_the_whole_graph_without_that_spine() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    net = compute_of(fabric)
    (graph,) = plane_graphs(fabric, "compute")
    spine = graph.names.index(net["single_failure"]["spine"]["failed"])
    expected = min(full_graph_flow(graph, s, spine) for s in splits(graph))
    assert net["single_failure"]["spine"]["bisection_gbps_after"] == expected
    # One of 16 spines: at most 1/16 of the fabric's switch capacity goes.
    assert net["single_failure"]["spine"]["bisection_gbps_lost"] <= 204_000 / 16 * 1.1


def test_refinement_classes_are_equitable() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    for name in fabric.networks:
        for graph in plane_graphs(fabric, name):
            colours = refine(Weighted.of(graph.adjacency), graph.roles).colours
            seen: dict[int, dict[int, int]] = {}
            for v, neighbours in enumerate(graph.adjacency):
                totals: dict[int, int] = {}
                for u, (_, gbps) in neighbours.items():
                    totals[colours[u]] = totals.get(colours[u], 0) + gbps
                assert seen.setdefault(colours[v], totals) == totals


def _naive_partition(weighted: Weighted, start: list[int]) -> set[frozenset[int]]:
    """1-WL the slow way: every node's multiset of (neighbour class, Gb/s) again each round,
    until the number of classes stops growing."""
    colours = start
    while True:
        keys = [
            (colours[v], tuple(sorted(zip(map(colours.__getitem__, near), gbps, strict=True))))
            for v, (near, gbps) in enumerate(
                zip(weighted.neighbours, weighted.weights, strict=True)
            )
        ]
        ids: dict[Any, int] = {}
        following = [ids.setdefault(key, len(ids)) for key in keys]
        if len(ids) == len(set(colours)):
            break
        colours = following
    classes: dict[int, set[int]] = {}
    for v, colour in enumerate(colours):
        classes.setdefault(colour, set()).add(v)
    return {frozenset(members) for members in classes.values()}


@given(
    st.integers(min_value=2, max_value=24).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.lists(
                st.tuples(
                    st.integers(0, n - 1), st.integers(0, n - 1), st.sampled_from([100, 200, 400])
                ),
                max_size=3 * n,
            ),
            st.lists(st.integers(0, 2), min_size=n, max_size=n),
        )
    )
)
@settings(max_examples=200, deadline=None)
def test_refinement_is_the_coarsest_equitable_partition(
    case: tuple[int, list[tuple[int, int, int]], list[int]],
) -> None:
    """Against the slow way on random weighted graphs and starting colours: the same classes,
    numbered in order of first appearance."""
    size, edges, start = case
    adjacency: list[dict[int, tuple[int, int]]] = [{} for _ in range(size)]
    for a, b, gbps in edges:
        if a != b:
            adjacency[a][b] = adjacency[b][a] = (1, gbps)
    weighted = Weighted.of(adjacency)
    colours = refine(weighted, start).colours
    classes: dict[int, set[int]] = {}
    for v, colour in enumerate(colours):
        classes.setdefault(colour, set()).add(v)
    assert {frozenset(members) for members in classes.values()} == _naive_partition(weighted, start)
    first = {colour: colours.index(colour) for colour in set(colours)}
    assert sorted(first, key=first.__getitem__) == list(range(len(first)))


@pytest.mark.parametrize("example", ["superpod-h100-4su", "spectrum-x-2plane"])
def test_refinement_from_a_stable_colouring_equals_refinement_from_scratch(example: str) -> None:
    """Starting from an equitable colouring (touched: the switches whose links changed since)
    gives the very same classes, numbered alike, as refining from the start colours alone."""
    fabric, _ = compiled(example, "never")
    for name in fabric.networks:
        for graph in plane_graphs(fabric, name):
            whole = Weighted.of(graph.adjacency)
            attached = graph.attached()
            base = refine(whole, list(zip(graph.roles, attached, strict=True))).colours
            damaged: list[tuple[Weighted, set[int]]] = [(whole, set())]
            for v in (0, len(graph.names) // 2, len(graph.names) - 1):
                damaged.append((whole.without_node(v), {v, *whole.neighbours[v]}))
                for u in whole.neighbours[v][:1]:
                    damaged.append((whole.with_weight(v, u, 1), {v, u}))
                    damaged.append((whole.with_weight(v, u, 0), {v, u}))
            for split in splits(graph):
                start = list(zip(base, split.first_gbps, split.second_gbps, strict=True))
                for weighted, touched in damaged:
                    scratch = refine(weighted, start)
                    assert refine(weighted, start, base, touched) == scratch, name


def test_switch_hops_by_tiers(tmp_path: Path) -> None:
    one_leaf = compute_of(fabric_of(tmp_path, 4))
    assert one_leaf["max_switch_hops"] == 3  # 4 nodes, 8 rail leaves: rail to rail via a spine
    # Two units, one per spine-leaf group: between groups through the cores.
    three = compute_of(fabric_of(tmp_path, 64, extra=", tiers: 3, pod_sus: 1"))
    assert three["tiers"] == 3
    assert three["max_switch_hops"] == 5
    assert three["oversubscription"] == {"leaf": 1.0, "spine": 1.0}


def test_paths_from_class_representatives_agree_with_every_source(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    for name in fabric.networks:
        for graph in plane_graphs(fabric, name):
            classes = paths.path_classes(graph, Weighted.of(graph.adjacency))
            exact = paths.path_stats(graph, classes)
            monkeypatch.setattr(paths, "EXACT_SOURCES", 0)
            sampled = paths.path_stats(graph, classes)
            monkeypatch.undo()
            assert sampled == exact, name


def test_single_failures_of_the_superpod() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    nets = analysis(fabric)["networks"]
    leaf = nets["compute"]["single_failure"]["leaf"]
    # The first rail leaf serves 31 DGX and one UFM; the UFM has no other compute port.
    assert (leaf["endpoints_lost"], leaf["nodes_lost"], leaf["endpoint_gbps_lost"]) == (
        32,
        1,
        12_800,
    )
    assert leaf["bisection_gbps_after"] <= 204_000 - 12_800
    inband = nets["inband"]["single_failure"]["leaf"]
    assert inband["nodes_lost"] == 0 and inband["endpoints_lost"] > 0  # dual-homed: bonds survive
    oob = nets["oob"]["single_failure"]["leaf"]
    assert oob["nodes_lost"] == oob["endpoints_lost"]  # one copper port per device
    assert set(nets["compute"]["single_failure"]) == {
        "leaf",
        "spine",
        "switch_link",
        "endpoint_link",
    }
    assert "plane_loss" not in nets["compute"]


def test_losing_a_plane_halves_a_twin_plane_fabric() -> None:
    fabric, _ = compiled("spectrum-x-2plane", "never")
    net = compute_of(fabric)
    assert net["planes"] == 2 and len(net["per_plane"]) == 2
    lost = net["plane_loss"]
    # 16 nodes x 8 GPUs x one 400G port per plane; every node keeps its other plane.
    assert lost["endpoints_lost"] == 128
    assert lost["nodes_lost"] == 0
    assert lost["endpoint_gbps_lost"] == 128 * 400
    assert lost["bisection_gbps_after"] == net["bisection_gbps"] // 2


def test_all_reduce_two_levels_by_hand() -> None:
    # 16 GPUs in 2 NVLink domains of 8: NVLink 400 GB/s, fabric 50 GB/s per GPU, 16 GB.
    result = all_reduce(Link(8, 400.0, 50.0), 16, 16.0)
    assert result.nvlink_s == pytest.approx(2 * 7 / 8 * 16 / 400)
    assert result.fabric_s == pytest.approx(2 * 1 / 2 * (16 / 8) / 50)
    assert result.algbw_gbs == pytest.approx(16 / (0.07 + 0.04))
    assert result.busbw_gbs == pytest.approx(result.algbw_gbs * 2 * 15 / 16)
    inside = all_reduce(Link(8, 400.0, 50.0), 8, 16.0)  # one domain: NVLink only
    assert inside.fabric_s == 0.0 and inside.busbw_gbs == pytest.approx(400.0)
    flat = all_reduce(Link(1, 0.0, 50.0), 4, 16.0)  # no NVLink: ring on the fabric
    assert flat.busbw_gbs == pytest.approx(50.0)
    assert gpu_counts(1016)[-2:] == [512, 1016] and gpu_counts(2) == [2]


def test_superpod_all_reduce_of_a_70b_gradient() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    reduce = analysis(fabric)["all_reduce"]
    assert reduce["message_gb"] == 140.0 and reduce["gpus"] == 1016
    assert reduce["nvlink_domain_gpus"] == 8
    assert reduce["nvlink_gbs_per_gpu"] == 450.0  # NVLink 4: 900 GB/s both directions
    assert reduce["fabric_gbs_per_gpu"] == 50.0  # one 400G NIC per GPU
    nvlink = 2 * 7 / 8 * 140 / 450
    fabric_s = 2 * 126 / 127 * (140 / 8) / 50
    assert reduce["time_s"] == pytest.approx(nvlink + fabric_s, abs=1e-3)
    algbw = 140 / (nvlink + fabric_s)
    assert reduce["busbw_gbs"] == pytest.approx(algbw * 2 * 1015 / 1016, abs=0.1)


def test_options_choose_message_and_gpus() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    reduce = analyze(fabric, Options(message_gb=1.0, gpus=64))["all_reduce"]
    assert reduce["gpus"] == 64 and reduce["message_gb"] == 1.0
    nvlink = 2 * 7 / 8 * 1 / 450
    assert reduce["time_s"] == pytest.approx(nvlink + 2 * 7 / 8 * (1 / 8) / 50, abs=1e-4)


def test_capacity_and_power_of_the_superpod() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    data = analysis(fabric)
    capacity = data["capacity"]
    assert capacity["gpus"] == 1016
    assert capacity["gpu_memory_tb"] == pytest.approx(1016 * 80 / 1000)
    assert capacity["fp8_dense_pflops"] == pytest.approx(1016 * 1979 / 1000, abs=0.05)
    assert capacity["fp16_dense_pflops"] == pytest.approx(1016 * 989 / 1000, abs=0.05)
    power = data["power"]
    racked = sum(fabric.devices[d].power_w for r in fabric.racks for d in r.devices)
    assert power["site_kw"] == pytest.approx(racked / 1000, abs=0.01)
    assert power["site_budget_kw"] == 38 * 45
    assert sum(row["racks"] for row in power["rows"]) == power["racks"] == 38
    assert power["racks_over_budget"] == 0
    assert power["rack_max_kw"] <= 45


def test_cost_roll_up(tmp_path: Path) -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    lines = {line.item.part_number: line.quantity for line in bom_lines(fabric)}
    dgx = fabric.loaded.catalog.catalog.nodes["dgx-h100"].part_number
    prices = {dgx: 300_000.0, "920-9B210-00FN-0M0": 25_000.5, "not-in-this-design": 1.0}
    cost = analyze(fabric, Options(prices=prices))["cost"]
    expected = 127 * 300_000.0 + lines["920-9B210-00FN-0M0"] * 25_000.5
    assert cost["total"] == pytest.approx(expected)
    assert cost["priced_lines"] == 2
    assert dgx not in cost["unpriced"] and len(cost["unpriced"]) == len(lines) - 2


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_analyze_prints_tables_and_json() -> None:
    spec = str(EXAMPLES / "roce-lab.yaml")
    shown = run("analyze", spec)
    assert shown.exit_code == 0, shown.output
    assert "Networks" in shown.output and "Single failures" in shown.output
    as_json = run("analyze", "--json", "-", spec)
    assert as_json.exit_code == 0
    data = json.loads(as_json.output)
    _, artifacts = compiled("roce-lab", "never")
    assert data == json.loads(dict(artifacts)["analysis/analysis.json"])
    assert data["networks"]["fabric"]["bisection_gbps"] == 4 * 2 * 400 / 2


def test_analyze_with_prices_and_bad_price_file(tmp_path: Path) -> None:
    spec = str(EXAMPLES / "roce-lab.yaml")
    good = tmp_path / "prices.yaml"
    good.write_text("LAB-GPU-SERVER: 50000\n")
    out = tmp_path / "analysis.json"
    result = run("analyze", "--prices", str(good), "--json", str(out), spec)
    assert result.exit_code == 0, result.output
    assert json.loads(out.read_text())["cost"]["total"] == 4 * 50000
    bad = tmp_path / "bad.yaml"
    bad.write_text("LAB-GPU-SERVER: cheap\nOTHER: -1\n")
    failed = run("analyze", "--prices", str(bad), spec)
    assert failed.exit_code == 1
    assert f"{bad}:1:17: error: LAB-GPU-SERVER: expected a number" in failed.output
    assert f"{bad}:2:8: error: OTHER:" in failed.output
    assert "Traceback" not in failed.output


def test_compare_sets_two_designs_side_by_side(tmp_path: Path) -> None:
    one = tmp_path / "one.yaml"
    two = tmp_path / "two.yaml"
    one.write_text(QM9700_SPEC.format(name="one", nodes=160, ratio="1:1", extra=""))
    two.write_text(QM9700_SPEC.format(name="two", nodes=160, ratio="2:1", extra=""))
    result = run("compare", str(one), str(two))
    assert result.exit_code == 0, result.output
    assert "one.yaml" in result.output and "two.yaml" in result.output
    row = next(line for line in result.output.splitlines() if "bisection / half" in line)
    assert "0.5x" in row


def test_analysis_is_the_same_whatever_the_hash_seed() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pathlib import Path; from fabricc.spec.loader import load_spec;"
        "from fabricc.synth.pipeline import synthesize; from fabricc.analysis.design import analyze;"
        "from fabricc.emit.tables import json_text;"
        "print(json_text(analyze(synthesize(load_spec(Path(sys.argv[1]))))))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code, str(EXAMPLES / "superpod-h100-4su.yaml")],
            env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert math.isfinite(json.loads(outputs.pop())["all_reduce"]["time_s"])


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_analysis_json_has_the_documented_keys(example: str) -> None:
    _, artifacts = compiled(example, "never")
    data = json.loads(dict(artifacts)["analysis/analysis.json"])
    for net in data["networks"].values():
        assert isinstance(net["bisection_gbps"], int)
        assert isinstance(net["max_switch_hops"], int)
        assert all(isinstance(v, float) for v in net["oversubscription"].values())
        assert isinstance(net["ecmp_paths"], int)
        for impact in net["single_failure"].values():
            for key in (
                "endpoints_lost",
                "nodes_lost",
                "endpoint_gbps_lost",
                "bisection_gbps_lost",
            ):
                assert isinstance(impact[key], int), key
        assert ("plane_loss" in net) == (net["planes"] > 1)
    for key in ("all_reduce", "capacity", "power"):
        assert key in data


def test_three_tier_failures_include_a_core(tmp_path: Path) -> None:
    net = compute_of(fabric_of(tmp_path, 64, extra=", tiers: 3, pod_sus: 1"))
    assert {"leaf", "spine", "core"} <= set(net["single_failure"])
    core = net["single_failure"]["core"]
    assert core["endpoints_lost"] == 0 and core["nodes_lost"] == 0
    assert 0 < core["bisection_gbps_after"] <= net["bisection_gbps"]


def test_analyze_says_when_fewer_gpus_exist_than_asked() -> None:
    result = run("analyze", "--gpus", "999", "--json", "-", str(EXAMPLES / "roce-lab.yaml"))
    assert result.exit_code == 0
    assert "warning: only 16 GPUs on fabric" in result.output


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    units=st.integers(min_value=1, max_value=6),
    spare=st.integers(min_value=0, max_value=1),
    ratio=st.sampled_from(["1:1", "2:1", "3:1", "4:3", "5:3"]),
)
def test_bisection_follows_the_leaf_ratio(units: int, spare: int, ratio: str) -> None:
    """Full units: bisection / half the endpoint bandwidth is the leaf's up:down bandwidth as
    built; a partial unit never gives more than half the endpoint bandwidth."""
    with tempfile.TemporaryDirectory() as folder:
        probe = fabric_of(Path(folder), 1, ratio)
        leaf = probe.networks["compute"].leaf_classes[0]
        nodes = units * leaf.down_ports - spare
        fabric = fabric_of(Path(folder), nodes, ratio)
    net = compute_of(fabric)
    assert net["bisection_gbps"] <= net["endpoint_gbps"] / 2
    if not spare:
        built = leaf.up_ports * leaf.up_speed / (leaf.down_ports * leaf.down_speed)
        assert net["bisection_ratio"] == pytest.approx(min(1.0, built), abs=1e-3)


def test_analyze_and_compare_report_spec_errors_with_positions() -> None:
    bad = str(EXAMPLES.parent / "tests" / "errors" / "unknown-node-model.yaml")
    for args in (("analyze", bad), ("compare", str(EXAMPLES / "roce-lab.yaml"), bad)):
        result = run(*args)
        assert result.exit_code == 1
        assert f"{bad}:5:12: error:" in result.output
        assert "Traceback" not in result.output


def test_a_rail_only_network_carries_the_all_reduce_in_full(tmp_path: Path) -> None:
    # Rail-only (one leaf per rail, no spines): rail-0 NICs reach only rail-0 NICs. Between the
    # rails there is no path (bisection 0), but a hierarchical all-reduce goes rail to rail.
    text = """\
metadata: {name: rails}
nodes:
  a: {model: lab-server, count: 4}
networks:
  fabric: {role: compute, fabric: ethernet, topology: rail-only}
"""
    fabric, _ = compile_text(text, tmp_path)
    data = analysis(fabric)
    net = data["networks"]["fabric"]
    assert net["bisection_gbps"] == 0 and net["per_plane"][0]["bisection_by_split"]["rails"] == 0
    assert not net["connected"]
    reduce = data["all_reduce"]
    assert reduce["fabric_factor"] == 1.0
    assert reduce["nvlink_domain_gpus"] == 1  # L40S: no NVLink
    assert reduce["fabric_gbs_per_gpu"] == 2 * 400 / 4 / 8  # 2 NICs of 400G for 4 GPUs


# -- the analysis process (large designs) ------------------------------------------------------


@pytest.mark.parametrize("waiting", [False, True], ids=["given", "waiting"])
@pytest.mark.parametrize("example", ["superpod-h100-4su", "spectrum-x-2plane", "roce-lab"])
def test_the_analysis_process_gives_the_in_process_figures(
    example: str, waiting: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every network's figures from the worker process equal those computed here, whether it
    started with its graphs or waited for them; the parent computes none of them itself once
    the worker runs (its plane_figures would fail)."""
    fabric, _ = compiled(example)
    expected = analyze(fabric)
    worker.start(fabric, worker.PlaneWorker() if waiting else None)

    def not_here(*_: object) -> None:
        raise AssertionError("plane figures computed in the build's process")

    monkeypatch.setattr(network, "plane_figures", not_here)
    assert analyze(fabric) == expected
    assert worker.MEMO_KEY not in fabric.memo


def test_a_failure_in_the_analysis_process_is_reported_with_its_traceback() -> None:
    broken = PlaneGraph("compute", 0, ["leaf1"], ["leaf"], [{7: (1, 400)}], [])  # no node 7
    jobs: worker.Jobs = {"compute": ([broken], {"leaf": ["leaf1"]})}
    running = worker.PlaneWorker(jobs)
    with pytest.raises(RuntimeError, match="the analysis process failed") as caught:
        running.figures()
    assert "Traceback" in str(caught.value) and "IndexError" in str(caught.value)
    assert running._process.returncode == 0  # it reported the failure and ended


def test_an_analysis_process_that_dies_is_reported() -> None:
    fabric, _ = compiled("roce-lab")
    running = worker.PlaneWorker({"x": (plane_graphs(fabric, "compute"), {})})
    running._process.kill()
    with pytest.raises(RuntimeError, match=r"ended without a result \(exit code -9\)"):
        running.figures()


def test_a_waiting_analysis_process_that_dies_is_reported() -> None:
    fabric, _ = compiled("roce-lab")
    running = worker.PlaneWorker()
    running._process.kill()
    running._process.wait()
    running.send(lambda: {"x": (plane_graphs(fabric, "compute"), {})})  # a closed pipe: no error
    with pytest.raises(RuntimeError, match=r"ended without a result \(exit code -9\)"):
        running.figures()


@pytest.mark.skipif(not fabricc.forked.available(), reason="fabricc forks on Linux only")
def test_a_waiting_process_gets_its_graphs_from_a_forked_copy(tmp_path: Path) -> None:
    """This process goes on while a forked copy makes the graphs and writes them: they are made
    in another process, and a failure to make them comes back with its traceback."""
    fabric, _ = compiled("roce-lab")
    made_in = tmp_path / "made-in"

    name = next(iter(fabric.networks))

    def jobs() -> worker.Jobs:
        made_in.write_text(str(os.getpid()))
        return {name: (plane_graphs(fabric, name), tier_switches(fabric, name))}

    running = worker.PlaneWorker()
    running.send(jobs)
    figures = running.figures()
    assert made_in.read_text() != str(os.getpid())
    assert figures == {name: network.plane_figures(*jobs()[name])}
    assert running._sender is None  # the copy was waited for

    def broken() -> worker.Jobs:
        raise KeyError("no such plane, on purpose")

    failing = worker.PlaneWorker()
    failing.send(broken)
    with pytest.raises(RuntimeError, match="the plane graphs could not be made") as caught:
        failing.figures()
    assert "KeyError: 'no such plane, on purpose'" in str(caught.value)


def _workers_made(
    monkeypatch: pytest.MonkeyPatch, stages: list[str] | None = None
) -> list[tuple[worker.PlaneWorker, list[str]]]:
    """Every analysis worker the build starts, with the stages it had told by then."""
    made: list[tuple[worker.PlaneWorker, list[str]]] = []
    init = worker.PlaneWorker.__init__

    def recorded(self: worker.PlaneWorker, jobs: worker.Jobs | None = None) -> None:
        init(self, jobs)
        made.append((self, list(stages or [])))

    monkeypatch.setattr(worker.PlaneWorker, "__init__", recorded)
    return made


def test_a_design_that_looks_large_starts_its_analysis_process_before_synthesis(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its start and imports run while this process synthesises; the graphs go to that same
    process (the files are those of an in-process analysis: the test below)."""
    spec = EXAMPLES / "roce-lab.yaml"
    given: list[worker.PlaneWorker | None] = []
    stages: list[str] = []
    start = worker.start
    created = _workers_made(monkeypatch, stages)

    def recorded_start(
        fabric: Fabric, waiting: worker.PlaneWorker | None = None
    ) -> worker.PlaneWorker:
        given.append(waiting)
        return start(fabric, waiting)

    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)  # whatever this machine has
    monkeypatch.setattr(worker, "start", recorded_start)
    monkeypatch.setattr(network, "plane_figures", None)  # any figures computed here would fail
    fabricc.build.build(spec, tmp_path / "early", stage=stages.append)
    [(early, before)] = created
    assert before == ["load"]  # before synthesis's first stage
    assert given == [early]
    assert early._process.returncode == 0  # it answered and ended


def test_a_design_smaller_than_it_looked_stops_its_waiting_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = _workers_made(monkeypatch)
    monkeypatch.setattr(fabricc.build, "estimated_links", lambda _: 10**9)
    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 10**8)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)
    fabricc.build.build(EXAMPLES / "roce-lab.yaml", tmp_path / "out")
    [(waiting, _)] = created
    assert waiting._process.returncode == -signal.SIGKILL  # stopped once the links were known
    assert (tmp_path / "out" / "analysis" / "analysis.json").is_file()


def test_on_one_cpu_the_analysis_runs_in_the_build_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process gains nothing without a second core: no worker, early or late."""
    created = _workers_made(monkeypatch)
    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)
    monkeypatch.setattr(fabricc.forked, "cpus", lambda: 1)
    fabricc.build.build(EXAMPLES / "roce-lab.yaml", tmp_path / "out")
    assert created == []
    assert (tmp_path / "out" / "analysis" / "analysis.json").is_file()


def test_a_failed_build_stops_the_analysis_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An emitter fails while the worker computes: the worker is stopped and nothing is
    written."""
    started: list[worker.PlaneWorker] = []
    start = worker.start

    def recorded(fabric: Fabric, waiting: worker.PlaneWorker | None = None) -> worker.PlaneWorker:
        started.append(start(fabric, waiting))
        return started[-1]

    def failing(fabric: Fabric) -> list[Artifact]:
        raise RuntimeError("emitter failed")

    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)  # whatever this machine has
    monkeypatch.setattr(worker, "start", recorded)
    monkeypatch.setattr(fabricc.emit.cabling, "emit", failing)  # the first emitter
    with pytest.raises(RuntimeError, match="emitter failed"):
        fabricc.build.build(EXAMPLES / "roce-lab.yaml", tmp_path / "out")
    assert len(started) == 1
    assert started[0]._process.returncode == -signal.SIGKILL  # stopped while it computed
    assert not (tmp_path / "out").exists()


def test_the_analysis_process_starts_before_cable_selection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It reads the topology alone, so it computes on the other core while this process
    selects cables; and it runs as a process of its own, no thread here (the build forks
    later: fabricc.forked)."""
    started: list[tuple[list[str], int]] = []
    stages: list[str] = []
    start = worker.start

    def recorded(fabric: Fabric, waiting: worker.PlaneWorker | None = None) -> worker.PlaneWorker:
        before = threading.active_count()
        running = start(fabric, waiting)
        started.append((list(stages), threading.active_count() - before))
        return running

    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)  # whatever this machine has
    monkeypatch.setattr(worker, "start", recorded)
    fabricc.build.build(EXAMPLES / "roce-lab.yaml", tmp_path / "out", stage=stages.append)
    [(before, threads)] = started
    assert before[-1] == "analysis graphs" and "cables" not in before
    assert stages.index("cables") == len(before)
    assert threads == 0


def test_a_design_error_in_cable_selection_stops_the_analysis_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[worker.PlaneWorker] = []
    start = worker.start

    def recorded(fabric: Fabric, waiting: worker.PlaneWorker | None = None) -> worker.PlaneWorker:
        started.append(start(fabric, waiting))
        return started[-1]

    def refused(fabric: Fabric, problems: list[Diagnostic]) -> None:
        problems.append(error("no cable reaches", hint="stand the racks closer"))

    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)  # whatever this machine has
    monkeypatch.setattr(worker, "start", recorded)
    monkeypatch.setattr(pipeline, "cable_design", refused)
    with pytest.raises(DesignError, match="no cable reaches"):
        fabricc.build.build(EXAMPLES / "roce-lab.yaml", tmp_path / "out")
    assert len(started) == 1
    assert started[0]._process.returncode is not None  # not left running
    assert not (tmp_path / "out").exists()


def test_a_build_through_the_analysis_process_gives_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Large builds take the process; this one is made to, its graphs sent by this process and
    by a forked copy (the largest): every file is the same."""
    spec = EXAMPLES / "superpod-h100-4su.yaml"
    fabricc.build.build(spec, tmp_path / "here")
    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)  # whatever this machine has
    monkeypatch.setattr(network, "plane_figures", None)  # any figures computed here would fail
    fabricc.build.build(spec, tmp_path / "process")
    monkeypatch.setattr(worker, "FORKED_SEND_LINKS", 0)
    fabricc.build.build(spec, tmp_path / "sent-by-a-copy")

    def files(folder: Path) -> dict[str, bytes]:
        return {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in folder.rglob("*")
            if p.is_file()
        }

    assert files(tmp_path / "process") == files(tmp_path / "here")
    assert files(tmp_path / "sent-by-a-copy") == files(tmp_path / "here")


def test_a_script_without_a_main_guard_builds_through_the_analysis_process(
    tmp_path: Path,
) -> None:
    """The process runs fabricc's code alone: a caller's script that builds at its top level
    (no `if __name__ == "__main__"`) is not run again in it."""
    script = tmp_path / "script.py"
    out = tmp_path / "out"
    script.write_text(
        "import pathlib, fabricc.build\n"
        "fabricc.build.ANALYSIS_PROCESS_LINKS = 0\n"
        f"fabricc.build.build(pathlib.Path({str(EXAMPLES / 'roce-lab.yaml')!r}), "
        f"pathlib.Path({str(out)!r}))\n"
        "print('built once')\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "built once\n"
    assert (out / "analysis" / "analysis.json").is_file()


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_networks_told_as_settled_have_their_final_graphs_then(name: str) -> None:
    """Their graphs, made the moment synthesis tells them settled (the first pass, before the
    first uplink target is built), are those of the finished design: a later stage or pass
    changes none of their links, devices or positions."""
    told: dict[str, tuple[Any, ...]] = {}

    def settled(fabric: Fabric, names: list[str]) -> None:
        memo = dict(fabric.memo)  # (made in a forked copy in a build: nothing of it stays)
        for name in names:
            told[name] = _graphs(fabric, name)
        fabric.memo.clear()
        fabric.memo.update(memo)

    loaded = load_spec(EXAMPLES / f"{name}.yaml", f"examples/{name}.yaml")
    fabric = fabricc.build.synthesized(loaded, settled=settled)
    for settled_name, graphs in told.items():
        assert graphs == _graphs(fabric, settled_name), settled_name
    uplinked = {n.spec.uplink_to for n in loaded.networks.values()} - {None}
    if uplinked:  # the networks built before the first target, but for those linked later
        order = [n for n in loaded.networks.values() if n.spec.role != "oob"]
        first = next(i for i, n in enumerate(order) if n.name in uplinked)
        assert sorted(told) == sorted(
            n.name
            for n in order[:first]
            if n.spec.uplink_to is None and not n.spec.site_uplinks.count
        )
    else:
        assert told == {}


def _graphs(fabric: Fabric, name: str) -> tuple[Any, ...]:
    return (
        [worker._pack(graph) for graph in plane_graphs(fabric, name)],
        tier_switches(fabric, name),
    )


def test_some_examples_have_settled_networks() -> None:
    """The test above is not empty: the SuperPOD's compute (and the storage) fabric settle."""
    told: list[str] = []
    loaded = load_spec(EXAMPLES / "superpod-h100-4su.yaml", "examples/superpod-h100-4su.yaml")
    fabricc.build.synthesized(loaded, settled=lambda _, names: told.extend(names))
    assert "compute" in told


@pytest.mark.skipif(not fabricc.forked.available(), reason="fabricc forks on Linux only")
def test_a_worker_sent_the_settled_networks_first_gives_the_in_process_figures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two frames, the settled networks' and then the rest (not those again), give the figures
    of one; each frame is computed as it comes."""
    fabric, _ = compiled("superpod-h100-4su")
    expected = analyze(fabric)
    made: list[str] = []
    job = worker._job

    def recorded(fabric: Fabric, name: str) -> Any:
        made.append(name)
        return job(fabric, name)

    waiting = worker.PlaneWorker()
    worker.send_settled(fabric, ["compute", "no-such-network"], waiting)
    assert fabric.memo[worker.SETTLED_KEY] == ("compute",)
    monkeypatch.setattr(worker, "_job", recorded)
    worker.start(fabric, waiting)
    # the rest, made here (a design this small is below FORKED_SEND_LINKS): not compute again
    assert made == [name for name in fabric.networks if name != "compute"]
    monkeypatch.setattr(network, "plane_figures", None)  # any figures computed here would fail
    assert analyze(fabric) == expected
    del fabric.memo[worker.SETTLED_KEY]


def test_a_worker_that_gets_no_frame_says_so() -> None:
    running = worker.PlaneWorker()
    assert running._process.stdin is not None
    running._process.stdin.close()
    with pytest.raises(RuntimeError, match="no plane graphs came"):
        running.figures()
