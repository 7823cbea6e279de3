"""Diagrams helper: the visual vocabulary shared by every diagram and the report.

Consumes nothing; provides colours (tiers, device kinds, networks, and the rail colours of
fabricc.emit.cabling so that a rail has one colour in every artifact), the font, text-width
estimates for pinned layouts, and number formatting (link counts, bandwidth).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from fabricc.emit.cabling import NEUTRAL_COLOR, rail_color

FONT = "DejaVu Sans"
# What a browser falls back to where DejaVu Sans is missing (similar, wide metrics).
FONT_STACK = "DejaVu Sans, Verdana, Geneva, Helvetica Neue, Arial, sans-serif"

INK = "#1e293b"
MUTED = "#64748b"
FAINT = "#94a3b8"
HAIRLINE = "#cbd5e1"
PAPER = "#ffffff"
FRAME_FILL = "#f1f5f94d"  # translucent, so edges behind a frame stay visible
ELLIPSIS_FILL = "#ffffff"


@dataclass(frozen=True, slots=True)
class Tone:
    fill: str
    stroke: str


TIER = {
    "core": Tone("#ede9fe", "#6d28d9"),
    "spine": Tone("#e0e7ff", "#4338ca"),
    "leaf": Tone("#ccfbf1", "#0f766e"),
}
# Node roles from the catalog (NodeModel.kind) and IR device kinds.
NODE = {
    "gpu-node": Tone("#ecfccb", "#4d7c0f"),
    "compute-tray": Tone("#ecfccb", "#4d7c0f"),
    "rack-system": Tone("#ecfccb", "#4d7c0f"),
    "tray": Tone("#ecfccb", "#4d7c0f"),
    "nvlink-switch": Tone("#f3e8ff", "#7e22ce"),
    "appliance": Tone("#fce7f3", "#be185d"),
    "server": Tone("#f1f5f9", "#475569"),
    "storage": Tone("#fef3c7", "#b45309"),
    "power-shelf": Tone("#fefce8", "#a16207"),
    "pdu": Tone("#e2e8f0", "#64748b"),
}
OTHER = Tone("#f1f5f9", "#475569")
# Switches in rack elevations, by the role of their network.
NETWORK = {
    "compute": Tone("#e0e7ff", "#4338ca"),
    "storage": Tone("#ffedd5", "#c2410c"),
    "inband": Tone("#ccfbf1", "#0f766e"),
    "oob": Tone("#e2e8f0", "#475569"),
}
GPU = Tone("#d9f99d", "#4d7c0f")
NIC = Tone("#ffffff", "#475569")
LINK = "#94a3b8"
PEER_LINK = "#0f766e"
UPLINK = "#7c3aed"


def rail_hex(rail: int | None) -> str:
    return f"#{rail_color(rail)}"


def rail_tint(rail: int | None, strength: float = 0.22) -> str:
    """The rail colour mixed with white: a fill that keeps dark text readable."""
    base = rail_color(rail) if rail is not None else NEUTRAL_COLOR
    channels = [int(base[i : i + 2], 16) for i in (0, 2, 4)]
    mixed = [round(255 - (255 - c) * strength) for c in channels]
    return "#" + "".join(f"{c:02x}" for c in mixed)


def rail_text(rail: int | None) -> str:
    """The rail colour darkened enough for small text on white (yellow rails included)."""
    base = rail_color(rail) if rail is not None else NEUTRAL_COLOR
    channels = [int(base[i : i + 2], 16) for i in (0, 2, 4)]
    return "#" + "".join(f"{round(c * 0.62):02x}" for c in channels)


def node_tone(kind: str) -> Tone:
    return NODE.get(kind, OTHER)


def network_tone(role: str) -> Tone:
    return NETWORK.get(role, OTHER)


# The narrow and the wide characters, counted by findall in C rather than a loop per character
_NARROW = re.compile(r"[il.,:;|!'()\[\] ]")
_WIDE = re.compile(r"[mwMW@%]")


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in points of `text` in DejaVu Sans (a slight overestimate: boxes never clip)."""
    narrow = len(_NARROW.findall(text))
    wide = len(_WIDE.findall(text))
    units = 0.62 * (len(text) - narrow - wide) + 0.34 * narrow + 0.9 * wide
    return units * size * (1.08 if bold else 1.0)


def count(n: int) -> str:
    return f"{n:,}"


def speed(gbps: int) -> str:
    if gbps >= 1000 and gbps % 1000 == 0:
        return f"{gbps // 1000}T"
    return f"{gbps}G"


def bandwidth(gbps: float) -> str:
    """Aggregate bandwidth, one direction: 800 Gb/s, 102.4 Tb/s, 26.2 Pb/s."""
    for unit, scale in (("Pb/s", 1e6), ("Tb/s", 1e3)):
        if gbps >= scale:
            return f"{gbps / scale:,.1f} {unit}".replace(".0 ", " ")
    return f"{gbps:g} Gb/s"


def links_label(links: int, speeds: dict[int, int]) -> str:
    """`256 × 400G` for one speed, `3 links` plus the total for mixed speeds."""
    if len(speeds) == 1:
        (gbps,) = speeds
        return f"{count(links)} × {speed(gbps)}"
    return f"{count(links)} links"


def line_width(links: int) -> float:
    """Pen width of a bundle of links: grows with the log of the count, within 0.8-3.6 pt."""
    return round(min(0.8 + 0.7 * math.log10(max(links, 1)), 3.6), 2)


def plural(n: int, word: str, words: str | None = None) -> str:
    return f"{count(n)} {word if n == 1 else (words or word + 's')}"
