"""Complexity guard: synthesis, design rules and emitters do work in proportion to the links.

Builds one design family at two sizes in this process under cProfile and compares, per function
of fabricc's synth, checks and emit stages (and the dataclass methods they call: `__eq__` of a
list-membership test over rack or device records shows here), how often it ran. A function whose
calls grow more than twice as fast as the links is a quadratic corner in waiting: a 65k-GPU build
that found its racks full once spent 28 of 37 seconds in one such list scan (synth/oob.py), and no
timed test saw it. Counts, not seconds: the machine's speed does not enter.

Each family fixes its structure (three tiers, a routed in-band network; the SuperPOD's racks full
to their power budget so that the out-of-band switches take the fallback placement) so that the
two sizes run the same code paths; a path only the larger size takes is not a growth rate and is
left out. Analysis (graph algorithms over switch classes) is measured by bench/analyze.py.
"""

from __future__ import annotations

import cProfile
import pstats
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from fabricc.build import design, emit_all
from fabricc.spec.loader import load_spec

SLACK = 2.0  # a function may grow this many times faster than the links (mix of node kinds)
MIN_CALLS = 100  # calls at the small size below which a ratio says nothing
STAGES = ("fabricc/synth/", "fabricc/checks/", "fabricc/emit/", "fabricc/ir.py")


def superpod(nodes: int) -> str:
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


def nvl72(racks: int) -> str:
    """GB200 NVL72 rack systems in units of 8 (RA-11338) on a 3-tier NDR fabric, dual-homed
    in-band, out-of-band with the access switches each rack system ships with."""
    return f"""\
metadata: {{name: guard-nvl72-{racks}}}
site: {{racks_per_row: 40, rack: {{power_kw: 140}}}}
nodes:
  nvl72: {{model: gb200-nvl72, count: {racks}, su_size: 8}}
  ufm: {{model: ufm-3.1, count: 2}}
  mgmt: {{model: mgmt-server, count: 2}}
networks:
  compute:
    role: compute
    fabric: infiniband
    tiers: 3
    reserved_slots: 1
    endpoints: {{nvl72: {{}}, ufm: {{reserved: true}}}}
    subnet_manager: {{sm_nodes: [ufm]}}
  inband: {{role: inband, dual_homed: true, oversubscription: "4:1"}}
  oob: {{role: oob, uplink_to: inband, max_racks_per_switch: 1}}
"""


def spectrum_x(servers: int) -> str:
    """HGX B300 on a twin-plane 3-tier Spectrum-X RoCE fabric (Cumulus configs, BGP, QoS, host
    scripts), dual-homed in-band, out-of-band."""
    return f"""\
metadata: {{name: guard-spcx-{servers}}}
site: {{racks_per_row: 20, rack: {{power_kw: 60}}}}
nodes:
  gpu: {{model: hgx-b300, count: {servers}, nodes_per_rack: 4}}
  mgmt: {{model: mgmt-server, count: 4}}
networks:
  compute: {{role: compute, fabric: ethernet, tiers: 3, planes: 2}}
  inband: {{role: inband, dual_homed: true}}
  oob: {{role: oob, uplink_to: inband}}
"""


# family -> (spec of one size, small size, large size)
FAMILIES: dict[str, tuple[Callable[[int], str], int, int]] = {
    "superpod": (superpod, 127, 511),  # 1,016 and 4,088 GPUs
    "nvl72": (nvl72, 16, 64),  # 1,152 and 4,608 GPUs
    "spectrum-x": (spectrum_x, 64, 256),  # 512 and 2,048 GPUs
}

Key = tuple[str, int, str]


def calls(tmp_path: Path, text: str) -> tuple[Counter[str], dict[Key, int]]:
    """The design's links per network and the calls of each function of the guarded stages."""
    spec = tmp_path / "guard.yaml"
    spec.write_text(text)
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
    return Counter(link.network for link in fabric.links), counted


# the links' growth (of the network whose links grow fastest: a 2-tier network that gains
# spines as it gains leaves grows its links faster than the design) and, per function called at
# least MIN_CALLS times at the small size, its calls at (small, large)
Growth = tuple[float, dict[Key, tuple[int, int]]]


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def growth(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Growth:
    spec, small_size, large_size = FAMILIES[request.param]
    folder = tmp_path_factory.mktemp("complexity")
    small_links, small = calls(folder, spec(small_size))
    large_links, large = calls(folder, spec(large_size))
    ratio = max(large_links[network] / count for network, count in small_links.items())
    both = {key: (small[key], large.get(key, 0)) for key in small if small[key] >= MIN_CALLS}
    return ratio, both


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
    """The profile holds the hot functions of every guarded stage: a guard that counts nothing
    passes anything."""
    _, both = growth
    files = {file for file, _, _ in both}
    for stage in ("synth/", "checks/", "emit/"):
        assert any(file.startswith(stage) for file in files), stage


def test_the_out_of_band_fallback_is_guarded(tmp_path: Path) -> None:
    """The SuperPOD family's racks are full: the access switches' room test runs often enough
    at the small size for its growth to count (the corner this guard was written for)."""
    _, counted = calls(tmp_path, superpod(FAMILIES["superpod"][1]))
    fits = sum(
        n for (file, _, name), n in counted.items() if (file, name) == ("synth/racks.py", "fits")
    )
    assert fits >= MIN_CALLS
