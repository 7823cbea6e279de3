"""Twin stage: the MLAG drills on a booted routed fabric.

Consumes a Booted network in its Lab; finds its MLAG pairs (two routed switches joined by peer
cables, each with an NVUE peer link); for the first pair, takes down one peer entirely, then only
that peer's uplinks (every cable but the peer link), each in turn and restored after. Produces
per drill, as the other drills do, the leaf pairs that still reach each other, those lost though
the cabling still connects them (failures: with the uplinks down, the peer's only path is the peer
link, which must be routed: Cumulus MLAG, "Peer Link Routing") and those the design cannot keep;
the peer-down drill also pings the pair's VRR gateway addresses, which the surviving peer must
answer from every other leaf.
"""

from __future__ import annotations

from fabricc.twin.drills import _connected, _drill
from fabricc.twin.lab import Lab
from fabricc.twin.nvue_frr import vrr_addresses
from fabricc.twin.routing import Booted, _leaves, _pings


def pairs(booted: Booted) -> list[tuple[str, str]]:
    found: set[tuple[str, str]] = set()
    for wire in booted.wires:
        if wire.kind != "peer":
            continue
        a, b = booted.routers[wire.a], booted.routers[wire.b]
        if not (a.routes and b.routes):
            continue  # a layer-2 pair: its drill is the routed fabric's, not this one
        if a.bundles and b.bundles and a.bundles.peerlink and b.bundles.peerlink:
            found.add((min(wire.a, wire.b), max(wire.a, wire.b)))
    return sorted(found)


def _gateways(booted: Booted, switch: str) -> list[str]:
    found = booted.routers[switch].bundles
    if found is None:
        return []
    return sorted(
        {a.partition("/")[0] for entry in found.svis.values() for a in vrr_addresses(entry)}
    )


def _gateway_check(lab: Lab, booted: Booted, down: str, survivor: str) -> list[dict[str, object]]:
    """With `down` down (the drill's wires are down while this runs), the VRR gateways of the
    pair answer (from the survivor) every other leaf that still has a path to the survivor; a
    miss is tried once more."""
    cut = {w.cable for w in booted.wires if down in (w.a, w.b)}
    sources = [
        leaf
        for leaf in _leaves(booted)
        if leaf.name not in (down, survivor)
        and _connected(booted, {down}, cut, leaf.name, survivor)
    ]
    jobs = [(s.ns, str(s.loopback), g) for s in sources for g in _gateways(booted, survivor)]
    if not jobs:
        return []
    reached = _pings(lab, jobs)
    again = [k for k, ok in enumerate(reached) if not ok]
    for k, ok in zip(again, _pings(lab, [jobs[k] for k in again]), strict=True):
        reached[k] = ok
    return [
        {"from": s.name, "to": f"VRR {g} of {down}+{survivor}", "problem": "gateway lost"}
        for (ns, _src, g), ok in zip(jobs, reached, strict=True)
        if not ok
        for s in sources
        if s.ns == ns
    ]


def run(lab: Lab, booted: Booted, *, final: bool = False) -> list[dict[str, object]]:
    """The MLAG drills; `final`: nothing disturbs or checks the fabric after them, so the last
    does not wait for its sessions to come back."""
    found = pairs(booted)
    if not found:
        return []
    first, second = found[0]
    results: list[dict[str, object]] = []
    wires = [w for w in booted.wires if first in (w.a, w.b)]
    uplinks = [w for w in wires if w.kind != "peer"]
    drill = _drill(
        lab,
        booted,
        "one MLAG peer down",
        wires,
        {first},
        while_down=lambda: _gateway_check(lab, booted, first, second),
        recover=not (final and not uplinks),
    )
    drill["mlag_pair"] = [first, second]
    results.append(drill)
    if uplinks:
        # the peer itself and the leaves: the peer keeps its hosts, so it must still reach out
        peer = booted.routers[first]
        ends = [r for r in [peer, *_leaves(booted)] if r.loopback and r.component == peer.component]
        ends = list({r.name: r for r in ends}.values())
        pings = [(a, b) for a in ends for b in ends if a is not b]
        drill = _drill(
            lab, booted, "one MLAG peer's uplinks down", uplinks, set(), pings, recover=not final
        )
        drill["mlag_pair"] = [first, second]
        results.append(drill)
    return results
