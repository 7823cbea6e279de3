"""Emit helper (configs): switch port names as each network OS spells them.

Consumes IR port names - front-panel cage and sub-port, "17" or "17/2" - with the switch's catalog
model; produces Cumulus names (swp17, swp17s1) and InfiniBand port numbers (SONiC names:
fabricc/catalog/sonic.py; cage and sub-port: fabricc/catalog/ports.py). Pure functions of the name
and the model.
"""

from __future__ import annotations

import functools

from fabricc.catalog.models import SwitchModel
from fabricc.catalog.ports import split_port

# -- NVIDIA Cumulus Linux ------------------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 14)
def cumulus_name(port: str) -> str:
    """Cumulus numbers breakout ports from 0: cage 17 split in two is swp17s0 and swp17s1."""
    if not port[:1].isdigit():
        return port  # eth0 and other named ports keep their names
    cage, sub = split_port(port)
    return f"swp{cage}" if sub is None else f"swp{cage}s{sub - 1}"


def cumulus_cage(cage: int) -> str:
    return f"swp{cage}"


# -- Arista EOS -----------------------------------------------------------------------------------


def eos_name(model: SwitchModel, port: str, ways: int) -> str:
    """EOS names a multi-lane cage's ports by their first lane (Arista EOS User Manual, "Ethernet
    Ports": Ethernet<cage>/<lane>): an 800G OSFP of 8 lanes is Ethernet1/1, split in two Ethernet1/1
    and Ethernet1/5, in four /1, /3, /5, /7; a single-lane cage is Ethernet<cage>."""
    if not port[:1].isdigit():
        return port  # Management1 and other named ports keep their names
    cage, sub = split_port(port)
    group = model.group_of_cage(cage)
    lanes = 1 if group is None else max(1, group.cage_speed // group.lane_speed)
    if lanes == 1:
        return f"Ethernet{cage}"
    return f"Ethernet{cage}/{((sub or 1) - 1) * (lanes // max(1, ways)) + 1}"


def eos_lanes(model: SwitchModel, port: str, ways: int) -> int:
    """Electrical lanes of one port of a cage split `ways` ways (EOS speeds say them: 400g-4)."""
    cage, _ = split_port(port)
    group = model.group_of_cage(cage)
    lanes = 1 if group is None else max(1, group.cage_speed // group.lane_speed)
    return max(1, lanes // max(1, ways))


# -- InfiniBand ----------------------------------------------------------------------------------


# (model, native ports per cage, cages) per catalog model object, asked per link end; the entry
# holds the (frozen) model, so its id cannot be reused while it is here.
_IB_LAYOUTS: dict[int, tuple[SwitchModel, int, int]] = {}


def _ib_layout(model: SwitchModel) -> tuple[int, int]:
    entry = _IB_LAYOUTS.get(id(model))
    if entry is None or entry[0] is not model:
        if len(_IB_LAYOUTS) >= 256:
            _IB_LAYOUTS.clear()
        per = min(min(g.breakouts) for g in model.port_groups)
        entry = _IB_LAYOUTS[id(model)] = (model, per, model.cages)
    return entry[1], entry[2]


def ib_ports_per_cage(model: SwitchModel) -> int:
    """Native ports of a cage: the smallest split the model allows (QM9700 twin-port OSFP: 2)."""
    return _ib_layout(model)[0]


def ib_port_count(model: SwitchModel) -> int:
    per, cages = _ib_layout(model)
    return cages * per


def ib_port(model: SwitchModel, port: str) -> int:
    """IB port number of a cage sub-port: QM9700 "c/s" is 2*(c-1)+s; an unsplit cage is its
    first port."""
    cage, sub = split_port(port)
    per, cages = _ib_layout(model)
    if cage > cages or (sub or 1) > per:
        raise ValueError(f"{model.part_number} has no InfiniBand port {port!r}")
    return per * (cage - 1) + (sub or 1)
