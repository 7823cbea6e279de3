"""The hardware catalog agrees with the published documents it cites, and users can extend or override it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricc.catalog.loader import load_catalog
from fabricc.errors import SpecError
from fabricc.spec.loader import load_spec
from tests.support import compile_text

# DGX H100 user guide, network modules table: port -> (GPU, RDMA device).
DGX_H100_PORT_MAP = {
    "OSFP1/P1": (7, "mlx5_11"),
    "OSFP1/P2": (4, "mlx5_6"),
    "OSFP2/P1": (6, "mlx5_10"),
    "OSFP2/P2": (5, "mlx5_9"),
    "OSFP3/P1": (2, "mlx5_4"),
    "OSFP3/P2": (1, "mlx5_3"),
    "OSFP4/P1": (3, "mlx5_5"),
    "OSFP4/P2": (0, "mlx5_0"),
}


def test_dgx_h100_port_map_matches_the_user_guide() -> None:
    model = load_catalog().catalog.nodes["dgx-h100"]
    compute = {p.name: (p.gpu, p.rdma_device) for p in model.ports if p.role == "compute"}
    assert compute == DGX_H100_PORT_MAP
    assert model.gpus == 8 and model.height_u == 8 and model.power_w == 10200
    assert model.nvlink is not None and model.nvlink.switch_chips == 4


@pytest.mark.parametrize(
    ("key", "part_number"),
    [
        ("qm9700", "920-9B210-00FN-0M0"),
        ("q3400", "920-9B36F-00RX-8S0"),
        ("sn4600c", "920-9N302-00F7-0C2"),
        ("sn2201", "920-9N110-00F1-0C0"),
    ],
)
def test_switch_part_numbers(key: str, part_number: str) -> None:
    assert load_catalog().catalog.switches[key].part_number == part_number


def test_switch_radix() -> None:
    switches = load_catalog().catalog.switches
    qm9700 = switches["qm9700"].port_groups[0]
    assert qm9700.count * 2 == 64 and qm9700.cage_speed // 2 == 400  # 64x NDR 400G
    q3400 = switches["q3400"].port_groups[0]
    assert q3400.count * 2 == 144 and q3400.cage_speed // 2 == 800  # 144x XDR 800G
    assert switches["sn2201"].port_groups[0].count == 48


@pytest.mark.parametrize(
    ("part", "ports", "media", "reach", "power"),
    [
        ("MMA4Z00-NS", 2, "mmf", 50, 15),
        ("MMA4Z00-NS400", 1, "mmf", 50, None),
        ("MMS4X00-NS", 2, "smf", 100, 17),
        ("MMS4X00-NS400", 1, "smf", 100, None),
        ("MMS4X00-NM", 2, "smf", 500, None),
        ("MMS4X50-NM", 2, "smf", 2000, None),
    ],
)
def test_transceivers(part: str, ports: int, media: str, reach: float, power: float | None) -> None:
    module = load_catalog().catalog.transceivers[part]
    assert (module.ports, module.media, module.reach_m) == (ports, media, reach)
    if power is not None:
        assert module.power_w == power
    assert module.form == ("osfp" if ports == 2 else "osfp-rhs"), (
        "twin-port modules are switch-side"
    )


def test_copper_reach() -> None:
    cables = load_catalog().catalog.cables
    assert sorted(cables["mcp4y10"].lengths) == [0.5, 1, 1.5, 2]
    assert min(cables["mcp7y00"].lengths) == 1 and cables["mcp7y00"].reach_m == 3
    assert cables["mcp7y10"].b_form == "qsfp112", "BlueField-3 takes only QSFP112"
    assert cables["mca7j60"].reach_m == 5


def test_every_entry_names_its_source() -> None:
    catalog = load_catalog().catalog
    for section in (
        catalog.nodes,
        catalog.switches,
        catalog.transceivers,
        catalog.cables,
        catalog.parts,
    ):
        for key, entry in section.items():
            assert entry.source.strip(), key


def test_user_catalog_overrides_and_extends(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(
        "switches:\n"
        "  qm9700:\n"
        "    description: QM9700 as measured on site\n"
        "    part_number: 920-9B210-00FN-0M0\n"
        "    source: 'site measurement'\n"
        "    fabric: infiniband\n"
        "    asic: Quantum-2\n"
        "    height_u: 1\n"
        "    power_w: 900\n"
        "    port_groups: [{count: 32, form: osfp, cage_speed: 800, breakouts: [2]}]\n"
        "nodes:\n"
        "  oem-server:\n"
        "    kind: gpu-node\n"
        "    description: OEM 4-GPU server\n"
        "    part_number: OEM-4GPU\n"
        "    source: 'vendor datasheet'\n"
        "    height_u: 4\n"
        "    power_w: 6000\n"
        "    gpus: 4\n"
        "    gpu: {model: H100, sm: 90, memory_gb: 80, nvlink_links: 18, nvlink_generation: 4}\n"
        "    ports:\n"
        "      - {name: NIC0, cage: NIC0, form: osfp-rhs, speeds: [400], role: compute, gpu: 0}\n"
        "      - {name: NIC1, cage: NIC1, form: osfp-rhs, speeds: [400], role: compute, gpu: 1}\n"
    )
    fabric, _ = compile_text(
        "metadata: {name: site}\ncatalog: [site.yaml]\nnodes:\n  gpu: {model: oem-server, count: 4}\n"
        "networks:\n  compute: {role: compute, fabric: infiniband}\n",
        tmp_path,
    )
    switches = [d for d in fabric.devices.values() if d.kind == "switch"]
    assert switches and all(d.power_w == 900 for d in switches)
    assert fabric.gpus() == 16


def test_user_catalog_errors_point_into_that_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("switches:\n  qm9700:\n    description: x\n    powr_w: 1\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "metadata: {name: x}\ncatalog: [bad.yaml]\nnodes:\n  a: {model: dgx-h100, count: 1}\n"
    )
    with pytest.raises(SpecError) as info:
        load_spec(spec, "spec.yaml")
    text = str(info.value)
    assert "bad.yaml:4:5: error: switches.qm9700.powr_w: unknown key 'powr_w'" in text
    assert "did you mean 'power_w'?" in text


def test_a_split_port_names_one_device_per_leg(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "nodes:\n"
        "  oem-b300:\n"
        "    kind: gpu-node\n"
        "    description: OEM server\n"
        "    part_number: OEM-B300\n"
        "    source: 'vendor datasheet'\n"
        "    height_u: 4\n"
        "    power_w: 6000\n"
        "    gpus: 1\n"
        "    gpu: {model: B300, sm: 103, memory_gb: 288, nvlink_links: 18, nvlink_generation: 5}\n"
        "    ports:\n"
        "      - {name: NIC0, cage: NIC0, form: osfp-rhs, speeds: [800, 400], breakouts: [1, 2],\n"
        "         role: compute, gpu: 0, rdma_device: mlx5_0, leg_devices: [{rdma_device: mlx5_0}]}\n"
    )
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "metadata: {name: x}\ncatalog: [bad.yaml]\nnodes:\n  a: {model: oem-b300, count: 1}\n"
    )
    with pytest.raises(SpecError) as info:
        load_spec(spec, "spec.yaml")
    assert "one entry in 'leg_devices' per leg" in str(info.value)


def test_connectx8_legs_are_distinct_devices() -> None:
    catalog = load_catalog().catalog
    for key in ("gb300-compute-tray", "dgx-b300"):
        node = catalog.nodes[key]
        rails = [p for p in node.ports if p.role == "compute"]
        assert len(rails) == node.gpus and all(p.speeds[0] == 800 for p in rails)
        legs = [leg for p in rails for leg in p.leg_devices]
        assert len(legs) == 2 * node.gpus
        assert len({leg.rdma_device for leg in legs}) == len(legs)
        assert len({leg.netdev for leg in legs}) == len(legs)
        # as one port, a ConnectX-8 is its first leg's device
        assert all(p.rdma_device == p.leg_devices[0].rdma_device for p in rails)
