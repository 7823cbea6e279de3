"""Verification types: ports, planned cables, discovered links and findings.

A port is (device, IR port name) - the name the cabling plan prints ("17/2", "OSFP4/P2"); the
parsers translate what the tools report (InfiniBand port numbers, SONiC or Cumulus interface
names) into these before anything is compared.
"""

from __future__ import annotations

from dataclasses import dataclass

Port = tuple[str, str]

OK = "ok"
MISWIRED = "miswired"
MISSING = "missing"
UNEXPECTED = "unexpected"
WRONG_SPEED = "wrong-speed"
STATUSES = (OK, MISWIRED, MISSING, UNEXPECTED, WRONG_SPEED)


def port_text(port: Port) -> str:
    return f"{port[0]}:{port[1]}"


def pair(a: Port, b: Port) -> tuple[Port, Port]:
    """The two ends of a link in a canonical order (a cable has no direction)."""
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class PlannedCable:
    cable: str  # cable ID from the cabling plan
    a: Port
    b: Port
    rate: str  # as the discovery tool reports it: "4xNDR", "400G"
    external: bool = False  # b is the site's network, whose names discovery does not know


@dataclass(frozen=True, slots=True)
class SeenLink:
    a: Port
    b: Port
    rate: str | None  # None when the tool did not report one


@dataclass(frozen=True, slots=True)
class Finding:
    status: str
    cable: str  # "" for an unexpected link
    planned: str  # "dev:port - dev:port", "" for an unexpected link
    found: str  # what discovery saw at those ports, "" when nothing
    detail: str

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.cable, self.status, self.planned, self.found, self.detail)
