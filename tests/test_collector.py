"""The collector's pace is raised for a build and restored after it, errors included."""

from __future__ import annotations

import gc

import pytest

from fabricc.collector import YOUNG, fewer_collections


def test_threshold_raised_inside_and_restored_after() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        inside = gc.get_threshold()
    assert inside[0] >= YOUNG
    assert inside[1:] == before[1:]
    assert gc.get_threshold() == before


def test_threshold_restored_when_the_build_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("design error")
    assert gc.get_threshold() == before
