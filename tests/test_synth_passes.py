"""The synthesis passes (fabricc/synth/pipeline.py): when uplinks into a network's top tier
(uplink_to) need more ports than its first sizing left, the next pass starts from the nodes and
networks the first pass built before that network; the design is the one a pass from nothing
gives with the same reserved demand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabricc.ir import Fabric
from fabricc.spec.loader import load_spec
from fabricc.synth import pipeline
from fabricc.synth.appliances import reserve_for_sm_hosts
from fabricc.synth.portbook import PortBook

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _state(fabric: Fabric) -> tuple[Any, ...]:
    return (
        fabric.devices,
        fabric.links,
        fabric.racks,
        fabric.networks,
        fabric.modules,
        fabric.cables,
        fabric.nvlink_domains,
        fabric.su_labels,
        [str(d) for d in fabric.warnings],
    )


@pytest.mark.parametrize("example", ["gb200-nvl72-su.yaml", "mixed-gb200-gb300.yaml"])
def test_a_later_pass_from_the_prefix_is_a_pass_from_nothing(
    example: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = EXAMPLES / example
    calls: list[tuple[dict[str, Any], bool]] = []
    original = pipeline._synthesize

    def counted(*args: Any, **kwargs: Any) -> Fabric:
        calls.append((args[2], args[3] is not None))
        return original(*args, **kwargs)

    monkeypatch.setattr(pipeline, "_synthesize", counted)
    fabric = pipeline.synthesize(load_spec(path, path.name))
    # the example does take a second pass, and that pass starts from the first one's prefix
    assert [reused for _, reused in calls] == [False, True]
    monkeypatch.setattr(pipeline, "_synthesize", original)
    loaded = reserve_for_sm_hosts(load_spec(path, path.name))
    fresh = original(loaded, pipeline.quiet, calls[-1][0], None, last=True)
    assert _state(fabric) == _state(fresh)


def test_the_port_book_rewinds_to_its_mark() -> None:
    book = PortBook()
    book.take("leaf1", "1")
    book.scan_from[("leaf1", 1)] = 30
    book.mark()
    assert book.take("leaf1", "2") and book.take("spine1", "1")
    assert not book.take("leaf1", "1")  # taken before the mark: still refused, not listed
    book.scan_from[("leaf1", 1)] = 10
    book.rewind()
    assert book.used == {"leaf1": {"1"}}
    assert book.scan_from == {("leaf1", 1): 30}
    assert book.journal is None and book.take("leaf1", "2")
