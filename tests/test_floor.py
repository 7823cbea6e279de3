"""The floor (synth/racks.py, synth/cabling.py, docs/floor.md): a leaf stands beside the nodes
it serves, so endpoint cables stay short at every published scale; the media follow the reach."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fabricc.build import design
from fabricc.catalog.loader import load_catalog
from fabricc.catalog.media import OPTICAL, allowed, cable_families, cheapest, fitting_modules
from fabricc.errors import DesignError
from fabricc.ir import ENDPOINT_LEAF, SITE
from fabricc.spec.loader import load_spec
from tests.support import EXAMPLES, compiled


def synthesized(text: str, tmp_path: Path) -> Any:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return design(load_spec(path, "spec.yaml"))


CENTRAL = "    leaf_placement: central"


def superpod(nodes: int, arrays: int, tmp_path: Path, placement: str = "with_nodes") -> Any:
    """RA-11333's flagship example scaled by its node count (and storage arrays), its in-band
    leaves placed as `placement` says (the example keeps them central, as the RA does)."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    assert CENTRAL in text
    text = text.replace(CENTRAL, f"    leaf_placement: {placement}")
    text = text.replace("count: 127", f"count: {nodes}").replace("count: 8\n", f"count: {arrays}\n")
    return synthesized(text, tmp_path)


def test_16_su_every_endpoint_cable_within_15_m(tmp_path: Path) -> None:
    """16 SU with storage, in-band and out-of-band: every leaf of a unit (compute, storage,
    in-band, out-of-band) stands in that unit's network rack or rows, so no node cable of any
    network runs more than 15 m; the storage fabric keeps 2 tiers."""
    fabric = superpod(511, 32, tmp_path)
    longest: dict[str, float] = {}
    for link in fabric.links:
        # node cables: not an access switch's own management port on its neighbour's (the OOB
        # management tree, synth/oob.py: switch to switch, up to TREE_SPAN_M along the floor)
        if link.kind in (ENDPOINT_LEAF, "mgmt") and fabric.devices[link.a].network != "oob":
            longest[link.network] = max(longest.get(link.network, 0.0), link.distance_m)
    assert set(longest) == {"compute", "storage", "inband", "oob"}
    assert max(longest.values()) <= 15, longest
    assert fabric.networks["storage"].tiers == 2


@pytest.mark.parametrize("nodes", [127, 511])
def test_a_top_of_rack_leaf_stands_at_the_middle_of_its_nodes(nodes: int, tmp_path: Path) -> None:
    """In-band leaves are packed by nodes, across units: each stands in the network rack of the
    unit of its median endpoint (central racks, where appliances stand, first), its MLAG
    partner beside it."""
    fabric = superpod(nodes, 8, tmp_path)
    devices = fabric.devices
    units: dict[str, list[int]] = {}
    for link in fabric.links:
        if link.network == "inband" and link.kind == ENDPOINT_LEAF:
            su = devices[link.a].su
            units.setdefault(link.b, []).append(-1 if su is None else su)
    placed_in_units = 0
    for leaf, served in units.items():
        served.sort()
        middle = served[(len(served) + 1) // 2 - 1]
        rack = fabric.rack_by_name[devices[leaf].rack]
        if middle == -1:
            assert rack.role == "central", leaf
        else:
            assert (rack.role, rack.su) == ("network", middle), leaf
            placed_in_units += 1
    assert placed_in_units >= len(units) // 2
    pairs = fabric.networks["inband"].leaf_classes[0].leaves
    for a, b in zip(pairs[::2], pairs[1::2], strict=True):
        assert devices[a].rack == devices[b].rack


def test_leaf_placement_central_keeps_top_of_rack_leaves_in_the_central_racks(
    tmp_path: Path,
) -> None:
    """`leaf_placement: central` (RA-11333: in-band leaves in the management racks) keeps every
    in-band leaf in a central rack; with_nodes moves some into the units' network racks."""
    roles: dict[str, Counter[str]] = {}
    for placement in ("central", "with_nodes"):
        (tmp_path / placement).mkdir()
        fabric = superpod(127, 8, tmp_path / placement, placement)
        leaves = fabric.networks["inband"].switches["leaf"]
        roles[placement] = Counter(
            fabric.rack_by_name[fabric.devices[leaf].rack].role for leaf in leaves
        )
    assert set(roles["central"]) == {"central"}
    assert roles["with_nodes"]["network"] > 0


def test_storage_leaves_of_a_unit_stand_in_its_network_rack(tmp_path: Path) -> None:
    fabric = superpod(127, 8, tmp_path)
    storage = fabric.networks["storage"]
    dgx = next(c for c in storage.leaf_classes if c.name == "dgx")
    racks = Counter(
        (fabric.devices[leaf].su, fabric.rack_by_name[fabric.devices[leaf].rack].su)
        for leaf in dgx.leaves
    )
    assert all(su == rack_su for su, rack_su in racks)
    assert sum(racks.values()) == 8


def test_media_cheapest_that_reaches_within_what_the_medium_allows() -> None:
    reach = {"mmf": 50.0, "smf": 500.0}
    assert cheapest(reach, 30, allowed("auto", OPTICAL)) == "mmf"
    assert cheapest(reach, 70, allowed("auto", OPTICAL)) == "smf"
    assert cheapest(reach, 70, allowed("multimode", OPTICAL)) is None
    assert cheapest(reach, 5, allowed("singlemode", OPTICAL)) == "smf"
    assert cheapest(reach, 600, allowed("auto", OPTICAL)) is None
    assert allowed("copper") == ("copper", "cat6")


def test_media_modules_from_the_catalog_shortest_reach_first() -> None:
    """A QM9700 cage (finned twin-port OSFP, 2 x 400G NDR): multimode SR4 (50 m), single-mode
    DR8 (100 m), 2 x DR4 (500 m), 2 x FR4 (2 km) - the NVIDIA LinkX
    product specifications each catalog entry names."""
    transceivers = load_catalog().catalog.transceivers
    mmf = fitting_modules(transceivers, "osfp", 2, 400, "mmf", "infiniband", None)
    smf = fitting_modules(transceivers, "osfp", 2, 400, "smf", "infiniband", None)
    assert mmf[0] == (50, "MMA4Z00-NS")
    assert [part for _, part in smf][:3] == ["MMS4X00-NS", "MMS4X00-NM", "MMS4X50-NM"]
    assert [r for r, _ in smf] == sorted(r for r, _ in smf)


def test_64_su_with_storage_builds_and_long_runs_go_single_mode(tmp_path: Path) -> None:
    """RA-11333's 64-SU row (2,048 DGX, 3-tier compute) with the storage fabric builds: runs
    within multimode reach are multimode, the longer ones single-mode."""
    fabric = superpod(2047, 128, tmp_path)
    modules = fabric.loaded.catalog.catalog.transceivers
    media: Counter[str] = Counter()
    for link in fabric.links:
        if link.cable is None or link.cable.media not in OPTICAL:
            continue
        media[link.cable.media] += 1
        if link.cable.kind == "aoc":  # optics in the plugs: the cable is its reach
            assert link.distance_m <= link.cable.length_m, link
            continue
        if link.kind == SITE:  # a border link: the far module is the site's
            assert link.a_module and link.b_module is None
            assert link.distance_m <= modules[link.a_module].reach_m
            continue
        assert link.a_module and link.b_module
        reach = min(modules[link.a_module].reach_m, modules[link.b_module].reach_m)
        assert link.distance_m <= reach, link
    assert media["mmf"] and media["smf"]
    assert fabric.networks["compute"].tiers == 3


def test_refusal_names_the_longest_run_and_its_racks(tmp_path: Path) -> None:
    """Nothing reaches (multimode only, rows 50 m apart): the error names the run, its racks
    and the fixes."""
    text = "\n".join(
        [
            "metadata: {name: far}",
            "site: {rack: {power_kw: 45}, racks_per_row: 1, row_pitch_m: 50}",
            "nodes: {gpu: {model: dgx-h100, count: 16, nodes_per_rack: 4}}",
            "networks: {compute: {role: compute, fabric: infiniband, medium: multimode}}",
        ]
    )
    with pytest.raises(DesignError) as raised:
        synthesized(text, tmp_path)
    message = str(raised.value)
    assert re.search(
        r"reaches its longest run, [\d.]+ m from rack [A-Z]+\d+ \(\S+\) to rack", message
    )
    assert "medium: auto" in message and "network_racks" in message


def test_cable_lengths_per_network_and_kind_in_summary_and_report() -> None:
    fabric, artifacts = compiled("superpod-h100-4su")
    files = dict(artifacts)
    networks = json.loads(files["summary.json"])["networks"]
    for name, network in networks.items():
        links = [link for link in fabric.links if link.network == name]
        for kind, stats in network["cable_lengths"].items():
            cables = {
                id(link.cable): link.cable for link in links if link.kind == kind and link.cable
            }
            lengths = sorted(cable.length_m for cable in cables.values())
            assert stats == {
                "cables": len(lengths),
                "min_m": lengths[0],
                "median_m": lengths[(len(lengths) + 1) // 2 - 1],
                "max_m": lengths[-1],
            }
    # the example keeps its in-band leaves central, as RA-11333 does: its Table 8 orders 30 m
    # AOCs (980-9I13N-00C030) for them; beside their nodes they stay within 15 m (16 SU test)
    assert networks["inband"]["cable_lengths"]["endpoint-leaf"]["max_m"] <= 30
    report = str(files["report/index.html"])
    assert '<section id="lengths">' in report and "<h3>inband</h3>" in report


def test_media_cables_without_transceivers_passive_before_active() -> None:
    """Switch cage (twin-port OSFP, 2 x 400G) to two single-port OSFP host cages: the passive
    splitter DAC (MCP7Y00) ranks before the active copper splitter (MCA7J60); a straight
    switch-to-switch run takes the twin-port DAC (MCP4Y10)."""
    families = sorted(load_catalog().catalog.cables.items())
    splitters = {
        key: rank for rank, key, _ in cable_families(families, "osfp", "osfp-rhs", 2, 2, 400, None)
    }
    assert splitters["mcp7y00"] == 0 and splitters["mca7j60"] == 1
    straight = [key for _, key, _ in cable_families(families, "osfp", "osfp", 1, 2, 400, None)]
    assert "mcp4y10" in straight and not set(straight) & set(splitters)
