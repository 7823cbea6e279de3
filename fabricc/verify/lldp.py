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


def _first(entries: Any, key: str = "value") -> str | None:
    if isinstance(entries, list) and entries and isinstance(entries[0], dict):
        value = entries[0].get(key)
        return value if isinstance(value, str) else None
    return None


def _speed(port: dict[str, Any]) -> int | None:
    for autoneg in port.get("auto-negotiation", []) or []:
        if not isinstance(autoneg, dict):
            continue
        current = _first(autoneg.get("current"))
        match = _MAU.match(current or "")
        if match:
            value = int(match.group(1))
            return value if match.group(2).upper() == "G" else max(1, value // 1000)
    return None


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
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), list):
        raise fail('no "lldp" list (expected lldpctl -f json0 output)')
    found: list[LldpNeighbor] = []
    for block in data["lldp"]:
        for interface in (block or {}).get("interface", []) or []:
            if not isinstance(interface, dict):
                raise fail("an interface entry is not an object")
            name = interface.get("name")
            chassis = interface.get("chassis") or [{}]
            ports = interface.get("port") or [{}]
            system = _first(chassis[0].get("name")) if isinstance(chassis[0], dict) else None
            port = ports[0] if isinstance(ports[0], dict) else {}
            ids = port.get("id") or [{}]
            port_id = _first(ids)
            if _first(ids, "type") not in (None, "ifname", "local"):
                port_id = _first(port.get("descr")) or port_id
            if not isinstance(name, str) or system is None or port_id is None:
                raise fail("an interface entry lacks its name, neighbour system or port")
            found.append(LldpNeighbor(name, system, port_id, _speed(port)))
    return found
