"""Every fiber joins transceivers of its own medium, straight or split as the link needs.

LinkX product specifications (MMA1Z00-NS400, MMA4Z00-NS400-T, MMS4X00-NS400): MFP7E10 is a
multimode straight fiber, MFP7E20 its 1:2 splitter, MFP7E30 single-mode straight, MFP7E40 its
1:2 splitter. A link that carries half a connector's lanes (2x 200G from one 400G port) runs
over a splitter; any other over a straight fiber.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from fabricc.catalog.loader import load_catalog
from fabricc.ir import SITE
from fabricc.synth.cabling import _Cabler
from tests.support import EXAMPLE_NAMES, compile_text, compiled

EXAMPLES = [name for name in EXAMPLE_NAMES if not name.startswith("megascale")]


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_fiber_matches_the_transceivers_it_joins(example: str) -> None:
    fabric, _ = compiled(example)
    catalog = fabric.loaded.catalog.catalog
    links_of: dict[int, int] = {}
    for link in fabric.links:
        cable = link.cable
        if cable is None or cable.kind != "fiber":
            continue
        if link.kind == SITE:  # the far module is the site's: the fiber fits the near one
            assert link.a_module is not None and link.b_module is None
            near = catalog.transceivers[link.a_module]
            assert catalog.cables[cable.family].a_form == near.connector
            assert cable.media == near.media
            continue
        assert link.a_module is not None and link.b_module is not None
        family = catalog.cables[cable.family]
        a = catalog.transceivers[link.a_module]
        b = catalog.transceivers[link.b_module]
        assert family.media == cable.media == a.media == b.media, (link.a, link.b, cable.part)
        assert family.a_form == a.connector == b.connector
        rate = max(m.ports * m.speed // (m.connectors or m.ports) for m in (a, b))
        assert family.legs == (2 if link.speed * 2 <= rate else 1), (link.a, link.b, cable.part)
        assert cable.part in family.lengths.values()
        links_of[id(cable)] = links_of.get(id(cable), 0) + 1
        assert links_of[id(cable)] <= family.legs


def test_no_single_mode_link_is_ordered_as_a_multimode_fiber() -> None:
    catalog = compiled("gb300-nvl72-xdr")[0].loaded.catalog.catalog
    for key, family in catalog.cables.items():
        if family.kind == "fiber" and any(
            p.startswith(("MFP7E10", "MFP7E20")) for p in family.lengths.values()
        ):
            assert family.media == "mmf", key
        if family.kind == "fiber" and any(
            p.startswith(("MFP7E30", "MFP7E40")) for p in family.lengths.values()
        ):
            assert family.media == "smf", key


@pytest.mark.parametrize(
    ("a", "b", "speed", "family", "legs"),
    [
        ("MMA4Z00-NS", "MMA4Z00-NS400", 400, "mfp7e10", 1),
        ("MMA4Z00-NS", "MMA4Z00-NS400", 200, "mfp7e20", 2),
        ("MMS4X00-NS", "MMS4X00-NS400", 400, "mfp7e30", 1),
        ("MMS4X00-NS", "MMS4X00-NS400", 200, "mfp7e40", 2),
        ("MMS4X00-NS400", "MMS4X00-NS", 200, "mfp7e40", 2),
    ],
)
def test_fiber_follows_media_and_split(a: str, b: str, speed: int, family: str, legs: int) -> None:
    fabric, _ = compiled("roce-lab")
    plan = _Cabler(fabric, [])._fiber_plan(a, b, speed)
    assert (plan.family, plan.legs, plan.problem) == (family, legs, "")


def test_fibers_of_different_media_do_not_meet() -> None:
    fabric, _ = compiled("roce-lab")
    plan = _Cabler(fabric, [])._fiber_plan("MMA4Z00-NS", "MMS4X00-NS400", 400)
    assert plan.problem and not plan.family


# 127 DGX H100 on 32 spines (one link per leaf-spine pair), single-mode, with the twin-port
# DR4 switch modules' reach cut to 12 m and 10 m by a site catalog: cages then hold runs on both
# sides of the DR4 reach, as a 65k-GPU hall of 200 rows does at 500 m. A cage that took FR4
# (LC duplex) for its longest run met a DR4 (MPO-12/APC) module at the far end of a shorter one.
MIXED_SPEC = """\
metadata: {name: mixed-optics}
catalog: [site.yaml]
site: {racks_per_row: 10, rack: {power_kw: 45}}
nodes:
  dgx: {model: dgx-h100, count: 127, nodes_per_rack: 4}
networks:
  compute: {role: compute, fabric: infiniband, medium: singlemode, spines: 32}
"""


def test_both_ends_of_a_fiber_take_one_connector_when_runs_straddle_the_dr4_reach(
    tmp_path: Path,
) -> None:
    built_in = load_catalog().catalog.transceivers
    shortened = {
        part: {
            **built_in[part].model_dump(mode="json", exclude_none=True),
            "reach_m": reach,
            "source": "test: reach shortened",
        }
        for part, reach in (("MMS4X00-NM", 12), ("MMS4X00-NS", 10))
    }
    (tmp_path / "site.yaml").write_text(yaml.safe_dump({"transceivers": shortened}))
    fabric, _ = compile_text(MIXED_SPEC, tmp_path)
    catalog = fabric.loaded.catalog.catalog
    kinds = set()
    for link in fabric.links:
        assert link.a_module is not None and link.b_module is not None
        a = catalog.transceivers[link.a_module]
        b = catalog.transceivers[link.b_module]
        assert a.connector == b.connector, (link.a, link.b, link.a_module, link.b_module)
        assert link.distance_m <= min(a.reach_m, b.reach_m)
        kinds.add(a.connector)
    # both kinds of run are there: the short ones stay on DR4, the long ones take FR4
    assert kinds == {"mpo-12-apc", "lc-duplex"}
