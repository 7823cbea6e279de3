"""Load stage, last look: is the design small enough to build on this machine?

Consumes a LoadedSpec (node counts, the ports each group attaches) and the memory this process
may use (its address-space limit and the machine's available memory); produces one positioned
error, before synthesis starts, for a design whose estimated size cannot fit - instead of a
MemoryError deep inside synthesis. The estimate is deliberately rough: endpoint links from the
spec, switch links as twice as many (a non-blocking tree of two or three tiers), and the bytes a
link costs measured on this program (about 1.3 KB each when validating DGX H100 designs of 1,000
and 4,000 nodes; a build needs more, for the text of its files). The check uses the lower
figure, so that it refuses only what surely cannot fit.
"""

from __future__ import annotations

import resource
from pathlib import Path

from fabricc.errors import Diagnostic, error
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.yamlsource import format_path

BASE_BYTES = 100 * 2**20  # the interpreter, the catalog and the imported modules
LINK_BYTES = 1_300  # per link, validating (measured, see above): a lower bound for a build
SWITCH_LINKS_PER_ENDPOINT_LINK = 2


def available_bytes() -> int | None:
    """What this process may still allocate: the lower of its address-space limit and the
    machine's available memory; None when neither is known."""
    limits = []
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        limits.append(soft)
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                limits.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    return min(limits) if limits else None


def endpoint_links(loaded: LoadedSpec) -> dict[str, int]:
    """Per node group, the links its nodes (or the trays of its rack systems) bring."""
    catalog = loaded.catalog.catalog
    links: dict[str, int] = {}
    for network in loaded.networks.values():
        for attachment in network.attachments:
            group = loaded.spec.nodes[attachment.group]
            model = catalog.nodes[group.model]
            units = group.count
            if model.rack_scale is not None:
                units *= model.rack_scale.tray_count
            links[attachment.group] = links.get(attachment.group, 0) + units * len(
                attachment.ports
            ) * max(1, attachment.breakout)
    return links


def estimated_links(loaded: LoadedSpec) -> int:
    """Every link of the design, roughly: its endpoint links and twice as many between switches
    (a non-blocking tree of two or three tiers)."""
    return sum(endpoint_links(loaded).values()) * (1 + SWITCH_LINKS_PER_ENDPOINT_LINK)


def check_size(loaded: LoadedSpec, available: int | None = None) -> list[Diagnostic]:
    """An error when the design's estimated memory exceeds what the process may use."""
    available = available if available is not None else available_bytes()
    links = endpoint_links(loaded)
    if available is None or not links:
        return []
    total = estimated_links(loaded)
    needed = BASE_BYTES + total * LINK_BYTES
    if needed <= available:
        return []
    largest = max(links, key=lambda g: (links[g], g))
    path = ("nodes", largest, "count")
    group = loaded.spec.nodes[largest]
    catalog = loaded.catalog.catalog
    gpus = sum(g.count * catalog.nodes[g.model].gpus for g in loaded.spec.nodes.values())
    return [
        error(
            f"{group.count:,} {group.model} make a design of about {gpus:,} GPUs and "
            f"{total:,} links, which needs at least {_gib(needed)} of memory; this process may "
            f"use {_gib(available)}",
            path=format_path(path),
            location=loaded.source.value(path),
            hint="check the count; a design this large builds only where that much memory is free",
        )
    ]


def _gib(size: int) -> str:
    return f"{size / 2**30:,.1f} GiB"
