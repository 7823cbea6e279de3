"""Any vendor's parts: the QSFP-DD/OSFP-XD cage forms, active optical cables chosen by reach, link
speeds per tier, and the MegaScale-style example built from a site catalog."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricc.build import design
from fabricc.catalog.loader import load_catalog
from fabricc.catalog.media import cabled_speeds
from fabricc.catalog.models import FORM_ACCEPTS, CableModel
from fabricc.errors import DesignError, SpecError
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE
from fabricc.spec.loader import load_spec
from tests.support import EXAMPLES

EXAMPLE = EXAMPLES / "megascale-roce.yaml"
SITE_CATALOG = EXAMPLES / "megascale" / "site-catalog.yaml"


def _design(tmp_path: Path, spec: str, catalog: str | None = None) -> Any:
    """The design of a spec text beside a copy of the MegaScale site catalog (edited)."""
    (tmp_path / "megascale").mkdir(exist_ok=True)
    target = tmp_path / "megascale" / "site-catalog.yaml"
    if catalog is None:
        shutil.copy(SITE_CATALOG, target)
    else:
        target.write_text(catalog)
    path = tmp_path / "spec.yaml"
    path.write_text(spec)
    return design(load_spec(path, "spec.yaml"))


@pytest.mark.parametrize(
    ("cage", "plug", "fits"),
    [
        ("qsfp-dd", "qsfp-dd", True),
        ("qsfp-dd", "qsfp56", True),
        ("qsfp-dd", "qsfp28", True),
        ("qsfp-dd", "qsfp112", False),  # 100G lanes: a QSFP-DD cage runs 50G lanes
        ("qsfp-dd800", "qsfp-dd", True),
        ("qsfp-dd800", "qsfp112", True),
        ("qsfp-dd1600", "qsfp-dd800", True),
        ("qsfp-dd800", "qsfp-dd1600", False),
        ("qsfp112", "qsfp-dd", False),
        ("osfp-xd", "osfp-xd", True),
        ("osfp-xd", "osfp", False),
        ("osfp", "osfp-xd", False),
        ("sfp56", "sfp28", True),
        ("sfp28", "sfp56", False),
    ],
)
def test_cage_forms_accept_their_older_plugs(cage: str, plug: str, fits: bool) -> None:
    assert (plug in FORM_ACCEPTS[cage]) is fits


def test_every_form_takes_its_own_plug() -> None:
    assert all(form in accepts for form, accepts in FORM_ACCEPTS.items())


def test_aoc_is_fiber_with_its_plugs_on() -> None:
    aoc = CableModel.model_validate(
        {
            "description": "200G QSFP56 AOC",
            "source": "test",
            "media": "mmf",
            "kind": "aoc",
            "a_form": "qsfp56",
            "b_form": "qsfp56",
            "speed": 200,
            "lengths": {3: "A-3", 30: "A-30"},
        }
    )
    assert aoc.direct and aoc.reach_m == 30
    with pytest.raises(ValueError, match="a aoc cable has media mmf or smf, not copper"):
        CableModel.model_validate({**aoc.model_dump(), "media": "copper"})
    with pytest.raises(ValueError, match="a dac cable has media copper"):
        CableModel.model_validate({**aoc.model_dump(), "kind": "dac"})


def test_site_catalog_error_names_the_kinds(tmp_path: Path) -> None:
    text = SITE_CATALOG.read_text().replace("kind: aoc", "kind: optical")
    with pytest.raises(SpecError) as caught:
        _design(tmp_path, EXAMPLE.read_text(), text)
    assert "'dac', 'acc', 'aoc', 'fiber' or 'patch'" in str(caught.value.diagnostics[0])


def test_aoc_splitters_carry_the_host_links_within_reach(tmp_path: Path) -> None:
    fabric = _design(tmp_path, EXAMPLE.read_text())
    hosts = Counter(
        (link.kind, link.speed, link.cable.kind, link.a_module or link.b_module)
        for link in fabric.links
        if link.network == "compute" and link.kind == ENDPOINT_LEAF
    )
    # an AOC has its optics in its plugs: no transceiver at either end, one splitter per cage
    assert hosts == {(ENDPOINT_LEAF, 200, "aoc", None): 128 * 8}
    splitters = {id(link.cable) for link in fabric.links if link.kind == ENDPOINT_LEAF}
    assert len(splitters) == 128 * 8 // 2


def test_runs_beyond_the_aoc_take_optics(tmp_path: Path) -> None:
    """With the AOC sold only at 1 m, every host run is beyond it: modules and fiber instead."""
    catalog = SITE_CATALOG.read_text()
    start = catalog.index("    lengths: {3: SITE-AOC-2X200-3M")
    end = catalog.index("\n", start)
    catalog = catalog[:start] + "    lengths: {1: SITE-AOC-2X200-1M}" + catalog[end:]
    catalog = catalog.replace(
        "transceivers:\n",
        "transceivers:\n"
        "  q56-200g-sr4:\n"
        "    description: 200G QSFP56 SR4\n"
        "    source: test\n"
        "    form: qsfp56\n"
        "    ports: 1\n"
        "    speed: 200\n"
        "    lane_speed: 50\n"
        "    media: mmf\n"
        "    reach_m: 100\n"
        "    connector: mpo-12-apc\n"
        "    power_w: 5\n"
        "  qdd-2x200g-sr4:\n"
        "    description: 400G QSFP-DD 2x 200G SR4\n"
        "    source: test\n"
        "    form: qsfp-dd\n"
        "    ports: 2\n"
        "    speed: 200\n"
        "    lane_speed: 50\n"
        "    media: mmf\n"
        "    reach_m: 100\n"
        "    connector: mpo-12-apc\n"
        "    power_w: 10\n",
    )
    fabric = _design(tmp_path, EXAMPLE.read_text(), catalog)
    hosts = Counter(
        (link.cable.kind, link.a_module, link.b_module)
        for link in fabric.links
        if link.kind == ENDPOINT_LEAF
    )
    assert hosts == {("fiber", "q56-200g-sr4", "qdd-2x200g-sr4"): 128 * 8}


def test_medium_narrows_the_aoc_choice(tmp_path: Path) -> None:
    """An AOC is fiber: `medium: copper` rules it out."""
    spec = EXAMPLE.read_text().replace("    tiers: 3\n", "    tiers: 3\n    medium: copper\n")
    with pytest.raises(DesignError) as caught:
        _design(tmp_path, spec)
    assert "cannot be copper" in str(caught.value.diagnostics[0])


def test_megascale_1024_servers(tmp_path: Path) -> None:
    """MegaScale (NSDI 2024) at 1,024 servers: 64 x 400G switches in three layers at 1:1, host
    links at the NICs' 200G on AOC splitters, every switch link at 400G, each group of 64
    servers on exactly 8 leaves (one per rail)."""
    spec = EXAMPLE.read_text().replace("count: 128", "count: 1024")
    fabric = _design(tmp_path, spec)
    compute = fabric.networks["compute"]
    assert compute.tiers == 3
    sizes = {tier: len(names) for tier, names in compute.switches.items()}
    assert sizes == {"leaf": 128, "spine": 128, "core": 64}
    links = Counter((link.kind, link.speed) for link in fabric.links if link.network == "compute")
    assert links == {(ENDPOINT_LEAF, 200): 8192, (LEAF_SPINE, 400): 4096, (SPINE_CORE, 400): 4096}
    leaves_of: dict[int, set[str]] = {}
    for link in fabric.links:
        if link.kind == ENDPOINT_LEAF:
            node = fabric.devices[link.a]
            number = int(node.name.removeprefix("gpu")) - 1
            leaves_of.setdefault(number // 64, set()).add(link.b)
    assert len(leaves_of) == 16
    assert all(len(leaves) == 8 for leaves in leaves_of.values())
    assert len(set().union(*leaves_of.values())) == 128


TH5 = """
  th5-64x800:
    description: 51.2 Tb/s switch, 64x 800GbE QSFP-DD800
    vendor: OEM
    part_number: TEST-TH5
    source: test
    fabric: ethernet
    asic: Tomahawk-5
    height_u: 2
    power_w: 2500
    port_groups:
      - {count: 64, form: qsfp-dd800, cage_speed: 800, breakouts: [1, 2, 4, 8]}
"""
DD800_OPTICS = """
  qdd800-2x400g-dr4:
    description: 800G QSFP-DD800 2x 400G DR4
    source: test
    form: qsfp-dd800
    ports: 2
    speed: 400
    media: smf
    reach_m: 500
    connector: mpo-12-apc
    power_w: 16
  qdd800-800g-dr8:
    description: 800G QSFP-DD800 DR8
    source: test
    form: qsfp-dd800
    ports: 1
    speed: 800
    connectors: 2
    media: smf
    reach_m: 500
    connector: mpo-12-apc
    power_w: 16
  qdd-400g-dr4-apc:
    description: 400G QSFP-DD DR4 (APC)
    source: test
    form: qsfp-dd
    ports: 1
    speed: 400
    lane_speed: 50
    media: smf
    reach_m: 500
    connector: mpo-12-apc
    power_w: 10
"""


def test_link_speed_per_tier(tmp_path: Path) -> None:
    """Host links at the NICs' 200G, leaf-spine at the 400G that the leaf's cages and the
    800G spine share, spine-core at the spines' and cores' 800G: one speed per pair of tiers,
    not one for the network (which ran the spine-core links at 400G, twice as many)."""
    catalog = SITE_CATALOG.read_text().replace("switches:\n", "switches:" + TH5, 1)
    catalog = catalog.replace("transceivers:\n", "transceivers:" + DD800_OPTICS, 1)
    catalog += "  mpo12-os2:\n    description: OS2 MPO-12\n    source: test\n    media: smf\n"
    catalog += "    kind: fiber\n    a_form: mpo-12-apc\n    b_form: mpo-12-apc\n"
    catalog += "    lengths: {10: T-10, 30: T-30, 100: T-100, 300: T-300}\n"
    spec = EXAMPLE.read_text().replace(
        "switches: {leaf: th4-64x400, spine: th4-64x400, core: th4-64x400}",
        "switches: {leaf: th4-64x400, spine: th5-64x800, core: th5-64x800}",
    )
    fabric = _design(tmp_path, spec, catalog)
    links = Counter((link.kind, link.speed) for link in fabric.links if link.network == "compute")
    # 128 servers x 8 NICs at 200G: 16 leaves of 32 cages down (2 x 200G each), and at 1:1 as
    # many 400G cages up
    up = 16 * 32
    assert links == {
        (ENDPOINT_LEAF, 200): 128 * 8,
        (LEAF_SPINE, 400): up,
        (SPINE_CORE, 800): up // 2,
    }
    resolved = fabric.loaded.networks["compute"]
    assert (resolved.fabric_speed, resolved.core_speed) == (400, 800)
    # a spine's uplink cages carry what its downlink cages do: 2 x 400G down per 800G up
    spine = fabric.networks["compute"].switches["spine"][0]
    down = {
        link.b_port.split("/")[0]
        for link in fabric.links
        if link.kind == LEAF_SPINE and link.b == spine
    }
    ups = {link.a_port for link in fabric.links if link.kind == SPINE_CORE and link.a == spine}
    assert len(ups) == len(down) and all("/" not in port for port in ups)


def test_tiers_meet_at_the_fastest_speed_the_media_carries() -> None:
    """A QM9700 runs 400G or 200G per port (32 cages as 2x or 4x); twin-port 2 x 400G modules
    and DACs carry 400G, nothing in the catalog carries a cage as 4 x 200G."""
    catalog = load_catalog().catalog
    qm9700, sn5600 = catalog.switches["qm9700"], catalog.switches["sn5600"]
    assert cabled_speeds(catalog, qm9700, qm9700, "infiniband") == {400}
    assert {800, 400} <= cabled_speeds(catalog, sn5600, sn5600, "ethernet")
    # without the twin-port modules and DACs, no speed is carried at all
    bare = catalog.model_copy(
        update={
            "transceivers": {k: v for k, v in catalog.transceivers.items() if v.form != "osfp"},
            "cables": {k: v for k, v in catalog.cables.items() if v.a_form != "osfp"},
        }
    )
    assert cabled_speeds(bare, qm9700, qm9700, "infiniband") == set()
