"""Complexity guard: synthesis, design rules and emitters do work in proportion to the links.

Builds one design family at two sizes in this process under cProfile and compares, per function
of fabricc's synth, checks and emit stages (and the dataclass methods they call: `__eq__` of a
list-membership test over rack or device records shows here), how often it ran. A function whose
calls grow more than twice as fast as the links is a quadratic corner in waiting: a 65k-GPU build
that found its racks full once spent 28 of 37 seconds in one such list scan (synth/oob.py), and no
timed test saw it. Counts, not seconds: the machine's speed does not enter.

The family fixes its structure (three tiers, a routed in-band network, racks full to their power
budget so that the out-of-band switches take the fallback placement) so that the two sizes run
the same code paths; a path only the larger size takes is not a growth rate and is left out.
"""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

import pytest

from fabricc.build import design, emit_all
from fabricc.spec.loader import load_spec

SMALL, LARGE = 127, 511  # DGX H100: 1,016 and 4,088 GPUs
SLACK = 2.0  # a function may grow this many times faster than the links (mix of node kinds)
MIN_CALLS = 100  # calls at the small size below which a ratio says nothing
STAGES = ("fabricc/synth/", "fabricc/checks/", "fabricc/emit/", "fabricc/ir.py")


def family(nodes: int) -> str:
    """Every plane of a DGX H100 SuperPOD: 3-tier NDR compute with UFM on reserved leaf ports,
    a storage fabric with arrays at 1:1 beside the nodes at 4:3, a dual-homed in-band network
    and an out-of-band network uplinked into it, in racks of a 31 kW budget (three DGX H100 of
    10.2 kW fill one, so the access switches find no room in the racks they serve)."""
    return f"""\
metadata: {{name: guard-{nodes}}}
site: {{racks_per_row: 40, rack: {{power_kw: 31}}}}
nodes:
  gpu: {{model: dgx-h100, count: {nodes}}}
  ufm: {{model: ufm-3.1, count: 4}}
  stor: {{model: storage-array, count: {nodes // 16}}}
  mgmt: {{model: mgmt-server, count: 8}}
networks:
  compute:
    role: compute
    fabric: infiniband
    tiers: 3
    reserved_slots: 1
    endpoints: {{gpu: {{}}, ufm: {{reserved: true}}}}
    subnet_manager: {{sm_nodes: [ufm]}}
  storage:
    role: storage
    fabric: infiniband
    rail_optimized: true
    oversubscription: "4:3"
    endpoints: {{gpu: {{}}, stor: {{leaf_downlinks: 16, oversubscription: "1:1"}}}}
  inband:
    role: inband
    dual_homed: true
    oversubscription: "4:1"
  oob:
    role: oob
    uplink_to: inband
    max_racks_per_switch: 6
"""


Key = tuple[str, int, str]


def calls(tmp_path: Path, nodes: int) -> tuple[int, dict[Key, int]]:
    """The design's link count and the calls of each function of the guarded stages."""
    spec = tmp_path / f"guard-{nodes}.yaml"
    spec.write_text(family(nodes))
    loaded = load_spec(spec)
    profiler = cProfile.Profile()
    profiler.enable()
    fabric = design(loaded)
    for _ in emit_all(fabric):
        pass
    profiler.disable()
    stats: dict[Key, tuple[int, int, float, float, object]]
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    counted: dict[Key, int] = {}
    for (file, line, name), (_, primitive, *_) in stats.items():
        posix = Path(file).as_posix()
        if file == "<string>" or any(stage in posix for stage in STAGES):
            key = (posix.rsplit("fabricc/", 1)[-1], line, name)
            counted[key] = counted.get(key, 0) + primitive
    return len(fabric.links), counted


# the links' growth and, per function called at least MIN_CALLS times at the small size, its
# calls at (small, large)
Growth = tuple[float, dict[Key, tuple[int, int]]]


@pytest.fixture(scope="module")
def growth(tmp_path_factory: pytest.TempPathFactory) -> Growth:
    folder = tmp_path_factory.mktemp("complexity")
    small_links, small = calls(folder, SMALL)
    large_links, large = calls(folder, LARGE)
    both = {key: (small[key], large.get(key, 0)) for key in small if small[key] >= MIN_CALLS}
    return large_links / small_links, both


def test_no_stage_grows_faster_than_the_links(growth: Growth) -> None:
    ratio, both = growth
    assert ratio > 3, "the two sizes must differ enough for a growth rate to show"
    faster = sorted(
        (f"{file}:{line} {name}: {small} -> {large} calls (x{large / small:.1f})")
        for (file, line, name), (small, large) in both.items()
        if large > small * ratio * SLACK
    )
    assert not faster, (
        f"links grew x{ratio:.1f}; these grew more than x{ratio * SLACK:.1f}:\n" + "\n".join(faster)
    )


def test_the_guard_sees_the_stages(growth: Growth) -> None:
    """The profile holds the hot functions of every guarded stage, the racks' room test of the
    out-of-band placement among them: a guard that counts nothing passes anything."""
    _, both = growth
    files = {file for file, _, _ in both}
    for stage in ("synth/", "checks/", "emit/"):
        assert any(file.startswith(stage) for file in files), stage
    assert any(file == "synth/racks.py" and name == "fits" for file, _, name in both)
