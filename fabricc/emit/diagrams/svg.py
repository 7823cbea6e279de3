"""Diagrams helper: SVG written directly, for pictures that are drawings rather than graphs.

Consumes shapes and text in drawing order; produces a standalone SVG document (UTF-8, no
external references) whose bytes depend only on the calls made: numbers are rounded to one
decimal, attributes are written in the order given.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.emit.diagrams import style


def esc(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


_NUMS: dict[float, str] = {}  # drawings repeat their coordinates: each is formatted once
_NUMS_CAP = 200_000


def num(value: float) -> str:
    found = _NUMS.get(value)
    if found is not None:
        return found
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    if value and len(_NUMS) < _NUMS_CAP:  # -0.0 == 0.0 as keys, but written differently
        _NUMS[value] = text
    return text


@dataclass(slots=True)
class Canvas:
    width: float
    height: float
    title: str
    parts: list[str] = field(default_factory=list)
    defs: dict[str, list[str]] = field(default_factory=dict)  # id -> shapes, drawn by use()

    def rect(
        self,
        x: float,
        y: float,
        w: float,
        h: float,
        *,
        fill: str = "none",
        stroke: str = "none",
        width: float = 1.0,
        rx: float = 0.0,
        tip: str = "",
        dash: str = "",
        cls: str = "",
    ) -> None:
        attrs = f'x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}"'
        if rx:
            attrs += f' rx="{num(rx)}"'
        attrs += f' fill="{fill}" stroke="{stroke}"'
        if stroke != "none":
            attrs += f' stroke-width="{num(width)}"'
        if dash:
            attrs += f' stroke-dasharray="{dash}"'
        if cls:
            attrs += f' class="{cls}"'
        if tip:
            self.parts.append(f"<rect {attrs}><title>{esc(tip)}</title></rect>")
        else:
            self.parts.append(f"<rect {attrs}/>")

    def line(
        self, x1: float, y1: float, x2: float, y2: float, *, stroke: str, width: float = 1.0
    ) -> None:
        self.parts.append(
            f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" '
            f'stroke="{stroke}" stroke-width="{num(width)}"/>'
        )

    def text(
        self,
        x: float,
        y: float,
        text: str,
        *,
        size: float = 9,
        fill: str = style.INK,
        anchor: str = "start",
        bold: bool = False,
        cls: str = "",
    ) -> None:
        weight = ' font-weight="bold"' if bold else ""
        klass = f' class="{cls}"' if cls else ""
        self.parts.append(
            f'<text x="{num(x)}" y="{num(y)}" font-size="{num(size)}" fill="{fill}" '
            f'text-anchor="{anchor}"{weight}{klass}>{esc(text)}</text>'
        )

    def define(self, name: str, draw: Canvas) -> None:
        """Shapes drawn once and placed many times with use() (at the origin of `draw`)."""
        self.defs.setdefault(name, draw.parts)

    def use(self, name: str, x: float, y: float) -> None:
        self.parts.append(f'<use xlink:href="#{name}" x="{num(x)}" y="{num(y)}"/>')

    def group(self, tip: str) -> None:
        self.parts.append(f"<g><title>{esc(tip)}</title>")

    def end_group(self) -> None:
        self.parts.append("</g>")

    def source(self) -> str:
        head = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
            f'width="{num(self.width)}pt" '
            f'height="{num(self.height)}pt" viewBox="0 0 {num(self.width)} {num(self.height)}" '
            f'font-family="{style.FONT_STACK}">\n'
            f"<title>{esc(self.title)}</title>\n"
            f'<rect x="0" y="0" width="{num(self.width)}" height="{num(self.height)}" '
            f'fill="{style.PAPER}"/>\n'
        )
        defs = "".join(
            f'<defs>\n<g id="{name}">\n' + "\n".join(parts) + "\n</g>\n</defs>\n"
            for name, parts in self.defs.items()
        )
        return head + defs + "\n".join(self.parts) + "\n</svg>\n"
