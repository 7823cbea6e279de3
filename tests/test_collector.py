"""The cyclic collector is off while a design is built and emitted and back on after, errors
included; and a design and its emitters leave next to no cyclic garbage, which is what makes
turning it off safe."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from fabricc.build import build, compile_design, design
from fabricc.collector import fewer_collections
from fabricc.spec.loader import load_spec
from tests.support import EXAMPLES


def test_off_inside_and_back_on_after() -> None:
    assert gc.isenabled()
    with fewer_collections():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_back_on_when_the_build_fails() -> None:
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("design error")
    assert gc.isenabled()


def test_what_it_made_joins_the_oldest_generation_unwalked() -> None:
    gc.collect()
    with fewer_collections():
        made = [[index] for index in range(50_000)]
        assert gc.get_count()[0] > 50_000  # counted, not collected
    # the first collection after does not walk 50,000 young objects: they are old now
    assert gc.get_count()[0] < 1_000
    old = {id(item) for item in gc.get_objects(generation=2)}
    assert id(made) in old and id(made[-1]) in old
    assert gc.get_freeze_count() == 0


def test_a_callers_frozen_objects_stay_frozen() -> None:
    gc.collect()
    kept = [[1], [2]]
    gc.freeze()
    try:
        with fewer_collections():
            pass
        assert gc.get_freeze_count() >= len(kept)
    finally:
        gc.unfreeze()


def test_left_off_when_it_was_off() -> None:
    gc.disable()
    try:
        with fewer_collections():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_design_leaves_no_cyclic_garbage() -> None:
    spec = EXAMPLES / "superpod-h100-4su.yaml"
    loaded = load_spec(spec, spec.as_posix())
    gc.collect()
    gc.disable()
    try:
        fabric = design(loaded)
        garbage = gc.collect()
        # Synthesis makes no reference cycles today (0); a few would be harmless, thousands
        # would mean memory that only the collector frees.
        assert garbage < 1000, f"{garbage} objects in reference cycles after one design"
    finally:
        gc.enable()
    assert fabric.links


def test_off_for_every_stage_of_a_build_and_back_on_after(tmp_path: Path) -> None:
    seen: dict[str, bool] = {}

    def stage(name: str) -> None:
        seen[name] = gc.isenabled()

    build(EXAMPLES / "roce-lab.yaml", tmp_path / "out", stage)
    assert gc.isenabled()
    assert {"cabling", "configs", "provisioning", "report", "write"} <= set(seen)
    assert not any(enabled for name, enabled in seen.items() if name != "load"), seen


def test_the_emitters_leave_little_cyclic_garbage() -> None:
    spec = EXAMPLES / "superpod-h100-4su.yaml"
    loaded = load_spec(spec, spec.as_posix())
    compile_design(loaded)  # the first build also compiles templates and fills caches
    gc.collect()
    gc.disable()
    try:
        _, artifacts = compile_design(loaded)
        garbage = gc.collect()
        # About 3,000 today, from the networkx graphs of the analysis: a number that grows with
        # the graphs analysed, not the links; per-link cycles would be hundreds of thousands.
        assert garbage < 20_000, f"{garbage} objects in reference cycles after one build"
    finally:
        gc.enable()
    assert artifacts
