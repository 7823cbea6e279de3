"""What a new user meets, round two: warnings for what the analysis shows but the build did not
say (a leaf that strands nodes, another vendor's optics on a site switch)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from fabricc.analysis.design import analyze
from fabricc.cli import cli
from fabricc.errors import Severity
from fabricc.ir import Fabric
from tests.support import compile_text

ARISTA = """\
switches:
  arista-7060x6:
    description: Arista 7060X6-64PE, 64x 800GbE OSFP
    vendor: Arista
    part_number: DCS-7060X6-64PE
    source: Arista 7060X6 series datasheet (64x 800GbE OSFP)
    fabric: ethernet
    asic: Tomahawk-5
    height_u: 2
    power_w: 2300
    port_groups:
    - {count: 64, form: osfp, cage_speed: 800, breakouts: [1, 2, 4, 8]}
    mgmt_ports:
    - {name: Management1, cage: Management1, form: rj45, speeds: [1], role: oob, protocols: [ethernet]}
    physical: {psus: 2, inlet: c20, weight_kg: 22.0, source: assumed}
"""
ARISTA_OPTIC = """\
transceivers:
  OSFP-800G-2SR4:
    description: 800G twin-port OSFP, 2x 400G SR4
    vendor: Arista
    source: Arista transceiver datasheet
    form: osfp
    ports: 2
    speed: 400
    media: mmf
    reach_m: 50
    connector: mpo-12-apc
    power_w: 15
"""
ARISTA_SPEC = """\
metadata: {name: arista}
catalog: [site.yaml]
nodes:
  hgx: {model: hgx-h100, count: 64}
networks:
  compute: {role: compute, fabric: ethernet, switches: {leaf: arista-7060x6}}
"""


def _warnings(fabric: Fabric) -> list[str]:
    found = [*fabric.loaded.warnings, *fabric.warnings]
    return [d.message for d in found if d.severity is Severity.WARNING]


def test_a_site_switch_of_another_vendor_says_which_optics_it_got(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(ARISTA)
    fabric, _ = compile_text(ARISTA_SPEC, tmp_path)
    said = [w for w in _warnings(fabric) if w.startswith("arista-7060x6 (vendor Arista)")]
    assert said == [
        "arista-7060x6 (vendor Arista) gets NVIDIA transceivers (766x MMA4Z00-NS): the catalog "
        "has no Arista module for those cages, and these are the ones that fit their form, "
        "speed and reach"
    ]


def test_a_site_switch_prefers_its_own_vendors_optics(tmp_path: Path) -> None:
    (tmp_path / "site.yaml").write_text(ARISTA + ARISTA_OPTIC)
    fabric, _ = compile_text(ARISTA_SPEC, tmp_path)
    on_switches = {m.part for m in fabric.modules if fabric.devices[m.device].kind == "switch"}
    assert on_switches == {"OSFP-800G-2SR4"}
    assert not [w for w in _warnings(fabric) if "(vendor Arista)" in w]


STORAGE = """\
metadata: {{name: storage}}
nodes:
  dgx: {{model: dgx-h100, count: 32}}
  stor: {{model: storage-node, count: 160}}
networks:
  compute: {{role: compute, fabric: infiniband, endpoints: {{dgx: {{}}}}}}
  storage: {{role: storage, fabric: {fabric}{extra}, endpoints: {{stor: {{}}}}}}
"""


def test_nodes_with_every_port_on_one_leaf_are_a_warning(tmp_path: Path) -> None:
    for fabric_kind, hint_word in (
        ("infiniband", "no option yet"),
        ("ethernet", "spread_ports: true"),
    ):
        fabric, _ = compile_text(STORAGE.format(fabric=fabric_kind, extra=""), tmp_path)
        found = [
            d
            for d in fabric.warnings
            if d.path == "networks.storage" and "every port on one leaf" in d.message
        ]
        assert len(found) == 1, fabric_kind
        assert found[0].message.startswith("160 node(s) of storage (stor) have every port")
        assert found[0].hint is not None and hint_word in found[0].hint
    fabric, _ = compile_text(
        STORAGE.format(fabric="ethernet", extra=", spread_ports: true"), tmp_path
    )
    assert not [d for d in fabric.warnings if "every port on one leaf" in d.message]


NDR_UFM = """\
metadata: {name: ndr}
nodes:
  dgx: {model: dgx-h100, count: 128}
  ufm: {model: ufm-3.1, count: 2}
networks:
  compute: {role: compute, fabric: infiniband, subnet_manager: {sm_nodes: [ufm]}}
"""
ROCE = """\
metadata: {name: roce}
nodes:
  hgx: {model: hgx-h100, count: 128}
networks:
  compute: {role: compute, fabric: ethernet}
"""


def test_compare_counts_the_hardware_and_fails_a_compute_leaf(tmp_path: Path) -> None:
    """compare shows switch, transceiver and cable counts and the cost per network, and its
    leaf failure is a leaf of GPU nodes on both sides, not a 2-port appliance leaf."""
    (tmp_path / "a.yaml").write_text(NDR_UFM)
    (tmp_path / "b.yaml").write_text(ROCE)
    (tmp_path / "prices.yaml").write_text("920-9B210-00FN-0M0: 30000\nMMA4Z00-NS: 1000\n")
    result = CliRunner().invoke(
        cli,
        [
            "compare",
            str(tmp_path / "a.yaml"),
            str(tmp_path / "b.yaml"),
            "--prices",
            str(tmp_path / "prices.yaml"),
            "--json",
            "-",
        ],
    )
    assert result.exit_code == 0, result.output
    rows = {row["figure"]: (row["a"], row["b"]) for row in json.loads(result.stdout)["figures"]}
    fabric, _ = compile_text(NDR_UFM, tmp_path, "a.yaml")
    switches = sum(1 for d in fabric.devices.values() if d.kind == "switch")
    assert rows["compute: switches"][0] == switches
    assert rows["compute: transceivers"][0] == sum(1 for m in fabric.modules)
    assert rows["compute: cables"][0] == len(
        {id(link.cable) for link in fabric.links if link.cable}
    )
    assert rows["compute: cost"][0] == 30000 * switches + 1000 * sum(
        1 for m in fabric.modules if m.part == "MMA4Z00-NS"
    )
    # a leaf of 32 DGX (8 ports per DGX, one to each rail leaf): no node lost, 32 ports cut
    assert rows["compute: leaf failure, nodes lost"] == (0, 0)
    data = analyze(fabric)
    failed = data["networks"]["compute"]["single_failure"]["leaf"]
    assert failed["endpoints_lost"] == 32


XDR_SM = """\
metadata: {{name: xdr-sm}}
site: {{rack: {{power_kw: 140}}}}
nodes:
  nvl72: {{model: gb300-nvl72, count: 4}}
  ufm: {{model: {model}, count: 2}}
networks:
  compute:
    role: compute
    fabric: infiniband
    switches: {{leaf: q3400}}
    subnet_manager: {{sm_nodes: [ufm]}}
"""


def test_an_xdr_fabric_has_a_subnet_manager_host(tmp_path: Path) -> None:
    """The XDR UFM appliance (ConnectX-8) is cabled into a Quantum-X800 fabric at 800G and
    runs its subnet manager; the NDR one is refused with the host named, not the leaf."""
    fabric, _ = compile_text(XDR_SM.format(model="ufm-xdr"), tmp_path)
    links = [link for link in fabric.links if link.a.startswith("ufm")]
    assert len(links) == 2 and {link.speed for link in links} == {800}
    assert not [w for w in _warnings(fabric) if "no subnet-manager host" in w]
    source = fabric.loaded.catalog.catalog.nodes["ufm-xdr"].source
    assert "UFM XDR Enterprise Appliance" in source and "docs.nvidia.com" in source


def test_sm_appliances_take_reserved_leaf_ports_by_default(tmp_path: Path) -> None:
    """RA-11333: the UFM appliances that run the SM go on leaf ports the first unit reserves.
    At 127 DGX (and 100) that is the default, with nothing written: 32 leaves and 16 spines.
    At 128 DGX every leaf port is taken (32 leaves x 64 ports, 16 spines x 64 ports: no port
    free), so the appliances get a leaf of their own, which doubles the spines: the build says
    what it costs and at which size the reserved ports come back."""
    for count, leaves, spines in ((127, 32, 16), (100, 32, 16)):
        fabric, _ = compile_text(NDR_UFM.replace("count: 128", f"count: {count}"), tmp_path)
        switches = fabric.networks["compute"].switches
        assert (len(switches["leaf"]), len(switches["spine"])) == (leaves, spines), count
        ufm = [link for link in fabric.links if link.a.startswith("ufm")]
        assert len(ufm) == 2 and len({link.b for link in ufm}) == 2  # master, standby apart
        assert {fabric.devices[link.b].su for link in ufm} == {0}
        assert not [d for d in fabric.warnings if "cost" in d.message]
    fabric, _ = compile_text(NDR_UFM, tmp_path)
    switches = fabric.networks["compute"].switches
    assert (len(switches["leaf"]), len(switches["spine"])) == (33, 32)
    (cost,) = [d for d in fabric.warnings if "cost" in d.message]
    assert cost.message == (
        "the 2 compute port(s) of 'ufm' cost 1 leaf switch(es) of their own and 16 more "
        "spine(s) per plane (16 -> 32, to give every leaf the same links to every spine)"
    )
    assert cost.hint is not None and "up to 127 dgx nodes they keep 4 unit(s)" in cost.hint
