"""Benchmark: where a full build of one of bench/bench.py's scenarios spends its time, stage by
stage (load, synthesis phases, design rules, each emitter, write), in wall and CPU seconds, from
the stage callback of fabricc.build.build; optionally with a cProfile of the whole build.

  python bench/stages.py 65k                      # stage table of the 65k build
  python bench/stages.py roce-512x32 --profile p  # and a cProfile written to p (pstats format)
  python bench/stages.py 65k --keep DIR           # into DIR, kept (no removal while measuring)

The build runs in this process, every emitter in it (fork=False: a large build otherwise runs
some emitters in a forked copy, fabricc.forked, whose time this process does not see); CPU
seconds are the figures to trust when other work shares the cores.
"""

from __future__ import annotations

import argparse
import cProfile
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import BENCH_CATALOG, GROWN_FROM, SCENARIOS, keep_linked
from fabricc.build import build


class Clock:
    """The stage callback: closes the running stage and opens the next one."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float]] = []
        self._name = ""
        self._wall = self._cpu = 0.0

    def __call__(self, name: str) -> None:
        self.stop()
        self._name, self._wall, self._cpu = name, time.perf_counter(), time.process_time()

    def stop(self) -> None:
        if self._name:
            wall = time.perf_counter() - self._wall
            self.rows.append((self._name, wall, time.process_time() - self._cpu))
            self._name = ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--profile", type=Path, help="write a cProfile of the build here")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build into this new folder and keep it (bench/bench.py --keep: no removal slows "
        "the next measurement)",
    )
    args = parser.parse_args()
    clock = Clock()
    if args.keep is not None:
        args.keep.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        spec = folder / f"{args.scenario}.yaml"
        (folder / "bench-catalog.yaml").write_text(BENCH_CATALOG)
        grown = args.scenario in GROWN_FROM
        if grown:  # the earlier build it grows over (not measured)
            spec.write_text(GROWN_FROM[args.scenario]())
            build(spec, folder / "out", fresh=True)
            keep_linked(folder / "out", folder / "kept")  # its removal then frees no inode
        spec.write_text(SCENARIOS[args.scenario]())
        profiler = cProfile.Profile() if args.profile else None
        if profiler:
            profiler.enable()
        build(spec, folder / "out", clock, fresh=not grown, fork=False)
        clock.stop()
        if profiler:
            profiler.disable()
            profiler.dump_stats(args.profile)
    wall = sum(row[1] for row in clock.rows)
    cpu = sum(row[2] for row in clock.rows)
    print(f"| stage ({args.scenario}) | wall_s | cpu_s | cpu_share |")
    print("|---|---:|---:|---:|")
    for name, stage_wall, stage_cpu in clock.rows:
        print(f"| {name} | {stage_wall:.2f} | {stage_cpu:.2f} | {stage_cpu / cpu:.1%} |")
    print(f"| total | {wall:.2f} | {cpu:.2f} | 100.0% |")


if __name__ == "__main__":
    main()
