"""Twin stage 0: what the machine must offer before anything is booted.

Consumes nothing but the running system; produces the list of missing requirements, each one
line naming the Debian package that provides it (the CLI prints them and exits 2).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# program -> Debian package that installs it (packages.debian.org, bookworm file lists)
TOOLS: tuple[tuple[str, str], ...] = (
    ("ip", "iproute2"),
    ("nsenter", "util-linux"),
    ("/usr/lib/frr/zebra", "frr"),
    ("/usr/lib/frr/bgpd", "frr"),
    ("vtysh", "frr"),
    ("kea-dhcp4", "kea-dhcp4-server"),
    ("dhcrelay", "isc-dhcp-relay"),
    ("dhclient", "isc-dhcp-client"),
    ("ping", "iputils-ping"),
    ("fping", "fping"),
)
IB_TOOLS: tuple[tuple[str, str], ...] = (
    ("ibsim", "ibsim-utils"),
    ("opensm", "opensm"),
    ("ibnetdiscover", "infiniband-diags"),
)
NETPLAN_TOOLS: tuple[tuple[str, str], ...] = (("netplan", "netplan.io"),)
UMAD2SIM = Path("/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so")
CAP_NET_ADMIN = 12  # linux/capability.h


def _has_cap_net_admin() -> bool:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except OSError:
        return False
    return False


def _found(program: str) -> bool:
    if program.startswith("/"):
        return os.access(program, os.X_OK)
    return shutil.which(program, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is not None


def missing(*, infiniband: bool, netplan: bool = False) -> list[str]:
    """One line per missing requirement (empty when the twin can run)."""
    if not sys.platform.startswith("linux"):
        return ["the twin needs Linux (network namespaces); this is " + sys.platform]
    lines: list[str] = []
    if os.geteuid() != 0 and not _has_cap_net_admin():
        lines.append("the twin needs root or CAP_NET_ADMIN to create network namespaces")
    tools = TOOLS + (IB_TOOLS if infiniband else ()) + (NETPLAN_TOOLS if netplan else ())
    for program, package in tools:
        if not _found(program):
            lines.append(f"{program} not found: install the Debian package {package}")
    if infiniband and not UMAD2SIM.is_file():
        lines.append(f"{UMAD2SIM} not found: install the Debian package libumad2sim0")
    return list(dict.fromkeys(lines))
