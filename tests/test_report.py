"""The review report: one self-contained page with the summary, networks, warnings, every
diagram, cables, power and the BOM - checked as text, and looked at in headless Chromium."""

from __future__ import annotations

import csv
import html as html_lib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricc.emit.cabling import RAIL_COLORS
from fabricc.emit.diagrams import diagrams, style
from fabricc.emit.diagrams import racks as drawing
from fabricc.emit.diagrams.model import DRAWN
from fabricc.emit.report import PATH, RACK_ROWS_INLINE, inline_svg
from fabricc.synth.power import rack_device_power_w
from fabricc.writer import write_tree
from tests.png import decode
from tests.support import EXAMPLE_NAMES, EXAMPLES, ROOT, Render, compiled, require_tool

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--log-level=3",
)


VOID = ("br", "img", "hr", "input", "meta", "wbr")


class Page(HTMLParser):
    """What a reader of the page gets: its text, figures with their SVGs, and table rows."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.figures: list[str] = []  # ids, in page order
        self.svgs_in_figures = 0
        self.placeholders = 0
        self.rows: dict[str, list[list[str]]] = {}  # section id -> table rows (cell texts)
        self.tags: Counter[str] = Counter()
        self._section = ""
        self._figure_depth = 0
        self._depth = 0
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._skip = 0
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.tags[tag] += 1
        if tag in ("style", "title") and not self._figure_depth:
            self._skip += 1
        if tag == "section":
            self._section = a.get("id") or ""
        if tag == "figure" and "diagram" in (a.get("class") or ""):
            self.figures.append((a.get("id") or "").removeprefix("fig-"))
            self._figure_depth = 1
        elif self._figure_depth and tag not in VOID:
            self._figure_depth += 1
            if tag == "svg" and self._figure_depth == 3:
                self.svgs_in_figures += 1
            if tag == "div" and "missing" in (a.get("class") or ""):
                self.placeholders += 1
        if tag == "tr":
            self._row = []
        if tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("style", "title") and self._skip and not self._figure_depth:
            self._skip -= 1
        if self._figure_depth and tag not in VOID:
            self._figure_depth -= 1
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.rows.setdefault(self._section, []).append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    @property
    def all_text(self) -> str:
        return " ".join(" ".join(self.text).split())


def report_of(example: str, render: Render | None = None) -> str:
    _, artifacts = compiled(example, render)
    page = dict(artifacts)[PATH]
    assert isinstance(page, str)
    return page


def summary_of(example: str) -> dict[str, object]:
    _, artifacts = compiled(example, "never")
    data: dict[str, object] = json.loads(str(dict(artifacts)["summary.json"]))
    return data


def check_summary_numbers(page: Page, example: str) -> None:
    """The page states the numbers of summary.json: GPUs, and per network its switch counts."""
    summary = summary_of(example)
    gpus = summary["gpus"]
    assert isinstance(gpus, int)
    cards = page.all_text
    assert f"GPUs {gpus:,}" in cards
    assert f"Racks {summary['racks']:,}" in cards
    networks = summary["networks"]
    assert isinstance(networks, dict)
    rows = {row[0]: row for row in page.rows["networks"][1:]}
    header = page.rows["networks"][0]
    for name, data in networks.items():
        row = dict(zip(header, rows[name], strict=True))
        assert row["leaves"] == str(data["switches"]["leaf"])
        assert row["spines"] == (
            str(data["switches"]["spine"]) if data["switches"]["spine"] else ""
        )
        assert row["tiers"] == str(data["tiers"])
        assert row["node links"] == f"{data['links']['endpoint-leaf']:,}"


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_report_is_self_contained(example: str) -> None:
    html = report_of(example, "never")
    lowered = html.lower()
    for needle in ("<script", "<link", "<iframe", "@import", 'src="http', "url(http"):
        assert needle not in lowered, needle
    assert 'href="http' not in lowered
    assert "<!doctype html>" in lowered


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_report_holds_summary_bom_warnings_and_a_figure_per_diagram(example: str) -> None:
    fabric, artifacts = compiled(example, "never")
    page = Page(report_of(example, "never"))
    check_summary_numbers(page, example)
    bom = dict(artifacts)["bom/bom.csv"]
    assert isinstance(bom, str)
    for line in csv.DictReader(io.StringIO(bom)):
        assert line["part_number"] in page.all_text
    findings = [*fabric.loaded.warnings, *fabric.warnings]
    if findings:
        for warning in findings:
            assert warning.message in page.all_text
    else:
        assert "No warnings" in page.all_text
    expected = [d.name for d in diagrams(fabric)]
    rows = [n for n in expected if n.startswith("racks-row-")]
    inline = [n for n in expected if n not in rows[RACK_ROWS_INLINE:]]
    assert sorted(page.figures) == sorted(inline)
    graphviz = [d for d in diagrams(fabric) if d.engine != DRAWN]
    assert page.placeholders == len(graphviz), "render: never leaves a placeholder per graph"
    assert page.svgs_in_figures == len(inline) - len(graphviz)


def test_report_cable_table_adds_up() -> None:
    fabric, _ = compiled("superpod-h100-4su", "never")
    page = Page(report_of("superpod-h100-4su", "never"))
    total = page.rows["cables"][-1][-1]
    assert total == f"{sum(c.quantity for c in fabric.cables):,}"


@pytest.mark.tool
def test_report_embeds_every_rendered_diagram() -> None:
    require_tool("dot")
    fabric, _ = compiled("superpod-h100-4su")
    page = Page(report_of("superpod-h100-4su"))
    assert page.placeholders == 0
    assert page.svgs_in_figures == len(page.figures) == len(diagrams(fabric))


def test_report_and_diagrams_hold_no_absolute_paths(tmp_path: Path) -> None:
    out = tmp_path / "out"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "fabricc",
            "build",
            str(EXAMPLES / "gb200-nvl72-su.yaml"),
            "-o",
            str(out),
        ],
        cwd=tmp_path,
        capture_output=True,
        check=True,
    )
    files = [*out.glob("diagrams/*"), out / PATH]
    assert len(files) > 5
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert str(tmp_path) not in text and str(ROOT) not in text, path


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            ["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            env={**os.environ, "HOME": profile},
        )


def near(colour: tuple[int, int, int], target: str, tolerance: int = 12) -> bool:
    wanted = (int(target[0:2], 16), int(target[2:4], 16), int(target[4:6], 16))
    return all(abs(a - b) <= tolerance for a, b in zip(colour, wanted, strict=True))


@pytest.mark.tool
@pytest.mark.slow
def test_report_as_a_person_sees_it_in_chromium(tmp_path: Path) -> None:
    """Render the 4-SU SuperPOD report in headless Chromium: the screenshot is a picture with
    the rail colours of the diagrams in it, and the DOM holds the numbers and every diagram."""
    require_tool("chromium", "dot")
    example = "superpod-h100-4su"
    fabric, artifacts = compiled(example)
    out = tmp_path / "out"
    write_tree(out, artifacts)
    url = (out / PATH).as_uri()

    shot = tmp_path / "shot.png"
    done = chromium(
        "--window-size=1400,5000", "--force-device-scale-factor=0.5", f"--screenshot={shot}", url
    )
    assert shot.is_file(), done.stderr[-2000:]
    image = decode(shot.read_bytes())
    assert (image.width, image.height) == (700, 2500)
    pixels = Counter(image.pixels(step=2))
    commonest = pixels.most_common(1)[0][1]
    assert commonest < 0.8 * sum(pixels.values()), "not one flat colour"
    assert len(pixels) > 2000, "a page with pictures has many colours"
    for rail in RAIL_COLORS[:8]:
        assert any(near(colour, rail) for colour in pixels), f"rail colour {rail} not on screen"

    done = chromium("--dump-dom", url)
    assert done.returncode == 0, done.stderr[-2000:]
    page = Page(done.stdout)
    check_summary_numbers(page, example)
    names = [d.name for d in diagrams(fabric)]
    assert sorted(page.figures) == sorted(names)
    assert page.svgs_in_figures == len(names)
    assert page.placeholders == 0


# Measures, after layout, every rack-name label of every rack elevation in the page against the
# box its figure shows (a scroll box clips what lies outside it), and the height of the 1U
# device labels; the result lands in <body data-layout> for --dump-dom.
LAYOUT_PROBE = """<script>
window.addEventListener("load", () => {
  const racks = [];
  const oneU = [];
  for (const fig of document.querySelectorAll('figure[id^="fig-racks-row-"]')) {
    const box = fig.querySelector(".canvas").getBoundingClientRect();
    for (const t of fig.querySelectorAll('svg text[font-size="12"][font-weight="bold"]')) {
      const r = t.getBoundingClientRect();
      racks.push([fig.id, t.textContent, r.left >= box.left - 1 && r.right <= box.right + 1]);
    }
    for (const t of fig.querySelectorAll('svg text[font-size="8"][font-weight="bold"]')) {
      oneU.push(t.getBoundingClientRect().height);
    }
  }
  document.body.setAttribute("data-layout", JSON.stringify({racks: racks, oneU: oneU}));
});
</script>"""


def measured_layout(report: Path, tmp_path: Path, width: int, print_media: bool) -> Any:
    """The probe's findings for the report laid out `width` px wide; with print_media the
    page's print rules apply on screen (what a printer lays out at that width)."""
    html = report.read_text(encoding="utf-8")
    if print_media:
        assert "@media print" in html
        html = html.replace("@media print", "@media all")
    probe = report.with_name(f"probe-{width}-{int(print_media)}.html")
    probe.write_text(html.replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    done = chromium(
        f"--window-size={width},2000", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'data-layout="([^"]*)"', done.stdout)
    assert found is not None, "the probe did not run"
    return json.loads(html_lib.unescape(found.group(1)))


@pytest.mark.tool
@pytest.mark.slow
def test_every_rack_of_a_row_is_visible_on_screen_and_in_print(tmp_path: Path) -> None:
    """The SuperPOD's rows of 9 and 10 racks: every rack name of every elevation lies inside the
    box its figure shows, on a 1,400 px screen and laid out for an A4 page (print rules, 720 px);
    1U labels are at least 9 px high on screen."""
    require_tool("chromium")
    fabric, artifacts = compiled("superpod-h100-4su")
    out = tmp_path / "out"
    write_tree(out, artifacts)
    rows: dict[str, int] = Counter(r.name.rstrip("0123456789") for r in fabric.racks)
    expected = sum(rows.values())
    assert max(rows.values()) >= 9
    for width, print_media in ((1400, False), (720, True)):
        layout = measured_layout(out / PATH, tmp_path, width, print_media)
        racks = layout["racks"]
        assert len(racks) == expected, (width, len(racks))
        hidden = [(fig, name) for fig, name, inside in racks if not inside]
        assert not hidden, (width, hidden)
        if not print_media:
            assert layout["oneU"] and min(layout["oneU"]) >= 9, min(layout["oneU"])


def test_rack_labels_fit_their_boxes_and_legends_list_used_colours() -> None:
    """A long hostname is shortened with an ellipsis inside its rack box (the tooltip keeps it);
    the floor plan's legend names only the power colours some rack shows."""
    assert drawing.fit("compute-leaf001", 8, 200) == "compute-leaf001"
    short = drawing.fit("a-very-long-storage-appliance-hostname-01", 8, 90)
    assert short.endswith("…") and style.text_width(short, 8, True) <= 90
    for example in ("superpod-h100-4su", "roce-lab"):
        fabric, artifacts = compiled(example)
        floor = dict(artifacts)["diagrams/floorplan.svg"]
        assert isinstance(floor, str)
        shown = {
            drawing.power_colour(rack_device_power_w(fabric, r), r.power_budget_w)
            for r in fabric.racks
        }
        for label, colour in (
            ("≤ 90 % of budget", "#16a34a"),
            ("&gt; 90 %", "#d97706"),
            ("over budget</text>", "#dc2626"),
        ):
            assert (label in floor) == (colour in shown), (example, label)


@given(
    st.lists(
        st.sampled_from(['id="a"', 'xid="b"', "_", "-", " ", 'id="', '"', "é", "id", "q", "\n"]),
        max_size=12,
    ).map("".join),
    st.sampled_from(["fig", "x\\1y", "r-2"]),
)
def test_inline_svg_renames_ids_as_the_word_boundary_pattern_does(text: str, prefix: str) -> None:
    svg = f"<svg {text}>"
    expected = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    assert str(inline_svg(svg, prefix)) == expected
