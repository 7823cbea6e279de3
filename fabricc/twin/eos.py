"""Twin reader of Arista EOS configs: the startup-config CLI as the switch boots it.

Consumes configs/<switch>/startup-config (the EOS CLI fabricc renders with pyavd, which the ZTP
boot script installs as /mnt/flash/startup-config); produces its commands as a tree (a command
and the commands indented under it, `!` lines being comments: Arista EOS User Manual, "Command-
Line Interface") and plain interface facts: MTU, addresses, IPv6 enabled, shut down, VRF, and the
lanes per port of each cage (from `speed <rate>g-<lanes>`), which name its breakout ports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricc.twin.folder import BuildFolder

STARTUP = "startup-config"  # EOS boots /mnt/flash/startup-config (fabricc/emit/configs/eos_files)
STRUCTURED = "structured_config.yaml"
_SPEED_LANES = re.compile(r"\bspeed (?:forced |auto )?\d+g-(\d+)\b")


@dataclass(slots=True)
class Block:
    line: str
    children: list[Block] = field(default_factory=list)

    def words(self) -> list[str]:
        return self.line.split()


@dataclass(slots=True)
class Interface:
    name: str  # as EOS names it: Ethernet5/1, Loopback0, Management1
    description: str = ""
    mtu: int | None = None
    addresses: list[str] = field(default_factory=list)  # "a.b.c.d/n", IPv6 too
    ipv6: bool = False  # `ipv6 enable` (a link-local address) or an IPv6 address
    shutdown: bool = False
    routed: bool = False  # `no switchport` (Ethernet), or an interface that is always routed
    vrf: str = "default"


def parse(text: str) -> list[Block]:
    """The config's commands as a tree by indentation; comments and blank lines dropped."""
    root = Block("")
    stack: list[tuple[int, Block]] = [(-1, root)]
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("!"):
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        block = Block(stripped)
        stack[-1][1].children.append(block)
        stack.append((depth, block))
    return root.children


def interfaces(blocks: list[Block]) -> dict[str, Interface]:
    found: dict[str, Interface] = {}
    for block in blocks:
        words = block.words()
        if len(words) != 2 or words[0] != "interface":
            continue
        entry = found.setdefault(words[1], Interface(words[1]))
        entry.routed = not words[1].startswith(("Ethernet", "Port-Channel"))
        for child in block.children:
            line = child.words()
            if line[:1] == ["description"]:
                entry.description = child.line.split(None, 1)[1] if len(line) > 1 else ""
            elif line[:1] == ["mtu"] and len(line) == 2 and line[1].isdecimal():
                entry.mtu = int(line[1])
            elif line[:2] == ["ip", "address"] and len(line) >= 3:
                entry.addresses.append(line[2])  # the primary, then `secondary` ones
            elif line[:2] == ["ipv6", "address"] and len(line) >= 3:
                entry.addresses.append(line[2])
                entry.ipv6 = True
            elif line == ["ipv6", "enable"]:
                entry.ipv6 = True
            elif line == ["shutdown"]:
                entry.shutdown = True
            elif line == ["no", "shutdown"]:
                entry.shutdown = False
            elif line == ["no", "switchport"]:
                entry.routed = True
            elif line[:1] == ["vrf"] and len(line) == 2:
                entry.vrf = line[1]
    return found


def lanes_per_port(blocks: list[Block]) -> dict[int, int]:
    """Cage -> electrical lanes of each of its ports, where a configured speed says (400g-4)."""
    lanes: dict[int, int] = {}
    for block in blocks:
        match = re.fullmatch(r"interface Ethernet(\d+)/\d+", block.line)
        if match is None:
            continue
        for child in block.children:
            speed = _SPEED_LANES.search(child.line)
            if speed is not None:
                lanes.setdefault(int(match.group(1)), int(speed.group(1)))
    return lanes


def section(blocks: list[Block], head: str) -> Block | None:
    """The first top-level block whose command starts with `head` (`router bgp`)."""
    return next((b for b in blocks if b.line == head or b.line.startswith(head + " ")), None)


def startup_config(folder: BuildFolder, switch: str) -> list[Block] | None:
    relative = f"configs/{switch}/{STARTUP}"
    return parse(folder.text(relative)) if folder.has(relative) else None


def is_eos(folder: BuildFolder, switch: str) -> bool:
    return folder.has(f"configs/{switch}/{STARTUP}") or folder.has(f"configs/{switch}/{STRUCTURED}")
