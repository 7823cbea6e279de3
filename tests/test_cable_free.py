"""An emitter that says it reads no cable selection (Emitter.cables) writes the same bytes before
cable selection as after it, design rules judged: a large build runs such emitters in a copy
forked before cable selection (fabricc.build.BEFORE_CABLES), which never sees a cable."""

from __future__ import annotations

import pytest

from fabricc.build import cable_free, fork_before_cables, fork_units, judge, synthesized
from fabricc.emit import Artifact, emitters
from fabricc.emit.configs import reads_cables, switches
from fabricc.ir import Fabric
from fabricc.spec.loader import load_spec
from tests.support import EXAMPLE_NAMES, EXAMPLES, GOLDEN_RENDER, with_render

# The examples with an Ethernet data network of Cumulus Linux or SONiC switches (roce-lab-eos's
# EOS switches size no buffer by cable)
LOSSLESS = ("gb300-nvl72-spectrum-x", "megascale-roce", "roce-lab", "spectrum-x-2plane")


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_an_emitter_that_reads_no_cable_writes_the_same_before_cable_selection(name: str) -> None:
    loaded = with_render(
        load_spec(EXAMPLES / f"{name}.yaml", f"examples/{name}.yaml"), GOLDEN_RENDER
    )
    before: dict[str, list[Artifact]] = {}
    cabled: list[bool] = []

    def linked(fabric: Fabric) -> None:
        """What the emitters that read no cable write at the point the build forks its copy;
        the views they derive are dropped again (the copy's are its own)."""
        cabled.append(bool(fabric.cables) or any(link.cable for link in fabric.links))
        memo = dict(fabric.memo)
        for emitter in emitters():
            if not emitter.cables(fabric):
                before[emitter.name] = list(emitter.emit(fabric))
        fabric.memo.clear()
        fabric.memo.update(memo)

    fabric = synthesized(loaded, linked=linked)
    judge(fabric)
    assert reads_cables(fabric) == (name in LOSSLESS)
    assert fork_before_cables(cable_free(fork_units(emitters()), fabric)) == (name not in LOSSLESS)
    assert cabled == [False]  # told once, before any cable was selected
    assert fabric.cables  # and selected after
    assert {"provisioning", "netbox", "configs-hosts", "inventory", "nccl", "diagrams"} <= set(
        before
    )
    for emitter in emitters():
        if emitter.name in before:
            assert list(emitter.emit(fabric)) == before[emitter.name], emitter.name


@pytest.mark.parametrize("name", LOSSLESS)
def test_switch_configs_that_size_buffers_by_their_cables_wait_for_them(name: str) -> None:
    """Cumulus and SONiC data switches size PFC headroom by their cables' lengths: written
    before cable selection their files would differ, so they say they read cables, and the
    build forks its copy after cable selection."""
    loaded = load_spec(EXAMPLES / f"{name}.yaml", f"examples/{name}.yaml")
    early: list[Artifact] = []

    def linked(fabric: Fabric) -> None:
        memo = dict(fabric.memo)
        for part in range(3):
            early.extend(switches(part)(fabric))
        fabric.memo.clear()
        fabric.memo.update(memo)

    fabric = synthesized(loaded, linked=linked)
    assert reads_cables(fabric)
    assert [a for part in range(3) for a in switches(part)(fabric)] != early
    free = cable_free(fork_units(emitters()), fabric)
    assert not fork_before_cables(free)
    names = {e.name for unit in free for e in unit}
    assert "netbox" in names and "netbox-cables" not in names and "cabling" not in names
