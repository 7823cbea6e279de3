"""Verification input: `lldpctl -f json0` output, one file per device.

Consumes the JSON text of one device's neighbours; produces LldpNeighbor records - local
interface, neighbour system name, neighbour port (the port ID when it is an interface name, else
the port description) and, when the neighbour advertises its MAU type, the speed in Gb/s
("10GbaseT ..." -> 10). The device the file belongs to is named by the caller (file name).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from fabricc.errors import Location, SpecError, error

_MAU = re.compile(r"^(\d+)([GM])base", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class LldpNeighbor:
    interface: str
    system: str
    port: str
    speed: int | None  # Gb/s


class _Shape(Exception):
    """A value of the wrong JSON type; the message names where."""


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    """A json0 list of objects (missing: none), else _Shape."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _Shape(f"{where} is not a list of objects")
    return value


def _first(entries: Any, where: str, key: str = "value") -> str | None:
    """The text under `key` of the first object of a json0 list (None: absent)."""
    objects = _objects(entries, where)
    if not objects or key not in objects[0]:
        return None
    value = objects[0][key]
    if not isinstance(value, str):
        raise _Shape(f"{where}[0].{key} is not a string")
    return value


def _speed(port: dict[str, Any], where: str) -> int | None:
    for index, autoneg in enumerate(_objects(port.get("auto-negotiation"), where)):
        current = _first(autoneg.get("current"), f"{where}[{index}].current")
        match = _MAU.match(current or "")
        if match:
            value = int(match.group(1)[:6])
            return value if match.group(2).upper() == "G" else max(1, value // 1000)
    return None


def _neighbor(interface: dict[str, Any], where: str) -> LldpNeighbor:
    name = interface.get("name")
    chassis = _objects(interface.get("chassis"), f"{where}.chassis") or [{}]
    ports = _objects(interface.get("port"), f"{where}.port") or [{}]
    system = _first(chassis[0].get("name"), f"{where}.chassis[0].name")
    port = ports[0]
    ids = port.get("id")
    port_id = _first(ids, f"{where}.port[0].id")
    if _first(ids, f"{where}.port[0].id", "type") not in (None, "ifname", "local"):
        port_id = _first(port.get("descr"), f"{where}.port[0].descr") or port_id
    if not isinstance(name, str) or system is None or port_id is None:
        raise _Shape(f"{where} lacks its name, neighbour system or port")
    return LldpNeighbor(name, system, port_id, _speed(port, f"{where}.port[0].auto-negotiation"))


def parse(text: str, file: str) -> list[LldpNeighbor]:
    def fail(message: str, line: int = 1, col: int = 1) -> SpecError:
        return SpecError(
            [
                error(
                    message,
                    location=Location(file, line, col),
                    hint="give the output of `lldpctl -f json0` (lldpd 1.0 or later)",
                )
            ]
        )

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail(f"not JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except RecursionError:
        raise fail("JSON nested too deep") from None
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), list):
        raise fail('no "lldp" list (expected lldpctl -f json0 output)')
    found: list[LldpNeighbor] = []
    try:
        for b, block in enumerate(_objects(data["lldp"], "lldp")):
            interfaces = _objects(block.get("interface"), f"lldp[{b}].interface")
            for i, interface in enumerate(interfaces):
                found.append(_neighbor(interface, f"lldp[{b}].interface[{i}]"))
    except _Shape as exc:
        raise fail(f"{exc} (expected lldpctl -f json0 output)") from None
    return found
