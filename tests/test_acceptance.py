"""Acceptance against published reference designs (RA-11333 Table 4, RA-11338, the Spectrum-X RA).

The specs state node counts and hardware only; every switch, link and transceiver count below
must follow from the design rules. Expected values are the published tables, typed in here.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from fabricc.build import design
from fabricc.emit.summary import summary
from fabricc.errors import DesignError
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, PEER, SITE
from fabricc.spec.loader import load_spec
from tests.support import EXAMPLES, compile_text, compiled
from tests.test_configs_hosts import rows as nic_rows

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
    # (RA-11333 Table 8 orders them by NVIDIA ordering number: 980-9I510-00NS00 = MMA4Z00-NS)
    assert compute["transceivers"]["980-9I510-00NS00"] == 1536
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
    # SN2201 out-of-band, RA Table 7: with the in-band leaves in the management racks, as the
    # RA has them (the example's leaf_placement: central)
    assert result["bom"]["920-9N110-00F1-0C0"] == 8
    assert networks["inband"]["links"]["endpoint-leaf"] >= 127 * 2  # 254 DGX in-band links
    # RA Table 8: 24 in-band leaf-core links (6 leaves x 4 uplinks, 2 to each of 2 cores)
    assert networks["inband"]["switches"] == {"leaf": 6, "spine": 2, "core": 0}
    assert networks["inband"]["links"]["leaf-spine"] == 24
    assert result["racks"] == 38  # RA Table 7
    # RA Table 7: 108 PDUs = 96 (32 DGX racks x 3: 6 supplies, 4 + 2 redundant) + 12 (6 x 2).
    # fabricc: 109 - the example's 8 storage arrays (19.2 kW, not in Table 7) with the spines
    # fill central rack A01 to 44.8 kW, which one 34.6 kW PDU cannot carry when the other is
    # lost, so A01 gets a third (docs/outputs.md, "Power plan")
    fabric = compiled("superpod-h100-4su")[0]
    pdus = [d for d in fabric.devices.values() if d.kind == "pdu"]
    per_rack = Counter(str(d.rack) for d in pdus)
    compute = [r.name for r in fabric.racks if r.role == "compute"]
    assert len(compute) == 32 and all(per_rack[r] == 3 for r in compute)
    others = sorted(per_rack[r.name] for r in fabric.racks if r.role != "compute")
    assert others == [2, 2, 2, 2, 2, 3] and len(pdus) == 109
    managed = {link.a for link in fabric.links if link.kind == "mgmt"}
    assert all(pdu.name in managed for pdu in pdus)


def test_ra_11333_4su_inband_cables_are_table_8s() -> None:
    """RA-11333 Table 8, in-band and out-of-band uplink cables, no transceivers: 254 x 200 Gbps
    QSFP56 AOC (980-9I440-00H030) for the DGX in-band ports, which the DGX H100's catalog
    ports name and which runs 100GbE in the SN4600C's QSFP28 cages; 100 Gbps QSFP AOC
    (980-9I13N-00C030) for the 8 management node ports, the 24 leaf-core links and the OOB
    uplinks; passive copper for the 6 ISLs of the 3 leaf pairs. The RA orders one 30 m length
    for every run; fabricc cuts each run to length and takes passive copper where both ends
    share a rack (a leaf-core link between the leaves and cores of one management rack)."""
    fabric = compiled("superpod-h100-4su")[0]
    cables: Counter[tuple[str, str, str]] = Counter()
    for link in fabric.links:
        if link.kind == SITE:  # the border links to the site (site_uplinks) are not Table 8's
            continue
        if link.network == "inband" or (link.network == "oob" and link.speed == 100):
            assert link.cable is not None
            assert link.a_module is None and link.b_module is None, link
            a, b = fabric.devices[link.a], fabric.devices[link.b]
            end = (a.group or "") if a.kind == "node" else a.role
            cables[(link.kind, end, link.cable.family)] += 1
            in_one_rack = a.rack == b.rack
            if link.kind != ENDPOINT_LEAF:  # switch to switch: copper in a rack, else the AOC
                assert link.cable.family == ("mcp1600" if in_one_rack else "mfa1a00-c"), link
    assert cables[(ENDPOINT_LEAF, "dgx", "mfs1s00-h")] == 127 * 2
    assert cables[(ENDPOINT_LEAF, "mgmt", "mfa1a00-c")] == 4 * 2
    leaf_core = sum(
        n for (kind, end, _), n in cables.items() if (kind, end) == (LEAF_SPINE, "leaf")
    )
    assert leaf_core == 24
    # Table 8's 6 ISLs: 2 per MLAG leaf pair, each pair in one rack (synth/racks.py mates);
    # the in-band spine pair's own 2 peer links (it bridges the in-band VLAN) come on top
    assert cables[(PEER, "leaf", "mcp1600")] == 6
    assert cables[(PEER, "spine", "mcp1600")] == 2
    bom = summary(fabric)["bom"]
    # no 100G SR4 transceivers (MMA1B00-C100D) in the management networks
    assert "980-9I149-00CS00" not in bom and "MMA1B00-C100D" not in bom
    # the BOM orders by NVIDIA ordering number where the catalog has it (Table 8's 30 m AOCs:
    # 980-9I440-00H030 = MFS1S00-H030V, 980-9I13N-00C030 = MFA1A00-C030), else by legacy OPN
    mfs = ("MFS1S00-H", "980-9I440-")
    assert sum(n for part, n in bom.items() if part.startswith(mfs)) == 127 * 2
    mfa = ("MFA1A00-C", "980-9I13N-")
    assert sum(n for part, n in bom.items() if part.startswith(mfa)) == sum(
        n for (_, _, family), n in cables.items() if family == "mfa1a00-c"
    )


def test_ra_11333_4su_oob_by_default_sizing(tmp_path: Path) -> None:
    """RA-11333 4 SU: 8 SN2201 and 16 OOB uplinks (2 x 100G each) from port counts alone."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    assert "    max_racks_per_switch: 6\n" in text
    fabric = synthesized(text.replace("    max_racks_per_switch: 6\n", ""), tmp_path)
    assert len(fabric.networks["oob"].switches["leaf"]) == 8
    assert _uplinks_into(fabric, "oob", "inband") == 16


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


def _xdr_units(tmp_path: Path, model: str, nodes: int) -> tuple[Any, list[Any]]:
    """The B300 XDR table's design: `nodes` of `model`, 4 per rack, a Q3400 compute fabric."""
    return compile_text(
        f"metadata: {{name: {model}}}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        f"nodes:\n  gpu: {{model: {model}, count: {nodes}, nodes_per_rack: 4}}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband, switches: {leaf: q3400}}\n",
        tmp_path,
    )


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines", "cables"), B300_XDR_TABLE)
def test_b300_xdr_table(
    tmp_path: Path, sus: int, nodes: int, leaves: int, spines: int, cables: int
) -> None:
    fabric, _ = _xdr_units(tmp_path, "hgx-b300", nodes)
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
    fabric, artifacts = _xdr_units(tmp_path, "dgx-b300", nodes)
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


@pytest.mark.parametrize("nodes", [511, 543, 1023])
def test_core_sized_for_growth_whatever_the_last_pod_holds(tmp_path: Path, nodes: int) -> None:
    """spines_for_sus 32 sizes the 3-tier core for 8 full spine-leaf groups of 4 units: at 16
    units, at 17 (a fifth group with one unit) and at 32 the core is the 32-SU core (RA-11333
    scaled: 128 cores), and only the present groups get spines."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    text = text.replace("count: 127", f"count: {nodes}")
    text = text.replace("    reserved_slots: 1", "    spines_for_sus: 32\n    reserved_slots: 1")
    compute = synthesized(text, tmp_path).networks["compute"]
    assert compute.tiers == 3
    assert len(compute.switches["core"]) == 128
    assert len(compute.switches["spine"]) == 32 * -(-compute.sus // 4)


def test_one_rail_and_plane_numbering_in_every_output() -> None:
    """Rail and plane are 1-based everywhere: a cable's rail/plane in cabling/cables.csv is the
    rail/plane of its leaf in inventory/devices.csv, p<k>-leaf... is plane k, leaf<r> is rail r,
    and the plane diagram labels the same numbers."""
    _, artifacts = compiled("spectrum-x-2plane")
    files = {path: text for path, text in artifacts if isinstance(text, str)}
    devices = {r["name"]: r for r in csv.DictReader(io.StringIO(files["inventory/devices.csv"]))}
    checked = 0
    for row in csv.DictReader(io.StringIO(files["cabling/cables.csv"])):
        if row["kind"] != "endpoint-leaf":
            continue
        leaf = devices[row["b_device"]]
        assert (row["rail"], row["plane"]) == (leaf["rail"], leaf["plane"]), row
        name = re.fullmatch(r"p(\d)-leaf(\d+)", row["b_device"])
        assert name is not None
        assert (int(row["plane"]), int(row["rail"])) == (int(name[1]), int(name[2])), row
        checked += 1
    assert checked == 16 * 8 * 2
    rails = {
        int(r["rail"])
        for r in csv.DictReader(io.StringIO(files["cabling/cables.csv"]))
        if r["rail"]
    }
    assert min(rails) == 1 and max(rails) == 8
    labels = set(re.findall(r"P(\d) · R(\d)", files["diagrams/planes-compute.dot"]))
    assert labels and {int(p) for p, _ in labels} == {1, 2}
    assert {int(r) for _, r in labels} == rails


@pytest.mark.parametrize("example", ["roce-lab", "spectrum-x-2plane", "superpod-h100-4su"])
def test_summary_names_models_of_present_tiers_only(example: str) -> None:
    """summary.json names a switch model for each tier a network has, and no other (a 2-tier
    network has no core model; a single-tier OOB network only a leaf model)."""
    fabric, _ = compiled(example)
    data = summary(fabric)
    tiers = ("leaf", "spine", "core")
    for name, network in data["networks"].items():
        assert list(network["switch_models"]) == list(tiers[: network["tiers"]]), name
    assert any(n["tiers"] == 2 for n in data["networks"].values())


def _uplinks_into(fabric: Any, source: str, target: str) -> int:
    """Uplinks from `source` that land on the top tier of `target`, each port used once."""
    topology = fabric.networks[target]
    top = next(t for t in ("core", "spine", "leaf") if topology.switches.get(t))
    tops = set(topology.switches[top])
    links = [link for link in fabric.links if link.kind == "uplink" and link.network == source]
    assert all(link.b in tops for link in links)
    return len(links)


@pytest.mark.parametrize("racks", [16, 32, 64, 128])
def test_gb200_oob_uplinks_fit_the_inband_top_tier(tmp_path: Path, racks: int) -> None:
    """RA-11338 at 2-16 SU: every OOB switch uplinks 2 x 100G into the in-band top tier, which is
    sized with those ports reserved (it grows instead of running out of ports)."""
    text = (EXAMPLES / "gb200-nvl72-su.yaml").read_text()
    assert "count: 8\n" in text
    fabric, _ = compile_text(text.replace("count: 8\n", f"count: {racks}\n"), tmp_path)
    oob = fabric.networks["oob"].switches["leaf"]
    assert _uplinks_into(fabric, "oob", "inband") == 2 * len(oob)
    compute = summary(fabric)["networks"]["compute"]
    assert compute["links"]["endpoint-leaf"] == racks * 72 + 2


def test_b300_xdr_18_su_with_management_networks(tmp_path: Path) -> None:
    """B300 XDR 18 SU (1,296 nodes) keeps its published compute fabric with in-band and OOB
    networks beside it, and the OOB uplinks find ports in the in-band top tier."""
    fabric, _ = compile_text(
        "metadata: {name: b300}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        "nodes:\n  gpu: {model: hgx-b300, count: 1296, nodes_per_rack: 4}\n"
        "networks:\n"
        "  compute: {role: compute, fabric: infiniband, switches: {leaf: q3400}}\n"
        "  inband: {role: inband, dual_homed: true}\n"
        "  oob: {role: oob, uplink_to: inband}\n",
        tmp_path,
    )
    compute = summary(fabric)["networks"]["compute"]
    assert compute["switches"] == {"leaf": 144, "spine": 72, "core": 0}
    assert compute["links"]["leaf-spine"] == 10368
    oob = fabric.networks["oob"].switches["leaf"]
    assert _uplinks_into(fabric, "oob", "inband") == 2 * len(oob)


def test_uplinks_grow_the_target_top_tier(tmp_path: Path) -> None:
    """A top tier with no room for its guests gets more switches, not an error."""
    text = (
        "metadata: {name: guests}\nsite: {rack: {power_kw: 45}}\n"
        "nodes:\n  dgx: {model: dgx-h100, count: 96, nodes_per_rack: 4}\n"
        "networks:\n"
        "  inband: {role: inband, oversubscription: '4:1'}\n"
        "  oob: {role: oob, uplink_to: inband, max_racks_per_switch: 1, uplinks_per_switch: UP}\n"
    )
    small = compile_text(text.replace("UP", "1"), tmp_path)[0]
    large = compile_text(text.replace("UP", "4"), tmp_path)[0]
    spines = [len(f.networks["inband"].switches["spine"]) for f in (small, large)]
    assert spines[0] < spines[1]
    oob = large.networks["oob"].switches["leaf"]
    assert _uplinks_into(large, "oob", "inband") == 4 * len(oob)


def synthesized(text: str, tmp_path: Path) -> Any:
    """The checked design IR only (no emitters): for the largest published scales."""
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return design(load_spec(path, "spec.yaml"))


def test_ra_11333_4su_storage_fabric() -> None:
    """RA-11333 4 SU storage fabric: Table 7 lists 16 QM9700 for storage; Table 8 254 DGX
    storage transceivers (127 DGX x 2 ports). The DGX side: 8 leaves (2 rails x 4 SU) at 4:3,
    each 32 DGX ports down and 24 uplinks. The array side follows the spec's storage model
    (here 8 arrays of 8 NDR ports, an assumed appliance), so Table 8's array cables (48
    2x200G) are not compared."""
    fabric = compiled("superpod-h100-4su")[0]
    storage = fabric.networks["storage"]
    assert sum(len(names) for names in storage.switches.values()) == 16
    dgx = next(c for c in storage.leaf_classes if c.name == "dgx")
    assert (len(dgx.leaves), dgx.down_ports, dgx.up_ports) == (8, 32, 24)
    devices = fabric.devices
    on_dgx = [
        m for m in fabric.modules if m.network == "storage" and devices[m.device].group == "dgx"
    ]
    assert len(on_dgx) == 254
    uplinks = [
        link
        for link in fabric.links
        if link.network == "storage" and link.kind == "leaf-spine" and link.a in dgx.leaves
    ]
    assert len(uplinks) == 8 * 24


# RA-11333 flagship scaled by its per-unit rule (32 DGX per SU, one slot for UFM): SU, DGX,
# and the compute fabric of the B200 table above (same QM9700 radix, same unit).
SUPERPOD_3_TIER = [(16, 511, 128, 128, 64), (32, 1023, 256, 256, 128), (64, 2047, 512, 512, 256)]


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines", "cores"), SUPERPOD_3_TIER)
def test_superpod_3_tier_with_storage_leaf_classes(
    tmp_path: Path, sus: int, nodes: int, leaves: int, spines: int, cores: int
) -> None:
    """Storage leaves at 1:1 and DGX storage leaves at 4:3: at 16 SU one 2-tier tree, beyond it
    one 3-tier fabric where each leaf class gets spine-leaf groups of its own under a shared
    core."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    fabric = synthesized(text.replace("count: 127", f"count: {nodes}"), tmp_path)
    compute = fabric.networks["compute"]
    assert compute.sus == sus
    assert compute.tiers == 3
    sizes = {tier: len(names) for tier, names in compute.switches.items()}
    assert sizes == {"leaf": leaves, "spine": spines, "core": cores}
    storage = fabric.networks["storage"]
    links = [link for link in fabric.links if link.network == "storage"]
    if sus == 16:
        # 32 DGX storage leaves (24 uplinks) and 4 array leaves (16 uplinks) share no spine
        # count that divides both and fits, but one link from each of the 36 leaves to each of
        # 24 spines does (36 of 64 ports): the array leaves take 8 more uplinks from their
        # free ports (better than 1:1) and the fabric keeps 2 tiers (no core tier)
        assert storage.tiers == 2
        budgets = {c.name: (c.down_ports, c.up_ports) for c in storage.leaf_classes}
        assert budgets == {"dgx": (32, 24), "storage": (16, 24)}
        assert len(storage.switches["spine"]) == 24
        pairs = Counter((link.a, link.b) for link in links if link.kind == "leaf-spine")
        assert set(pairs.values()) == {1}
        assert len(pairs) == 36 * 24
        return
    assert storage.tiers == 3
    budgets = {c.name: (c.down_ports, c.up_ports) for c in storage.leaf_classes}
    assert budgets == {"dgx": (32, 24), "storage": (16, 16)}  # 4:3 and 1:1
    devices = fabric.devices
    # spine-leaf groups of their own: no spine serves both classes, and each class counts its
    # pods from the first
    spines_of: dict[str, set[str]] = {c.name: set() for c in storage.leaf_classes}
    class_of = {leaf: c.name for c in storage.leaf_classes for leaf in c.leaves}
    for link in links:
        if link.kind == "leaf-spine":
            spines_of[class_of[link.a]].add(link.b)
    assert spines_of["dgx"].isdisjoint(spines_of["storage"])
    for cls in storage.leaf_classes:
        assert min(devices[spine].pod for spine in spines_of[cls.name]) == 0
    assert sum(1 for link in links if link.kind == "endpoint-leaf") == nodes * 2 + 8 * 8
    # every leaf uplink reaches a spine, every spine is non-blocking towards the core
    ups: dict[str, int] = {}
    for link in links:
        if link.kind in ("leaf-spine", "spine-core"):
            ups[link.a] = ups.get(link.a, 0) + 1
    for cls in storage.leaf_classes:
        assert all(ups[leaf] == cls.up_ports for leaf in cls.leaves)
    downs: dict[str, int] = {}
    for link in links:
        if link.kind == "leaf-spine":
            downs[link.b] = downs.get(link.b, 0) + 1
    assert all(ups[spine] == downs[spine] for spine in storage.switches["spine"])


# DGX SuperPOD B300 Spectrum-X RA (twin-plane SN5600, 64 HGX B300 per SU, each GPU 2 x 400G over
# two planes): SU, nodes, leaves and spines over both planes.
SPECTRUM_X_TABLE = [
    (1, 64, 16, 8),
    (2, 128, 32, 16),
    (4, 256, 64, 32),
    (8, 512, 128, 64),
    (16, 1024, 256, 128),
]


@pytest.mark.parametrize(("sus", "nodes", "leaves", "spines"), SPECTRUM_X_TABLE)
def test_spectrum_x_table(tmp_path: Path, sus: int, nodes: int, leaves: int, spines: int) -> None:
    """16 SU stays 2-tier: the SN5600 is counted after breakout (128 x 400G), not as 64 x 800G."""
    fabric = synthesized(
        "metadata: {name: sx}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        f"nodes:\n  gpu: {{model: hgx-b300, count: {nodes}, nodes_per_rack: 4}}\n"
        "networks:\n  compute: {role: compute, fabric: ethernet, planes: 2}\n",
        tmp_path,
    )
    compute = fabric.networks["compute"]
    assert compute.sus == sus
    assert compute.tiers == 2
    sizes = {tier: len(names) for tier, names in compute.switches.items()}
    assert sizes == {"leaf": leaves, "spine": spines}
    links = [link for link in fabric.links if link.network == "compute"]
    endpoint = [link for link in links if link.kind == "endpoint-leaf"]
    assert len(endpoint) == nodes * 8 * 2  # one 400G link per GPU and plane
    up = [link for link in links if link.kind == "leaf-spine"]
    # full bisection: as much leaf-spine bandwidth as endpoint bandwidth
    assert sum(link.speed for link in up) == sum(link.speed for link in endpoint)
    if sus == 16:
        assert {link.speed for link in up} == {400}


GB200_SHAPE = (
    "metadata: {name: gb}\n"
    "site: {racks_per_row: 12, rack: {power_kw: 140}}\n"
    "nodes:\n  nvl72: {model: gb200-nvl72, count: RACKS, su_size: 8}\n"
    "networks:\n"
    "  compute:\n"
    "    role: compute\n"
    "    fabric: infiniband\n"
    "    endpoints: {nvl72: {leaf_downlinks: 18}}\n"
    "SHAPE"
)


@pytest.mark.parametrize("sus", [1, 2, 4])
def test_gb200_written_spine_leaf_group_shape(tmp_path: Path, sus: int) -> None:
    """RA-11338 as summarised (ISSUE-NOTES): 4 spine-leaf groups per SU, each 8 leaves + 6 spines,
    under core groups -> 32 leaves + 24 spines per SU, every tray NIC at full bandwidth."""
    shape = "    spine_leaf_groups: {per_su: 4, leaves: 8, spines: 6}\n"
    text = GB200_SHAPE.replace("RACKS", str(8 * sus)).replace("SHAPE", shape)
    fabric = synthesized(text, tmp_path)
    compute = fabric.networks["compute"]
    assert compute.tiers == 3
    assert (len(compute.switches["leaf"]), len(compute.switches["spine"])) == (32 * sus, 24 * sus)
    assert compute.pods == 4 * sus
    assert compute.core_groups == 6
    devices = fabric.devices
    per_pod: dict[int | None, set[str]] = {}
    for leaf in compute.switches["leaf"]:
        per_pod.setdefault(devices[leaf].pod, set()).add(leaf)
    assert sorted(len(v) for v in per_pod.values()) == [8] * (4 * sus)
    # a group's 8 leaves serve the same nodes on all 4 rails: 2 racks' trays
    for leaves in per_pod.values():
        assert {devices[leaf].rail for leaf in leaves} == {0, 1, 2, 3}
        assert len({devices[leaf].su for leaf in leaves}) == 1
    links = [link for link in fabric.links if link.network == "compute"]
    nodes = 8 * sus * 18 * 4
    assert sum(1 for link in links if link.kind == "endpoint-leaf") == nodes
    assert sum(1 for link in links if link.kind == "leaf-spine") == nodes
    assert sum(1 for link in links if link.kind == "spine-core") == nodes


def test_gb200_core_group_shape_and_default(tmp_path: Path) -> None:
    """A written core-group size is built as written; without a shape the rules derive it."""
    shape = (
        "    spine_leaf_groups: {per_su: 4, leaves: 8, spines: 6}\n    core_groups: {cores: 4}\n"
    )
    fabric = synthesized(GB200_SHAPE.replace("RACKS", "16").replace("SHAPE", shape), tmp_path)
    compute = fabric.networks["compute"]
    assert compute.cores_per_group == 4
    assert len(compute.switches["core"]) == 6 * 4
    default = synthesized(GB200_SHAPE.replace("RACKS", "8").replace("SHAPE", ""), tmp_path)
    derived = default.networks["compute"]
    assert derived.tiers == 2  # one unit fits two tiers without a written shape
    assert len(derived.switches["leaf"]) == 32


@pytest.mark.parametrize("limit", ["    max_racks_per_switch: 1\n", ""])
def test_gb200_racks_have_two_management_tors(tmp_path: Path, limit: str) -> None:
    """RA-11338 / DGX GB200 user guide, Hardware: 2 management ToR switches per NVL72 rack, serving that
    rack; switches for other racks never take the free units of an NVL72 rack."""
    text = (EXAMPLES / "gb200-nvl72-su.yaml").read_text()
    assert "    max_racks_per_switch: 1\n" in text
    text = text.replace("count: 8\n", "count: 16\n").replace("    max_racks_per_switch: 1\n", limit)
    fabric = synthesized(text, tmp_path)
    devices = fabric.devices
    served: dict[str, set[str | None]] = {}
    for link in fabric.links:
        # (the management ports of other access switches, their management tree, aside)
        if link.kind == "mgmt" and devices[link.a].network != "oob":
            served.setdefault(link.b, set()).add(devices[link.a].rack)
    systems = [rack for rack in fabric.racks if rack.role == "system"]
    assert len(systems) == 16
    for rack in systems:
        tors = [n for n in rack.devices if devices[n].network == "oob"]
        assert len(tors) == 2, rack.name
        assert all(served[tor] == {rack.name} for tor in tors)


def test_inband_at_1_1_spreads_over_few_spines(tmp_path: Path) -> None:
    """An MLAG leaf of 62 usable cages at 1:1 has 31 + 31 ports; 31 uplinks divide over no
    spine pair (31 spines for 10 leaves), so the leaf gives up one step: 30 + 30 over 5 spines."""
    fabric = synthesized(
        "metadata: {name: ib}\nsite: {rack: {power_kw: 45}}\n"
        "nodes:\n  dgx: {model: dgx-h100, count: 140, nodes_per_rack: 4}\n"
        "networks:\n  inband: {role: inband, dual_homed: true, oversubscription: '1:1'}\n",
        tmp_path,
    )
    inband = fabric.networks["inband"]
    assert [(c.down_ports, c.up_ports) for c in inband.leaf_classes] == [(30, 30)]
    assert len(inband.switches["leaf"]) == 10
    assert len(inband.switches["spine"]) == 5


def test_a_spine_tier_has_no_single_spine(tmp_path: Path) -> None:
    """Leaves with two or more uplinks reach at least two spines, even when one has the ports."""
    fabric = synthesized(
        "metadata: {name: ib}\nsite: {rack: {power_kw: 45}}\n"
        "nodes:\n  dgx: {model: dgx-h100, count: 100, nodes_per_rack: 4}\n"
        "networks:\n  inband: {role: inband, dual_homed: true, oversubscription: '12:1'}\n",
        tmp_path,
    )
    inband = fabric.networks["inband"]
    assert sum(c.up_ports for c in inband.leaf_classes) * len(inband.switches["leaf"]) <= 64
    assert len(inband.switches["spine"]) == 2


def test_spectrum_x_node_cables_by_link_and_by_gpu(tmp_path: Path) -> None:
    """Spectrum-X B300 RA counts 512 node-leaf cables per SU (one per GPU, the 2 x 400G split
    counted once); there are 1,024 400G links, and the BOM orders one fiber per link."""
    fabric, _ = compile_text(
        "metadata: {name: sx}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        "nodes:\n  gpu: {model: hgx-b300, count: 64, nodes_per_rack: 4}\n"
        "networks:\n  compute: {role: compute, fabric: ethernet, planes: 2}\n",
        tmp_path,
    )
    counted = summary(fabric)["networks"]["compute"]["endpoint_cables"]
    assert counted == {"by_link": 1024, "by_host_cage": 512, "ordered": 1024}


def test_spectrum_x_16_su_with_the_published_spine_count(tmp_path: Path) -> None:
    """The RA's 64 spines per plane, written down with 'tiers: 2', are built: 64 do not divide
    a leaf's 32 x 800G uplinks, but divide its 64 x 400G ones."""
    fabric = synthesized(
        "metadata: {name: sx}\n"
        "site: {racks_per_row: 40, rack: {power_kw: 60}}\n"
        "nodes:\n  gpu: {model: hgx-b300, count: 1024, nodes_per_rack: 4}\n"
        "networks:\n"
        "  compute: {role: compute, fabric: ethernet, planes: 2, tiers: 2, spines: 64}\n",
        tmp_path,
    )
    compute = fabric.networks["compute"]
    assert (len(compute.switches["leaf"]), len(compute.switches["spine"])) == (256, 128)
    assert [(c.up_ports, c.up_speed) for c in compute.leaf_classes] == [(64, 400)]


# -- GB300 NVL72 (issue 17) ------------------------------------------------------------------------
# One scalable unit = 8 NVL72 racks = 144 compute trays x 4 Blackwell Ultra GPUs, one ConnectX-8
# per GPU. On XDR each ConnectX-8 is one 800G port; on Spectrum-X it is split 2x 400G, one leg per
# plane (NVIDIA Spectrum-X reference architecture: independent planes).


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
    compute_pci = [row[2] for row in nic_rows(host) if row[11] == "yes"]
    assert len(compute_pci) == 8 == len(set(compute_pci))
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
    assert by_group == {"gb200": 576, "gb300": 576, "ufm": 2}  # the UFMs: SM hosts
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
