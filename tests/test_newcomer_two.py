"""What a new user meets, round two: warnings for what the analysis shows but the build did not
say (a leaf that strands nodes, another vendor's optics on a site switch)."""

from __future__ import annotations

from pathlib import Path

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
        "arista-7060x6 (vendor Arista) gets NVIDIA transceivers (748x MMA4Z00-NS): the catalog "
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
    for fabric_kind, hint_word in (("infiniband", "no option yet"), ("ethernet", "dual_homed")):
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
        STORAGE.format(fabric="ethernet", extra=", dual_homed: true"), tmp_path
    )
    assert not [d for d in fabric.warnings if "every port on one leaf" in d.message]
