"""Emitter `diagrams`: Graphviz sources and SVG pictures of the design, for reviewers.

Consumes the Fabric IR; produces diagrams/<name>.dot for every graph diagram (always) and
diagrams/<name>.svg (when Graphviz `dot` is installed and outputs.diagrams.render allows it),
plus the rack elevations and floor plan as SVG written directly. The builders, in report order:
fabric overview per network, scalable-unit detail, planes and rails, NVLink domains,
out-of-band management, floor plan and rack elevations.
"""

from __future__ import annotations

from fabricc.emit import Artifact
from fabricc.emit.diagrams.families import family_diagram
from fabricc.emit.diagrams.management import management
from fabricc.emit.diagrams.model import DRAWN, Diagram
from fabricc.emit.diagrams.nvlink import nvlink_diagrams
from fabricc.emit.diagrams.overview import overview
from fabricc.emit.diagrams.planes import planes
from fabricc.emit.diagrams.racks import elevations, floorplan
from fabricc.emit.diagrams.render import should_render, to_svg
from fabricc.emit.diagrams.su import su_diagrams
from fabricc.ir import Fabric

FOLDER = "diagrams"


def diagrams(fabric: Fabric) -> list[Diagram]:
    """Every diagram of the design, in the order the report shows them."""
    return fabric.derived("diagrams", lambda: _diagrams(fabric))


def _diagrams(fabric: Fabric) -> list[Diagram]:
    networks = [t for t in fabric.networks.values() if t.role != "oob"]
    out: list[Diagram] = []
    # Compute fabrics first: they are what a reviewer looks at first.
    ordered = sorted(networks, key=lambda t: t.role != "compute")
    out.extend(overview(fabric, t.name) for t in ordered)
    # Families other than the fat-tree draw their own shape (groups, torus, rails) beside it.
    out.extend(d for t in ordered if (d := family_diagram(fabric, t.name)) is not None)
    for topology in ordered:
        out.extend(su_diagrams(fabric, topology.name))
    for topology in ordered:
        view = planes(fabric, topology.name)
        if view is not None:
            out.append(view)
    out.extend(nvlink_diagrams(fabric))
    oob = management(fabric)
    if oob is not None:
        out.append(oob)
    out.append(floorplan(fabric))
    out.extend(elevations(fabric))
    return out


def emit(fabric: Fabric) -> list[Artifact]:
    rendering = should_render(fabric)
    artifacts: list[Artifact] = []
    for diagram in diagrams(fabric):
        if diagram.engine == DRAWN:
            artifacts.append((f"{FOLDER}/{diagram.name}.svg", diagram.source))
            continue
        artifacts.append((f"{FOLDER}/{diagram.name}.dot", diagram.source))
        if rendering:
            artifacts.append((f"{FOLDER}/{diagram.name}.svg", to_svg(diagram)))
    return artifacts
