"""Which cable a link takes: a cable's lower rates (CableModel.also_runs, only where its entry
lists them) and the cable a node port's catalog entry names (PortSpec.cable, taken only where
it fits the link's cages, speed and run)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricc.catalog.loader import load_catalog
from fabricc.catalog.media import cable_families, plug_fits
from fabricc.catalog.models import CableModel
from fabricc.errors import SpecError
from fabricc.ir import ENDPOINT_LEAF
from tests.support import compile_text

# 16 DGX H100 dual-homed to an SN4600C (64x 100GbE QSFP28) MLAG pair: every DGX in-band run
# is a few metres, longer than the passive copper's 3 m and within every AOC's lengths.
SPEC = (
    "metadata: {name: inband}\n"
    "site: {rack: {power_kw: 45}}\n"
    "nodes:\n  dgx: {model: dgx-h100, count: 16, nodes_per_rack: 4}\n"
    "networks:\n  inband: {role: inband, dual_homed: true}\n"
)


def _aoc_200g(**changes: Any) -> CableModel:
    """The built-in 200G QSFP56 AOC, with some fields changed."""
    cable = load_catalog().catalog.cables["mfs1s00-h"]
    return cable.model_copy(update=changes)


def _joins(cable: CableModel, cage: str, speed: int, lane: int) -> bool:
    """The cable joins a switch cage of `cage` form at `speed` and `lane` to a DGX QSFP112 port."""
    return bool(cable_families([("c", cable)], cage, "qsfp112", 1, 1, speed, lane))


@pytest.mark.parametrize(
    ("cage", "plug", "native", "fits"),
    [
        ("qsfp112", "qsfp56", True, True),  # a newer cage takes the older plug
        ("qsfp28", "qsfp56", True, False),  # the plug's own rate needs 50G lanes
        ("qsfp28", "qsfp56", False, True),  # at a lower rate the cable lists: same outline
        ("sfp28", "sfp56", False, True),
        ("qsfp28", "qsfp-dd", False, False),  # a double-density plug never fits a QSFP cage
        ("qsfp28", "osfp", False, False),
        ("osfp", "osfp-rhs", False, False),
    ],
)
def test_a_plug_fits_an_older_cage_of_its_outline_only_at_a_lower_rate(
    cage: str, plug: str, native: bool, fits: bool
) -> None:
    assert plug_fits(cage, plug, native) is fits


def test_a_cable_runs_a_lower_rate_only_where_its_entry_lists_it() -> None:
    listed = _aoc_200g()
    assert [(r.speed, r.lane_speed) for r in listed.also_runs] == [(100, 25)]
    assert _joins(listed, "qsfp28", 100, 25)  # 100GbE in the SN4600C's QSFP28 cage
    assert _joins(listed, "qsfp56", 200, 50)  # its own rate
    assert not _joins(listed, "qsfp28", 100, 50)  # not a rate it lists
    assert not _joins(listed, "qsfp28", 50, 25)
    assert not _joins(listed, "osfp", 100, 25)  # not its outline
    unlisted = _aoc_200g(also_runs=[])
    assert not _joins(unlisted, "qsfp28", 100, 25)
    assert _joins(unlisted, "qsfp56", 200, 50)


def test_a_lower_rate_must_be_lower() -> None:
    data = _aoc_200g().model_dump()
    for rate, message in (
        ({"speed": 200, "lane_speed": 50}, "lower rate than the cable's speed"),
        ({"speed": 100, "lane_speed": 100}, "faster than the cable's 50G"),
    ):
        with pytest.raises(ValueError, match=message):
            CableModel.model_validate({**data, "also_runs": [{**rate, "source": "test"}]})


def _in_band_cables(tmp_path: Path, site_catalog: str | None = None) -> Counter[str]:
    """Cable families of the DGX in-band links of SPEC, with a site catalog if given."""
    spec = SPEC
    if site_catalog is not None:
        (tmp_path / "site.yaml").write_text(site_catalog)
        spec = spec.replace(
            "metadata: {name: inband}\n", "metadata: {name: inband}\ncatalog: [site.yaml]\n"
        )
    fabric, _ = compile_text(spec, tmp_path)
    return Counter(
        link.cable.family
        for link in fabric.links
        if link.kind == ENDPOINT_LEAF and link.cable is not None
    )


def _site_aoc(lengths: str, also_runs: str) -> str:
    """A site catalog that replaces the 200G QSFP56 AOC entry."""
    return (
        "cables:\n"
        "  mfs1s00-h:\n"
        "    description: 200GbE QSFP56 AOC as sold to this site\n"
        "    source: test\n"
        "    media: mmf\n"
        "    kind: aoc\n"
        "    a_form: qsfp56\n"
        "    b_form: qsfp56\n"
        "    speed: 200\n"
        "    lane_speed: 50\n"
        f"    lengths: {lengths}\n"
        f"    also_runs: {also_runs}\n"
    )


def test_the_port_cable_is_taken_where_it_fits(tmp_path: Path) -> None:
    """The DGX H100 in-band ports name the 200G QSFP56 AOC (RA-11333 Table 8): it runs 100GbE
    in the SN4600C's QSFP28 cages, so every DGX in-band link takes it over the 100G AOC that
    media by reach would pick."""
    assert _in_band_cables(tmp_path) == {"mfs1s00-h": 16 * 2}


def test_the_port_cable_is_ignored_beyond_its_lengths(tmp_path: Path) -> None:
    rates = "[{speed: 100, lane_speed: 25, source: test}]"
    site = _site_aoc("{1: SITE-AOC-1M}", rates)
    assert _in_band_cables(tmp_path, site) == {"mfa1a00-c": 16 * 2}


def test_the_port_cable_is_ignored_where_it_does_not_run_the_cage(tmp_path: Path) -> None:
    """Without the 100GbE rate listed, the QSFP56 AOC does not fit a QSFP28 cage."""
    site = _site_aoc("{3: SITE-AOC-3M, 10: SITE-AOC-10M, 30: SITE-AOC-30M}", "[]")
    assert _in_band_cables(tmp_path, site) == {"mfa1a00-c": 16 * 2}


def _port_cable_error(tmp_path: Path, port_cable: str) -> str:
    (tmp_path / "site.yaml").write_text(
        "nodes:\n"
        "  oem-server:\n"
        "    kind: server\n"
        "    description: OEM server\n"
        "    part_number: OEM-1\n"
        "    source: 'vendor datasheet'\n"
        "    height_u: 1\n"
        "    power_w: 500\n"
        "    ports:\n"
        "      - {name: ETH1, cage: ETH1, form: qsfp28, speeds: [100], role: inband,\n"
        f"         cable: {{family: {port_cable}, source: test}}}}\n"
    )
    with pytest.raises(SpecError) as info:
        compile_text(
            "metadata: {name: x}\ncatalog: [site.yaml]\nnodes:\n  a: {model: oem-server, count: 1}\n",
            tmp_path,
        )
    return str(info.value)


@pytest.mark.parametrize(
    ("family", "message"),
    [
        ("mfs1s00", "unknown cable 'mfs1s00'"),
        ("mfp7e10", "cable 'mfp7e10' needs transceivers"),
        ("mcp4y10", "do not fit the port's qsfp28 cage"),
    ],
)
def test_a_port_cable_must_exist_and_fit_the_port(
    tmp_path: Path, family: str, message: str
) -> None:
    text = _port_cable_error(tmp_path, family)
    assert "site.yaml:11:" in text and "nodes.oem-server.ports[0].cable.family" in text
    assert message in text
