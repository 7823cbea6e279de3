"""Acceptance against published reference designs (REFERENCE.md section 5).

The specs state node counts and hardware only; every switch, link and transceiver count below
must follow from the design rules. Expected values are the published tables, typed in here.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from fabricc.emit.summary import summary
from fabricc.errors import DesignError
from fabricc.ir import ENDPOINT_LEAF
from tests.support import EXAMPLES, compile_text, compiled

# RA-11333 Table 4: SU, nodes, GPUs, leaves, spines, node+UFM cables, leaf-spine cables.
RA_11333_TABLE_4 = [
    (1, 31, 248, 8, 4, 252, 256),
    (2, 63, 504, 16, 8, 508, 512),
    (3, 95, 760, 24, 16, 764, 768),
    (4, 127, 1016, 32, 16, 1020, 1024),
]


def superpod(tmp_path: Path, nodes: int) -> dict[str, Any]:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    assert "count: 127" in text
    fabric, _ = compile_text(text.replace("count: 127", f"count: {nodes}"), tmp_path)
    return summary(fabric)


@pytest.mark.parametrize(
    ("sus", "nodes", "gpus", "leaves", "spines", "node_cables", "spine_cables"), RA_11333_TABLE_4
)
def test_ra_11333_table_4(
    tmp_path: Path,
    sus: int,
    nodes: int,
    gpus: int,
    leaves: int,
    spines: int,
    node_cables: int,
    spine_cables: int,
) -> None:
    result = superpod(tmp_path, nodes)
    compute = result["networks"]["compute"]
    assert result["gpus"] == gpus
    assert compute["scalable_units"] == sus
    assert compute["tiers"] == 2
    assert compute["switches"] == {"leaf": leaves, "spine": spines, "core": 0}
    assert compute["links"]["endpoint-leaf"] == node_cables
    assert compute["links"]["leaf-spine"] == spine_cables


def test_ra_11333_4su_bill_of_materials() -> None:
    """RA V11 appendix A: 4 SU / 127 nodes."""
    result = summary(compiled("superpod-h100-4su")[0])
    networks = result["networks"]
    compute = networks["compute"]
    assert result["nodes"]["dgx"] == 127
    assert result["nodes"]["ufm"] == 4
    assert compute["links"]["endpoint-leaf"] == 1016 + 4
    # one twin-port module per used switch cage (48 switches x 32 cages), four per DGX
    assert compute["transceivers"]["MMA4Z00-NS"] == 1536
    assert compute["transceivers"]["980-9I51A-00NS00"] == 508
    # one cable per 400G link, all multimode in the RA design
    assert compute["cables_by_media"] == {"mmf": 1016 + 4 + 1024}
    qm9700 = "920-9B210-00FN-0M0"
    assert result["bom"][qm9700] == 48 + 16
    assert (
        sum(
            networks[n]["switches"]["leaf"] + networks[n]["switches"]["spine"] for n in ("compute",)
        )
        == 48
    )
    assert sum(networks["storage"]["switches"].values()) == 16
    assert result["bom"]["920-9N302-00F7-0C2"] == 8  # SN4600C in-band
    assert result["bom"]["920-9N110-00F1-0C0"] == 8  # SN2201 out-of-band
    assert networks["inband"]["links"]["endpoint-leaf"] >= 127 * 2  # 254 DGX in-band links
    assert result["racks"] == 38  # RA Table 7


def test_ra_11333_every_dgx_bmc_and_switch_is_managed() -> None:
    fabric = compiled("superpod-h100-4su")[0]
    managed = {link.a for link in fabric.links if link.kind == "mgmt"}
    for device in fabric.devices.values():
        if device.kind in ("node", "pdu") or (device.kind == "switch" and device.network != "oob"):
            assert device.name in managed, device.name


# DGX SuperPOD B200 RA (QM9700, 32 DGX per SU, no UFM slot): SU, nodes, leaf, spine, core.
B200_TABLE = [
    (2, 64, 16, 8, 0),
    (4, 128, 32, 16, 0),
    (8, 256, 64, 32, 0),
    (16, 512, 128, 128, 64),
    (32, 1024, 256, 256, 128),
]


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines", "cores"), B200_TABLE)
def test_b200_superpod_table(
    tmp_path: Path, sus: int, nodes: int, leaves: int, spines: int, cores: int
) -> None:
    fabric, _ = compile_text(
        "metadata: {name: b200}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        f"nodes:\n  dgx: {{model: dgx-b200, count: {nodes}, nodes_per_rack: 4}}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband}\n",
        tmp_path,
    )
    compute = summary(fabric)["networks"]["compute"]
    assert compute["switches"] == {"leaf": leaves, "spine": spines, "core": cores}
    assert compute["tiers"] == (3 if cores else 2)
    cables = nodes * 8
    assert compute["links"]["endpoint-leaf"] == cables
    assert compute["links"]["leaf-spine"] == cables
    assert compute["links"]["spine-core"] == (cables if cores else 0)


# DGX SuperPOD B300 XDR RA (Quantum-X800 Q3400, 72 nodes per SU): SU, nodes, leaf, spine, cables.
B300_XDR_TABLE = [
    (1, 72, 8, 4, 576),
    (2, 144, 16, 8, 1152),
    (4, 288, 32, 18, 2304),
    (8, 576, 64, 36, 4608),
    (18, 1296, 144, 72, 10368),
]


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines", "cables"), B300_XDR_TABLE)
def test_b300_xdr_table(
    tmp_path: Path, sus: int, nodes: int, leaves: int, spines: int, cables: int
) -> None:
    fabric, _ = compile_text(
        "metadata: {name: b300}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        f"nodes:\n  gpu: {{model: hgx-b300, count: {nodes}, nodes_per_rack: 4}}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband, switches: {leaf: q3400}}\n",
        tmp_path,
    )
    compute = summary(fabric)["networks"]["compute"]
    assert compute["scalable_units"] == sus
    assert compute["switches"] == {"leaf": leaves, "spine": spines, "core": 0}
    assert compute["links"]["endpoint-leaf"] == cables
    assert compute["links"]["leaf-spine"] == cables
    # XDR runs 200G lanes: no NDR (100G-lane) optics may appear
    catalog = fabric.loaded.catalog.catalog
    assert all(catalog.transceivers[m.part].lane_speed == 200 for m in fabric.modules)


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines", "cables"), B300_XDR_TABLE[:2])
def test_dgx_b300_xdr_table(
    tmp_path: Path, sus: int, nodes: int, leaves: int, spines: int, cables: int
) -> None:
    """The DGX B300 (8 ConnectX-8 at XDR 800G) builds the same units as the HGX B300."""
    fabric, artifacts = compile_text(
        "metadata: {name: dgxb300}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        f"nodes:\n  dgx: {{model: dgx-b300, count: {nodes}, nodes_per_rack: 4}}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband, switches: {leaf: q3400}}\n",
        tmp_path,
    )
    compute = summary(fabric)["networks"]["compute"]
    assert compute["scalable_units"] == sus
    assert compute["switches"] == {"leaf": leaves, "spine": spines, "core": 0}
    assert compute["links"]["endpoint-leaf"] == cables
    catalog = fabric.loaded.catalog.catalog
    assert all(
        catalog.transceivers[m.part].lane_speed == 200
        for m in fabric.modules
        if m.network == "compute"
    )
    env = dict(artifacts)["nccl/dgx-b300.env"]
    assert isinstance(env, str)
    assert "NCCL_IB_HCA==" + ",".join(f"mlx5_{k}" for k in range(8)) in env


def test_rail_k_goes_to_the_port_that_carries_gpu_k() -> None:
    """DGX H100: rail k is cabled from the OSFP port of GPU k, which is not port order."""
    fabric = compiled("superpod-h100-4su")[0]
    gpu_of_port = {
        "OSFP4/P2": 0,
        "OSFP3/P2": 1,
        "OSFP3/P1": 2,
        "OSFP4/P1": 3,
        "OSFP1/P2": 4,
        "OSFP2/P2": 5,
        "OSFP2/P1": 6,
        "OSFP1/P1": 7,
    }
    checked = 0
    for link in fabric.links_of("compute"):
        if link.kind == "endpoint-leaf" and link.a.startswith("dgx"):
            assert link.rail == gpu_of_port[link.a_port]
            assert fabric.devices[link.b].rail == link.rail
            checked += 1
    assert checked == 1016


def test_nvl72_domains() -> None:
    fabric = compiled("gb200-nvl72-su")[0]
    assert len(fabric.nvlink_domains) == 8
    for domain in fabric.nvlink_domains:
        assert (
            domain.gpus,
            domain.switch_chips,
            len(domain.members),
            len(domain.switch_trays),
        ) == (72, 18, 18, 9)
        assert domain.links_per_gpu == 18
    assert summary(fabric)["gpus"] == 576


def test_partial_unit_is_cabled_as_a_full_one(tmp_path: Path) -> None:
    """A half-populated unit still gets all its leaves and every leaf-spine cable."""
    half = summary(
        compile_text(
            "metadata: {name: half}\nsite: {rack: {power_kw: 45}}\n"
            "nodes:\n  dgx: {model: dgx-h100, count: 48, nodes_per_rack: 4}\n"
            "networks:\n  compute: {role: compute, fabric: infiniband}\n",
            tmp_path,
        )[0]
    )["networks"]["compute"]
    assert half["switches"] == {"leaf": 16, "spine": 8, "core": 0}
    assert half["links"]["leaf-spine"] == 16 * 32
    assert half["links"]["endpoint-leaf"] == 48 * 8


def test_spines_provisioned_for_growth(tmp_path: Path) -> None:
    text = (
        "metadata: {name: grow}\nsite: {rack: {power_kw: 45}}\n"
        "nodes:\n  dgx: {model: dgx-h100, count: 64, nodes_per_rack: 4}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband, spines_for_sus: 4}\n"
    )
    compute = summary(compile_text(text, tmp_path)[0])["networks"]["compute"]
    assert compute["switches"] == {"leaf": 16, "spine": 16, "core": 0}  # spines of the 4-SU design
    assert compute["links"]["leaf-spine"] == 16 * 32  # but cables only for the 2 units present


# -- GB300 NVL72 (issue 17) ------------------------------------------------------------------------
# One scalable unit = 8 NVL72 racks = 144 compute trays x 4 Blackwell Ultra GPUs, one ConnectX-8
# per GPU. On XDR each ConnectX-8 is one 800G port; on Spectrum-X it is split 2x 400G, one leg per
# plane (REFERENCE.md section 5).


def test_gb300_su_on_xdr_has_one_800g_link_per_gpu() -> None:
    fabric, _ = compiled("gb300-nvl72-xdr")
    result = summary(fabric)
    assert result["gpus"] == 576
    assert len(fabric.nvlink_domains) == 8
    assert {(d.gpus, len(d.members), len(d.switch_trays)) for d in fabric.nvlink_domains} == {
        (72, 18, 9)
    }
    compute = result["networks"]["compute"]
    assert compute["scalable_units"] == 1
    assert compute["links"]["endpoint-leaf"] == 576
    node_links = [link for link in fabric.links_of("compute") if link.kind == ENDPOINT_LEAF]
    assert {link.speed for link in node_links} == {800}
    # every GPU's ConnectX-8 is cabled once, to the leaf of its rail
    per_tray = Counter(link.a for link in node_links)
    assert len(per_tray) == 144 and set(per_tray.values()) == {4}


def test_gb300_xdr_links_get_200g_lane_optics() -> None:
    fabric, _ = compiled("gb300-nvl72-xdr")
    catalog = fabric.loaded.catalog.catalog
    modules = [m for m in fabric.modules if m.network == "compute"]
    assert len(modules) == 576 + 288 + 576  # per GPU, per leaf down cage, per up cage either end
    assert {catalog.transceivers[m.part].lane_speed for m in modules} == {200}
    copper = [
        link.cable
        for link in fabric.links_of("compute")
        if link.cable is not None and link.cable.media == "copper"
    ]
    assert all(catalog.cables[c.family].lane_speed == 200 for c in copper)


def test_gb300_su_on_spectrum_x_splits_every_gpu_over_two_planes() -> None:
    fabric, artifacts = compiled("gb300-nvl72-spectrum-x")
    result = summary(fabric)
    assert result["gpus"] == 576
    compute = result["networks"]["compute"]
    assert compute["planes"] == 2
    assert compute["links"]["endpoint-leaf"] == 1152
    node_links = [link for link in fabric.links_of("compute") if link.kind == ENDPOINT_LEAF]
    assert {link.speed for link in node_links} == {400}
    assert Counter(link.plane for link in node_links) == {0: 576, 1: 576}
    planes_of_port: dict[tuple[str, str], set[int | None]] = defaultdict(set)
    for link in node_links:
        planes_of_port[(link.a, link.a_port.rpartition("/")[0])].add(link.plane)
    assert len(planes_of_port) == 576
    assert all(planes == {0, 1} for planes in planes_of_port.values())
    # each plane has its own RDMA device and netdev on the host, and NCCL uses both
    host = dict(artifacts)["configs/hosts/gb300-01-c01.sh"]
    assert isinstance(host, str)
    ifnames = re.findall(r"^IF=(\S+)$", host, flags=re.M)
    compute_ifnames = [i for i in ifnames if not i.startswith("${")]
    assert len(compute_ifnames) == 8 == len(set(compute_ifnames))
    env = dict(artifacts)["nccl/gb300-compute-tray.env"]
    assert isinstance(env, str)
    (hca,) = re.findall(r"^NCCL_IB_HCA==(\S+)$", env, flags=re.M)
    assert len(hca.split(",")) == 8 == len(set(hca.split(",")))


@pytest.mark.parametrize("example", ["gb300-nvl72-xdr", "gb300-nvl72-spectrum-x"])
def test_gb300_rack_power_comes_from_the_catalog_and_fits_the_budget(example: str) -> None:
    fabric, _ = compiled(example)
    catalog = fabric.loaded.catalog.catalog
    tray = catalog.nodes["gb300-compute-tray"].power_w
    switch_tray = catalog.nodes["nvlink-switch-tray"].power_w
    budget = fabric.loaded.spec.site.rack.power_kw * 1000
    racks = [r for r in fabric.racks if any(fabric.devices[d].kind == "tray" for d in r.devices)]
    assert len(racks) == 8
    for rack in racks:
        draw = sum(fabric.devices[d].power_w for d in rack.devices)
        trays = [d for d in rack.devices if fabric.devices[d].kind == "tray"]
        assert len(trays) == 18
        # 18 compute trays and 9 NVLink switch trays; power shelves draw nothing themselves
        assert draw >= 18 * tray + 9 * switch_tray
        assert draw <= budget


def test_gb300_rack_over_its_budget_is_refused(tmp_path: Path) -> None:
    text = (EXAMPLES / "gb300-nvl72-xdr.yaml").read_text()
    assert "power_kw: 140" in text
    with pytest.raises(DesignError) as failure:
        compile_text(text.replace("power_kw: 140", "power_kw: 120"), tmp_path)
    assert "over its 120 kW budget" in str(failure.value)


def test_gb200_and_gb300_units_share_one_three_tier_fabric() -> None:
    """Mixed generations: each node type keeps its own NCCL file and its racks their own power."""
    fabric, artifacts = compiled("mixed-gb200-gb300")
    result = summary(fabric)
    compute = result["networks"]["compute"]
    assert compute["tiers"] == 3 and compute["scalable_units"] == 2
    assert result["gpus"] == 2 * 576
    node_links = [link for link in fabric.links_of("compute") if link.kind == ENDPOINT_LEAF]
    by_group = Counter(fabric.devices[link.a].group for link in node_links)
    assert by_group == {"gb200": 576, "gb300": 576}
    files = dict(artifacts)
    sms = {}
    for tray in ("gb200-compute-tray", "gb300-compute-tray"):
        xml = files[f"nccl/{tray}.xml"]
        assert isinstance(xml, str)
        sms[tray] = set(re.findall(r'<gpu dev="\d+" sm="(\d+)"', xml))
        assert f"NCCL_TOPO_FILE=/etc/nccl/{tray}.xml" in str(files[f"nccl/{tray}.env"])
    assert sms == {"gb200-compute-tray": {"100"}, "gb300-compute-tray": {"103"}}
    catalog = fabric.loaded.catalog.catalog
    switch_tray = catalog.nodes["nvlink-switch-tray"].power_w
    draws: dict[str, set[int]] = defaultdict(set)
    for rack in fabric.racks:
        trays = [fabric.devices[d] for d in rack.devices if fabric.devices[d].kind == "tray"]
        if not trays:
            continue
        model = {t.model for t in trays}
        assert len(model) == 1  # one generation per rack
        tray_power = catalog.nodes[trays[0].model].power_w
        nvlink = sum(
            fabric.devices[d].power_w
            for d in rack.devices
            if fabric.devices[d].kind == "nvlink-switch"
        )
        assert nvlink == 9 * switch_tray
        draws[trays[0].model].add(18 * tray_power + nvlink)
    assert draws == {
        "gb200-compute-tray": {18 * catalog.nodes["gb200-compute-tray"].power_w + 9 * switch_tray},
        "gb300-compute-tray": {18 * catalog.nodes["gb300-compute-tray"].power_w + 9 * switch_tray},
    }
    assert draws["gb300-compute-tray"] != draws["gb200-compute-tray"]
