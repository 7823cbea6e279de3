"""Synthesis helper: the book of used switch and node ports, shared by every pass that cables.

Consumes (device, port) claims from the fat-tree, out-of-band and uplink passes; answers whether a
port is still free, so that no port is ever cabled twice.
"""

from __future__ import annotations


class PortBook:
    """Which ports of which device are taken; a second use is a design error."""

    def __init__(self) -> None:
        self.used: dict[str, set[str]] = {}

    def take(self, device: str, port: str) -> bool:
        ports = self.used.get(device)
        if ports is None:  # no empty set made per call: fabrics take a million ports
            self.used[device] = {port}
            return True
        if port in ports:
            return False
        ports.add(port)
        return True
