"""Synthesis helper: the book of used switch and node ports, shared by every pass that cables.

Consumes (device, port) claims from the fat-tree, out-of-band and uplink passes; answers whether a
port is still free, so that no port is ever cabled twice.
"""

from __future__ import annotations


class PortBook:
    """Which ports of which device are taken; a second use is a design error."""

    def __init__(self) -> None:
        self.used: dict[str, set[str]] = {}
        # for passes that look for free cages from a device's top down: per (device, lanes per
        # cage), the highest cage that may still have a free port. A book never frees a port it
        # gave, so a cage found full stays full and the next search starts below it.
        self.scan_from: dict[tuple[str, int], int] = {}

    def take(self, device: str, port: str) -> bool:
        ports = self.used.get(device)
        if ports is None:  # no empty set made per call: fabrics take a million ports
            self.used[device] = {port}
            return True
        if port in ports:
            return False
        ports.add(port)
        return True
