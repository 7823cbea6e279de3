"""The cyclic collector is off while a design is built and back on after, errors included; and
a design leaves next to no cyclic garbage, which is what makes turning it off safe."""

from __future__ import annotations

import gc

import pytest

from fabricc.build import design
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
