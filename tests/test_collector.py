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
