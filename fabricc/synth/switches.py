"""Synthesis helper: add one switch of a network to the design, named from its hostname pattern.

Consumes the network (hostname patterns, spec path), the switch model and the switch's stable fields
(su, rail, plane, pod; 0-based) and, on a torus, its coordinates; produces the Device in the fabric
and its name at the end of the topology's list for its tier. Every topology family (fat-tree,
rail-only, dragonfly-plus, torus) adds its switches here, so they are named and indexed alike.

A switch's number `n` (and `Device.index`) counts within its series: its network, tier, plane
and - for leaves - leaf class. Each series grows on its own, so adding scalable units, nodes,
storage arrays or a plane appends to a series or opens a new one and never renames a switch of
another. The default patterns tell the series apart: the network's second and later leaf classes
add their node group's name (series_mark; where the network's name says it already, the
group's model: "storage-array-leaf001" beside "storage-leaf001"), and the second and later
planes add "p<plane>" ("compute-p2-leaf001"), as cable IDs add "-P2". A written pattern applies
to every series; where it does not tell them apart (no {group} or {plane}), the build reports the
name generated twice at the pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.ir import Device, Fabric, NetworkTopology
from fabricc.spec.models import Hostnames
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.synth.naming import format_name

SeriesKey = tuple[str, str | None, int | None]  # (tier, leaf class from the second on, plane)


def default_pattern(role: str, series: str | None, plane: int | None) -> str:
    """The unwritten pattern of a tier, with the marks of a series other than the first."""
    pattern: str = Hostnames.model_fields[role].default
    marks = (f"-{series}" if series else "") + (f"-p{plane + 1}" if plane else "")
    return pattern.replace("{network}", "{network}" + marks, 1)


def series_mark(network: str, series: str, model: str | None) -> str:
    """What a leaf class adds to the default names: its node group's name, unless the network's
    name already says every word of it - then its node model's name less those words - so node
    group storage (storage arrays) on network storage gives storage-array-leaf001, not
    storage-storage-leaf001."""
    said = set(network.split("-"))
    if not set(series.split("-")) <= said:
        return series
    rest = "-".join(word for word in (model or "").split("-") if word and word not in said)
    return rest or series


@dataclass(frozen=True, slots=True)
class Place:
    """A switch's stable fields (0-based): what a hostname pattern may show besides `n`."""

    su: int | None = None
    rail: int | None = None
    plane: int | None = None
    pod: int | None = None


def add_switch(
    fabric: Fabric,
    topology: NetworkTopology,
    network: ResolvedNetwork,
    counts: dict[SeriesKey, int],
    role: str,
    model: str,
    place: Place,
    *,
    series: str | None = None,
    group: str | None = None,
    coordinates: tuple[int, ...] | None = None,
) -> str:
    """Add a switch; `series` names its leaf class from the network's second on, `group` is
    what a written pattern's {group} gives (the leaf class's first node group), `coordinates`
    a torus switch's place on the torus."""
    plane = place.plane
    key = (role, series, plane)
    index = counts.get(key, 0)
    counts[key] = index + 1
    hostnames = network.spec.hostnames
    nodes = fabric.loaded.spec.nodes
    mark = (
        series_mark(network.name, series, nodes[series].model if series in nodes else None)
        if series is not None
        else None
    )
    pattern = (
        getattr(hostnames, role)
        if role in hostnames.model_fields_set
        else default_pattern(role, mark, plane)
    )
    values = {
        field: (value + 1 if value is not None else 0)
        for field, value in (
            ("su", place.su),
            ("rail", place.rail),
            ("plane", plane),
            ("pod", place.pod),
        )
    }
    text = {"group": group} if group is not None else {}
    name = format_name(
        pattern, network=network.name, role=role, n=index + 1, i=index, **text, **values
    )
    switch = fabric.loaded.catalog.catalog.switches[model]
    fabric.add(
        Device(
            name=name,
            kind="switch",
            model=model,
            role=role,
            index=index,
            network=network.name,
            su=place.su,
            rail=place.rail,
            plane=plane,
            pod=place.pod,
            series=series,
            coordinates=coordinates,
            height_u=switch.height_u,
            power_w=switch.power_w,
            spec_path=(*network.path, "switches", role),
        )
    )
    topology.switches.setdefault(role, []).append(name)
    return name
