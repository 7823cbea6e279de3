"""Diagrams helper: the Diagram value every diagram builder returns.

Produced by the builders (overview, su, planes, nvlink, management, racks); consumed by the
`diagrams` emitter (files) and the `report` emitter (figures with captions).
"""

from __future__ import annotations

from dataclasses import dataclass

PINNED = "neato"  # positions computed by fabricc: `neato -n2`
RANKED = "dot"  # small graphs that Graphviz lays out itself
DRAWN = "svg"  # SVG written by fabricc directly (no Graphviz)

# Report sections, in reading order: (key, heading).
SECTIONS = (
    ("overview", "Fabric overview"),
    ("su", "Scalable units"),
    ("planes", "Planes and rails"),
    ("nvlink", "NVLink domains"),
    ("management", "Storage and management networks"),
    ("racks", "Racks and floor"),
)


@dataclass(frozen=True, slots=True)
class Diagram:
    name: str  # file stem in diagrams/, unique within a build
    title: str
    caption: str  # one or two sentences for the report
    section: str  # a key of SECTIONS
    engine: str  # PINNED, RANKED or DRAWN
    source: str  # DOT text, or the SVG itself when engine is DRAWN
    labels: tuple[str, ...] = ()  # names the picture must show: devices, GPUs (tests check them)

    @property
    def command(self) -> tuple[str, ...]:
        """The Graphviz command line that renders `source` (stdin to stdout)."""
        if self.engine == PINNED:
            return ("dot", "-Kneato", "-n2", "-Tsvg")
        return ("dot", "-Tsvg")
