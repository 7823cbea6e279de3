"""Three tiers at small counts: spine j of every spine-leaf group joins core group j, so a core
carries traffic only where it meets more than one group. megascale-roce at 128 servers: with its
two groups of 8 ToRs each core joins spine j of both; packed into one group (the default radix
packing) the cores would meet one spine each, and the build says so."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from fabricc.ir import SPINE_CORE
from tests.support import EXAMPLES, compile_text, compiled


def test_every_core_joins_a_spine_of_every_group() -> None:
    fabric, _ = compiled("megascale-roce")
    topology = fabric.networks["compute"]
    assert topology.pods == 2 and topology.tiers == 3
    pods: dict[str, set[int | None]] = defaultdict(set)
    for link in fabric.links_of("compute"):
        if link.kind == SPINE_CORE:
            pods[link.b].add(fabric.devices[link.a].pod)
    assert pods and all(found == {0, 1} for found in pods.values()), dict(pods)


def test_one_group_under_a_core_tier_is_a_warning(tmp_path: Path) -> None:
    text = (EXAMPLES / "megascale-roce.yaml").read_text()
    line = next(x for x in text.splitlines(keepends=True) if x.startswith("    pod_sus: 1"))
    (tmp_path / "megascale").mkdir()
    site = EXAMPLES / "megascale" / "site-catalog.yaml"
    (tmp_path / "megascale" / "site-catalog.yaml").write_text(site.read_text())
    fabric, _ = compile_text(text.replace(line, ""), tmp_path)
    assert fabric.networks["compute"].pods == 1
    warned = [w.render() for w in fabric.warnings if "one spine-leaf group" in w.message]
    assert len(warned) == 1 and "networks.compute.tiers" in warned[0]
    assert "carries no traffic" in warned[0] and "tiers: 2" in warned[0]
