"""InfiniBand configs proven by the real software: ibsim runs the generated topology, OpenSM routes
it, infiniband-diags walk the routes (VALIDATORS.md section 1).

Expected counts come from RA-11333 Table 4: one SU is 31 DGX (248 ports)
plus 4 UFM ports on 8 leaves and 4 spines; four SUs are 1,016 + 4 ports on 32 leaves and 16 spines.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from fabricc.emit import Artifact
from tests.ib_support import (
    FAT_TREE_FOUND,
    FTREE_OK,
    Simulator,
    parse_net,
    simulator,
    write_net,
)
from tests.ib_support import (
    lids as node_lids,
)
from tests.support import EXAMPLES, compile_text, compiled, require_tool

TOOLS = ("ibsim", "opensm", "ibnetdiscover", "ibtracert", "smpquery")
SM_DIR = "/etc/opensm"


def one_su_spec() -> str:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    assert "count: 127" in text
    return text.replace("count: 127", "count: 31")


def files(artifacts: list[Artifact] | tuple[Artifact, ...], folder: str) -> dict[str, str]:
    prefix = f"configs/{folder}/"
    found = {
        path[len(prefix) :]: content
        for path, content in artifacts
        if path.startswith(prefix) and isinstance(content, str)
    }
    assert found, f"no files under {prefix}"
    return found


def fabric_counts(log: str) -> tuple[int, int]:
    match = re.search(
        r"Fabric has (\d+) CAs, \d+ CA ports \(\d+ of them CNs\), (\d+) switches", log
    )
    assert match, "OpenSM did not report the fabric size"
    return int(match.group(1)), int(match.group(2))


def switch_hops(trace: str) -> list[str]:
    return re.findall(r'-> switch port \{0x[0-9a-f]+\}\[\d+\] lid [\d-]+ "([^"]+)"', trace)


def assert_traces(sim: Simulator, pairs: list[tuple[str, str, list[str]]]) -> None:
    """ibtracert walks the LFTs OpenSM programmed; each pair's path must cross the switches
    the cabling plan puts between them (by tier)."""
    lids = node_lids(sim)
    for source, target, tiers in pairs:
        result = sim.tracert(lids[source], lids[target])
        assert result.returncode == 0, f"no route {source} -> {target}: {result.stderr}"
        hops = switch_hops(result.stdout)
        assert [re.sub(r"\d+$", "", h).rsplit("-", 1)[-1] for h in hops] == tiers, (
            f"{source} -> {target} went {hops}"
        )


@pytest.mark.tool
def test_one_su_is_a_fat_tree_to_opensm(tmp_path: Path) -> None:
    require_tool(*TOOLS)
    _, artifacts = compile_text(one_su_spec(), tmp_path)
    sm = files(artifacts, "compute-sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-R", "ftree")  # no root GUID file: ftree validates the tree
        assert FAT_TREE_FOUND in log and FTREE_OK in log
        assert fabric_counts(log) == (31 * 8 + 4, 8 + 4)
        assert_traces(
            sim,
            [
                # same rail (GPU 0, OSFP4/P2) of one SU: one leaf
                ("dgx001/OSFP4/P2", "dgx031/OSFP4/P2", ["leaf"]),
                # different rails: leaf, spine, leaf
                ("dgx001/OSFP4/P2", "dgx017/OSFP1/P1", ["leaf", "spine", "leaf"]),
                ("dgx016/OSFP2/P2", "dgx002/OSFP3/P1", ["leaf", "spine", "leaf"]),
                # the UFM appliance on a reserved leaf port reaches a DGX
                ("ufm01/IB1", "dgx031/OSFP1/P1", ["leaf", "spine", "leaf"]),
            ],
        )


@pytest.mark.tool
@pytest.mark.slow
def test_four_su_superpod_is_a_fat_tree_to_opensm(tmp_path: Path) -> None:
    require_tool(*TOOLS)
    _, artifacts = compiled("superpod-h100-4su")
    sm = files(artifacts, "compute-sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-R", "ftree")
        assert FAT_TREE_FOUND in log and FTREE_OK in log
        assert fabric_counts(log) == (127 * 8 + 4, 32 + 16)
        assert_traces(
            sim,
            [
                # same rail, SU 1 and SU 4: leaf, spine, leaf
                ("dgx001/OSFP4/P2", "dgx127/OSFP4/P2", ["leaf", "spine", "leaf"]),
                # same rail inside SU 3
                ("dgx064/OSFP1/P1", "dgx094/OSFP1/P1", ["leaf"]),
                # across rails and SUs
                ("dgx033/OSFP2/P1", "dgx100/OSFP3/P2", ["leaf", "spine", "leaf"]),
            ],
        )


@pytest.mark.tool
def test_gb300_xdr_unit_is_a_fat_tree_to_opensm(tmp_path: Path) -> None:
    """One GB300 NVL72 unit on Quantum-X800: 144 trays x 4 ConnectX-8 ports on 8 rail leaves and
    4 spines (ibsim simulates no XDR speed; the tree's shape is what ftree checks)."""
    require_tool(*TOOLS)
    fabric, artifacts = compiled("gb300-nvl72-xdr")
    compute = fabric.networks["compute"]
    leaves, spines = len(compute.switches["leaf"]), len(compute.switches["spine"])
    sm = files(artifacts, "compute-sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-R", "ftree")  # no root GUID file: ftree validates the tree
        assert FAT_TREE_FOUND in log and FTREE_OK in log
        assert fabric_counts(log) == (144 * 4, leaves + spines)
        assert_traces(
            sim,
            [
                # GPU 0 of racks 1 and 4: one rail-0 leaf (72 of its 144 ports face trays)
                ("gb300-01-c01/OSFP1", "gb300-04-c18/OSFP1", ["leaf"]),
                # GPU 0 of racks 1 and 8: the two rail-0 leaves, over a spine
                ("gb300-01-c01/OSFP1", "gb300-08-c18/OSFP1", ["leaf", "spine", "leaf"]),
                # GPU 0 and GPU 3 (rails 0 and 3): leaf, spine, leaf
                ("gb300-01-c01/OSFP1", "gb300-05-c07/OSFP4", ["leaf", "spine", "leaf"]),
            ],
        )


def _drop_uplink(net: str) -> str:
    preamble, records = parse_net(net)
    by_name = {r.name: r for r in records}
    leaf = by_name["compute-leaf008"]
    port = max(p for p, (far, _) in leaf.links.items() if far.startswith("compute-spine"))
    far, far_port = leaf.links.pop(port)
    del by_name[far].links[far_port]
    return write_net(preamble, records)


def _host_on_spine(net: str) -> str:
    preamble, records = parse_net(net)
    by_name = {r.name: r for r in records}
    host = by_name["dgx031/OSFP1/P1"]
    leaf, leaf_port = host.links[1]
    del by_name[leaf].links[leaf_port]
    spine = by_name["compute-spine001"]
    spine_port = max(spine.links)
    other, other_port = spine.links[spine_port]
    del by_name[other].links[other_port]
    spine.links[spine_port] = (host.name, 1)
    host.links[1] = (spine.name, spine_port)
    return write_net(preamble, records)


@pytest.mark.tool
@pytest.mark.parametrize(
    ("mutate", "error"),
    [
        # a leaf with 7 links to one spine and 8 to the others (VALIDATORS.md: drop-uplink)
        (_drop_uplink, "ERR AB0B: Different number of ports in an upward port group"),
        # a DGX port on a spine: a compute node above leaf rank
        (_host_on_spine, "ERR AB26: CN port"),
    ],
    ids=["drop-uplink", "host-on-spine"],
)
def test_miscabled_fabric_is_rejected(
    tmp_path: Path, mutate: Callable[[str], str], error: str
) -> None:
    require_tool(*TOOLS)
    _, artifacts = compile_text(one_su_spec(), tmp_path)
    net = mutate(files(artifacts, "compute-sm")["ibsim.net"])
    with simulator(net, tmp_path / "sim") as sim:
        log = sim.opensm_once("-R", "ftree")
    assert FTREE_OK not in log, "ftree accepted a mis-cabled fabric"
    assert FAT_TREE_FOUND not in log
    assert error in log and "Fabric topology is not a fat-tree" in log


def _install(sm: dict[str, str], folder: Path) -> Path:
    """Put the SM files where opensm.conf says they are (SM_DIR rewritten to a scratch folder)."""
    folder.mkdir(parents=True)
    for name, text in sm.items():
        (folder / name).write_text(text.replace(SM_DIR + "/", f"{folder}/"))
    return folder / "opensm.conf"


@pytest.mark.tool
def test_generated_opensm_conf_routes_and_partitions(tmp_path: Path) -> None:
    require_tool(*TOOLS)
    spec = one_su_spec().replace(
        "      sm_nodes: [ufm]",
        "      sm_nodes: [ufm]\n      partitions:\n"
        "        research: {pkey: 0x10, members: [dgx], ipoib: true}",
    )
    _, artifacts = compile_text(spec, tmp_path)
    sm = files(artifacts, "compute-sm")
    conf = _install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-F", str(conf))
        assert FTREE_OK in log
        # cn_guids.conf names the DGX ports only; the UFM port is an I/O node
        assert "252 CA ports (248 of them CNs)" in log
        lids = node_lids(sim)
        dgx = sim.tool("smpquery", "pkeys", str(lids["dgx007/OSFP2/P1"]))
        ufm = sim.tool("smpquery", "pkeys", str(lids["ufm01/IB1"]))
    # DGX ports: limited members of the default partition, full members of research (0x0010)
    assert re.search(r"\b0x7fff\b", dgx.stdout) and re.search(r"\b0x8010\b", dgx.stdout)
    # the SM node (SELF) is a full default member and not in research
    assert re.search(r"\b0xffff\b", ufm.stdout)
    assert not re.search(r"\b0x[08]010\b", ufm.stdout)


@pytest.mark.tool
@pytest.mark.parametrize(
    ("example", "folder"),
    [
        ("superpod-h100-4su", "compute-sm"),
        ("superpod-h100-4su", "storage-sm"),  # leaves of two shapes: not ftree's fat-tree
        ("gb200-nvl72-su", "compute-sm"),
    ],
)
def test_routing_engine_choice_agrees_with_opensm(
    tmp_path: Path, example: str, folder: str
) -> None:
    """'auto' says ftree exactly where OpenSM's ftree accepts the subnet; the generated
    opensm.conf then routes the subnet with its engine."""
    require_tool(*TOOLS)
    _, artifacts = compiled(example)
    sm = files(artifacts, folder)
    engine = re.search(r"^routing_engine (\S+)$", sm["opensm.conf"], re.M)
    assert engine is not None
    conf = _install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        strict = sim.opensm_once("-R", "ftree")
        generated = sim.opensm_once("-F", str(conf), debug="0x03")
    assert (FTREE_OK in strict) == (engine.group(1) == "ftree")
    assert f"{engine.group(1)} tables configured on all switches" in generated


@pytest.mark.tool
def test_opensm_reads_every_option_of_opensm_conf(tmp_path: Path) -> None:
    """Upstream OpenSM knows every option of opensm.conf (sm_priority included); of
    nvidia-sm.conf it lacks only NVIDIA's SHARP switch (and the AR engine is NVIDIA's)."""
    require_tool("opensm")
    _, artifacts = compiled("superpod-h100-4su")
    sm = files(artifacts, "compute-sm")
    unknown = {}
    for name in ("opensm.conf", "nvidia-sm.conf"):
        source = tmp_path / name
        source.write_text(sm[name])
        result = subprocess.run(
            ["opensm", "-F", str(source), "-c", str(tmp_path / f"{name}.out")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        unknown[name] = re.findall(r'Unrecognized token: "(\w+)"', result.stdout + result.stderr)
        written = (tmp_path / f"{name}.out").read_text()
        assert re.search(r"^sm_priority 15$", written, re.M), "OpenSM did not take sm_priority"
    assert unknown == {"opensm.conf": [], "nvidia-sm.conf": ["sharp_enabled"]}


@pytest.mark.tool
def test_dragonfly_plus_dfsssp_routes_every_path_on_vl0(tmp_path: Path) -> None:
    """opensm.conf limits the dragonfly+ subnet to VL 0 (max_op_vls 1): DFSSSP then finds one VL
    enough and routes every path on SL 0 - the one SL NCCL uses (NCCL_IB_SL=0). The first
    sweep sets the operational VLs; the second routes over them, as a running SM does."""
    require_tool(*TOOLS)
    _, artifacts = compiled("dragonfly-plus-h100")
    sm = files(artifacts, "compute-sm")
    conf = _install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        first = sim.opensm_once("-F", str(conf), debug="0x03")
        second = sim.opensm_once("-F", str(conf), debug="0x03")
    assert "dfsssp tables configured on all switches" in first
    assert "Virtual Lanes available: 1" in second and "Virtual Lanes needed: 1" in second
    assert "dfsssp tables configured on all switches" in second


@pytest.mark.tool
def test_torus_routes_with_nue_on_one_vl_or_updn_from_one_root(tmp_path: Path) -> None:
    """The torus carries NCCL (one SL): 'auto' routes it with Nue held to one VL
    (nue_max_num_vls 1, max_op_vls 1), deadlock-free with every path on SL 0; routing_engine
    updn (the other one-SL choice the refusal of torus-2QoS offers) routes it up/down from the
    origin switch."""
    require_tool(*TOOLS)
    _, artifacts = compiled("torus-3d-h100")
    sm = files(artifacts, "compute-sm")
    assert "torus-2QoS.conf" not in sm
    assert re.search(r"^routing_engine nue$", sm["opensm.conf"], re.M)
    assert re.search(r"^nue_max_num_vls 1$", sm["opensm.conf"], re.M)
    assert re.search(r"^max_op_vls 1$", sm["opensm.conf"], re.M)
    conf = _install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        sim.opensm_once("-F", str(conf), debug="0x03")
        log = sim.opensm_once("-F", str(conf), debug="0x03")
    assert "nue tables configured on all switches" in log, log[-3000:]
    spec = (EXAMPLES / "torus-3d-h100.yaml").read_text()
    assert "  compute:\n" in spec
    assert "      sm_nodes: [dgx-sm]" in spec
    spec = spec.replace(
        "      sm_nodes: [dgx-sm]", "      sm_nodes: [dgx-sm]\n      routing_engine: updn"
    )
    (tmp_path / "updn").mkdir()
    _, updn_artifacts = compile_text(spec, tmp_path / "updn")
    updn = files(updn_artifacts, "compute-sm")
    assert len(updn["root_guids.conf"].split()) == 1
    conf = _install(updn, tmp_path / "updn-sm")
    with simulator(updn["ibsim.net"], tmp_path / "updn-sim") as sim:
        log = sim.opensm_once("-F", str(conf), debug="0x03")
    assert "updn tables configured on all switches" in log


@pytest.mark.tool
def test_gb300_xdr_nvidia_sm_routing_is_updn_over_the_root_guids(tmp_path: Path) -> None:
    """nvidia-sm.conf of the XDR unit routes with ar_updn and the root GUID file (UFM 6.21:
    the only AR engine on XDR). Upstream OpenSM has no AR, so its base engine, updn, runs the
    same file here (AR engine name and SHARP switch taken out): it reads the root GUIDs and
    routes every switch."""
    require_tool(*TOOLS)
    _, artifacts = compiled("gb300-nvl72-xdr")
    sm = files(artifacts, "compute-sm")
    conf = sm["nvidia-sm.conf"]
    assert re.search(r"^routing_engine ar_updn$", conf, re.M)
    sm["opensm.conf"] = re.sub(
        r"^sharp_enabled .*\n", "", conf.replace("ar_updn", "updn"), flags=re.M
    )
    path = _install(sm, tmp_path / "sm")
    with simulator(sm["ibsim.net"], tmp_path / "sim") as sim:
        log = sim.opensm_once("-F", str(path), debug="0x07")
    assert "updn tables configured on all switches" in log
    assert (tmp_path / "sm" / "root_guids.conf").read_text() == sm["root_guids.conf"]
    assert " ERR " not in log
