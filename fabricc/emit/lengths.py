"""Emitter helper: cable lengths per network and kind of link, for summary.json and the report.

Consumes the Fabric IR's cabled links; produces, per network (in order of its first link) and
link kind (endpoint-leaf, leaf-spine, mgmt, ...: in LINK_KINDS order), the number of cables and
how many of each orderable length: each cable once (a DAC or splitter carrying several links
counts once, at the kind of its first link). Counted once per build (Fabric.derived).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from fabricc.ir import LINK_KINDS, Fabric


def cable_lengths(fabric: Fabric) -> dict[str, dict[str, Counter[float]]]:
    """network -> link kind (in LINK_KINDS order) -> orderable length (m) -> cables."""
    return fabric.derived("cable_lengths", lambda: _cable_lengths(fabric))


def _cable_lengths(fabric: Fabric) -> dict[str, dict[str, Counter[float]]]:
    out: dict[str, dict[str, Counter[float]]] = {}
    seen: set[int] = set()
    for network, links in fabric.links_by_network().items():
        kinds: dict[str, Counter[float]] = {}
        for link in links:
            cable = link.cable
            if cable is None or id(cable) in seen:
                continue
            seen.add(id(cable))
            counts = kinds.get(link.kind)
            if counts is None:
                counts = kinds[link.kind] = Counter()
            counts[cable.length_m] += 1
        if kinds:
            out[network] = {kind: kinds[kind] for kind in sorted(kinds, key=_kind_order)}
    return out


def _kind_order(kind: str) -> tuple[int, str]:
    return (LINK_KINDS.index(kind) if kind in LINK_KINDS else len(LINK_KINDS), kind)


def length_stats(counts: Counter[float]) -> dict[str, Any]:
    """Cables, shortest, median (the lower middle: an orderable length) and longest, in m."""
    total = sum(counts.values())
    half = (total + 1) // 2
    seen = 0
    median = 0.0
    for length in sorted(counts):
        seen += counts[length]
        if seen >= half:
            median = length
            break
    return {"cables": total, "min_m": min(counts), "median_m": median, "max_m": max(counts)}


__all__ = ["cable_lengths", "length_stats"]
