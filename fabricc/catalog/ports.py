"""Catalog helper: a switch's front-panel port names read against its catalog model.

Consumes IR port names - front-panel cage and sub-port, "17" or "17/2" - with the switch's catalog
model; produces the cage and sub-port, a natural sort key, the cage's port group and the model's
management port names. Pure functions of the name and the model, shared by the port plan
(fabricc/synth/portplan.py) and the config emitters.
"""

from __future__ import annotations

import functools

from fabricc.catalog.models import PortGroup, SwitchModel


# Port names repeat across every switch and node of a model, and the config emitters ask these
# per link end (a million times at 65k GPUs): the answers are kept per name (bounded).
@functools.lru_cache(maxsize=1 << 14)
def split_port(port: str) -> tuple[int, int | None]:
    """ "17/2" -> (17, 2); "17" -> (17, None). Raises ValueError on other names."""
    cage, _, sub = port.partition("/")
    return int(cage), (int(sub) if sub else None)


@functools.lru_cache(maxsize=1 << 14)
def port_key(port: str) -> tuple[int, int, int, str]:
    """Natural order for switch ports: cages and sub-ports numerically, named ports last."""
    try:
        cage, sub = split_port(port)
    except ValueError:
        return (1, 0, 0, port)
    return (0, cage, sub or 0, "")


def cage_group(model: SwitchModel, cage: int) -> PortGroup:
    group = model.group_of_cage(cage)
    if group is None:
        raise ValueError(f"{model.part_number} has no cage {cage}")
    return group


def is_mgmt_port(model: SwitchModel, port: str) -> bool:
    return port in mgmt_port_names(model)


# Names of a model's management ports per catalog model object (asked per link end); an entry
# holds its (frozen) model, so the id cannot be reused while it is here.
_MGMT_NAMES: dict[int, tuple[SwitchModel, frozenset[str]]] = {}


def mgmt_port_names(model: SwitchModel) -> frozenset[str]:
    """The model's management port names (is_mgmt_port for loops over a switch's ports)."""
    entry = _MGMT_NAMES.get(id(model))
    if entry is None or entry[0] is not model:
        if len(_MGMT_NAMES) >= 256:
            _MGMT_NAMES.clear()
        entry = _MGMT_NAMES[id(model)] = (model, frozenset(m.name for m in model.mgmt_ports))
    return entry[1]
