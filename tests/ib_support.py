"""Test helper: run a generated InfiniBand topology in ibsim and drive OpenSM and the diagnostics.

Recipe from VALIDATORS.md section 1: a private ibsim (IBSIM_SOCKNAME unique per run, so tests can
run in parallel), OpenSM and infiniband-diags through the umad2sim preload library, all in a
scratch folder (umad2sim creates ./sys-<pid> in the working directory). ibsim is stopped on exit.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
READY = "Network simulator ready"
FTREE_OK = "ftree tables configured on all switches"
FAT_TREE_FOUND = "Fabric topology has been identified as FatTree"
# ibnetdiscover: a switch port line naming the CA behind it and that CA's LID
_CA_LID = re.compile(r'^\[\d+\]\s+"H-[0-9a-f]+"\[\d+\]\([0-9a-f]+\)\s+#\s+"([^"]+)" lid (\d+) ')
_PORT_LINE = re.compile(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]')
_SWITCH_LID = re.compile(r'^Switch\s+\d+\s+"S-[0-9a-f]+"\s+#\s+"([^"]+)" .*\blid (\d+) ')


def net_limits(net: str) -> list[str]:
    """ibsim -N/-S/-P arguments large enough for the file (defaults: 2048 nodes, 256 switches,
    13312 ports)."""
    nodes = switches = ports = 0
    for line in net.splitlines():
        kind, _, rest = line.partition("\t")
        if kind in ("Switch", "Ca", "Hca"):
            nodes += 1
            switches += kind == "Switch"
            ports += int(rest.split()[0]) + 1
    return [
        "-N", str(max(2048, 2 * nodes)),
        "-S", str(max(256, 2 * switches)),
        "-P", str(max(13312, 2 * ports)),
    ]  # fmt: skip


@dataclass(slots=True)
class Simulator:
    env: dict[str, str]
    workdir: Path

    def tool(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            args,
            cwd=self.workdir,
            env={**self.env, "LD_PRELOAD": UMAD2SIM},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def opensm_once(self, *args: str, debug: str = "0x07") -> str:
        """One OpenSM sweep (-o); returns its log. OpenSM exits 0 even when ftree falls back to
        minhop, so callers read the log. Debug level 0x07 logs ftree's verdict on the topology."""
        log = self.workdir / f"opensm-{uuid.uuid4().hex[:6]}.log"
        result = self.tool("opensm", "-o", "-D", debug, *args, "-f", str(log))
        assert result.returncode == 0, result.stdout + result.stderr
        return log.read_text()

    def lids(self) -> dict[str, int]:
        """IB node name -> LID, from ibnetdiscover against the routed simulator."""
        result = self.tool("ibnetdiscover")
        assert result.returncode == 0, result.stderr
        lids: dict[str, int] = {}
        for line in result.stdout.splitlines():
            match = _CA_LID.match(line) or _SWITCH_LID.match(line)
            if match:
                lids[match.group(1)] = int(match.group(2))
        return lids

    def tracert(self, source: int, target: int) -> subprocess.CompletedProcess[str]:
        return self.tool("ibtracert", str(source), str(target), timeout=30)


@contextlib.contextmanager
def simulator(net: str, workdir: Path) -> Iterator[Simulator]:
    workdir.mkdir(parents=True, exist_ok=True)
    net_file = workdir / "ibsim.net"
    net_file.write_text(net)
    log_file = workdir / "ibsim.log"
    env = {
        **os.environ,
        "IBSIM_SOCKNAME": f"fc{uuid.uuid4().hex[:10]}",
        "OSM_TMP_DIR": str(workdir),
        "OSM_CACHE_DIR": str(workdir),
    }
    with log_file.open("w") as log:
        process = subprocess.Popen(
            ["ibsim", "-s", "-n", *net_limits(net), str(net_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=workdir,
        )
    try:
        deadline = time.monotonic() + 30
        while READY not in log_file.read_text():
            if process.poll() is not None or time.monotonic() > deadline:
                lines = [
                    line
                    for line in log_file.read_text().splitlines()
                    if "parse_port_connection_data" not in line
                ]
                raise AssertionError("ibsim did not start:\n" + "\n".join(lines[-20:]))
            time.sleep(0.05)
        yield Simulator(env, workdir)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- editing net files (mis-cabled variants) ------------------------------------------------------


@dataclass(slots=True)
class NetRecord:
    header: list[str]  # guid line and node line
    name: str
    links: dict[int, tuple[str, int]]


def parse_net(net: str) -> tuple[list[str], list[NetRecord]]:
    preamble: list[str] = []
    records: list[NetRecord] = []
    pending: list[str] = []
    for line in net.splitlines():
        if line.startswith(("switchguid=", "caguid=")):
            pending = [line]
        elif line.startswith(("Switch\t", "Ca\t")):
            name = line.split('"')[1]
            records.append(NetRecord([*pending, line], name, {}))
            pending = []
        elif line.startswith("["):
            match = _PORT_LINE.fullmatch(line)
            assert match is not None, f"unexpected port line {line!r}"
            records[-1].links[int(match.group(1))] = (match.group(2), int(match.group(3)))
        elif not records and line.strip():
            preamble.append(line)
    return preamble, records


def write_net(preamble: list[str], records: list[NetRecord]) -> str:
    lines = [*preamble, ""]
    for record in records:
        lines.extend(record.header)
        lines.extend(
            f'[{port}]\t"{far}"[{far_port}]'
            for port, (far, far_port) in sorted(record.links.items())
        )
        lines.append("")
    return "\n".join(lines) + "\n"
