"""Benchmark: `fabricc validate` alone (load, synthesis, design rules; what `design()` runs) on the
generated designs of bench/bench.py, each in its own process, with wall and CPU time per stage,
CPU time per link (the figure that must stay flat from 1k to 100k GPUs) and peak memory.

  python bench/validate.py                  # 1k, 8k, 65k and 100k-xdr
  python bench/validate.py 65k              # some scenarios
  python bench/validate.py --keep DIR 65k   # also keep the generated specs in DIR (to profile:
                                            # python -m cProfile -o p.prof -m fabricc validate DIR/65k.yaml)

The target: the 65k-GPU design validated in at most 5 s on the 2-core development machine.
CPU time is the figure to trust when other work shares the cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import BENCH_CATALOG, SCENARIOS, compile_package, print_table, scenario_arguments

# The child times each stage by the stage callback (CPU time: the machine is shared).
CHILD = """\
import sys, json, time, resource
from pathlib import Path
t0, c0 = time.perf_counter(), time.process_time()
stages = {}
marks = [("import", c0)]
def stage(name):
    now = time.process_time()
    last, since = marks[-1]
    stages[last] = stages.get(last, 0.0) + now - since
    marks.append((name, now))
from fabricc.build import design
from fabricc.spec.loader import load_spec
stage("load")
loaded = load_spec(Path(sys.argv[1]), sys.argv[1])
fabric = design(loaded, stage)
stage("end")
print(json.dumps({"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
    "links": len(fabric.links), "gpus": fabric.gpus(), "stages": stages,
    "peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""

DEFAULT = ["1k", "8k", "65k", "100k-xdr"]


def run_one(name: str, folder: Path) -> dict[str, object]:
    spec = folder / f"{name}.yaml"
    spec.write_text(SCENARIOS[name]())
    (folder / "bench-catalog.yaml").write_text(BENCH_CATALOG)
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(spec)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"{name} failed:\n{result.stderr}")
    report = json.loads(result.stdout)
    links = int(report["links"])
    stages = {k: round(v, 2) for k, v in report["stages"].items() if k != "import"}
    work = sum(v for k, v in report["stages"].items() if k != "import")
    return {
        "scenario": name,
        "gpus": report["gpus"],
        "links": links,
        "wall_s": round(report["wall_s"], 2),
        "cpu_s": round(report["cpu_s"], 2),
        "us_per_link": round(work / links * 1e6),
        "peak_mib": round(report["peak_kib"] / 1024),
        "stages": stages,
    }


def main() -> None:
    parser = scenario_arguments(__doc__ or "", DEFAULT)
    parser.add_argument("--keep", type=Path, help="also keep the generated specs in this folder")
    args = parser.parse_args()
    keep: Path | None = args.keep
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    names = args.scenarios
    header = ["scenario", "gpus", "links", "wall_s", "cpu_s", "us_per_link", "peak_mib"]
    rows = []
    compile_package()
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            start = time.perf_counter()
            row = run_one(name, keep or Path(tmp))
            row["process_s"] = round(time.perf_counter() - start, 2)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print("us_per_link: CPU time of load, synthesis and design rules over the link count")
    print_table(header, rows)


if __name__ == "__main__":
    main()
