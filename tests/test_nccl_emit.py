"""Emitter `nccl`: the topology files and settings follow the hardware and the design.

Expected values come from the IBM Cloud H100 NCCL dump (tests/nccl/reference), the DGX H100
user guide (port map), NCCL's user guide (RoCE traffic class) and NCCL's source - never from the emitter's own output.
Both files are read with xml.etree here, independently of fabricc's own NCCL parser.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from fabricc.catalog.loader import load_catalog
from fabricc.errors import SpecError
from fabricc.nccl.check import check_bytes
from fabricc.nccl.document import element, render
from fabricc.nccl.topology import NicPlan, build_topology, cpu_affinity
from tests.hosts_support import Function, run_script
from tests.support import compile_text, compiled

IBM_DUMP = Path(__file__).resolve().parent / "nccl" / "reference" / "ibm-cloud-h100-vsi-topo.xml"
# DGX H100 user guide, network modules table, OSFP port map: GPU -> (netdev, ibverbs device).
DGX_H100_RAILS = {
    7: ("ibp220s0", "mlx5_11"),
    4: ("ibp154s0", "mlx5_6"),
    6: ("ibp206s0", "mlx5_10"),
    5: ("ibp192s0", "mlx5_9"),
    2: ("ibp79s0", "mlx5_4"),
    1: ("ibp64s0", "mlx5_3"),
    3: ("ibp94s0", "mlx5_5"),
    0: ("ibp24s0", "mlx5_0"),
}


def artifact(example: str, path: str) -> str:
    _, artifacts = compiled(example)
    content = dict(artifacts)[path]
    assert isinstance(content, str)
    return content


def env_settings(text: str) -> dict[str, str]:
    """Read a .env file the way NCCL reads /etc/nccl.conf: split at the first '='."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if "=" not in line:
            continue
        key, _, value = line.partition("=")
        assert not key.startswith("#"), f"comment read as a setting: {line!r}"
        values[key] = value
    return values


def parents(root: ET.Element) -> dict[ET.Element, ET.Element]:
    return {child: parent for parent in root.iter() for child in parent}


def gpu_switches(root: ET.Element) -> dict[int, ET.Element]:
    """GPU dev -> the PCIe switch above the GPU's own PCI function."""
    up = parents(root)
    return {int(gpu.attrib["dev"]): up[up[gpu]] for gpu in root.iter("gpu")}


def net_switches(root: ET.Element) -> dict[str, ET.Element]:
    up = parents(root)
    return {net.attrib["name"]: up[up[up[net]]] for net in root.iter("net")}


def nvswitch_links(gpu: ET.Element) -> list[int]:
    return sorted(
        int(link.attrib["count"])
        for link in gpu.iter("nvlink")
        if link.attrib["tclass"] == "0x068000"
    )


# -- DGX H100 `complete` against the IBM Cloud H100 dump -------------------------------------------


@pytest.fixture(scope="module")
def dgx() -> ET.Element:
    return ET.fromstring(artifact("superpod-h100-4su", "nccl/dgx-h100.xml"))


@pytest.fixture(scope="module")
def ibm() -> ET.Element:
    return ET.fromstring(IBM_DUMP.read_text())


def test_same_gpu_and_nic_counts_as_the_ibm_dump(dgx: ET.Element, ibm: ET.Element) -> None:
    assert len(list(dgx.iter("gpu"))) == len(list(ibm.iter("gpu"))) == 8
    assert len(list(dgx.iter("net"))) == len(list(ibm.iter("net"))) == 8
    assert len(list(dgx.iter("cpu"))) == len(list(ibm.iter("cpu"))) == 2


def test_each_gpu_shares_a_pcie_switch_with_one_nic_like_the_dump(ibm: ET.Element) -> None:
    switches = gpu_switches(ibm)
    nets = net_switches(ibm)
    for switch in switches.values():
        assert switch.attrib["class"] == "0x060400"
        assert sum(1 for s in nets.values() if s is switch) == 1


def test_each_gpu_shares_its_switch_with_its_rail_nic(dgx: ET.Element) -> None:
    switches = gpu_switches(dgx)
    nets = net_switches(dgx)
    for gpu, (_, rdma) in DGX_H100_RAILS.items():
        assert switches[gpu].attrib["class"] == "0x060400"
        assert nets[rdma] is switches[gpu], f"GPU {gpu} and {rdma} are not under one switch"
        others = [name for name, switch in nets.items() if switch is switches[gpu]]
        assert others == [rdma]


def test_rail_nics_sit_at_the_bus_of_their_netdev(dgx: ET.Element) -> None:
    # ibp<bus>s0: the predictable netdev name carries the PCI bus number in decimal.
    up = parents(dgx)
    for _, (netdev, rdma) in DGX_H100_RAILS.items():
        (net,) = [n for n in dgx.iter("net") if n.attrib["name"] == rdma]
        bus = int(netdev.removeprefix("ibp").removesuffix("s0"))
        assert up[up[net]].attrib["busid"] == f"0000:{bus:02x}:00.0"


def test_nvswitch_links_match_the_dump(dgx: ET.Element, ibm: ET.Element) -> None:
    for root in (dgx, ibm):
        for gpu in root.iter("gpu"):
            assert nvswitch_links(gpu) == [4, 4, 5, 5]
            assert len({link.attrib["target"] for link in gpu.iter("nvlink")}) == 4
            assert gpu.attrib["sm"] == "90"


def test_gpus_and_their_nics_sit_on_the_socket_of_the_dump(
    dgx: ET.Element, ibm: ET.Element
) -> None:
    for root in (dgx, ibm):
        numa = {
            int(gpu.attrib["dev"]): cpu.attrib["numaid"]
            for cpu in root.iter("cpu")
            for gpu in cpu.iter("gpu")
        }
        assert numa == {0: "0", 1: "0", 2: "0", 3: "0", 4: "1", 5: "1", 6: "1", 7: "1"}
    for cpu in dgx.iter("cpu"):
        gpus = {int(g.attrib["dev"]) for g in cpu.iter("gpu")}
        nets = {n.attrib["name"] for n in cpu.iter("net")}
        assert nets == {DGX_H100_RAILS[g][1] for g in gpus}


def test_element_and_attribute_vocabulary_matches_the_dump(
    dgx: ET.Element, ibm: ET.Element
) -> None:
    def vocabulary(root: ET.Element) -> dict[str, set[str]]:
        seen: dict[str, set[str]] = {}
        for node in root.iter():
            seen.setdefault(node.tag, set()).update(node.attrib)
        return seen

    ours, theirs = vocabulary(dgx), vocabulary(ibm)
    assert set(ours) == set(theirs)
    for tag in ("pci", "gpu", "nvlink"):
        assert ours[tag] == theirs[tag]
    # What NCCL fills per host (NCCL src/graph/xml.cc ncclTopoFillGpu and ncclTopoFillNet) is left out.
    assert theirs["cpu"] - ours["cpu"] == {"host_hash"}
    assert theirs["net"] - ours["net"] == {"guid", "gdr"}


def test_nic_speed_is_the_ndr_port_in_mbps(dgx: ET.Element) -> None:
    assert {net.attrib["speed"] for net in dgx.iter("net")} == {"400000"}
    assert {pci.attrib["class"] for pci in dgx.iter("pci") if pci.find("nic") is not None} == {
        "0x020700"  # InfiniBand compute network (NCCL src/graph/topo.cc kvDictPciClass)
    }


# -- settings ----------------------------------------------------------------------------------------


def test_dgx_settings_follow_the_port_map() -> None:
    settings = env_settings(artifact("superpod-h100-4su", "nccl/dgx-h100.env"))
    rails = ",".join(DGX_H100_RAILS[gpu][1] for gpu in range(8))
    assert settings["NCCL_IB_HCA"] == "=" + rails
    assert settings["NCCL_TOPO_FILE"] == "/etc/nccl/dgx-h100.xml"
    assert settings["NCCL_SOCKET_IFNAME"] == "bond"  # dual-homed in-band network
    assert "NCCL_IB_TC" not in settings


def test_roce_settings_carry_the_traffic_class() -> None:
    settings = env_settings(artifact("roce-lab", "nccl/lab-server.env"))
    assert settings["NCCL_IB_TC"] == "104"  # DSCP 26 << 2, NCCL user guide: NCCL_IB_TC
    # untagged routed host ports: no PCP is ever sent, so a service level would do nothing
    assert "NCCL_IB_SL" not in settings
    assert settings["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1"
    # no in-band network: the host script writes the bootstrap interfaces (see below), which a
    # setting here would override
    assert "NCCL_SOCKET_IFNAME" not in settings
    assert "NCCL_NET_PLUGIN" not in settings  # SONiC: no adaptive routing configured


@pytest.mark.parametrize(
    ("example", "env"),
    [
        ("spectrum-x-2plane", "nccl/hgx-b300.env"),
        ("gb300-nvl72-spectrum-x", "nccl/gb300-compute-tray.env"),
    ],
)
def test_spectrum_x_loads_the_spectrum_x_nccl_plugin(example: str, env: str) -> None:
    """HPC-X "Spectrum-X NCCL Plugin": "the plugin can also be loaded by NCCL's environment
    variable NCCL_NET_PLUGIN=spcx" - load balancing over a GPU's NICs with the switches'
    adaptive routing."""
    settings = env_settings(artifact(example, env))
    assert settings["NCCL_NET_PLUGIN"] == "spcx"
    assert "NCCL_IB_SL" not in settings


def test_without_in_band_the_host_script_keeps_roce_netdevs_out_of_the_bootstrap(
    tmp_path: Path,
) -> None:
    """NCCL_SOCKET_IFNAME `^=` excludes exact names (NCCL environment variables): the script
    lists the RoCE netdevs it configured, so NCCL never bootstraps over a rail."""
    fabric, artifacts = compiled("spectrum-x-2plane")
    script = dict(artifacts)["configs/hosts/b300-01.sh"]
    assert isinstance(script, str)
    topology = fabric.loaded.catalog.catalog.host_topologies["hgx-b300"]
    functions = [
        Function(f"ens{i}", rdma, node.busid)
        for i, (rdma, node) in enumerate(sorted(topology.nic_nodes().items()))
    ]
    run = run_script(script, tmp_path, functions)
    assert run.returncode == 0, run.stderr
    (line,) = [x for x in run.nccl_conf().splitlines() if x.startswith("NCCL_SOCKET_IFNAME=")]
    excluded = line.removeprefix("NCCL_SOCKET_IFNAME=^=").split(",")
    assert {"lo", "docker0", "virbr0"} <= set(excluded)
    assert {f.netdev for f in functions} <= set(excluded)


def test_readme_says_where_the_topology_goes() -> None:
    readme = artifact("superpod-h100-4su", "nccl/README.md")
    assert "/etc/nccl/TYPE.xml" in readme
    assert "| dgx-h100 | dgx | `dgx-h100.xml` | `dgx-h100.env` |" in readme


def test_only_gpu_node_types_get_files() -> None:
    _, artifacts = compiled("superpod-h100-4su")
    names = sorted(path for path, _ in artifacts if path.startswith("nccl/"))
    assert names == ["nccl/README.md", "nccl/dgx-h100.env", "nccl/dgx-h100.xml"]


# -- GB200 NVL72 compute tray ------------------------------------------------------------------------


def test_gb200_file_describes_one_tray() -> None:
    root = ET.fromstring(artifact("gb200-nvl72-su", "nccl/gb200-compute-tray.xml"))
    cpus = list(root.iter("cpu"))
    assert [c.attrib["arch"] for c in cpus] == ["arm64", "arm64"]
    assert all("vendor" not in c.attrib and "host_hash" not in c.attrib for c in cpus)
    gpus = list(root.iter("gpu"))
    assert len(gpus) == 4 and {g.attrib["sm"] for g in gpus} == {"100"}
    for gpu in gpus:
        (link,) = gpu.iter("nvlink")
        assert link.attrib == {"target": "fffffff:ff:ff.0", "count": "18", "tclass": "0x068000"}
        assert len(list(gpu.iter("c2c"))) == 1
    # GPU bus ids public GB200 NCCL logs show, two per Grace (the catalog's assumption).
    busids = {
        cpu.attrib["numaid"]: sorted(
            p.attrib["busid"] for p in cpu.iter("pci") if p.find("gpu") is not None
        )
        for cpu in cpus
    }
    assert busids == {"0": ["0008:01:00.0", "0009:01:00.0"], "1": ["0018:01:00.0", "0019:01:00.0"]}
    # each GPU's rail NIC under the same Grace; names and bus ids from the GB200 Compute Tray
    # table of the Mission Control North-South Network GB200 Deployment Guide 2.3.0
    rail = {0: "mlx5_0", 1: "mlx5_1", 2: "mlx5_4", 3: "mlx5_5"}
    for cpu in cpus:
        gpus_here = {int(g.attrib["dev"]) for g in cpu.iter("gpu")}
        assert {n.attrib["name"] for n in cpu.iter("net")} == {rail[g] for g in gpus_here}


# -- GB300 NVL72 compute tray: ConnectX-8 with its PCIe switch ---------------------------------------


def ancestors(root: ET.Element, node: ET.Element) -> list[ET.Element]:
    up = parents(root)
    found = []
    while node in up:
        node = up[node]
        found.append(node)
    return found


def nearest_common_pci(root: ET.Element, a: ET.Element, b: ET.Element) -> ET.Element | None:
    theirs = set(ancestors(root, b))
    return next((n for n in ancestors(root, a) if n in theirs and n.tag == "pci"), None)


def vendor(node: ET.Element | None) -> str | None:
    return None if node is None else node.attrib["vendor"]


@pytest.mark.parametrize(
    ("example", "per_gpu", "speed", "nic_class"),
    [
        ("gb300-nvl72-xdr", 1, "800000", "0x020700"),
        ("gb300-nvl72-spectrum-x", 2, "400000", "0x020000"),
    ],
)
def test_gb300_gpu_and_its_nics_meet_in_the_connectx8_switch(
    example: str, per_gpu: int, speed: str, nic_class: str
) -> None:
    """NCCL walks GPU -> ConnectX-8 downstream port -> ConnectX-8 switch <- NIC functions, below
    the Grace root port: the GPU reaches its rail NICs without crossing the CPU."""
    root = ET.fromstring(artifact(example, "nccl/gb300-compute-tray.xml"))
    assert {g.attrib["sm"] for g in root.iter("gpu")} == {"103"}
    nets = list(root.iter("net"))
    assert len(nets) == 4 * per_gpu and {n.attrib["speed"] for n in nets} == {speed}
    up = parents(root)
    env = env_settings(artifact(example, "nccl/gb300-compute-tray.env"))
    assert env["NCCL_IB_HCA"] == "=" + ",".join(n.attrib["name"] for n in nets)
    for gpu in root.iter("gpu"):
        mine = [n for n in nets if vendor(nearest_common_pci(root, gpu, n)) == "0x15b3"]
        assert len(mine) == per_gpu, gpu.attrib
        for net in mine:
            assert up[up[net]].attrib["class"] == nic_class
            switch = nearest_common_pci(root, gpu, net)
            assert switch is not None
            assert up[switch].attrib["vendor"] == "0x10de"  # the Grace root port above it


@pytest.mark.parametrize(
    "example",
    [
        "roce-lab",
        "superpod-h100-4su",
        "gb200-nvl72-su",
        "spectrum-x-2plane",
        "gb300-nvl72-xdr",
        "gb300-nvl72-spectrum-x",
        "mixed-gb200-gb300",
    ],
)
def test_every_emitted_file_passes_the_validator(example: str) -> None:
    _, artifacts = compiled(example)
    xml = [(path, text) for path, text in artifacts if path.endswith(".xml")]
    assert xml
    for path, text in xml:
        assert isinstance(text, str)
        assert check_bytes(text.encode()) == [], path


# -- every catalog topology, both profiles ------------------------------------------------------------


def catalog_files() -> list[tuple[str, str, str]]:
    catalog = load_catalog().catalog
    files = []
    for name, topology in catalog.host_topologies.items():
        node = catalog.nodes[name]
        nics = {nic: NicPlan(nic, index, 400000) for index, nic in enumerate(topology.nic_nodes())}
        for profile in ("skeleton", "complete"):
            text = render(build_topology(name, topology, node, profile, nics))
            files.append((name, profile, text))
    return files


CATALOG_FILES = catalog_files()


@pytest.mark.parametrize(
    ("name", "profile", "text"), CATALOG_FILES, ids=[f"{n}-{p}" for n, p, _ in CATALOG_FILES]
)
def test_every_catalog_topology_passes_the_validator(name: str, profile: str, text: str) -> None:
    findings = check_bytes(text.encode())
    assert findings == [], [f.render(name) for f in findings]


def test_the_deliverable_node_types_have_topologies() -> None:
    names = {name for name, _, _ in CATALOG_FILES}
    assert {
        "dgx-h100",
        "dgx-h200",
        "dgx-b200",
        "hgx-h100",
        "gb200-compute-tray",
        "gb300-compute-tray",
        "dgx-b300",
    } <= names


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, p, t in CATALOG_FILES if p == "skeleton"])
def test_skeleton_holds_only_cpus_and_pci(name: str, text: str) -> None:
    root = ET.fromstring(text)
    assert {node.tag for node in root.iter()} == {"system", "cpu", "pci"}
    leaves = [pci for pci in root.iter("pci") if len(pci) == 0]
    assert any(pci.attrib["class"].startswith("0x03") for pci in leaves)


@pytest.mark.parametrize(("name", "text"), [(n, t) for n, p, t in CATALOG_FILES if p == "complete"])
def test_complete_profile_has_the_generation_link_counts(name: str, text: str) -> None:
    root = ET.fromstring(text)
    # Public dumps; NCCL src/graph/topo.cc ncclTopoAddNvLinks.
    expected = {"89": [], "90": [4, 4, 5, 5], "100": [18], "103": [18]}
    for gpu in root.iter("gpu"):
        assert nvswitch_links(gpu) == expected[gpu.attrib["sm"]]


def test_affinity_is_the_sysfs_cpumap() -> None:
    # Masks of the corrected Azure NDv5 file: 2 x 48 CPUs (Azure/azhpc-images#391).
    assert cpu_affinity(list(range(48)), 96) == "00000000,0000ffff,ffffffff"
    assert cpu_affinity(list(range(48, 96)), 96) == "ffffffff,ffff0000,00000000"


# -- spec options -----------------------------------------------------------------------------------

LAB = """
metadata: {name: lab}
nodes:
  a: {model: lab-server, count: 2, hostname: "a{n:02d}"}
  b: {model: lab-server, count: 2, hostname: "b{n:02d}"}
networks:
  fabric:
    role: compute
    fabric: ethernet
    endpoints: ENDPOINTS
    qos: {roce_dscp: 24}
outputs:
  nccl: {profile: PROFILE}
"""


def test_skeleton_profile_from_the_spec(tmp_path: Path) -> None:
    spec = LAB.replace("ENDPOINTS", "{a: {}, b: {}}").replace("PROFILE", "skeleton")
    _, artifacts = compile_text(spec, tmp_path)
    files = dict(artifacts)
    text = files["nccl/lab-server.xml"]
    assert isinstance(text, str)
    assert "<gpu" not in text and "<net" not in text and "<nic" not in text
    assert check_bytes(text.encode()) == []
    env = files["nccl/lab-server.env"]
    assert isinstance(env, str)
    assert env_settings(env)["NCCL_IB_TC"] == "96"  # DSCP 24 << 2


def test_groups_of_one_model_attached_differently_get_their_own_files(tmp_path: Path) -> None:
    spec = LAB.replace("ENDPOINTS", "{a: {}}").replace("PROFILE", "complete")
    _, artifacts = compile_text(spec, tmp_path)
    files = dict(artifacts)
    assert sorted(p for p in files if p.startswith("nccl/") and p != "nccl/README.md") == [
        "nccl/lab-server-a.env",
        "nccl/lab-server-a.xml",
        "nccl/lab-server-b.env",
        "nccl/lab-server-b.xml",
    ]
    a = env_settings(str(files["nccl/lab-server-a.env"]))
    b = env_settings(str(files["nccl/lab-server-b.env"]))
    assert a["NCCL_TOPO_FILE"] == "/etc/nccl/lab-server-a.xml"
    assert "NCCL_IB_TC" in a and "NCCL_IB_TC" not in b


def test_a_user_catalog_corrects_a_topology(tmp_path: Path) -> None:
    catalog = load_catalog().catalog.host_topologies["lab-server"]
    data = catalog.model_dump(mode="json", exclude_none=True)
    data["cpus"][0]["pci"][0]["children"][1]["busid"] = "0000:3b:00.0"
    (tmp_path / "site.yaml").write_text(yaml.safe_dump({"host_topologies": {"lab-server": data}}))
    spec = LAB.replace("ENDPOINTS", "{a: {}, b: {}}").replace("PROFILE", "complete")
    _, artifacts = compile_text('catalog: ["site.yaml"]\n' + spec, tmp_path)
    assert 'busid="0000:3b:00.0"' in str(dict(artifacts)["nccl/lab-server.xml"])


def test_a_node_model_without_topology_still_gets_its_settings(tmp_path: Path) -> None:
    lab = load_catalog().catalog.nodes["lab-server"].model_dump(mode="json", exclude_none=True)
    (tmp_path / "site.yaml").write_text(yaml.safe_dump({"nodes": {"my-gpu": lab}}))
    spec = LAB.replace("lab-server", "my-gpu").replace("ENDPOINTS", "{a: {}, b: {}}")
    _, artifacts = compile_text(
        'catalog: ["site.yaml"]\n' + spec.replace("PROFILE", "complete"), tmp_path
    )
    files = dict(artifacts)
    assert "nccl/my-gpu.xml" not in files
    settings = env_settings(str(files["nccl/my-gpu.env"]))
    assert "NCCL_TOPO_FILE" not in settings and settings["NCCL_IB_HCA"] == "=mlx5_0,mlx5_1"
    assert "No host topology in the catalog for: my-gpu" in str(files["nccl/README.md"])


def test_catalog_errors_point_at_the_entry(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(
        "host_topologies:\n"
        "  lab-server:\n"
        "    description: broken\n"
        "    source: test\n"
        "    logical_cpus: 8\n"
        "    devices:\n"
        "      gpu: {description: g, class_code: 0x030200, link_speed: 16.0 GT/s PCIe,"
        " link_width: 16, source: test}\n"
        "    cpus:\n"
        "      - numaid: 0\n"
        "        cpulist: 0-7\n"
        "        arch: arm64\n"
        "        source: test\n"
        "        pci: [{busid: '0000:01:00.0', device: gpu, gpu: 0}]\n"
        "    net: {source: test}\n"
    )
    spec = LAB.replace("ENDPOINTS", "{a: {}, b: {}}").replace("PROFILE", "complete")
    with pytest.raises(SpecError) as caught:
        compile_text('catalog: ["site.yaml"]\n' + spec, tmp_path)
    text = str(caught.value)
    # YAML 1.2 reads an unquoted 0x030200 as a number.
    assert "site.yaml:7:" in text and "expected a string" in text


def test_catalog_cross_check_against_the_node_model(tmp_path: Path) -> None:
    topology = load_catalog().catalog.host_topologies["lab-server"]
    data = topology.model_dump(mode="json", exclude_none=True)
    del data["cpus"][1]  # GPUs 2, 3 and NIC mlx5_1 disappear
    (tmp_path / "site.yaml").write_text(yaml.safe_dump({"host_topologies": {"lab-server": data}}))
    spec = LAB.replace("ENDPOINTS", "{a: {}, b: {}}").replace("PROFILE", "complete")
    with pytest.raises(SpecError) as caught:
        compile_text('catalog: ["site.yaml"]\n' + spec, tmp_path)
    text = str(caught.value)
    assert "places GPUs [0, 1], but 'lab-server' has GPUs 0..3" in text
    assert "rail NIC mlx5_1 of 'lab-server' is missing" in text


# -- the serializer -------------------------------------------------------------------------------


def test_serializer_writes_nccl_layout() -> None:
    tree = element(
        "system",
        {"version": 1},
        element("cpu", {"arch": "arm64", "numaid": 0}),
    )
    assert render(tree) == '<system version="1">\n  <cpu numaid="0" arch="arm64"/>\n</system>\n'


@pytest.mark.parametrize(
    "bad",
    [
        lambda: element("nvs", {}),
        lambda: element("cpu", {"mem": 1}),
        lambda: render(element("system", {"name": "a\tb"})),
        lambda: render(element("system", {"name": 'a"b'})),
        lambda: render(element("system", {"name": "x" * 254})),
    ],
)
def test_serializer_refuses_what_nccl_cannot_read(bad: object) -> None:
    assert callable(bad)
    with pytest.raises(ValueError):
        bad()


def test_one_part_has_one_pcie_link_generation_in_every_topology() -> None:
    """A GPU model, and a NIC model known by its PCI ids, sit on the same PCIe link generation
    and width in every host topology (HGX B300 once gave its B300 and ConnectX-8 Gen5 where
    GB300 and DGX B300 give them the Gen6 side of the ConnectX-8 switch: NCCL then saw 48 GB/s
    from each GPU to its NIC)."""
    catalog = load_catalog().catalog
    links: dict[tuple[str, ...], set[tuple[str, int]]] = {}
    for name, topology in catalog.host_topologies.items():
        gpu = catalog.nodes[name].gpu
        for pci in (n for cpu in topology.cpus for root in cpu.pci for n in root.walk()):
            device = topology.devices[pci.device]
            if pci.gpu is not None and gpu is not None:
                part: tuple[str, ...] = ("gpu", gpu.model)
            elif pci.nic is not None and device.device not in (None, "0x0000"):
                part = ("nic", str(device.vendor), str(device.device))
            else:
                continue
            links.setdefault(part, set()).add((device.link_speed, device.link_width))
    assert ("gpu", "B300-288GB") in links
    assert links[("gpu", "B300-288GB")] == {("64.0 GT/s PCIe", 16)}
    assert links[("nic", "0x15b3", "0x1023")] == {("64.0 GT/s PCIe", 16)}  # ConnectX-8
    assert {part: speeds for part, speeds in links.items() if len(speeds) > 1} == {}


def _env_settings(example: str) -> dict[str, dict[str, str]]:
    """nccl/<type>.env of an example -> its settings."""
    _, artifacts = compiled(example)
    return {
        path: dict(
            line.split("=", 1) for line in text.splitlines() if line and not line.startswith("#")
        )
        for path, text in artifacts
        if path.startswith("nccl/") and path.endswith(".env") and isinstance(text, str)
    }


def test_rail_only_keeps_rings_on_one_nic() -> None:
    """Rail-only: NIC k reaches only NIC k (NCCL_CROSS_NIC=0, NCCL env var docs); a fat-tree,
    where any NIC reaches any, keeps NCCL's default."""
    envs = _env_settings("rail-only-h100")
    assert envs and all(e.get("NCCL_CROSS_NIC") == "0" for e in envs.values())
    assert all("NCCL_CROSS_NIC" not in e for e in _env_settings("superpod-h100-4su").values())


def test_socket_exclusion_covers_the_rail_names_the_udev_rules_write() -> None:
    """Every interface name the udev rules give a rail netdev is excluded from NCCL's socket
    bootstrap where the .env file excludes by prefix (NCCL matches each entry as a prefix)."""
    _, artifacts = compiled("dragonfly-plus-h100")
    names = {
        m
        for path, text in artifacts
        if path.startswith("provisioning/k8s/udev/") and isinstance(text, str)
        for m in re.findall(r'NAME="([^"]+)"', text)
    }
    assert names and {n.rstrip("0123456789") for n in names} == {"rail"}
    for path, env in _env_settings("dragonfly-plus-h100").items():
        value = env["NCCL_SOCKET_IFNAME"]
        assert value.startswith("^") and not value.startswith("^="), path
        prefixes = value[1:].split(",")
        assert all(any(n.startswith(p) for p in prefixes) for n in names), (path, value)
