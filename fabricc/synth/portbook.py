"""Synthesis helper: the book of used switch and node ports, shared by every pass that cables.

Consumes (device, port) claims from the fat-tree, out-of-band and uplink passes; answers whether a
port is still free, so that no port is ever cabled twice. A synthesis pass made again starts from
the book as it was at a mark (mark, rewind).
"""

from __future__ import annotations

from fabricc.ir import Link


class PortBook:
    """Which ports of which device are taken; a second use is a design error."""

    def __init__(self) -> None:
        self.used: dict[str, set[str]] = {}
        # for passes that look for free cages from a device's top down: per (device, lanes per
        # cage), the highest cage that may still have a free port. A book never frees a port it
        # gave, so a cage found full stays full and the next search starts below it.
        self.scan_from: dict[tuple[str, int], int] = {}
        # the ports taken since mark(), in order, and scan_from as it was then
        self.journal: list[tuple[str, str]] | None = None
        self.marked_scan: dict[tuple[str, int], int] = {}

    def take(self, device: str, port: str) -> bool:
        ports = self.used.get(device)
        if ports is None:  # no empty set made per call: fabrics take a million ports
            self.used[device] = {port}
        elif port in ports:
            return False
        else:
            ports.add(port)
        if self.journal is not None:
            self.journal.append((device, port))
        return True

    def take_link(self, link: Link) -> tuple[str, str] | None:
        """Take the ports of both ends of `link` (each that is free), as take() does one after
        the other: None where both were free, else the first end whose port was taken (the
        fat-tree and rack-scale family builders report it)."""
        free_a = self.take(link.a, link.a_port)
        free_b = self.take(link.b, link.b_port)
        if not free_a:
            return link.a, link.a_port
        return None if free_b else (link.b, link.b_port)

    def mark(self) -> None:
        """Remember this state: rewind() returns to it (the ports taken from here on are
        listed, which costs far less than copying the book)."""
        self.journal = []
        self.marked_scan = dict(self.scan_from)

    def rewind(self) -> None:
        """Give back every port taken since mark() (the book is then as it was there: a
        device first seen since has no entry) and stop listing."""
        assert self.journal is not None, "rewind() without mark()"
        used = self.used
        for device, port in reversed(self.journal):
            ports = used[device]
            ports.discard(port)
            if not ports:
                del used[device]
        self.scan_from = self.marked_scan
        self.journal, self.marked_scan = None, {}
