"""Verification: match discovered links against planned cables.

Consumes the planned cables of one network, the links discovery saw, and the ports planned in
other networks (seen there, they are not this network's business); produces Findings in cable-ID
order, unexpected links last. A planned cable is ok when discovery saw exactly its two ports joined
(wrong-speed when the rate differs), missing when neither port is joined to anything, and miswired
otherwise; two miswired cables whose far ends are crossed are reported as one swap. A border link
to the site network (PlannedCable.external) is ok when its near port is joined to a device the
design does not have - the site's router answers LLDP with its own name, not the plan's.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricc.verify.model import (
    MISSING,
    MISWIRED,
    OK,
    UNEXPECTED,
    WRONG_SPEED,
    Finding,
    PlannedCable,
    Port,
    SeenLink,
    pair,
    port_text,
)


def _link_text(a: Port, b: Port) -> str:
    return f"{port_text(a)} - {port_text(b)}"


def compare(
    planned: Iterable[PlannedCable],
    seen: Iterable[SeenLink],
    *,
    elsewhere: frozenset[Port] = frozenset(),
    check_speed: bool = True,
) -> list[Finding]:
    cables = sorted(planned, key=lambda c: c.cable)
    cable_at: dict[Port, PlannedCable] = {}
    for cable in cables:
        cable_at[cable.a] = cable
        cable_at[cable.b] = cable
    known = {port[0] for port in cable_at} | {port[0] for port in elsewhere}
    links: dict[tuple[Port, Port], SeenLink] = {}
    far: dict[Port, Port] = {}
    for link in seen:
        key = pair(link.a, link.b)
        if key in links:
            continue
        ours = link.a in cable_at or link.b in cable_at
        if not ours and (link.a in elsewhere or link.b in elsewhere):
            continue  # another network's cable
        links[key] = link
        far[link.a] = link.b
        far[link.b] = link.a

    findings: list[Finding] = []
    for cable in cables:
        planned_text = _link_text(cable.a, cable.b)
        match = links.get(pair(cable.a, cable.b))
        if cable.external and match is None:
            other = far.get(cable.a)
            if other is not None and other[0] not in known:
                match = links[pair(cable.a, other)]
                cable_at[other] = cable  # the site's end: no unexpected link of its own
        if match is not None:
            if _rate_differs(cable.rate, match.rate, check_speed):
                findings.append(
                    Finding(
                        WRONG_SPEED,
                        cable.cable,
                        planned_text,
                        f"{planned_text} at {match.rate}",
                        f"planned {cable.rate}, found {match.rate}",
                    )
                )
            else:
                findings.append(Finding(OK, cable.cable, planned_text, planned_text, ""))
            continue
        far_a, far_b = far.get(cable.a), far.get(cable.b)
        found = "; ".join(
            _link_text(end, other)
            for end, other in ((cable.a, far_a), (cable.b, far_b))
            if other is not None
        )
        if far_a is None and far_b is None:
            findings.append(
                Finding(MISSING, cable.cable, planned_text, "", "no link at either port")
            )
            continue
        findings.append(
            Finding(
                MISWIRED,
                cable.cable,
                planned_text,
                found,
                _fix(cable, far_a, far_b, cable_at, far),
            )
        )
    for key, link in sorted(links.items()):
        if link.a in cable_at or link.b in cable_at:
            continue  # part of a miswired cable's finding
        findings.append(Finding(UNEXPECTED, "", "", _link_text(*key), "not in the cabling plan"))
    return findings


def _width(rate: str) -> str | None:
    """The lane count of an InfiniBand rate ("4xNDR" -> "4"); None for Ethernet rates."""
    width, x, _ = rate.partition("x")
    return width if x and width.isdigit() else None


def _rate_differs(planned: str, found: str | None, check_speed: bool) -> bool:
    """Without the speed check a link still has to train at its planned width: a 4x link that
    came up 1x has a bad lane."""
    if found is None:
        return False
    if check_speed:
        return found != planned
    width = _width(planned)
    return width is not None and _width(found) not in (None, width)


def _fix(
    cable: PlannedCable,
    far_a: Port | None,
    far_b: Port | None,
    cable_at: dict[Port, PlannedCable],
    far: dict[Port, Port],
) -> str:
    """The move that fixes a miswired cable: a swap with the cable it is crossed with, when
    discovery shows the two crossed; otherwise where its end has to go."""
    for other, wrong in ((cable.b, far_a), (cable.a, far_b)):
        if wrong is None:
            continue
        partner = cable_at.get(wrong)
        if partner is None or partner is cable:
            continue
        mate = partner.b if wrong == partner.a else partner.a
        if far.get(mate) == other:
            first, second = sorted((cable.cable, partner.cable))
            return (
                f"swap the connectors at {port_text(other)} and {port_text(wrong)} "
                f"(cables {first} and {second} are crossed)"
            )
    moves = [
        f"the cable at {port_text(end)} goes to {port_text(target)}, not {port_text(wrong)}"
        for end, target, wrong in ((cable.a, cable.b, far_a), (cable.b, cable.a, far_b))
        if wrong is not None
    ]
    return "; ".join(moves)
