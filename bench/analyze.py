"""Benchmark: `fabricc analyze` on the generated designs of bench/bench.py (load, synthesis and
the whole analysis: bisection by max-flow on every network, hops, ECMP, single failures,
all-reduce, power and capacity), each in its own process, with wall time, CPU time and peak
memory (CPU time is the figure to trust when other work shares the cores).

  python bench/analyze.py               # 8k and 65k
  python bench/analyze.py 65k 100k-xdr  # some scenarios

The target: a 65k-GPU design analysed in under 30 s on the 2-core development machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import SCENARIOS, print_table, scenario_arguments

CHILD = (
    "import sys, json, time, resource; from pathlib import Path;"
    "t=time.perf_counter(); tc=time.process_time();"
    "from fabricc.spec.loader import load_spec; from fabricc.synth.pipeline import synthesize;"
    "from fabricc.analysis.design import analyze;"
    "f=synthesize(load_spec(Path(sys.argv[1]))); s=time.perf_counter(); sc=time.process_time();"
    "a=analyze(f); e=time.perf_counter(); ec=time.process_time();"
    "c=a['networks']['compute'];"
    "print(json.dumps({'synthesis_s': s-t, 'analysis_s': e-s, 'synthesis_cpu_s': sc-tc,"
    " 'analysis_cpu_s': ec-sc, 'gpus': a['capacity']['gpus'],"
    " 'bisection_ratio': c['bisection_ratio'], 'hops': c['max_switch_hops'],"
    " 'peak_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))"
)


def run_one(name: str, folder: Path) -> dict[str, object]:
    spec = folder / f"{name}.yaml"
    spec.write_text(SCENARIOS[name]())
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-c", CHILD, str(spec)], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{name} failed:\n{result.stderr}")
    report = json.loads(result.stdout)
    return {
        "scenario": name,
        "gpus": report["gpus"],
        "hops": report["hops"],
        "bisection_ratio": report["bisection_ratio"],
        "synthesis_s": round(report["synthesis_s"], 1),
        "analysis_s": round(report["analysis_s"], 1),
        "wall_s": round(wall, 1),
        "synthesis_cpu_s": round(report["synthesis_cpu_s"], 1),
        "analysis_cpu_s": round(report["analysis_cpu_s"], 1),
        "peak_mib": round(report["peak_kib"] / 1024),
    }


def main() -> None:
    names = scenario_arguments(__doc__ or "", ["8k", "65k"]).parse_args().scenarios
    header = [
        "scenario",
        "gpus",
        "hops",
        "bisection_ratio",
        "synthesis_s",
        "analysis_s",
        "wall_s",
        "synthesis_cpu_s",
        "analysis_cpu_s",
        "peak_mib",
    ]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            row = run_one(name, Path(tmp))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    print_table(header, rows)


if __name__ == "__main__":
    main()
