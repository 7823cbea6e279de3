"""Check stage: cables ordered at their family's longest length.

Consumes the Fabric IR after cabling (each cable's family and length) and the catalog's cable
families (the orderable lengths); produces one warning per family whose longest length some
runs need: the planned route has no margin left, and a longer route on site (a detour round a
column, a riser further than drawn) has no cable to take (ACCs at 5 m, OM4 fiber at 50 m).
"""

from __future__ import annotations

from collections import Counter

from fabricc.errors import Diagnostic, warning
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path


def check_reach(fabric: Fabric) -> list[Diagnostic]:
    """One warning per network and cable family some of whose runs need the longest length,
    at the network (its medium decides what may be chosen past the reach)."""
    longest = {
        name: max(family.lengths)
        for name, family in fabric.loaded.catalog.catalog.cables.items()
        if len(family.lengths) > 1
    }
    at_limit: Counter[tuple[str, str, float]] = Counter()
    seen: set[str] = set()  # a cable of several links (a splitter's legs) counts once
    for link in fabric.links:
        cable = link.cable
        if cable is None:
            continue
        limit = longest.get(cable.family)
        if limit is None or cable.length_m < limit or cable.id in seen:
            continue
        seen.add(cable.id)
        at_limit[(link.network, cable.family, cable.length_m)] += cable.quantity
    source = fabric.loaded.source
    paths = {name: net.path for name, net in fabric.loaded.networks.items()}
    return [
        warning(
            f"{count} {family} cables of network {network} are ordered at the family's longest "
            f"length, {length:g} m: their runs have no margin for a longer route on site",
            path=format_path(paths.get(network, ("networks", network))),
            location=source.value(paths.get(network, ("networks", network))),
            hint="check those runs on the floor, or place the racks closer (site.racks_per_row, "
            "site.row_pitch_m); a longer medium is chosen only past the reach",
        )
        for (network, family, length), count in sorted(at_limit.items())
    ]
