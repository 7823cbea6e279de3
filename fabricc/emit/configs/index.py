"""Emit helper (configs): every link seen from each of its two ends, indexed once per build.

Consumes the Fabric IR; produces, per device, its link ends in port order. Built in one pass over
the links (O(links)), so that per-switch config generation never scans the whole link list. Only
the links of Ethernet networks are indexed: the switch and host configs read nothing else (the
InfiniBand subnets are built from Fabric.links_of), and at 100k GPUs the InfiniBand links are
most of the design.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

from fabricc.catalog.ports import port_key
from fabricc.ir import Fabric, Link


class End(NamedTuple):
    """A link seen from one of its devices (a named tuple: built twice per link, cheaply)."""

    link: Link
    port: str  # this device's port
    far: str  # the device at the other end
    far_port: str
    local_ip: str | None
    far_ip: str | None
    upward: bool  # the far end is on the upper tier (this device is the link's a side)

    @property
    def kind(self) -> str:
        return self.link.kind


class LinkIndex:
    def __init__(self, fabric: Fabric) -> None:
        ends: dict[str, list[End]] = {}
        new = tuple.__new__  # End(...) without the named tuple's Python-level __new__
        ethernet = {n for n, net in fabric.loaded.networks.items() if net.fabric == "ethernet"}
        for link in fabric.links:
            if link.network not in ethernet:
                continue
            a, b, a_port, b_port, a_ip, b_ip = (
                link.a,
                link.b,
                link.a_port,
                link.b_port,
                link.a_ip,
                link.b_ip,
            )
            found = ends.get(a)
            if found is None:
                found = ends[a] = []
            found.append(new(End, (link, a_port, b, b_port, a_ip, b_ip, True)))
            found = ends.get(b)
            if found is None:
                found = ends[b] = []
            found.append(new(End, (link, b_port, a, a_port, b_ip, a_ip, False)))
        for name, items in ends.items():
            # Port order (stable), the keys through the C-level cache without a Python call each.
            keys = list(map(port_key, [end.port for end in items]))
            ends[name] = [items[i] for i in sorted(range(len(items)), key=keys.__getitem__)]
        self._ends = ends

    def ends(self, device: str) -> list[End]:
        """The device's ends of Ethernet links, in port order."""
        return self._ends.get(device, [])


def point_to_point(address: str) -> tuple[str, str]:
    """A link address as its /31 interface and that /31 network: "10.0.0.5" -> ("10.0.0.5/31",
    "10.0.0.4/31"). The IR's addresses are already in their canonical spelling, so IPv4 needs no
    parsing (it was a third of the host and switch config time at scale)."""
    head, dot, last = address.rpartition(".")
    if dot and last.isdigit() and ":" not in address:
        return f"{address}/31", f"{head}.{int(last) & ~1}/31"
    interface = ipaddress.ip_interface(f"{address}/31")
    return str(interface), str(interface.network)
