"""Twin stage: failure drills on a booted routed fabric.

Consumes a Booted network in its Lab; takes down one spine (every interface of the first spine),
then one leaf uplink (the first uplink of the first leaf that keeps a path without it; a tree,
whose leaves have only their uplink, is reported as skipped with the reason), each in turn and
restored after; produces per drill the leaf pairs that still reach each other, those that lost reachability although the
remaining cables still connect them (failures: routing did not heal), and those the design cannot
keep (no path left in the cabling; named, not failures).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from fabricc.twin.lab import Lab
from fabricc.twin.routing import (
    Booted,
    Router,
    Wire,
    _leaves,
    _pings,
    all_peers,
    set_links,
    settled_state,
)

SETTLE = 12.0  # s at most: bgpd sees the link go down at once; a hold timer (9 s) bounds the rest
RECOVER = 30.0  # s: sessions back after a drill (connect retry 10 s, FRR datacenter default)
RECOVER_POLL = 0.5  # s between looks: a session is back about a second after its link


def _connected(booted: Booted, down: set[str], cut: set[str], a: str, b: str) -> bool:
    adjacent: dict[str, list[str]] = {}
    for wire in booted.wires:
        if wire.cable in cut or wire.a in down or wire.b in down:
            continue
        adjacent.setdefault(wire.a, []).append(wire.b)
        adjacent.setdefault(wire.b, []).append(wire.a)
    seen, stack = {a}, [a]
    while stack:
        node = stack.pop()
        for nxt in adjacent.get(node, []):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return b in seen


def _pairs(booted: Booted, down: set[str]) -> list[tuple[Router, Router]]:
    leaves = [leaf for leaf in _leaves(booted) if leaf.name not in down]
    return [(a, b) for a in leaves for b in leaves if a is not b and a.component == b.component]


def _established(lab: Lab, booted: Booted, names: set[str]) -> dict[str, int]:
    found = all_peers(lab, [booted.routers[name] for name in sorted(names)])
    return {
        name: sum(1 for info in peers.values() if info.get("state") == "Established")
        for name, peers in found.items()
    }


def take_down(lab: Lab, booted: Booted, wires: list[Wire]) -> dict[str, int]:
    """Takes the wires down; returns the sessions their switches had Established before."""
    before = _established(lab, booted, {d for w in wires for d in (w.a, w.b)})
    set_links(lab, booted, wires, "down")
    return before


def bring_up(lab: Lab, booted: Booted, wires: list[Wire], before: dict[str, int]) -> None:
    """Brings the wires up and waits (bounded) until their switches have their sessions
    Established again, so that the next drill starts from the whole fabric."""
    set_links(lab, booted, wires, "up")
    end = time.monotonic() + min(RECOVER, lab.remaining())
    while before and time.monotonic() < end:
        now = _established(lab, booted, set(before))
        if all(now[name] >= count for name, count in before.items()):
            return
        time.sleep(RECOVER_POLL)


def _drill(
    lab: Lab,
    booted: Booted,
    name: str,
    wires: list[Wire],
    down: set[str],
    pairs: list[tuple[Router, Router]] | None = None,
    *,
    while_down: Callable[[], list[dict[str, object]]] | None = None,
    recover: bool = True,
) -> dict[str, object]:
    """`pairs`: the (from, to) pings to make; every pair of leaves still up by default.
    `while_down`: a further check made once the pairs are settled, before the wires come back
    (its failures join the drill's). `recover`: wait until the switches have their sessions
    back after the drill; False for the last drill of a network (nothing after it needs the
    fabric whole: the wires are brought up, not waited for). The result's `seconds` (down,
    settle, up again) is for timings.json, not the report."""
    start = time.monotonic()
    cut = {wire.cable for wire in wires}
    pairs = _pairs(booted, down) if pairs is None else pairs
    before = take_down(lab, booted, wires) if recover else {}
    if not recover:
        set_links(lab, booted, wires, "down")
    extra: list[dict[str, object]] = []
    try:
        end = time.monotonic() + min(SETTLE, lab.remaining())
        pending = list(pairs)  # both ends lose carrier at once: a pair reached stays reached
        last: object = None
        while True:
            # a pair is lost only if a ping sent after the settle time fails: a round that
            # began before it (a long first round) is followed by another
            settled = time.monotonic() > end
            jobs = [(a.ns, str(a.loopback), str(b.loopback)) for a, b in pending]
            reached = _pings(lab, jobs)
            pending = [pair for pair, ok in zip(pending, reached, strict=True) if not ok]
            lost = [(a.name, b.name) for a, b in pending]
            healable = [p for p in lost if _connected(booted, down, cut, *p)]
            if not healable or settled:
                break
            # both ends see the carrier go: once BGP has settled, waiting heals nothing more
            now = settled_state(lab, booted)
            if now is not None and now == last:
                break
            last = now
            time.sleep(1.0)
        if while_down is not None:
            extra = while_down()
    finally:
        restored = time.monotonic()
        bring_up(lab, booted, wires, before)
    return {
        "seconds": (round(restored - start, 1), round(time.monotonic() - restored, 1)),
        "drill": name,
        "down": sorted(down) or sorted(cut),
        "pairs": len(pairs),
        "still_reach": len(pairs) - len(lost),
        "lost_by_design": [f"{a} -> {b}" for a, b in lost if (a, b) not in healable],
        "failures": [
            *(
                {"from": a, "to": b, "problem": "unreachable though a path remains"}
                for a, b in healable
            ),
            *extra,
        ],
    }


def run(lab: Lab, booted: Booted, *, final: bool = False) -> list[dict[str, object]]:
    """The spine and leaf uplink drills; `final`: nothing disturbs or checks the fabric after
    them, so the last does not wait for its sessions to come back."""
    planned: list[tuple[str, list[Wire], set[str]]] = []
    results: list[dict[str, object]] = []
    skipped: list[dict[str, object]] = []
    spines = sorted(r.name for r in booted.routers.values() if r.role != "leaf")
    if spines:
        spine = spines[0]
        wires = [w for w in booted.wires if spine in (w.a, w.b)]
        planned.append(("one spine down", wires, {spine}))
    # an uplink: not the MLAG peer link, nor a bond member standing behind another; of the
    # first leaf that keeps a path without it (cutting a leaf's only link cuts it off: in a tree
    # there is nothing to heal)
    candidates = 0
    for name in sorted(leaf.name for leaf in _leaves(booted)):
        uplinks = [
            w for w in booted.wires if name in (w.a, w.b) and w.kind != "peer" and not w.bundled
        ]
        if not uplinks:
            continue
        candidates += 1
        others = [r.name for r in booted.routers.values() if r.name != name]
        if any(_connected(booted, set(), {uplinks[0].cable}, name, o) for o in others):
            planned.append(("one leaf uplink down", uplinks[:1], set()))
            break
    else:
        if candidates:
            skipped.append(
                {
                    "drill": "one leaf uplink down",
                    "skipped": "every leaf's uplink is its only link (a tree): the design cannot "
                    "keep a leaf whose uplink is down, so there is nothing to heal",
                    "failures": [],
                }
            )
    for k, (name, wires, down) in enumerate(planned):
        last = final and k == len(planned) - 1
        results.append(_drill(lab, booted, name, wires, down, recover=not last))
    return results + skipped
