"""Twin interface names: a cabling-plan port as the device's OS names it, fitted to IFNAMSIZ.

Consumes a build folder (SONiC config_db PORT aliases, which switches run Cumulus); produces the
Linux interface name of each cable end: SONiC `EthernetN` (found through its alias etp<cage>[a-h]),
Cumulus `swp<cage>[s<lane-1>]`, `eth0` for management ports, and for any other name a short
stable one (`p<n>`) when the plan's name is not a valid Linux interface name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricc.twin.folder import BuildFolder
from fabricc.twin.lab import IFNAMSIZ

_VALID = re.compile(r"[A-Za-z0-9_.-]+")
MGMT_PORTS = ("eth0", "mgmt0")


def cumulus_port(port: str) -> str:
    """Cumulus Linux interface of a front-panel port: swp<cage>, split ports swp<cage>s<n-1>."""
    cage, _, sub = port.partition("/")
    return f"swp{cage}" if not sub else f"swp{cage}s{int(sub) - 1}"


def sonic_alias(port: str) -> str:
    cage, _, sub = port.partition("/")
    return f"etp{cage}" + (chr(ord("a") + int(sub) - 1) if sub else "")


def os_of(folder: BuildFolder, device: str) -> str:
    """sonic | cumulus | linux (a server, or a switch without an Ethernet config)."""
    if folder.has(f"configs/{device}/config_db.json"):
        return "sonic"
    if folder.has(f"configs/{device}/startup.yaml"):
        return "cumulus"
    return "linux"


@dataclass(slots=True)
class Namer:
    folder: BuildFolder
    _aliases: dict[str, dict[str, str]] = field(default_factory=dict)
    _short: dict[tuple[str, str], str] = field(default_factory=dict)

    def _sonic(self, device: str) -> dict[str, str]:
        if device not in self._aliases:
            db = self.folder.json(f"configs/{device}/config_db.json")
            ports = db.get("PORT", {}) if isinstance(db, dict) else {}
            self._aliases[device] = {
                str(entry.get("alias")): str(name)
                for name, entry in sorted(ports.items())
                if isinstance(entry, dict)
            }
        return self._aliases[device]

    def interface(self, device: str, port: str) -> str:
        if port in MGMT_PORTS:
            return "eth0"
        kind = os_of(self.folder, device)
        name: str | None = None
        if re.fullmatch(r"\d+(/\d+)?", port):
            if kind == "sonic":
                name = self._sonic(device).get(sonic_alias(port))
            elif kind == "cumulus" or self.folder.devices.get(device, {}).get("kind") == "switch":
                # a switch without a config is set up by hand (seeds.txt): named as Cumulus does
                name = cumulus_port(port)
        if name is None and _VALID.fullmatch(port) and len(port) < IFNAMSIZ:
            name = port
        if name is None:
            key = (device, port)
            name = self._short.setdefault(key, f"p{len(self._short)}")
        return name
