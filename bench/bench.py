"""Benchmark: build generated designs (a 512x32 RoCE leaf-spine, and about 1k, 8k, 65k and 100k+
GPUs) and report wall time, time per link and peak memory of each full build (load, synthesis,
checks, every emitter, atomic write), beside a floor: the same number of per-switch config files
of the same sizes rendered by one plain Jinja2 template in a process of its own, measured as the
build is (x_floor = wall / floor;
x_floor_cpu = the user and system CPU seconds of the build, its writer process and Graphviz
included (cpu_s), over the floor's: on a shared machine the steadier of the two), and the
machine's speed just before each build (reference_s, see reference_seconds) and its file
system's (files_s, see files_seconds). A build
of the smallest full design (one node) gives the cost that does not grow with the links
(fixed_s); net_us_per_link = (wall_s - fixed_s) / links is what a link adds.

  python bench/bench.py                 # all scenarios
  python bench/bench.py 65k             # some of them
  python bench/bench.py --repeat 3 65k  # the least of three alternated runs of build and floor
  python bench/bench.py --keep DIR 65k  # build into DIR and keep it (no removal at the end)

Each build runs in its own process so that its peak memory is measured alone: the larger of its
peak resident set and the largest sum of resident sets sampled (every 50 ms) over it and the
programs it starts (the writer process, Graphviz). The process ends as the fabricc command does,
without the interpreter's teardown (fabricc.cli.main), so that wall_s is what a user waits for.

The bench removes nothing while it measures (see keep_linked): on ext4 without a journal a file
created within minutes of many removals costs several times its usual system time. Start it six
minutes after removing many files (an earlier bench run's temporary folder, a test run);
files_s shows such a phase (0.03-0.05 s on the development machine; 0.15-0.64 s within a
minute of removing 14,000 files, back to 0.04-0.05 s six minutes later).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from fabricc.emit.tables import markdown_table

ROOT = Path(__file__).resolve().parent.parent


def superpod_like(
    name: str,
    model: str,
    nodes: int,
    switch: str,
    *,
    ufm: bool = True,
    arrays: int = 0,
    power_kw: int = 60,
    per_rack: int | None = 4,
    addressing: str = "",
) -> str:
    """A full design: rail-optimized compute fabric (UFM on reserved leaf ports when the fabric is
    NDR; the UFM 3.1 appliance has no XDR port), dual-homed in-band, out-of-band; with `arrays`
    storage arrays, the RA-11333 storage fabric too (DGX storage ports rail-wired at 4:3, the
    arrays at 1:1 on leaves of their own). `power_kw` is the rack budget, `per_rack` the nodes
    per rack (None: as many as power and space allow); `addressing` a spec line that replaces
    the default pools (a 100k-GPU design's OOB network outgrows the default /16)."""
    appliances = "  ufm: {model: ufm-3.1, count: 4}\n" if ufm else ""
    if arrays:
        appliances += f"  stor: {{model: storage-array, count: {arrays}}}\n"
    reserved = (
        "    reserved_slots: 1\n    endpoints: {gpu: {}, ufm: {reserved: true}}\n" if ufm else ""
    )
    storage = (
        "  storage:\n    role: storage\n    fabric: infiniband\n    rail_optimized: true\n"
        '    oversubscription: "4:3"\n    endpoints: {gpu: {}, stor: {leaf_downlinks: 16, '
        'oversubscription: "1:1"}}\n'
        if arrays
        else ""
    )
    placement = f", nodes_per_rack: {per_rack}" if per_rack else ""
    return f"""\
metadata: {{name: {name}}}
site: {{racks_per_row: 40, rack: {{power_kw: {power_kw}}}}}
{addressing}nodes:
  gpu: {{model: {model}, count: {nodes}{placement}}}
{appliances}  mgmt: {{model: mgmt-server, count: 8}}
networks:
  compute:
    role: compute
    fabric: infiniband
    switches: {{leaf: {switch}}}
{reserved}{storage}  inband:
    role: inband
    dual_homed: true
    oversubscription: "4:1"
  oob:
    role: oob
    uplink_to: inband
    max_racks_per_switch: 6
"""


# A spine with 512 cages of 800G does not exist as a product; it lets the benchmark build one
# 2-tier RoCE fabric of 512 leaves x 32 spines (every leaf one link to every spine). Written into
# the scenario's folder at run time, like the spec.
BENCH_CATALOG = """\
switches:
  bench-spine-512:
    description: Benchmark-only 512-port 800GbE spine (not a product)
    part_number: BENCH-SPINE-512
    source: "assumed: benchmark catalog entry, not a product"
    fabric: ethernet
    asic: Spectrum-4
    height_u: 8
    power_w: 15000
    port_groups:
      - {count: 512, form: osfp, cage_speed: 800, breakouts: [1, 2]}
    mgmt_ports:
      - {name: eth0, cage: eth0, form: rj45, speeds: [1], role: oob, protocols: [ethernet]}
"""


def roce_leaf_spine(name: str, nodes: int) -> str:
    """RoCE leaf-spine only (no management networks): SN5600 leaves with 64x 400G down and
    32x 800G up, so 4,096 eight-NIC servers give 512 leaves, each linked once to 32 spines."""
    return f"""\
metadata: {{name: {name}}}
catalog: [bench-catalog.yaml]
site: {{racks_per_row: 40, rack: {{power_kw: 60}}}}
nodes:
  gpu: {{model: hgx-h100, count: {nodes}, nodes_per_rack: 4}}
networks:
  fabric:
    role: compute
    fabric: ethernet
    tiers: 2
    spines: 32
    switches: {{leaf: sn5600, spine: bench-spine-512}}
    endpoints: {{gpu: {{ports: [NIC0, NIC1, NIC2, NIC3, NIC4, NIC5, NIC6, NIC7]}}}}
"""


def nvl72_racks(name: str, racks: int) -> str:
    """GB200 NVL72 rack systems at scale (RA-11338's unit of 8 racks, repeated): NDR compute
    fabric with UFM on reserved leaf ports, dual-homed in-band, out-of-band with one access
    switch per rack system (the two SN2201 each rack ships with)."""
    return f"""\
metadata: {{name: {name}}}
site: {{racks_per_row: 40, rack: {{power_kw: 140}}}}
addressing: {{oob: 10.128.0.0/14, inband: 10.64.0.0/14}}
nodes:
  nvl72: {{model: gb200-nvl72, count: {racks}, su_size: 8}}
  ufm: {{model: ufm-3.1, count: 4}}
  mgmt: {{model: mgmt-server, count: 8}}
networks:
  compute:
    role: compute
    fabric: infiniband
    reserved_slots: 1
    endpoints: {{nvl72: {{}}, ufm: {{reserved: true}}}}
  inband:
    role: inband
    dual_homed: true
    oversubscription: "4:1"
  oob:
    role: oob
    uplink_to: inband
    max_racks_per_switch: 1
"""


SCENARIOS = {
    "roce-512x32": lambda: roce_leaf_spine("bench-roce", 4096),
    "1k": lambda: superpod_like("bench-1k", "dgx-h100", 127, "qm9700"),  # 1,016 GPUs, 2 tiers
    "8k": lambda: superpod_like("bench-8k", "dgx-h100", 1023, "qm9700"),  # 8,184 GPUs, 3 tiers
    "65k": lambda: superpod_like("bench-65k", "dgx-h100", 8191, "qm9700"),  # 65,528 GPUs, 3 tiers
    # the same with the storage fabric and 512 storage arrays (2 per unit): every plane
    "65k-all": lambda: superpod_like("bench-65k-all", "dgx-h100", 8191, "qm9700", arrays=512),
    # 104,256 GPUs on Quantum-X800 (XDR), 3 tiers
    "100k-xdr": lambda: superpod_like(
        "bench-100k",
        "hgx-b300",
        13032,
        "q3400",
        ufm=False,
        addressing="addressing: {oob: 10.128.0.0/14, inband: 10.64.0.0/14}\n",
    ),
    # every plane with racks filled to a 31 kW budget (3 DGX H100 of 10.2 kW each, the default
    # placement):
    # the access switches find no room in the racks they serve and take the nearest rack that
    # has some (synth/oob.py's fallback); 384 storage arrays on the storage fabric
    "65k-full-racks": lambda: superpod_like(
        "bench-65k-full", "dgx-h100", 8191, "qm9700", arrays=384, power_kw=31, per_rack=None
    ),
    # 512 GB200 NVL72 rack systems (36,864 GPUs; 64 units, the most three tiers of QM9700 join):
    # rack-scale systems with their own trays,
    # NVLink switches, power shelves and management switches at scale
    "nvl72-512": lambda: nvl72_racks("bench-nvl72", 512),
    # growth in place: the 65k design built into the folder of a 32k build of it (timed: the
    # second build, which reads the first and keeps its places)
    "65k-grow": lambda: superpod_like("bench-65k-grow", "dgx-h100", 8191, "qm9700"),
}

# Scenarios built twice into one folder: first this smaller design (not timed), then the
# scenario itself, which grows in place.
GROWN_FROM = {
    "65k-grow": lambda: superpod_like("bench-65k-grow", "dgx-h100", 4095, "qm9700"),
}


FLOOR_TEMPLATE = """\
# {{ name }} - file {{ index }}
{% for i in range(lines) %}interface swp{{ i }} description {{ name }}-{{ i }} mtu 9216 speed 800G
{% endfor %}"""


# The floor's program: a JSON file of the files' (path, size) list in argv[1], the folder in argv[2],
# the template and the length of its line in argv[3] and argv[4].
FLOOR_CODE = """
import json, sys
from pathlib import Path
import jinja2
sizes = json.loads(Path(sys.argv[1]).read_text())
target, text, line = Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
template = jinja2.Environment(autoescape=False).from_string(text)
for index, (relative, size) in enumerate(sizes):
    name = relative.split("/", 1)[0]
    path = target / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(template.render(name=name, index=index, lines=max(1, size // line)))
"""


def floor_seconds(configs: Path, target: Path) -> tuple[float, float]:
    """The floor: render, with one plain Jinja2 template, as many per-switch files of the same
    sizes as fabricc wrote under configs/, and write them - no design, no checks, no other
    artifacts. fabricc's time over this is the overhead a user pays for everything else. Wall
    and CPU (user and system) seconds of a process of its own, measured as the build's are
    (interpreter start and imports included on both sides)."""
    sizes = sorted(
        (p.relative_to(configs).as_posix(), p.stat().st_size)
        for p in configs.rglob("*")
        if p.is_file() and p.parent != configs
    )
    line = len("interface swp100 description fabric-leaf001-100 mtu 9216 speed 800G\n")
    listing = target.with_name(target.name + ".json")
    listing.write_text(json.dumps(sizes))
    command = [sys.executable, "-c", FLOOR_CODE, str(listing), str(target)]
    command += [FLOOR_TEMPLATE, str(line)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True)
    wall = time.perf_counter() - start
    return wall, _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - _cpu(before)


def reference_seconds() -> float:
    """The machine's speed now: the best of three runs of a fixed pure-Python loop (about 0.1 s
    on the development machine at full speed). A shared or throttled virtual machine can run
    the same build at half speed an hour later; compare walls only where this agrees."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for i in range(2_000_000):
            total += i
        best = min(best, time.perf_counter() - start)
    return best


# Files the file-system probe writes before each build (files_seconds): a build of nvl72-512
# writes 13,700, and within minutes of removing as many each one cost several times its usual
# system time (keep_linked). A thousand take a few hundredths of a second otherwise.
PROBE_FILES = 1_000


def files_seconds(folder: Path) -> float:
    """The file system's speed now: seconds to create PROBE_FILES small files in `folder` (a new
    one), each opened, written and closed as the writer process writes a build's files. The
    files stay until the bench's temporary folder goes: removing them would slow the next
    build as the probe would show. Beside reference_s, it tells a build slowed by the file
    system from one slowed by the CPU."""
    folder.mkdir()
    body = b"probe\n" * 16
    start = time.perf_counter()
    for i in range(PROBE_FILES):
        (folder / f"{i}.txt").write_bytes(body)
    return time.perf_counter() - start


# The smallest full design (one DGX, every network and emitter): what any build costs before
# its first link - interpreter start, imports, the built-in catalog, the report's frame.
EMPTY = "empty"


def build_process(
    name: str, text: str, out: Path, *, fresh: bool = True
) -> tuple[float, dict[str, Any], int]:
    """Build the spec `text` into `out` in a process of its own: wall seconds, the process's
    report (file count, its own peak; `cpu_s`: the user and system time of it and the programs
    it waited for, the writer process and Graphviz) and the sampled peak of it and its children
    (KiB). Not `fresh`: an earlier build of the design in `out` keeps its places (growth)."""
    folder = out.parent
    spec = folder / f"{name}.yaml"
    spec.write_text(text)
    (folder / "bench-catalog.yaml").write_text(BENCH_CATALOG)
    settle(folder)
    # The child reports its own peak resident set size (ru_maxrss is KiB on Linux) and ends as
    # the fabricc command does (fabricc.cli.main: the output flushed, then os._exit, without
    # the interpreter's teardown: 0.36 s at roce-512x32, a fifth of it collecting the cyclic
    # garbage a build leaves with its collector off)
    code = (
        "import os, sys, json, time, resource; from pathlib import Path; t=time.perf_counter();"
        "from fabricc.build import build; r=build(Path(sys.argv[1]), Path(sys.argv[2]),"
        f" fresh={fresh});"
        "print(json.dumps({'seconds': time.perf_counter()-t, 'files': r.file_count,"
        " 'peak_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}));"
        "sys.stdout.flush(); os._exit(0)"
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    command = [sys.executable, "-c", code, str(spec), str(out)]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        shared_peak = 0
        private: dict[int, tuple[float, int]] = {}
        while process.poll() is None:
            shared_peak = max(shared_peak, resident_kib(process.pid, private))
            time.sleep(0.05)
        stdout, stderr = process.communicate()
    wall = time.perf_counter() - start
    if process.returncode != 0:
        raise SystemExit(f"{name} failed:\n{stderr}")
    report = json.loads(stdout)
    report["cpu_s"] = _cpu(resource.getrusage(resource.RUSAGE_CHILDREN)) - _cpu(before)
    return wall, report, shared_peak


def settle(folder: Path) -> None:
    """Wait until the earlier outputs a build swapped out are removed (fabricc removes them in
    the background, after the build: fabricc.writer._remove_later), so that their removal
    takes no time from the next build or floor measured here."""
    deadline = time.monotonic() + 120
    while any(folder.glob(".*.old-*")) and time.monotonic() < deadline:
        time.sleep(0.05)


# Linux's ext4 without a journal (this project's development machine) does not reuse an inode
# deleted less than 60 s ago, 360 s while its inode table block is dirty - and a new file in the
# same block group dirties it (fs/ext4/ialloc.c: recently_deleted, RECENTCY_MIN and
# RECENTCY_DIRTY); every new file's allocation scans past each such inode of its group. Creating
# 13,700 files took 1.7-3.7 s of system time within minutes of removing as many, 0.4-0.5 s
# otherwise, and a sampled build of nvl72-512 spent 13-18% of its CPU in that scan. So the bench
# frees no inode while it measures: each build and floor writes a folder of its own, the
# temporary folder goes at the end, and growth in place (which removes the earlier build it
# swaps out) finds every file of that build linked from a second folder too.
def keep_linked(out: Path, keep: Path) -> None:
    """Hard-link every file below `out` from `keep`: removing `out` then frees no file's inode."""
    shutil.copytree(out, keep, copy_function=os.link)


def _cpu(usage: resource.struct_rusage) -> float:
    return usage.ru_utime + usage.ru_stime


def fixed_seconds(folder: Path) -> float:
    """Wall of the smallest full design (best of three: the file system's spread is of its
    size): the part of every build's time that does not grow with the links."""
    text = superpod_like("bench-empty", "dgx-h100", 1, "qm9700")
    return min(build_process(EMPTY, text, folder / f"out-{EMPTY}-{i}")[0] for i in range(3))


def run_one(name: str, folder: Path, fixed: float, repeat: int = 1) -> dict[str, object]:
    """One scenario's row: the build and its floor alternated `repeat` times, each figure the
    least of its runs (what the machine can do; a run another program slowed is the noise), but
    files_s: the file system's speed before the run of the least wall. Every build and floor
    writes a folder of its own, removed only with the bench's temporary folder (see
    keep_linked)."""
    # reference, files, wall, cpu, floor's
    runs: list[tuple[float, float, float, float, float, float]] = []
    peak = 0
    for turn in range(repeat):
        out = folder / f"out-{name}-{turn}"
        if name in GROWN_FROM:
            build_process(name, GROWN_FROM[name](), out)
            keep_linked(out, folder / f"kept-{name}-{turn}")
        probe = files_seconds(folder / f"probe-{name}-{turn}")
        reference = reference_seconds()
        wall, report, shared_peak = build_process(
            name, SCENARIOS[name](), out, fresh=name not in GROWN_FROM
        )
        peak = max(peak, report["peak_kib"], shared_peak)
        settle(folder)
        floor, floor_cpu = floor_seconds(out / "configs", folder / f"floor-{name}-{turn}")
        runs.append((reference, probe, wall, report["cpu_s"], floor, floor_cpu))
    reference, _, wall, cpu, floor, floor_cpu = (min(column) for column in zip(*runs, strict=True))
    probe = min(runs, key=lambda run: run[2])[1]  # the file system's speed at the least wall
    summary = json.loads((out / "summary.json").read_text())
    compute = next(n for n in summary["networks"].values() if n["role"] == "compute")
    links = sum(sum(n["links"].values()) for n in summary["networks"].values())
    return {
        "scenario": name,
        "gpus": summary["gpus"],
        "tiers": compute["tiers"],
        "switches": sum(sum(n["switches"].values()) for n in summary["networks"].values()),
        "links": links,
        "files": report["files"],
        "wall_s": round(wall, 1),
        "us_per_link": round(wall / links * 1e6),
        "net_us_per_link": round((wall - fixed) / links * 1e6),
        "floor_s": round(floor, 2),
        "x_floor": round(wall / floor, 1),
        "cpu_s": round(cpu, 1),
        "x_floor_cpu": round(cpu / floor_cpu, 1),
        "peak_mib": round(peak / 1024),
        "reference_s": round(reference, 3),
        "files_s": round(probe, 3),
    }


# How often a forked copy's private pages are read again (its smaps_rollup): reading it walks
# the copy's page tables, 11 ms for a 500 MB copy on the 2-core machine, so read every 50 ms it
# took a fifth of a core from the build it measured (docs/performance.md, 2026-11-29 11:50 UTC).
PRIVATE_EVERY_S = 0.5


def resident_kib(pid: int, private: dict[int, tuple[float, int]] | None = None) -> int:
    """The memory a build and the programs it started hold together now: the sum of their
    resident sets, from /proc/PID/statm (cheap to read; smaps_rollup walks every page table and
    slowed a 100k build by seconds), 0 where /proc has none. A build's own ru_maxrss misses its
    writer process and Graphviz; they are programs of their own, sharing no memory with it. A
    forked copy of the build (fabricc.forked: the same program line as its parent) shares the
    build's pages until it writes them: only its private pages count, from its smaps_rollup
    (one process), read at most every PRIVATE_EVERY_S per copy (`private`: pid -> when it was
    read, what it said; the copy's pages only grow, so the peak may miss the last half second
    of a copy's growth). A child still sharing the build's memory (started by vfork, not yet
    running its program) reads as a copy of it and is left out."""
    private = {} if private is None else private
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    total = 0
    pending = [(pid, -1, b"")]
    while pending:
        current, parent_rss, parent_line = pending.pop()
        try:
            rss = int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page_kib
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
            line = Path(f"/proc/{current}/cmdline").read_bytes()
            if line == parent_line:
                read, rss = private.get(current, (-PRIVATE_EVERY_S, 0))
                if time.monotonic() - read >= PRIVATE_EVERY_S:
                    rss = _private_kib(current)
                    private[current] = (time.monotonic(), rss)
        except OSError:
            continue  # gone meanwhile, or no /proc
        if rss == parent_rss:
            continue
        total += rss
        pending.extend((int(child), rss, line) for child in children)
    return total


def _private_kib(pid: int) -> int:
    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    return sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Private_"))


def _scenario(name: str) -> str:
    if name not in SCENARIOS:
        raise argparse.ArgumentTypeError(f"no scenario {name!r}; one of {', '.join(SCENARIOS)}")
    return name


def scenario_arguments(doc: str, default: list[str]) -> argparse.ArgumentParser:
    """The command line of a benchmark: scenario names (default: `default`), with --help from
    the script's docstring."""
    parser = argparse.ArgumentParser(
        description=doc.split("\n\n", 1)[0],
        epilog=doc.split("\n\n", 1)[-1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "scenarios",
        nargs="*",
        type=_scenario,
        default=default,
        metavar="SCENARIO",
        help=f"one of {', '.join(SCENARIOS)} (default: {' '.join(default)})",
    )
    return parser


def compile_package() -> None:
    """Byte-compile fabricc as `pip install` does, so that the builds measure the program as
    installed: where the environment forbids writing bytecode (PYTHONDONTWRITEBYTECODE) and the
    package is an editable checkout, every build would otherwise compile its modules from source
    (0.1-0.3 s of each build's start)."""
    import fabricc

    compileall.compile_dir(Path(fabricc.__file__).parent, quiet=1)


def main() -> None:
    parser = scenario_arguments(__doc__ or "", list(SCENARIOS))
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="build each scenario and its floor N times, alternated; report the least of each",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build into this new folder and keep it (the next run then follows no removal)",
    )
    arguments = parser.parse_args()
    names = arguments.scenarios
    rows = []
    compile_package()
    keep: Path | None = arguments.keep
    if keep is not None:
        keep.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        folder = keep or Path(tmp)
        fixed = fixed_seconds(folder)
        print(json.dumps({"fixed_s": round(fixed, 2)}), file=sys.stderr, flush=True)
        for name in names:
            row = run_one(name, folder, fixed, arguments.repeat)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    header = [
        "scenario",
        "gpus",
        "tiers",
        "switches",
        "links",
        "files",
        "wall_s",
        "us_per_link",
        "net_us_per_link",
        "floor_s",
        "x_floor",
        "cpu_s",
        "x_floor_cpu",
        "peak_mib",
        "reference_s",
        "files_s",
    ]
    print_table(header, rows)
    print(f"\nfixed_s = {fixed:.2f}: the smallest full design (one node); net_us_per_link is")
    print("(wall_s - fixed_s) / links, the time a link adds.")


def print_table(header: list[str], rows: list[dict[str, Any]]) -> None:
    """The benchmarks' result table in Markdown: whole numbers with thousands separators, every
    column but the scenario's right-aligned."""
    cells = [
        [f"{row[h]:,}" if isinstance(row[h], int) else str(row[h]) for h in header] for row in rows
    ]
    right = [i for i, h in enumerate(header) if h != "scenario"]
    print(markdown_table(header, cells, right), end="")


if __name__ == "__main__":
    main()
