"""Diagrams helper: SVG from DOT with the Graphviz `dot` program, when it is installed.

Consumes Diagrams and the spec's outputs.diagrams.render setting; produces SVG text. `auto`
renders when `dot` is on PATH, `always` raises when it is missing, `never` renders nothing.
Results are cached by (command, DOT source), so the diagrams and report emitters of one build
render each picture once; Graphviz output for a pinned or ranked graph is deterministic for a
given Graphviz version.
"""

from __future__ import annotations

import functools
import shutil
import subprocess

from fabricc.emit.diagrams import style
from fabricc.emit.diagrams.model import DRAWN, Diagram
from fabricc.errors import OutputError, error
from fabricc.ir import Fabric

TIMEOUT_S = 300
INSTALL_HINT = (
    "install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"
)


def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def should_render(fabric: Fabric) -> bool:
    setting = fabric.loaded.spec.outputs.diagrams.render
    if setting == "never":
        return False
    available = graphviz_available()
    if setting == "always" and not available:
        path = ("outputs", "diagrams", "render")
        raise OutputError(
            [
                error(
                    "render: always, but the Graphviz program `dot` is not on PATH",
                    path="outputs.diagrams.render",
                    location=fabric.loaded.source.value(path),
                    hint=f"{INSTALL_HINT}, or set render: auto to write DOT sources only",
                )
            ]
        )
    return available


def notices(fabric: Fabric) -> list[str]:
    """The one line the CLI prints when SVGs were skipped because `dot` is missing."""
    if fabric.loaded.spec.outputs.diagrams.render == "auto" and not graphviz_available():
        return [
            "diagrams: Graphviz `dot` not found, so diagrams/ has DOT sources only; "
            f"{INSTALL_HINT} and build again for SVGs"
        ]
    return []


def to_svg(diagram: Diagram) -> str:
    if diagram.engine == DRAWN:
        return diagram.source
    return render_dot(diagram.command, diagram.source)


@functools.lru_cache(maxsize=256)
def render_dot(command: tuple[str, ...], source: str) -> str:
    try:
        done = subprocess.run(
            command,
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OutputError([error(f"Graphviz failed to run ({' '.join(command)}): {exc}")]) from exc
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise OutputError(
            [
                error(
                    f"Graphviz ({' '.join(command)}) exited with {done.returncode}: "
                    + (detail[-1] if detail else "no message")
                )
            ]
        )
    svg = done.stdout.decode("utf-8")
    # Where DejaVu Sans is missing, a browser would fall back to a serif font.
    return svg.replace(f'font-family="{style.FONT}"', f'font-family="{style.FONT_STACK}"')
