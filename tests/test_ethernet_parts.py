"""Any vendor's parts: the QSFP-DD/OSFP-XD cage forms, active optical cables chosen by reach, link
speeds per tier, and the MegaScale-style example built from a site catalog."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricc.build import design
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


def _by_kind(fabric: Any) -> Counter[tuple[str, int, str, str | None]]:
    return Counter(
        (link.kind, link.speed, link.cable.kind, link.a_module or link.b_module)
        for link in fabric.links
    )


def test_aoc_splitters_carry_the_host_links_within_reach(tmp_path: Path) -> None:
    fabric = _design(tmp_path, EXAMPLE.read_text())
    kinds = _by_kind(fabric)
    hosts = {k: v for k, v in kinds.items() if k[0] == ENDPOINT_LEAF}
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
    links = Counter((link.kind, link.speed) for link in fabric.links)
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
