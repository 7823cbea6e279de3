"""Emit helper (configs): every link seen from each of its two ends, indexed once per build.

Consumes the Fabric IR; produces, per device, its link ends in port order. Built in one pass over
the links (O(links)), so that per-switch config generation never scans the whole link list.
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

from fabricc.emit.configs.ports import port_key
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
        for link in fabric.links:
            ends.setdefault(link.a, []).append(
                End(link, link.a_port, link.b, link.b_port, link.a_ip, link.b_ip, True)
            )
            ends.setdefault(link.b, []).append(
                End(link, link.b_port, link.a, link.a_port, link.b_ip, link.a_ip, False)
            )
        for items in ends.values():
            items.sort(key=lambda e: port_key(e.port))
        self._ends = ends

    def ends(self, device: str) -> list[End]:
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
