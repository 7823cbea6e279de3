"""Synthesis helper: hostnames and switch port names from stable indices.

Consumes hostname patterns from the spec and indices from the synthesis passes; produces names.
Switch ports are named by front-panel cage and, when the cage is split, sub-port ("17/2"); the
network-OS names (swp17s1, Ethernet136, IB port 34) are derived from these by the config emitters.
A leaf module: synthesis and the design rules both read it, neither through the other.
"""

from __future__ import annotations

import functools
import re
from typing import Any

# Management ports of devices that have no catalog port list (read by the OOB pass and the rules).
PDU_PORT = "NET"
POWER_SHELF_PORT = "MGMT"

_HOSTNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


class _Fields(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        return 0


def format_name(pattern: str, **fields: Any) -> str:
    return pattern.format_map(_Fields(fields))


def valid_hostname(name: str) -> bool:
    return bool(_HOSTNAME.match(name))


def switch_port(cage_offset: int, index: int, breakout: int) -> str:
    """Name of the `index`-th port of a region that starts after `cage_offset` cages."""
    cage = cage_offset + index // breakout + 1
    return f"{cage}/{index % breakout + 1}" if breakout > 1 else str(cage)


@functools.lru_cache(maxsize=1 << 14)  # port names repeat on every switch of a tier
def port_index(port: str, breakout: int) -> int | None:
    """The inverse of switch_port from the first cage: "17/2" at 2 per cage -> 33; None for a
    name that switch_port does not write at this breakout."""
    cage, _, lane = port.partition("/")
    if not _number(cage) or int(cage) < 1 or bool(lane) != (breakout > 1):
        return None
    if not lane:
        return int(cage) - 1
    if not _number(lane) or not 1 <= int(lane) <= breakout:
        return None
    return (int(cage) - 1) * breakout + int(lane) - 1


def _number(text: str) -> bool:
    return text.isascii() and text.isdecimal() and len(text) <= 6


def port_cage(port: str) -> str:
    """The cage of a switch port name ("17/2" -> "17")."""
    return port.split("/", 1)[0]
