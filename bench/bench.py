"""Benchmark: build generated designs of about 1k, 8k, 65k and 100k+ GPUs and report wall time
and peak memory of each full build (load, synthesis, checks, every emitter, atomic write).

  python bench/bench.py                 # all scenarios
  python bench/bench.py 65k             # some of them

Each build runs in its own process so that its peak resident memory is measured alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def superpod_like(name: str, model: str, nodes: int, switch: str, *, ufm: bool = True) -> str:
    """A full design: rail-optimized compute fabric (UFM on reserved leaf ports when the fabric is
    NDR; the UFM 3.1 appliance has no XDR port), dual-homed in-band, out-of-band."""
    appliances = "  ufm: {model: ufm-3.1, count: 4}\n" if ufm else ""
    reserved = (
        "    reserved_slots: 1\n    endpoints: {gpu: {}, ufm: {reserved: true}}\n" if ufm else ""
    )
    return f"""\
metadata: {{name: {name}}}
site: {{racks_per_row: 40, rack: {{power_kw: 60}}}}
nodes:
  gpu: {{model: {model}, count: {nodes}, nodes_per_rack: 4}}
{appliances}  mgmt: {{model: mgmt-server, count: 8}}
networks:
  compute:
    role: compute
    fabric: infiniband
    switches: {{leaf: {switch}}}
{reserved}  inband:
    role: inband
    dual_homed: true
    oversubscription: "4:1"
  oob:
    role: oob
    uplink_to: inband
    max_racks_per_switch: 6
"""


SCENARIOS = {
    "1k": lambda: superpod_like("bench-1k", "dgx-h100", 127, "qm9700"),  # 1,016 GPUs, 2 tiers
    "8k": lambda: superpod_like("bench-8k", "dgx-h100", 1023, "qm9700"),  # 8,184 GPUs, 3 tiers
    "65k": lambda: superpod_like("bench-65k", "dgx-h100", 8191, "qm9700"),  # 65,528 GPUs, 3 tiers
    # 104,256 GPUs on Quantum-X800 (XDR), 3 tiers
    "100k-xdr": lambda: superpod_like("bench-100k", "hgx-b300", 13032, "q3400", ufm=False),
}


def run_one(name: str, folder: Path) -> dict[str, object]:
    spec = folder / f"{name}.yaml"
    spec.write_text(SCENARIOS[name]())
    out = folder / f"out-{name}"
    # The child reports its own peak resident set size (ru_maxrss is KiB on Linux).
    code = (
        "import sys, json, time, resource; from pathlib import Path; t=time.perf_counter();"
        "from fabricc.build import build; r=build(Path(sys.argv[1]), Path(sys.argv[2]));"
        "print(json.dumps({'seconds': time.perf_counter()-t, 'files': r.file_count,"
        " 'peak_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))"
    )
    start = time.perf_counter()
    command = [sys.executable, "-c", code, str(spec), str(out)]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{name} failed:\n{result.stderr}")
    report = json.loads(result.stdout)
    summary = json.loads((out / "summary.json").read_text())
    compute = summary["networks"]["compute"]
    return {
        "scenario": name,
        "gpus": summary["gpus"],
        "tiers": compute["tiers"],
        "switches": sum(sum(n["switches"].values()) for n in summary["networks"].values()),
        "links": sum(sum(n["links"].values()) for n in summary["networks"].values()),
        "files": report["files"],
        "wall_s": round(wall, 1),
        "peak_mib": round(report["peak_kib"] / 1024),
    }


def main() -> None:
    names = sys.argv[1:] or list(SCENARIOS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            row = run_one(name, Path(tmp))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    header = ["scenario", "gpus", "tiers", "switches", "links", "files", "wall_s", "peak_mib"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---:" if h not in ("scenario",) else "---" for h in header) + "|")
    for row in rows:
        print(
            "| "
            + " | ".join(f"{row[h]:,}" if isinstance(row[h], int) else str(row[h]) for h in header)
            + " |"
        )


if __name__ == "__main__":
    main()
