"""Diagrams helper: pinned layouts computed by fabricc, rendered with `neato -n2`.

Consumes rows of boxes (a tier of switches, a group of nodes) and the links between them;
produces a dot.Graph whose every node carries `pos="x,y!"` in points. Positions derive only from
the order of the rows and boxes the caller gives, so the same design always gives the same
picture, and Graphviz has no layout work to do (fast for any size). Edge labels are separate
nodes placed at a computed point of their edge, on a white ground so that they stay readable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from fabricc.emit.diagrams import style
from fabricc.emit.diagrams.dot import Graph, Html, html_escape
from fabricc.emit.diagrams.ranked import title_block

TITLE_SIZE = 10.0
LINE_SIZE = 8.0
PIP = 6.0
PIP_GAP = 1.5
PIPS_PER_ROW = 16
PAD_X = 10.0
PAD_Y = 6.0
GUTTER = 132.0  # left margin for tier names and link totals


@dataclass(slots=True)
class Box:
    """A switch, a node, or a group of them; sized from its text unless a width is given."""

    id: str
    title: str
    tone: style.Tone
    lines: tuple[str, ...] = ()
    pips: tuple[str, ...] = ()  # one small square per member, in the member's colour
    inline: bool = False  # title and pips on one line (a node with its NICs)
    html: Html | None = None  # a label of the caller's own (width and height must be given)
    dashed: bool = False
    tooltip: str = ""
    column: int | None = None  # boxes of one column line up across rows
    panel: int | None = 0  # panels (planes) sit side by side; None: centred on the whole width
    width: float = 0.0
    height: float = 0.0
    x: float = 0.0
    y: float = 0.0  # centre; y grows downwards here and is flipped for Graphviz

    def __post_init__(self) -> None:
        if self.inline:
            pips = len(self.pips) * (PIP + 2.5)
            self.width = self.width or round(
                style.text_width(self.title, LINE_SIZE + 0.5, bold=True) + pips + 2 * PAD_X - 2, 1
            )
            self.height = self.height or 17.0
        if not self.width:
            self.width = natural_width(self.title, self.lines, len(self.pips))
        if not self.height:
            self.height = natural_height(self.lines, len(self.pips))

    @property
    def top(self) -> float:
        return self.y - self.height / 2

    @property
    def bottom(self) -> float:
        return self.y + self.height / 2


MAX_PIPS = 64  # more members than this: the box shows only its count


def pip_rows(pips: int) -> int:
    return -(-pips // PIPS_PER_ROW) if 0 < pips <= MAX_PIPS else 0


def natural_width(title: str, lines: Sequence[str], pips: int) -> float:
    widths = [style.text_width(title, TITLE_SIZE, bold=True)]
    widths += [style.text_width(line, LINE_SIZE) for line in lines]
    if pip_rows(pips):
        widths.append(min(pips, PIPS_PER_ROW) * (PIP + PIP_GAP))
    return round(max(widths) + 2 * PAD_X, 1)


def natural_height(lines: Sequence[str], pips: int) -> float:
    text = TITLE_SIZE * 1.25 + len(lines) * LINE_SIZE * 1.3
    rows = pip_rows(pips)
    return round(text + rows * (PIP + PIP_GAP) + (3 if rows else 0) + 2 * PAD_Y, 1)


def inline_label(box: Box) -> Html:
    cells = [
        f'<TD ALIGN="LEFT"><FONT POINT-SIZE="{LINE_SIZE + 0.5:g}"><B>{html_escape(box.title)}'
        "</B></FONT></TD>",
        '<TD WIDTH="3"></TD>',
    ]
    for colour in box.pips:
        cells.append(
            f'<TD FIXEDSIZE="TRUE" WIDTH="{PIP:g}" HEIGHT="{PIP:g}" BGCOLOR="{colour}"></TD>'
        )
    return Html(
        '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="1" CELLPADDING="0">'
        f"<TR>{''.join(cells)}</TR></TABLE>"
    )


def box_label(box: Box) -> Html:
    if box.html is not None:
        return box.html
    if box.inline:
        return inline_label(box)
    rows = [f"<TR><TD><B>{html_escape(box.title)}</B></TD></TR>"]
    for line in (line for line in box.lines if line):
        rows.append(
            f'<TR><TD><FONT POINT-SIZE="{LINE_SIZE:g}" COLOR="{style.MUTED}">'
            f"{html_escape(line)}</FONT></TD></TR>"
        )
    if pip_rows(len(box.pips)):
        cells: list[str] = []
        for start in range(0, len(box.pips), PIPS_PER_ROW):
            chunk = box.pips[start : start + PIPS_PER_ROW]
            tds = "".join(
                f'<TD FIXEDSIZE="TRUE" WIDTH="{PIP:g}" HEIGHT="{PIP:g}" BGCOLOR="{colour}"></TD>'
                for colour in chunk
            )
            cells.append(f"<TR>{tds}</TR>")
        across = min(len(box.pips), PIPS_PER_ROW)
        width = across * (PIP + PIP_GAP) + PIP_GAP
        height = pip_rows(len(box.pips)) * (PIP + PIP_GAP) + PIP_GAP
        rows.append(
            f'<TR><TD><TABLE BORDER="0" CELLSPACING="{PIP_GAP:g}" CELLPADDING="0" '
            f'FIXEDSIZE="TRUE" WIDTH="{width:g}" HEIGHT="{height:g}">'
            f"{''.join(cells)}</TABLE></TD></TR>"
        )
    return Html(
        f'<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">{"".join(rows)}</TABLE>'
    )


@dataclass(slots=True)
class Row:
    """One horizontal band: a tier of switches or a layer of nodes."""

    name: str  # shown in the left gutter, e.g. SPINE
    detail: str  # under the name, e.g. 16 x QM9700
    boxes: list[Box]
    y: float = 0.0

    @property
    def height(self) -> float:
        return max((b.height for b in self.boxes), default=0.0)


@dataclass(slots=True)
class _Label:
    x: float
    y: float
    width: float
    height: float

    def overlaps(self, other: _Label) -> bool:
        return (
            abs(self.x - other.x) * 2 < self.width + other.width + 4
            and abs(self.y - other.y) * 2 < self.height + other.height + 2
        )


@dataclass(slots=True)
class Frame:
    """A translucent rectangle behind a set of boxes (a plane, a pod), with a caption."""

    title: str
    boxes: list[Box]
    pad: float = 14.0


@dataclass(slots=True)
class Scene:
    """A pinned diagram under construction."""

    name: str
    title: str
    subtitle: str = ""
    rows: list[Row] = field(default_factory=list)
    gap: float = 14.0
    row_gap: float = 86.0
    width: float = 0.0
    graph: Graph = field(init=False)
    _labels: list[_Label] = field(default_factory=list)
    _box: dict[str, Box] = field(default_factory=dict)
    _count: int = 0

    def __post_init__(self) -> None:
        self.graph = Graph(
            self.name,
            graph={
                **title_block(self.title, self.subtitle),
                "splines": "false",
                "outputorder": "edgesfirst",
            },
            node_defaults={
                "shape": "box",
                "style": "rounded,filled",
                "fontname": style.FONT,
                "fontsize": f"{TITLE_SIZE:g}",
                "fontcolor": style.INK,
                "fixedsize": "true",
                "penwidth": "1.2",
                "margin": "0",
            },
            edge_defaults={"color": style.LINK, "penwidth": "0.8"},
            comments=[
                f"{self.name}: generated by fabricc; positions are fixed, render with",
                f"  dot -Kneato -n2 -Tsvg {self.name}.dot -o {self.name}.svg",
            ],
        )

    # -- layout ---------------------------------------------------------------------------

    def adopt(self, rows: list[Row]) -> None:
        """Take rows whose boxes the caller placed itself (layouts other than rows)."""
        self.rows = rows
        for row in rows:
            for box in row.boxes:
                self._box[box.id] = box

    def add_row(self, name: str, detail: str, boxes: list[Box]) -> Row:
        row = Row(name, detail, boxes)
        self.rows.append(row)
        for box in boxes:
            self._box[box.id] = box
        return row

    def place(self, row_gaps: Sequence[float] | None = None, panel_gap: float = 48.0) -> None:
        """Give every box its position: rows top to bottom; panels side by side; within a panel,
        boxes of one column line up across rows and the other boxes of a row are centred."""
        cells: dict[tuple[int, int | None], list[Box]] = {}
        for index, row in enumerate(self.rows):
            for box in row.boxes:
                cells.setdefault((index, box.panel), []).append(box)
        panels = sorted({panel for _, panel in cells if panel is not None})
        column_width: dict[tuple[int, int], float] = {}
        panel_width: dict[int, float] = dict.fromkeys(panels, 0.0)
        for (_, panel), boxes in cells.items():
            if panel is None:
                continue
            free = [b for b in boxes if b.column is None]
            panel_width[panel] = max(panel_width[panel], self._span(free))
            for column in {b.column for b in boxes if b.column is not None}:
                used = self._span([b for b in boxes if b.column == column])
                key = (panel, column)
                column_width[key] = max(column_width.get(key, 0.0), used)
        column_x: dict[tuple[int, int], float] = {}
        for panel in panels:
            cursor = 0.0
            for key in sorted(k for k in column_width if k[0] == panel):
                column_x[key] = cursor
                cursor += column_width[key] + self.gap
            aligned = cursor - self.gap if cursor else 0.0
            panel_width[panel] = max(panel_width[panel], aligned)
        block = sum(panel_width.values()) + panel_gap * max(len(panels) - 1, 0)
        free_rows = [self._span(boxes) for (_, panel), boxes in cells.items() if panel is None]
        self.width = max([block, *free_rows])
        panel_x: dict[int, float] = {}
        cursor = (self.width - block) / 2
        for panel in panels:
            panel_x[panel] = cursor
            cursor += panel_width[panel] + panel_gap
        y = 0.0
        for index, row in enumerate(self.rows):
            if index:
                gap = row_gaps[index - 1] if row_gaps is not None else self.row_gap
                y += self.rows[index - 1].height / 2 + gap + row.height / 2
            row.y = y
            for (row_index, panel), boxes in cells.items():
                if row_index != index:
                    continue
                if panel is None:
                    self._line_up(boxes, (self.width - self._span(boxes)) / 2, y)
                    continue
                left, width = panel_x[panel], panel_width[panel]
                free = [b for b in boxes if b.column is None]
                if free:
                    self._line_up(free, left + (width - self._span(free)) / 2, y)
                aligned = sum(
                    (column_width[k] for k in column_width if k[0] == panel), 0.0
                ) + self.gap * max(sum(1 for k in column_width if k[0] == panel) - 1, 0)
                offset = left + (width - aligned) / 2
                for column in sorted({b.column for b in boxes if b.column is not None}):
                    members = [b for b in boxes if b.column == column]
                    key = (panel, column)
                    start = offset + column_x[key] + (column_width[key] - self._span(members)) / 2
                    self._line_up(members, start, y)

    def settle(self, row: Row, anchors: dict[str, list[str]]) -> None:
        """Move the boxes of `row` under the boxes they connect to (the mean of their x), in
        that order, then push overlapping neighbours apart and re-centre the row on its anchors.
        """
        wanted: dict[str, float] = {}
        for box in row.boxes:
            targets = [self._box[t].x for t in anchors.get(box.id, []) if t in self._box]
            wanted[box.id] = sum(targets) / len(targets) if targets else box.x
        order = sorted(row.boxes, key=lambda b: wanted[b.id])
        right = -math.inf
        for box in order:
            box.x = max(wanted[box.id], right + self.gap + box.width / 2)
            right = box.x + box.width / 2
        shift = sum(wanted[b.id] - b.x for b in order) / len(order) if order else 0.0
        for box in order:
            box.x += shift
        row.boxes = order

    def _span(self, boxes: Sequence[Box]) -> float:
        return sum(b.width for b in boxes) + self.gap * max(len(boxes) - 1, 0)

    def _line_up(self, boxes: Sequence[Box], left: float, y: float) -> None:
        x = left
        for box in boxes:
            box.x, box.y = x + box.width / 2, y
            x += box.width + self.gap

    # -- drawing --------------------------------------------------------------------------

    def _id(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    @staticmethod
    def pos(x: float, y: float) -> str:
        """Graphviz position in points; y grows upwards there."""
        return f"{_point(x)},{_point(-y)}!"

    def draw_frames(self, frames: Sequence[Frame]) -> None:
        """Frames go first: Graphviz draws nodes in order, so they sit behind the boxes."""
        for frame in frames:
            if not frame.boxes:
                continue
            left = min(b.x - b.width / 2 for b in frame.boxes) - frame.pad
            right = max(b.x + b.width / 2 for b in frame.boxes) + frame.pad
            top = min(b.top for b in frame.boxes) - frame.pad - 14
            bottom = max(b.bottom for b in frame.boxes) + frame.pad
            self.graph.node(
                self._id("frame"),
                pos=self.pos((left + right) / 2, (top + bottom) / 2),
                width=_inches(right - left),
                height=_inches(bottom - top),
                label=Html(
                    '<TABLE BORDER="0" CELLPADDING="4"><TR><TD ALIGN="LEFT" VALIGN="TOP">'
                    f'<FONT POINT-SIZE="9" COLOR="{style.MUTED}"><B>{html_escape(frame.title)}'
                    "</B></FONT></TD></TR></TABLE>"
                ),
                labelloc="t",
                labeljust="l",
                style="rounded,filled,dashed",
                fillcolor=style.FRAME_FILL,
                color=style.FAINT,
                penwidth="0.8",
            )

    def draw_boxes(self) -> None:
        for row in self.rows:
            for box in row.boxes:
                self.draw_box(box)

    def draw_box(self, box: Box) -> None:
        attrs: dict[str, str | Html] = {
            "pos": self.pos(box.x, box.y),
            "width": _inches(box.width),
            "height": _inches(box.height),
            "label": box_label(box),
            "fillcolor": style.ELLIPSIS_FILL if box.dashed else box.tone.fill,
            "color": box.tone.stroke,
        }
        if box.dashed:
            attrs["style"] = "rounded,filled,dashed"
        if box.tooltip:
            attrs["tooltip"] = box.tooltip
        self.graph.node(box.id, **attrs)

    def link(
        self,
        a: str,
        b: str,
        *,
        colour: str = style.LINK,
        width: float = 0.8,
        label: str | None = None,
        tooltip: str = "",
        style_: str = "",
        at: float = 0.5,
        tailport: str = "",
        headport: str = "",
    ) -> None:
        attrs: dict[str, str | Html] = {}
        if tailport:
            attrs["tailport"] = tailport
        if headport:
            attrs["headport"] = headport
        if colour != style.LINK:
            attrs["color"] = colour
        if width != 0.8:
            attrs["penwidth"] = f"{width:g}"
        if tooltip:
            attrs["tooltip"] = tooltip
        if style_:
            attrs["style"] = style_
        self.graph.edge(a, b, **attrs)
        if label:
            self._edge_label(self._box[a], self._box[b], label, at)

    def _edge_label(self, a: Box, b: Box, text: str, at: float) -> None:
        upper, lower = (a, b) if a.y <= b.y else (b, a)
        lines = text.split("\n")
        width = max(style.text_width(line, LINE_SIZE) for line in lines) + 6
        height = len(lines) * LINE_SIZE * 1.25 + 3
        y0, y1 = upper.bottom, lower.top
        x0, x1 = upper.x, lower.x
        if y1 <= y0:  # side by side (a peer link): label above the middle
            y0 = y1 = min(upper.top, lower.top) - height
        placed = None
        for t in (at, at - 0.18, at + 0.18, at - 0.3, at + 0.3):
            y = y0 + (y1 - y0) * t
            span = upper.y - lower.y
            x = lower.x + (upper.x - lower.x) * ((y - lower.y) / span) if span else (x0 + x1) / 2
            candidate = _Label(x, y, width, height)
            if not any(candidate.overlaps(other) for other in self._labels):
                placed = candidate
                break
        if placed is None:
            y = y0 + (y1 - y0) * at
            span = upper.y - lower.y
            x = lower.x + (upper.x - lower.x) * ((y - lower.y) / span) if span else (x0 + x1) / 2
            placed = _Label(x, y, width, height)
        self._labels.append(placed)
        self.text(placed.x, placed.y, lines, width=width, height=height, ground=True)

    def text(
        self,
        x: float,
        y: float,
        lines: Sequence[str],
        *,
        width: float | None = None,
        height: float | None = None,
        size: float = LINE_SIZE,
        colour: str = style.INK,
        bold_first: bool = False,
        ground: bool = False,
        align: str = "CENTER",
    ) -> None:
        """Free text (edge labels, tier names); `ground` paints white behind it. Empty lines
        are left out (Graphviz rejects an empty FONT element)."""
        lines = [line for line in lines if line]
        if not lines:
            return
        w = width or max(style.text_width(line, size, bold_first) for line in lines) + 6
        h = height or len(lines) * size * 1.25 + 3
        cells = []
        for index, line in enumerate(lines):
            body = html_escape(line)
            if bold_first and index == 0:
                body = f"<B>{body}</B>"
            cells.append(
                f'<TR><TD ALIGN="{align}"><FONT POINT-SIZE="{size:g}" COLOR="{colour}">{body}'
                "</FONT></TD></TR>"
            )
        self.graph.node(
            self._id("t"),
            pos=self.pos(x, y),
            width=_inches(w),
            height=_inches(h),
            label=Html(
                f'<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="0">{"".join(cells)}</TABLE>'
            ),
            shape="box" if ground else "plaintext",
            style="filled" if ground else "",
            fillcolor=style.PAPER,
            color=style.PAPER,
            penwidth="0",
        )

    def gutter(self, notes: Sequence[tuple[float, Sequence[str]]] = ()) -> None:
        """Tier names left of each row, and link totals between rows."""
        x = -GUTTER / 2 - 10
        for row in self.rows:
            if row.name:
                head = [row.name, row.detail] if row.detail else [row.name]
                self.text(x, row.y, head, width=GUTTER, size=9, colour=style.MUTED, bold_first=True)
        for y, lines in notes:
            self.text(x, y, lines, width=GUTTER, size=8, colour=style.MUTED)

    def legend(self, entries: Sequence[tuple[str, str]], *, y: float, x: float = 0.0) -> None:
        """A row of swatches under the drawing: (colour, meaning)."""
        cells = "".join(
            f'<TD FIXEDSIZE="TRUE" WIDTH="10" HEIGHT="10" BGCOLOR="{colour}"></TD>'
            f'<TD ALIGN="LEFT"><FONT POINT-SIZE="8" COLOR="{style.MUTED}">'
            f'{html_escape(text)}</FONT></TD><TD WIDTH="8"></TD>'
            for colour, text in entries
        )
        width = sum(style.text_width(text, 8) + 26 for _, text in entries) + 8
        self.graph.node(
            self._id("legend"),
            pos=self.pos(x + width / 2, y),
            width=_inches(width),
            height=_inches(18),
            label=Html(
                f'<TABLE BORDER="0" CELLSPACING="2" CELLPADDING="0"><TR>{cells}</TR></TABLE>'
            ),
            shape="plaintext",
            style="",
        )

    @property
    def bottom(self) -> float:
        return max((row.y + row.height / 2 for row in self.rows), default=0.0)

    def source(self) -> str:
        return self.graph.source()


def _point(value: float) -> str:
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def _inches(points: float) -> str:
    return f"{points / 72:.3f}"


def between(upper: Row, lower: Row) -> float:
    """The y half way between two rows' facing edges."""
    return (upper.y + upper.height / 2 + lower.y - lower.height / 2) / 2
