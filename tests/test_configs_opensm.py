"""OpenSM files and the ibsim topology, checked against the cabling plan and the spec without
running anything: IB port numbers (QM9700 "c/s" is port 2*(c-1)+s), links written on both ends,
GUIDs (user mapping or placeholders) used consistently by every file, engine choice, partitions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from fabricc.errors import DesignError, SpecError
from tests.configs_support import by_path, cables
from tests.ib_support import parse_net
from tests.support import EXAMPLES, compile_text, compiled, torus_2qos_storage_spec

SM = "configs/compute-sm/"


def one_su(tmp_path: Path, subnet_manager: str = "") -> dict[str, str]:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    text = text.replace("      sm_nodes: [ufm]\n", "      sm_nodes: [ufm]\n" + subnet_manager)
    tmp_path.mkdir(parents=True, exist_ok=True)
    return by_path(compile_text(text, tmp_path)[1])


def guids(files: dict[str, str], folder: str = SM) -> dict[str, int]:
    data = yaml.safe_load(files[folder + "guids.yaml"])
    assert isinstance(data, dict)
    return {str(k): int(v) for k, v in data.items()}


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def ib_port(port: str) -> int:
    cage, _, sub = port.partition("/")
    return 2 * (int(cage) - 1) + int(sub or 1)


def test_net_file_follows_the_cabling_plan(tmp_path: Path) -> None:
    files = one_su(tmp_path)
    _, records = parse_net(files[SM + "ibsim.net"])
    nodes = {r.name: r for r in records}
    assert records[0].header[-1].startswith("Ca\t") and records[0].name.startswith("ufm")
    expected = 0
    for row in cables(files):
        if row["network"] != "compute":
            continue
        expected += 1
        if row["kind"] == "endpoint-leaf":
            a, a_port = f"{row['a_device']}/{row['a_port']}", 1
        else:
            a, a_port = row["a_device"], ib_port(row["a_port"])
        b, b_port = row["b_device"], ib_port(row["b_port"])
        assert nodes[a].links[a_port] == (b, b_port), row
        assert nodes[b].links[b_port] == (a, a_port), row
    assert sum(len(r.links) for r in records) == 2 * expected == 2 * (252 + 256)
    switches = [r for r in records if r.header[-1].startswith("Switch")]
    assert {r.header[-1].split()[1] for r in switches} == {"64"}  # QM9700: 32 cages x 2


def test_guids_are_consistent_and_unique(tmp_path: Path) -> None:
    files = one_su(tmp_path)
    table = guids(files)
    assert len(set(table.values())) == len(table) == 252 + 12
    _, records = parse_net(files[SM + "ibsim.net"])
    for record in records:
        declared = int(record.header[0].split("=")[1], 16)
        # switches: node GUID; CA: ibsim's port GUID is its node GUID + 1
        assert declared + (0 if "Switch" in record.header[-1] else 1) == table[record.name]
    roots = [int(g, 16) for g in lines(files[SM + "root_guids.conf"])]
    assert roots == [table[f"compute-spine00{i}"] for i in range(1, 5)]
    cns = {int(g, 16) for g in lines(files[SM + "cn_guids.conf"])}
    assert cns == {g for n, g in table.items() if n.startswith("dgx")}
    assert len(cns) == 31 * 8
    # placeholders derive from indices: compiling again gives the same GUIDs
    assert guids(one_su(tmp_path / "again")) == table


def test_user_guid_mapping(tmp_path: Path) -> None:
    (tmp_path / "guids.yaml").write_text(
        "compute-spine001: 0x0002c90300001234\n'dgx001/OSFP4/P2': '0xb83fd20300a1b2c4'\n"
    )
    files = one_su(tmp_path, "      guids: guids.yaml\n")
    table = guids(files)
    assert table["compute-spine001"] == 0x0002C90300001234
    assert table["dgx001/OSFP4/P2"] == 0xB83FD20300A1B2C4
    assert lines(files[SM + "root_guids.conf"])[0] == "0x0002c90300001234"
    assert "0xb83fd20300a1b2c4" in lines(files[SM + "cn_guids.conf"])
    assert 'caguid=0xb83fd20300a1b2c3\nCa\t1 "dgx001/OSFP4/P2"' in files[SM + "ibsim.net"]


def test_unknown_guid_names_are_spec_errors(tmp_path: Path) -> None:
    (tmp_path / "guids.yaml").write_text("compute-spine01: 0x1234\n")
    with pytest.raises(
        SpecError,
        match=r"(?s)'compute-spine01' is not an InfiniBand node.*did you mean 'compute-spine001'",
    ):
        one_su(tmp_path, "      guids: guids.yaml\n")


def test_routing_engine_from_the_spec(tmp_path: Path) -> None:
    files = one_su(tmp_path, "      routing_engine: updn\n")
    conf = files[SM + "opensm.conf"]
    assert re.search(r"^routing_engine updn$", conf, re.M)
    assert "root_guid_file /etc/opensm/root_guids.conf" in conf
    assert "cn_guid_file" not in conf and SM + "cn_guids.conf" not in files
    auto = one_su(tmp_path / "auto")[SM + "opensm.conf"]
    assert re.search(r"^routing_engine ftree$", auto, re.M) and "cn_guid_file" in auto


def test_partitions(tmp_path: Path) -> None:
    files = one_su(
        tmp_path,
        "      partitions:\n"
        "        research: {pkey: 0x10, members: [dgx], ipoib: true}\n"
        "        ops: {pkey: 0x20, members: [ufm], membership: limited}\n",
    )
    table = guids(files)
    text = files[SM + "partitions.conf"]
    assert (
        "Default=0x7fff, ipoib, mtu=5, defmember=limited : ALL, ALL_SWITCHES=full, SELF=full ;"
        in (text)
    )
    sections = {
        m.group(1): m.group(0)
        for m in re.finditer(r"^(\w+)=0x[0-9a-f]{4}[^;]*;", text, re.M | re.S)
    }
    research = set(re.findall(r"(0x[0-9a-f]{16})=full", sections["research"]))
    assert research == {f"0x{g:016x}" for n, g in table.items() if n.startswith("dgx")}
    assert sections["research"].startswith("research=0x0010, ipoib, mtu=5,")
    ops = set(re.findall(r"(0x[0-9a-f]{16})=limited", sections["ops"]))
    assert ops == {f"0x{g:016x}" for n, g in table.items() if n.startswith("ufm")}


def test_partition_without_members_on_the_network(tmp_path: Path) -> None:
    with pytest.raises(DesignError, match="partition 'arrays' has no member"):
        one_su(tmp_path, "      partitions:\n        arrays: {pkey: 0x30, members: [storage]}\n")


def test_nvidia_sm_file_adds_adaptive_routing_and_sharp(tmp_path: Path) -> None:
    """QM9700 has AR and SHARP: nvidia-sm.conf is opensm.conf with the AR engine over the chosen
    one (ftree and updn -> ar_updn with the root GUID file: NVIDIA's AR engine for fat-trees, the
    only one UFM supports on XDR; ftree's cn_guid_file goes) and sharp_enabled 2 (enable; 1
    disables SHARP, 0 ignores it); opensm.conf
    keeps what upstream OpenSM reads. Both turned off in the spec: no NVIDIA file."""
    files = one_su(tmp_path / "on")
    upstream, nvidia = files[SM + "opensm.conf"], files[SM + "nvidia-sm.conf"]
    assert re.search(r"^routing_engine ftree$", upstream, re.M)
    assert "sharp_enabled" not in upstream and "ar_" not in upstream
    assert re.search(r"^routing_engine ar_updn$", nvidia, re.M)
    assert re.search(r"^root_guid_file /etc/opensm/root_guids.conf$", nvidia, re.M)
    assert re.search(r"^sharp_enabled 2$", nvidia, re.M)
    assert set(lines(upstream)) ^ set(lines(nvidia)) == {
        "routing_engine ftree",
        "routing_engine ar_updn",
        "cn_guid_file /etc/opensm/cn_guids.conf",
        "sharp_enabled 2",
    }
    updn = one_su(tmp_path / "updn", "      routing_engine: updn\n")[SM + "nvidia-sm.conf"]
    assert re.search(r"^routing_engine ar_updn$", updn, re.M)
    no_sharp = one_su(tmp_path / "nosharp", "      sharp: false\n")[SM + "nvidia-sm.conf"]
    assert re.search(r"^sharp_enabled 1$", no_sharp, re.M)  # 1: disable on every switch
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text().replace("count: 127", "count: 31")
    text = text.replace(
        "    subnet_manager:\n      sm_nodes: [ufm]\n",
        "    adaptive_routing: false\n    subnet_manager:\n      sm_nodes: [ufm]\n      sharp: false\n",
    )
    (tmp_path / "off").mkdir()
    off = by_path(compile_text(text, tmp_path / "off")[1])
    assert SM + "opensm.conf" in off and SM + "nvidia-sm.conf" not in off


def test_master_and_standby_subnet_managers(tmp_path: Path) -> None:
    """Four UFM nodes: the first is the master (sm_priority 15), the others standbys with
    falling priorities, each named with the command that starts it."""
    conf = one_su(tmp_path)[SM + "opensm.conf"]
    assert re.search(r"^sm_priority 15$", conf, re.M)
    roles = re.findall(r"^#\s+(ufm\d+): (master|standby), sm_priority (\d+)", conf, re.M)
    assert roles == [
        ("ufm01", "master", "15"),
        ("ufm02", "standby", "14"),
        ("ufm03", "standby", "13"),
        ("ufm04", "standby", "12"),
    ]
    for priority in ("14", "13", "12"):
        assert f"opensm -F /etc/opensm/opensm.conf -p {priority})" in conf


@pytest.mark.parametrize("example", ["superpod-h100-4su", "gb200-nvl72-su"])
def test_every_topo_system_type_has_an_ibnl_definition(example: str) -> None:
    """Each system type a .topo file names (QUANTUM-2-QM9700, DGX-H100, ...) has
    cabling/<type>.ibnl beside it, defining every port the .topo uses on such a system; a
    switch's node has all its IB ports (QM9700: 64)."""
    files = by_path(compiled(example)[1])
    topos = [text for path, text in files.items() if path.endswith(".topo")]
    assert topos
    used: dict[str, set[str]] = {}
    for text in topos:
        kind = ""
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            if not line.startswith(" "):
                kind = line.split()[0]
                continue
            local, _, far = line.strip().partition(" -> ")
            used.setdefault(kind, set()).add(local)
            far_kind, _, far_port = far.split(" ", 2)
            used.setdefault(far_kind, set()).add(far_port)
    for kind, ports in used.items():
        ibnl = files.get(f"cabling/{kind}.ibnl")
        assert ibnl is not None, kind
        assert ibnl.startswith(f"TOPSYSTEM {kind}\n")  # the IBNL grammar has no comments
        defined = set(re.findall(r"^\s+\d+ -> (\S+)$", ibnl, re.M))
        assert ports <= defined, (kind, sorted(ports - defined)[:5])
    qm9700 = files.get("cabling/QUANTUM-2-QM9700.ibnl")
    if qm9700 is not None:
        assert "NODE SW 64 " in qm9700 and "   64 -> P32/2" in qm9700


@pytest.mark.parametrize("example", ["gb300-nvl72-xdr", "superpod-h100-4su", "gb200-nvl72-su"])
def test_adaptive_routing_over_a_fat_tree_is_ar_updn_with_the_root_guids(example: str) -> None:
    """UFM Enterprise 6.21, Appendix - Adaptive Routing: on XDR only ar_updn, with the root GUID
    file, and no ar_ftree; NVIDIA's bring-up procedure names ar_updn for fat-trees (NDR) too."""
    files = by_path(compiled(example)[1])
    confs = {
        p: t
        for p, t in files.items()
        if p.endswith("/nvidia-sm.conf") and "# NVIDIA SM: adaptive routing over" in t
    }
    assert "configs/compute-sm/nvidia-sm.conf" in confs
    for path, text in confs.items():
        assert "ar_ftree" not in text, path
        assert re.search(r"^routing_engine ar_updn$", text, re.M), path
        assert re.search(r"^root_guid_file /etc/opensm/root_guids.conf$", text, re.M), path
        roots = files[path.replace("nvidia-sm.conf", "root_guids.conf")].split()
        assert roots and all(re.fullmatch(r"0x[0-9a-f]{16}", g) for g in roots)


def test_every_subnet_names_its_sm_hosts_or_is_warned_about(tmp_path: Path) -> None:
    """An IB subnet whose network names no sm_nodes cabled into it gets a warning naming the
    subnet (the 4-SU storage fabric has none); a subnet with UFM appliances as sm_nodes gets
    none and its opensm.conf names master and standby."""
    fabric, artifacts = compiled("superpod-h100-4su")
    warned = [w.render() for w in fabric.warnings if "subnet-manager host" in w.message]
    assert len(warned) == 1, warned
    assert "InfiniBand subnet storage has no subnet-manager host" in warned[0]
    assert "networks.storage.subnet_manager" in warned[0]
    fabric, artifacts = compiled("gb200-nvl72-su")
    assert not [w for w in fabric.warnings if "subnet-manager host" in w.message]
    conf = by_path(artifacts)[SM + "opensm.conf"]
    assert re.search(r"^#\s+ufm01: master, sm_priority 15$", conf, re.M)
    assert "#   ufm02: standby, sm_priority 14" in conf
    # rail-only: one subnet per rail leaf, each named
    text = (EXAMPLES / "rail-only-h100.yaml").read_text()
    assert "      sm_nodes: [dgx-sm]" in text
    rails, _ = compile_text(
        text.replace("      sm_nodes: [dgx-sm]", "      sm_nodes: []"), tmp_path
    )
    warned = [w.message for w in rails.warnings if "subnet-manager host" in w.message]
    assert warned and "subnets compute-rail1, compute-rail2" in warned[0]


def test_data_vls_follow_the_sls_the_design_uses(tmp_path: Path) -> None:
    """The design's traffic is on SL 0: a fat-tree subnet runs one data VL (max_op_vls 1, every
    SL on VL 0) instead of 8 that only divide the buffers, and so does the compute torus under
    Nue (nue_max_num_vls 1); torus-2QoS (a storage torus) gets VLs 0-3 on switch links (its
    dateline and failed-switch bits), VL 0 on endpoints, owns SL-to-VL, and the generic
    qos_vlarb_high/qos_vlarb_low that man torus-2QoS says not to use are gone."""
    tree = by_path(compiled("superpod-h100-4su")[1])[SM + "opensm.conf"]
    assert re.search(r"^max_op_vls 1$", tree, re.M)
    assert set(re.findall(r"^qos\w*_max_vls (\d+)$", tree, re.M)) == {"1"}
    assert set(re.findall(r"^qos\w*_vlarb_low (\S+)$", tree, re.M)) == {"0:64"}
    assert set(re.findall(r"^qos\w*_sl2vl (\S+)$", tree, re.M)) == {",".join(["0"] * 16)}
    nue = by_path(compiled("torus-3d-h100")[1])[SM + "opensm.conf"]
    assert re.search(r"^routing_engine nue$", nue, re.M)
    assert re.search(r"^max_op_vls 1$", nue, re.M)
    assert set(re.findall(r"^qos\w*_max_vls (\d+)$", nue, re.M)) == {"1"}
    _, artifacts = compile_text(torus_2qos_storage_spec(), tmp_path)
    torus = by_path(artifacts)["configs/compute-sm/opensm.conf"]
    assert re.search(r"^max_op_vls 3$", torus, re.M)
    assert not re.search(r"^qos_(vlarb_high|vlarb_low|max_vls|sl2vl) ", torus, re.M)
    assert "sl2vl" not in torus
    assert re.search(r"^qos_swe_max_vls 4$", torus, re.M)
    assert re.search(r"^qos_swe_vlarb_low 0:64,1:64,2:64,3:64$", torus, re.M)
    assert re.search(r"^qos_ca_max_vls 1$", torus, re.M)


@pytest.mark.parametrize(
    ("example", "mtu"),
    [("superpod-h100-4su", 5), ("gb300-nvl72-xdr", 5), ("torus-3d-h100", 5)],
)
def test_ipoib_partitions_run_4096_byte_mtu_on_ndr_and_xdr(example: str, mtu: int) -> None:
    files = by_path(compiled(example)[1])
    for path, text in files.items():
        if path.endswith("/partitions.conf"):
            assert re.search(rf"^Default=0x7fff, ipoib, mtu={mtu}, ", text, re.M), path


def test_ipoib_partitions_keep_2048_below_ndr() -> None:
    from fabricc.emit.configs.opensm import ipoib_mtu

    assert ipoib_mtu(200) == (2048, 4)
    assert ipoib_mtu(400) == (4096, 5)
    assert ipoib_mtu(800) == (4096, 5)


def test_sharp_on_means_sharp_on_end_to_end(tmp_path: Path) -> None:
    """SHARP on: the SM enables it (sharp_enabled 2), UFM's SHARP Aggregation Manager is turned
    on (gv.cfg [Sharp] sharp_enabled = true, off by default) on the SM hosts, and NCCL uses it
    (NCCL_COLLNET_ENABLE=1). subnet_manager.sharp false: disabled (1), no AM file, no CollNet."""
    on = one_su(tmp_path / "on")
    assert re.search(r"^sharp_enabled 2$", on[SM + "nvidia-sm.conf"], re.M)
    gv = on[SM + "ufm-gv-sharp.cfg"]
    assert gv.endswith("[Sharp]\nsharp_enabled = true\n")
    assert "ufm01, ufm02, ufm03, ufm04" in gv
    env = on["nccl/dgx-h100.env"]
    assert "\nNCCL_COLLNET_ENABLE=1\n" in env
    off = one_su(tmp_path / "off", "      sharp: false\n")
    assert re.search(r"^sharp_enabled 1$", off[SM + "nvidia-sm.conf"], re.M)
    assert SM + "ufm-gv-sharp.cfg" not in off
    assert "NCCL_COLLNET_ENABLE" not in off["nccl/dgx-h100.env"]
