"""Benchmark: how long the diagrams and the report take, Graphviz rendering included.

  python bench/diagrams.py                       # the 4-SU SuperPOD example and a 65k-GPU design
  python bench/diagrams.py examples/roce-lab.yaml

For each spec: synthesis (for reference), building every diagram (Python), rendering them with
Graphviz (cold cache, one process at a time), and the two emitters as a build runs them.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench import SCENARIOS  # noqa: E402
from fabricc.emit.diagrams import diagrams, emit  # noqa: E402
from fabricc.emit.diagrams.model import DRAWN  # noqa: E402
from fabricc.emit.diagrams.render import graphviz_available, render_dot  # noqa: E402
from fabricc.emit.report import emit as report  # noqa: E402
from fabricc.spec.loader import load_spec  # noqa: E402
from fabricc.synth.pipeline import synthesize  # noqa: E402


def measure(spec: Path) -> None:
    start = time.perf_counter()
    fabric = synthesize(load_spec(spec, spec.name))
    synth = time.perf_counter() - start
    start = time.perf_counter()
    found = diagrams(fabric)
    built = time.perf_counter() - start
    render_dot.cache_clear()
    start = time.perf_counter()
    slowest = (0.0, "")
    for diagram in found:
        if diagram.engine == DRAWN or not graphviz_available():
            continue
        one = time.perf_counter()
        render_dot(diagram.command, diagram.source)
        slowest = max(slowest, (time.perf_counter() - one, diagram.name))
    rendered = time.perf_counter() - start
    render_dot.cache_clear()
    start = time.perf_counter()
    files = emit(fabric)
    page = report(fabric)
    emitters = time.perf_counter() - start
    size = sum(len(content) for _, content in [*files, *page])
    print(
        f"{spec.name}: {fabric.gpus():,} GPUs; synthesis {synth:.2f} s; "
        f"{len(found)} diagrams built in {built:.2f} s, rendered in {rendered:.2f} s "
        f"(slowest {slowest[1]} {slowest[0]:.2f} s); diagrams + report emitters {emitters:.2f} s, "
        f"{size / 1e6:.1f} MB"
    )


def main() -> None:
    if len(sys.argv) > 1:
        for name in sys.argv[1:]:
            measure(Path(name))
        return
    measure(ROOT / "examples" / "superpod-h100-4su.yaml")
    with tempfile.TemporaryDirectory() as folder:
        spec = Path(folder) / "bench-65k.yaml"
        spec.write_text(SCENARIOS["65k"]())
        measure(spec)


if __name__ == "__main__":
    main()
