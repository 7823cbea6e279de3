"""Every example validates without a warning unless the warning is the example's point, and a
missing IMEX nodes file is a warning, not a silent line in a README."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import EXAMPLE_NAMES, EXAMPLES, compile_text, compiled

# example -> the warnings it still gives, with the reason (messages start with these)
KNOWN = {
    # the built-in catalog holds NVIDIA's LinkX optics only: the Arista leaves get those, and
    # the check says so (a site catalog with Arista's optics is the answer)
    "roce-lab-eos": ("dcs-7060x6-64pe (vendor Arista) gets NVIDIA transceivers",),
    # the site catalog's node type has no host topology (the example shows a site catalog)
    # and its generic 1GbE management switch names no operating system, so it gets no configs
    "megascale-roce": (
        "the catalog has no host topology for 'gpu-8x200'",
        "switch model 'mgmt-48x1g' names no operating system",
    ),
    # the ufm-xdr appliance would need reserved ports the unit's Q3400 leaves do not have (8 racks
    # fill them); no SM host for the storage fabrics (no public source for where RA-11333's storage
    # SM runs); an InfiniBand leaf takes both ports of a storage array (no spec option yet spreads
    # one node's ports over two InfiniBand leaves)
    "gb300-nvl72-xdr": (
        "InfiniBand subnet compute has no",
        "InfiniBand subnet storage has no",
        "8 node(s) of storage (storage) have every port on one leaf",
    ),
    # the RA's 5 m ACC splitters from the NVL72 racks to their leaves: some runs need the
    # family's longest length (checks/reach.py says so, as a site engineer should hear)
    "gb200-nvl72-su": ("43 mca7j60 cables of network compute are ordered at the family's",),
    "mixed-gb200-gb300": ("86 mca7j60 cables of network compute are ordered at the family's",),
    # 4 HGX B300 per rack (58 kW) in air: the catalog gives hgx-b300 no liquid share, so the
    # racks exceed what a room cools by air (rear-door or liquid cooling is the site's answer)
    "spectrum-x-2plane": (
        "rack B01 gives 58.0",
        "rack B02 gives 58.0",
        "rack B04 gives 58.0",
        "rack B05 gives 58.0",
    ),
    "superpod-h100-4su": (
        "InfiniBand subnet storage has no",
        "8 node(s) of storage (storage) have every port on one leaf",
    ),
}


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_examples_validate_without_warnings(example: str) -> None:
    fabric, _ = compiled(example)
    allowed = KNOWN.get(example, ())
    unexpected = [w.render() for w in fabric.warnings if not w.message.startswith(allowed)]
    assert not unexpected, unexpected


def test_a_tray_without_in_band_address_warns_that_imex_has_no_nodes_file(
    tmp_path: Path,
) -> None:
    text = (EXAMPLES / "gb200-nvl72-su.yaml").read_text()
    old = "  oob:\n    role: oob\n    uplink_to: inband\n"
    assert old in text
    start = text.index("  inband:\n")
    text = text[:start] + text[text.index(old) :].replace(old, "  oob:\n    role: oob\n")
    fabric, artifacts = compile_text(text, tmp_path)
    warned = [w.render() for w in fabric.warnings if "IMEX nodes file" in w.message]
    assert len(warned) == 1 and "nodes.nvl72" in warned[0] and "role: inband" in warned[0]
    assert not [p for p, _ in artifacts if p.endswith("nodes_config.cfg")]


def test_mixed_generations_get_an_imex_file_per_domain() -> None:
    _, artifacts = compiled("mixed-gb200-gb300")
    files = [p for p, _ in artifacts if p.endswith("/nodes_config.cfg")]
    assert len(files) == 16
