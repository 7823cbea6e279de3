"""Twin interface names: a cabling-plan port as the device's OS names it, fitted to IFNAMSIZ.

Consumes a build folder (SONiC config_db PORT tables, which switches run Cumulus or EOS, EOS
port speeds); produces the Linux interface name of each cable end: SONiC `EthernetN` (found
through the PORT table's front-panel `index` and, on a split cage, the ports' order within it:
whatever alias style the platform uses, Mellanox `etp1a` or Arista `Ethernet1/5`), Cumulus
`swp<cage>[s<lane-1>]`, EOS `Ethernet<cage>/<lane>` as EOS's own kernel names it
(`et<cage>_<lane>`), `eth0` for management ports, and for any other name a short stable one
(`p<n>`) when the plan's name is not a valid Linux interface name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricc.twin import eos
from fabricc.twin.folder import BuildFolder
from fabricc.twin.lab import IFNAMSIZ

_VALID = re.compile(r"[A-Za-z0-9_.-]+")
MGMT_PORTS = ("eth0", "mgmt0", "Management1")  # Management1: EOS's management port
# EOS interface prefix -> the prefix of its Linux kernel interface (EOS names Ethernet5/1 `et5_1`
# in the kernel; containerlab's ceos kind doc, "Additional interface naming considerations": the
# `et` names are "consistent with the underlying interface mappings within ceos", `_` for `/`)
EOS_KERNEL = {"Ethernet": "et", "Port-Channel": "po", "Vlan": "vlan"}


def cumulus_port(port: str) -> str:
    """Cumulus Linux interface of a front-panel port: swp<cage>, split ports swp<cage>s<n-1>."""
    cage, _, sub = port.partition("/")
    return f"swp{cage}" if not sub else f"swp{cage}s{int(sub) - 1}"


def sonic_ports(ports: object) -> dict[str, str]:
    """SONiC port name of each front-panel port of a config_db PORT table: `<cage>` for a cage
    that carries one port, `<cage>/<n>` for the n-th port of a split one. The cage is the
    entry's `index` (platform.json's front-panel index, which sonic-cfggen writes into PORT);
    the ports of a split cage come in the order of their names' numbers (`Ethernet0` before
    `Ethernet4`: SONiC numbers a port by its first lane slot)."""
    cages: dict[str, list[tuple[int, str]]] = {}
    for name, entry in ports.items() if isinstance(ports, dict) else ():
        number = re.search(r"\d+$", str(name))
        if isinstance(entry, dict) and "index" in entry and number is not None:
            cages.setdefault(str(entry["index"]), []).append((int(number.group()), str(name)))
    found: dict[str, str] = {}
    for cage, members in cages.items():
        members.sort()
        if len(members) == 1:
            found[cage] = members[0][1]
        for n, (_, name) in enumerate(members, 1):
            found[f"{cage}/{n}"] = name
    return found


def eos_linux(name: str) -> str:
    """The Linux interface of an EOS interface: Ethernet5/1 -> et5_1, Vlan10 -> vlan10; a
    loopback keeps its name (Loopback0, the stand-in the routing stage creates)."""
    for prefix, kernel in EOS_KERNEL.items():
        if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isdigit():
            return kernel + name[len(prefix) :].replace("/", "_")
    return "eth0" if name in MGMT_PORTS else name


def eos_port(port: str, lanes: dict[int, int], single: set[int]) -> str:
    """EOS name of a front-panel port "C" or "C/n": ports are named by their first lane
    (Ethernet<C>/<(n-1) x lanes + 1>; Arista EOS User Manual, "Ethernet Ports"), a cage of one
    lane Ethernet<C>. `lanes` holds the lanes per port the config's speeds give per cage."""
    cage_text, _, sub = port.partition("/")
    cage = int(cage_text)
    if cage in single:
        return f"Ethernet{cage}"
    return f"Ethernet{cage}/{(int(sub or 1) - 1) * lanes.get(cage, 1) + 1}"


def os_of(folder: BuildFolder, device: str) -> str:
    """sonic | cumulus | eos | linux (a server, or a switch without an Ethernet config)."""
    if folder.has(f"configs/{device}/config_db.json"):
        return "sonic"
    if folder.has(f"configs/{device}/startup.yaml"):
        return "cumulus"
    if eos.is_eos(folder, device):
        return "eos"
    return "linux"


@dataclass(slots=True)
class Namer:
    folder: BuildFolder
    _ports: dict[str, dict[str, str]] = field(default_factory=dict)
    _short: dict[tuple[str, str], str] = field(default_factory=dict)
    _eos: dict[str, tuple[dict[int, int], set[int]]] = field(default_factory=dict)

    def _eos_layout(self, device: str) -> tuple[dict[int, int], set[int]]:
        """Lanes per port by cage, and the cages named without a lane (Ethernet<C>)."""
        if device not in self._eos:
            blocks = eos.startup_config(self.folder, device) or []
            single = {
                int(b.line.removeprefix("interface Ethernet"))
                for b in blocks
                if re.fullmatch(r"interface Ethernet\d+", b.line)
            }
            self._eos[device] = (eos.lanes_per_port(blocks), single)
        return self._eos[device]

    def _sonic(self, device: str) -> dict[str, str]:
        if device not in self._ports:
            db = self.folder.json(f"configs/{device}/config_db.json")
            self._ports[device] = sonic_ports(db.get("PORT") if isinstance(db, dict) else None)
        return self._ports[device]

    def interface(self, device: str, port: str) -> str:
        if port in MGMT_PORTS:
            return "eth0"
        kind = os_of(self.folder, device)
        name: str | None = None
        if re.fullmatch(r"\d+(/\d+)?", port):
            if kind == "sonic":
                name = self._sonic(device).get(port)
            elif kind == "eos":
                name = eos_linux(eos_port(port, *self._eos_layout(device)))
            elif kind == "cumulus" or self.folder.devices.get(device, {}).get("kind") == "switch":
                # a switch without a config is set up by hand (seeds.txt): named as Cumulus does
                name = cumulus_port(port)
        if name is None and _VALID.fullmatch(port) and len(port) < IFNAMSIZ:
            name = port
        if name is None:
            key = (device, port)
            name = self._short.setdefault(key, f"p{len(self._short)}")
        return name
