"""Topology families beyond the fat-tree: rail-only, dragonfly-plus and torus.

Counts are the closed formulas, computed by hand in the comments; OpenSM proves that the emitted
subnets route: dfsssp on a dragonfly-plus (deadlock-free), torus-2QoS on a 3D storage torus, each with the
generated opensm.conf (VALIDATORS.md section 1 recipe, tests/ib_support.py).

A QM9700 has 32 OSFP cages of 800G = 64 ports of 400G (NDR); a DGX H100 has 8 compute ports of
400G (8 rails).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from fabricc.emit import Artifact
from fabricc.errors import FabriccError
from fabricc.ir import ENDPOINT_LEAF, GLOBAL, LEAF_SPINE, TORUS, Fabric
from fabricc.synth.dragonfly import group_shape
from fabricc.synth.switches import series_mark
from fabricc.synth.torus import coordinates, neighbour, switch_index
from tests.ib_support import simulator
from tests.support import (
    EXAMPLES,
    compile_text,
    compiled,
    require_tool,
    torus_2qos_storage_spec,
)

TOOLS = ("ibsim", "opensm")
SM_DIR = "/etc/opensm"


def spec(example: str, **replace: str) -> str:
    text = (EXAMPLES / f"{example}.yaml").read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    return text


def counts(fabric: Fabric, network: str = "compute") -> tuple[Counter[str], Counter[str]]:
    switches = Counter(
        d.role for d in fabric.devices.values() if d.kind == "switch" and d.network == network
    )
    return switches, fabric.link_counts(network)


# -- dragonfly-plus ------------------------------------------------------------------------------


def test_dragonfly_plus_group_shape_is_the_published_formula() -> None:
    # Shpiner et al. 2017, radix k = 64, leaves 32 down / 32 up, one-port hosts, full groups of
    # 1,024 hosts: L = 1024 / 32 = 32 leaves; a = 32 spines (32 leaves x 32 uplinks / a <= 32
    # spine ports down); h = 64 - 32 = 32 global ports per spine; groups <= a h + 1 = 1,025;
    # N = L p (a h + 1) = 32 x 32 x 1,025 = 1,049,600 = (k/2)^2 ((k/2)^2 + 1).
    shape = group_shape(1024, 1, False, 32, 32, 64, 1)
    assert shape is not None
    assert (shape.leaves, shape.spines, shape.spine_down, shape.global_ports) == (32, 32, 32, 32)
    assert shape.max_groups(1) == 1025
    assert shape.hosts(shape.max_groups(1)) == 1_049_600
    # 32 links per group pair: 32 x 32 / 32 + 1 = 33 groups
    assert shape.max_groups(32) == 33
    # k = 40: L = 400 / 20 = 20, a = 20, h = 20, 401 groups, N = 20 x 20 x 401 = 160,400
    shape = group_shape(400, 1, False, 20, 20, 40, 1)
    assert shape is not None
    assert (shape.leaves, shape.spines, shape.global_ports) == (20, 20, 20)
    assert shape.hosts(shape.max_groups(1)) == 160_400
    # a small group: 64 hosts on L = 2 leaves; a = 2 spines (2 x 32 / 2 = 32 down), 16 links
    # per leaf-spine pair; h = 64 - 32 = 32; a h = 64 global ports, 65 groups at most
    shape = group_shape(64, 1, False, 32, 32, 64, 1)
    assert shape is not None
    assert (shape.leaves, shape.spines, shape.spine_down, shape.global_ports) == (2, 2, 32, 32)
    assert shape.max_groups(1) == 65
    # rail-optimized: 16 DGX (8 rails) per group, one leaf per rail: L = 8 x ceil(16/32) = 8;
    # a = 8 (8 x 32 / 8 = 32 down), h = 32, a h = 256 global ports
    shape = group_shape(16, 8, True, 32, 32, 64, 1)
    assert shape is not None
    assert (shape.leaves, shape.spines, shape.group_global_ports) == (8, 8, 256)


def test_dragonfly_plus_example_counts() -> None:
    # 64 DGX in G = 4 groups: 16 per group, 8 rail leaves and 8 spines per group (above);
    # leaves 4 x 8 = 32, spines 32; node links 64 x 8 = 512; leaf-spine 32 leaves x 32 = 1,024;
    # global links per pair g = floor(256 / 3) = 85, pairs C(4,2) = 6: 510.
    fabric, _ = compiled("dragonfly-plus-h100")
    switches, links = counts(fabric)
    assert switches == {"leaf": 32, "spine": 32}
    assert (links[ENDPOINT_LEAF], links[LEAF_SPINE], links[GLOBAL]) == (512, 1024, 510)
    topology = fabric.networks["compute"]
    assert (topology.pods, topology.spines_per_pod, topology.global_links) == (4, 8, 85)
    # every pair of groups is joined by exactly g links, spine to spine
    pairs = Counter(
        tuple(sorted((fabric.devices[link.a].pod or 0, fabric.devices[link.b].pod or 0)))
        for link in fabric.links_of("compute")
        if link.kind == GLOBAL
    )
    assert set(pairs.values()) == {85} and len(pairs) == 6


def test_dragonfly_plus_global_links_and_groups(tmp_path: Path) -> None:
    # G = 8, g = 10: 8 DGX per group, same group shape (8 leaves, 8 spines); global links
    # C(8,2) x 10 = 280; leaves 8 x 8 = 64, spines 64; leaf-spine 64 x 32 = 2,048.
    fabric, _ = compile_text(
        spec("dragonfly-plus-h100", **{"groups: 4": "groups: 8\n    global_links: 10"}), tmp_path
    )
    switches, links = counts(fabric)
    assert switches == {"leaf": 64, "spine": 64}
    assert (links[ENDPOINT_LEAF], links[LEAF_SPINE], links[GLOBAL]) == (512, 2048, 280)


def test_dragonfly_plus_beyond_the_radix_names_the_limit(tmp_path: Path) -> None:
    # a h = 8 x 32 = 256 global ports per group: at most 256 / 10 + 1 = 26 groups with g = 10
    text = spec("dragonfly-plus-h100", **{"groups: 4": "groups: 30\n    global_links: 10"})
    with pytest.raises(FabriccError) as raised:
        compile_text(text, tmp_path)
    message = str(raised.value)
    assert "dragonfly-plus with leaf radix 64 (32 down, 32 up) and spine radix 64" in message
    assert "allows at most 26 groups; asked 30" in message
    assert re.search(r":\d+:\d+: error: networks\.compute\.groups", message)


# -- torus -----------------------------------------------------------------------------------------


def test_torus_coordinates_round_trip() -> None:
    dims = (4, 2, 3)
    for index in range(24):
        assert switch_index(coordinates(index, dims), dims) == index
    assert coordinates(5, dims) == (1, 1, 0)  # 5 = 1 + 4 x (1 + 2 x 0)
    assert neighbour(3, dims, 0, +1) == 0  # x = 3 wraps to 0
    assert neighbour(0, dims, 2, -1) == 16  # z = 0 wraps to 2: 0 + 4 x (0 + 2 x 2)


@pytest.mark.parametrize(
    ("dims", "nodes", "switches", "width", "torus_links"),
    [
        # 27 switches, 1 DGX (8 ports = 4 cages) each: (32 - 4) x 2 = 56 ports left, 6 directions,
        # w = 56 // 6 = 9; every switch owns its + links: 27 x 3 x 9 = 729
        ("[3, 3, 3]", 27, 27, 9, 729),
        # size 2 keeps + and wrap links (2w between the pair): 24 x 3 x 9 = 648
        ("[4, 2, 3]", 24, 24, 9, 648),
        # size 1 has no links: 15 switches, ceil(24 / 15) = 2 DGX = 16 ports = 8 cages each,
        # (32 - 8) x 2 = 48 left over 4 directions, w = 12: 15 x 2 x 12 = 360
        ("[5, 1, 3]", 24, 15, 12, 360),
        # 2D 4 x 4 with 64 DGX: 4 per switch = 32 ports = 16 cages, 32 left, w = 8: 16 x 2 x 8
        ("[4, 4]", 64, 16, 8, 256),
    ],
)
def test_torus_counts(
    tmp_path: Path, dims: str, nodes: int, switches: int, width: int, torus_links: int
) -> None:
    text = spec(
        "torus-3d-h100",
        # the example's nodes: 2 SM-host DGX (dgx-sm) + 25
        **{"dimensions: [3, 3, 3]": f"dimensions: {dims}", "count: 25": f"count: {nodes - 2}"},
    )
    fabric, _ = compile_text(text, tmp_path)
    found, links = counts(fabric)
    assert found == {"leaf": switches}
    assert links[ENDPOINT_LEAF] == nodes * 8
    assert links[TORUS] == torus_links
    per_pair = Counter(
        frozenset((link.a, link.b)) for link in fabric.links_of("compute") if link.kind == TORUS
    )
    sizes = [int(d) for d in dims.strip("[]").split(",")]
    expected = {width} | ({2 * width} if 2 in sizes else set())
    assert set(per_pair.values()) == expected


def test_torus_oversubscription_sets_the_link_width(tmp_path: Path) -> None:
    # 1 DGX per switch = 8 x 400G = 3,200G; at 1:1 over 6 directions of 400G links:
    # w = ceil(3200 / (6 x 400)) = 2; 27 x 3 x 2 = 162 links
    text = spec(
        "torus-3d-h100",
        **{"dimensions: [3, 3, 3]": 'dimensions: [3, 3, 3]\n    oversubscription: "1:1"'},
    )
    fabric, _ = compile_text(text, tmp_path)
    assert fabric.link_counts("compute")[TORUS] == 162


def test_torus_without_ports_names_the_limit(tmp_path: Path) -> None:
    # 64 DGX on 2 x 2 switches: 16 DGX = 128 ports per switch, more than its 64
    text = spec(
        "torus-3d-h100", **{"dimensions: [3, 3, 3]": "dimensions: [2, 2]", "count: 25": "count: 62"}
    )
    with pytest.raises(FabriccError) as raised:
        compile_text(text, tmp_path)
    assert "puts 16 nodes (128 ports at 400G) on each" in str(raised.value)


# -- rail-only -------------------------------------------------------------------------------------


def test_rail_only_counts_and_subnets() -> None:
    # one leaf per rail: 8 leaves, 64 x 8 = 512 node links, no switch-to-switch link;
    # every rail is its own InfiniBand subnet
    fabric, artifacts = compiled("rail-only-h100")
    switches, links = counts(fabric)
    assert switches == {"leaf": 8}
    assert links == {ENDPOINT_LEAF: 512}
    for link in fabric.links_of("compute"):
        assert fabric.devices[link.b].rail == link.rail
    folders = sorted({p.split("/")[1] for p, _ in artifacts if p.startswith("configs/compute-")})
    assert folders == [f"compute-rail{r}-sm" for r in range(1, 9)]


def test_rail_only_beyond_one_leaf_names_the_limit(tmp_path: Path) -> None:
    with pytest.raises(FabriccError) as raised:
        # 2 SM-host DGX (dgx-sm) + 63
        compile_text(spec("rail-only-h100", **{"count: 62": "count: 63"}), tmp_path)
    assert "rail 1 has 65 node ports, more than the 64 ports of a" in str(raised.value)


def test_rail_only_analysis_states_the_collectives_it_serves() -> None:
    _, artifacts = compiled("rail-only-h100")
    analysis = next(c for p, c in artifacts if p == "analysis/analysis.json")
    assert isinstance(analysis, str)
    assert '"family": "rail-only"' in analysis
    assert "all-to-all" in analysis and "NVLink" in analysis


# -- spec keys -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        (
            {"topology: torus": "topology: torus\n    spines: 4"},
            "spines belongs to topology: fat-tree; this network is topology: torus",
        ),
        (
            {"dimensions: [3, 3, 3]": "groups: 3"},
            "groups belongs to topology: dragonfly-plus; this network is topology: torus",
        ),
        ({"fabric: infiniband": "fabric: ethernet"}, "torus is built for InfiniBand"),
    ],
)
def test_keys_of_another_topology_are_errors(
    tmp_path: Path, replace: dict[str, str], message: str
) -> None:
    with pytest.raises(FabriccError) as raised:
        compile_text(spec("torus-3d-h100", **replace), tmp_path)
    assert message in str(raised.value)


# -- OpenSM ----------------------------------------------------------------------------------------


def sm_files(artifacts: Sequence[Artifact], folder: str) -> dict[str, str]:
    prefix = f"configs/{folder}/"
    return {
        p[len(prefix) :]: c for p, c in artifacts if p.startswith(prefix) and isinstance(c, str)
    }


def install(sm: dict[str, str], folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name, text in sm.items():
        (folder / name).write_text(text.replace(SM_DIR + "/", f"{folder}/"))
    return folder / "opensm.conf"


@pytest.mark.tool
def test_opensm_routes_the_dragonfly_plus_with_dfsssp(tmp_path: Path) -> None:
    require_tool(*TOOLS)
    _, artifacts = compiled("dragonfly-plus-h100")
    sm = sm_files(artifacts, "compute-sm")
    assert re.search(r"^routing_engine dfsssp$", sm["opensm.conf"], re.M)
    conf = install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-F", str(conf), debug="0x03")
    assert "dfsssp tables configured on all switches" in log
    assert not re.search(r"\bERR\b", log)
    # dfsssp broke every credit loop over the virtual lanes it has
    assert re.search(r"dfsssp_remove_deadlocks: Virtual Lanes needed: \d+", log)


@pytest.mark.tool
def test_opensm_routes_a_storage_torus_with_torus_2qos(tmp_path: Path) -> None:
    """torus-2QoS stays for a torus that carries no NCCL (here the example as a storage torus:
    two storage ports per DGX); the compute torus runs Nue (test_configs_ib)."""
    require_tool(*TOOLS)
    _, artifacts = compile_text(torus_2qos_storage_spec(), tmp_path)
    sm = sm_files(artifacts, "compute-sm")
    assert re.search(r"^routing_engine torus-2QoS$", sm["opensm.conf"], re.M)
    assert "torus 3 3 3" in sm["torus-2QoS.conf"]
    conf = install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-F", str(conf), debug="0x03")
    # torus-2QoS found the torus the seed describes
    assert re.search(r"Built 3 x 3 x 3 torus w/ \d+ links, 27 switches, 54 CA ports", log), log
    assert "torus-2QoS tables configured on all switches" in log
    assert not re.search(r"\bERR\b", log)
    # one QoS level on VLs 0-3 (the design uses one; opensm.conf max_op_vls 3): torus-2QoS says
    # only that its second QoS level is not available
    warnings = [line.split("-> ", 1)[1] for line in log.splitlines() if "Warning" in line]
    assert warnings, log[-2000:]
    assert all(
        "two QoS levels" in w or "full torus-2QoS functionality not available" in w
        for w in warnings
    ), warnings


@pytest.mark.tool
def test_opensm_routes_a_rail_with_updn(tmp_path: Path) -> None:
    """A rail is one leaf: up/down routes it exactly as min-hop, under an engine SHARP's
    Aggregation Manager builds trees under."""
    require_tool(*TOOLS)
    _, artifacts = compiled("rail-only-h100")
    sm = sm_files(artifacts, "compute-rail3-sm")
    assert re.search(r"^routing_engine updn$", sm["opensm.conf"], re.M)
    conf = install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-F", str(conf), debug="0x03")
    assert "updn tables configured on all switches" in log
    assert not re.search(r"\bERR\b", log)


def test_dragonfly_plus_groups_without_nodes_are_an_error(tmp_path: Path) -> None:
    # 64 DGX over 48 groups: ceil(64 / 48) = 2 per group fill 32 groups, 16 stay empty
    text = spec("dragonfly-plus-h100", **{"groups: 4": "groups: 48\n    global_links: 1"})
    with pytest.raises(FabriccError) as raised:
        compile_text(text, tmp_path)
    assert "leave the last 16 without a node" in str(raised.value)


@pytest.mark.parametrize(
    ("example", "replace", "switches"),
    [
        # 1,000 switches on a 10 x 10 x 10 torus (27 DGX on the first ones)
        ("torus-3d-h100", {"dimensions: [3, 3, 3]": "dimensions: [10, 10, 10]"}, 1000),
        # 32 groups of 2 DGX: 8 rail leaves + 8 spines each, 512 switches, 496 group pairs
        ("dragonfly-plus-h100", {"groups: 4": "groups: 32\n    global_links: 8"}, 512),
    ],
)
def test_topology_diagram_stays_readable_at_scale(
    tmp_path: Path, example: str, replace: dict[str, str], switches: int
) -> None:
    fabric, artifacts = compile_text(spec(example, **replace), tmp_path)
    assert sum(len(v) for v in fabric.networks["compute"].switches.values()) == switches
    for name in ("topology-compute.dot", "overview-compute.dot"):
        dot = next(c for p, c in artifacts if p == f"diagrams/{name}")
        assert isinstance(dot, str)
        boxes = len(re.findall(r"^  \"[^\"]+\" \[", dot, re.M))
        lines = len(re.findall(r"^  \"[^\"]+\" -- ", dot, re.M))
        assert boxes <= 40 and lines <= 40, (name, boxes, lines)


def test_torus_2qos_needs_a_torus(tmp_path: Path) -> None:
    text = spec(
        "dragonfly-plus-h100",
        **{
            "      sm_nodes: [dgx-sm]": "      sm_nodes: [dgx-sm]\n      routing_engine: torus-2QoS"
        },
    )
    with pytest.raises(FabriccError) as raised:
        compile_text(text, tmp_path)
    assert "torus-2QoS routes a torus" in str(raised.value)


def test_ethernet_rail_only_is_one_routed_leaf_per_rail(tmp_path: Path) -> None:
    # roce-lab: 4 servers with 2 rails -> 2 leaves, 8 host links, no switch-to-switch link;
    # every leaf's BGP config has host neighbours only
    text = spec(
        "roce-lab",
        **{"    tiers: 2\n    spines: 2\n": "    topology: rail-only\n"},
    )
    fabric, artifacts = compile_text(text, tmp_path)
    switches, links = counts(fabric, "fabric")
    assert switches == {"leaf": 2}
    assert links == {ENDPOINT_LEAF: 8}
    frr = next(c for p, c in artifacts if p == "configs/fabric-leaf001/frr.conf")
    assert isinstance(frr, str) and "router bgp" in frr and "spine" not in frr


def test_dragonfly_plus_without_rails_packs_leaves(tmp_path: Path) -> None:
    # 16 DGX per group, ports packed: L = ceil(16 x 8 / 32) = 4 leaves; a = 4 spines
    # (4 x 32 / 4 = 32 down), h = 32, a h = 128 global ports, g = floor(128 / 3) = 42;
    # leaves 16, spines 16, leaf-spine 16 x 32 = 512, global 6 x 42 = 252
    text = spec("dragonfly-plus-h100", **{"groups: 4": "groups: 4\n    rail_optimized: false"})
    fabric, _ = compile_text(text, tmp_path)
    switches, links = counts(fabric)
    assert switches == {"leaf": 16, "spine": 16}
    assert (links[ENDPOINT_LEAF], links[LEAF_SPINE], links[GLOBAL]) == (512, 512, 252)


@pytest.mark.parametrize(
    ("example", "family"),
    [
        ("torus-3d-h100", "torus"),
        ("dragonfly-plus-h100", "dragonfly-plus"),
        ("roce-lab", "fat-tree"),
    ],
)
def test_report_names_each_network_topology(example: str, family: str) -> None:
    from fabricc.emit.report import network_rows
    from fabricc.emit.summary import summary

    fabric, _ = compiled(example)
    rows = network_rows(summary(fabric))
    assert family in {row["topology"] for row in rows}


def test_rail_only_spreads_one_port_appliances_over_the_rails(tmp_path: Path) -> None:
    """Every rail is a subnet of its own: single-port SM appliances take the rails in turn (a
    UFM per rail), not all the first rail, so every subnet has its SM host and no warning."""
    text = spec(
        "rail-only-h100",
        **{
            "    count: 62\n": "    count: 54\n",
            "  dgx:\n": '  ufm:\n    model: ufm-3.1\n    count: 8\n    hostname: "ufm{n:02d}"\n  dgx:\n',
            "      dgx: {}\n": "      dgx: {}\n      ufm: {}\n",
            "sm_nodes: [dgx-sm]": "sm_nodes: [ufm, dgx-sm]",
        },
    )
    fabric, _ = compile_text(text, tmp_path)
    rails = Counter(
        fabric.devices[link.b].rail
        for link in fabric.links_of("compute")
        if link.kind == ENDPOINT_LEAF and fabric.devices[link.a].group == "ufm"
    )
    assert rails == Counter(range(8))
    assert not [w for w in fabric.warnings if "subnet-manager host" in w.message]


def test_a_leaf_class_named_like_its_network_takes_its_models_name() -> None:
    """superpod-h100-4su: node group storage (storage arrays) on network storage names its
    leaves storage-array-leafNNN beside the DGX storage leaves storage-leafNNN, never
    storage-storage-leafNNN (synth/switches.py series_mark)."""
    fabric, _ = compiled("superpod-h100-4su")
    names = [n for n in fabric.devices if n.startswith("storage-")]
    assert not [n for n in names if n.startswith("storage-storage-")]
    leaves = {n.rstrip("0123456789") for n in fabric.networks["storage"].switches["leaf"]}
    assert leaves == {"storage-leaf", "storage-array-leaf"}
    assert series_mark("compute", "gpu2", "dgx-h100") == "gpu2"  # other names unchanged
    assert series_mark("storage", "storage", "storage-array") == "array"
