"""Twin tool: an InfiniBand subnet in ibsim, with OpenSM and infiniband-diags attached to it.

Consumes an ibsim topology file (the generated ibsim.net) and a scratch folder; produces a
running simulator whose clients (opensm, ibnetdiscover, ibtracert) reach it through the umad2sim
preload library. Each simulator has its own socket name (IBSIM_SOCKNAME), so several run side by
side; an optional command prefix (`ip netns exec NS`) keeps it inside a namespace. umad2sim makes
./sys-<pid> in the working directory, so every tool runs in the scratch folder. The simulator is
stopped when the block ends, also on failure.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from fabricc.twin.requirements import UMAD2SIM

READY = "Network simulator ready"
START_SECONDS = 30.0


class SimulatorError(RuntimeError):
    """ibsim did not start, or a tool attached to it failed."""


def net_limits(net: str) -> list[str]:
    """ibsim -N/-S/-P arguments large enough for the file (ibsim 0.10 defaults: 2048 nodes,
    256 switches, 13312 ports; a larger file is refused)."""
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
    prefix: tuple[str, ...] = ()

    def tool(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """A diagnostic attached to the simulator; its exit status is the caller's to read."""
        try:
            return subprocess.run(
                [*self.prefix, *args],
                cwd=self.workdir,
                env={**self.env, "LD_PRELOAD": str(UMAD2SIM)},
                capture_output=True,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SimulatorError(f"{args[0]} did not finish in {timeout:.0f} s") from None

    def opensm_once(
        self, *args: str, debug: str = "0x07", timeout: float = 300, log: Path | None = None
    ) -> str:
        """One OpenSM sweep (-o); returns its log. OpenSM exits 0 even when a routing engine
        falls back to minhop, so callers read the log. Debug level 0x07 logs ftree's verdict on
        the topology; 0x40 (routing) also makes it dump its tables (opensm-lfts.dump)."""
        log = log or self.workdir / f"opensm-{uuid.uuid4().hex[:6]}.log"
        result = self.tool("opensm", "-o", "-D", debug, *args, "-f", str(log), timeout=timeout)
        if result.returncode != 0:
            raise SimulatorError(
                f"opensm exited {result.returncode}: {(result.stderr or result.stdout)[-500:]}"
            )
        return log.read_text(errors="replace")

    def daemon(self, folder: Path, *args: str, host: str, log: Path) -> subprocess.Popen[bytes]:
        """A long-running client (an OpenSM that stays master or standby) attached to the node
        named `host`, with its own cache folder; the caller stops it (see stop)."""
        folder.mkdir(parents=True, exist_ok=True)
        env = {
            **self.env,
            "LD_PRELOAD": str(UMAD2SIM),
            "SIM_HOST": host,
            "OSM_TMP_DIR": str(folder),
            "OSM_CACHE_DIR": str(folder),
        }
        with log.open("wb") as out:
            return subprocess.Popen(
                [*self.prefix, *args],
                cwd=folder,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def tracert(self, source: int, target: int) -> subprocess.CompletedProcess[str]:
        return self.tool("ibtracert", str(source), str(target), timeout=30)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def simulator(
    net: str, workdir: Path, *, prefix: Sequence[str] = (), start: float = START_SECONDS
) -> Iterator[Simulator]:
    """ibsim running `net` (the text of an ibsim.net) until the block ends."""
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
    with log_file.open("wb") as log:
        process = subprocess.Popen(
            [*prefix, "ibsim", "-s", "-n", *net_limits(net), str(net_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=workdir,
            start_new_session=True,  # Ctrl-C reaches the caller, which stops it
        )
    try:
        deadline = time.monotonic() + start
        while READY not in log_file.read_text(errors="replace"):
            if process.poll() is not None or time.monotonic() > deadline:
                # ibsim warns once per port line about ibnetdiscover comments it cannot parse
                lines = [
                    line
                    for line in log_file.read_text(errors="replace").splitlines()
                    if "parse_port_connection_data" not in line
                ]
                raise SimulatorError("ibsim did not start: " + " | ".join(lines[-5:]))
            time.sleep(0.05)
        yield Simulator(env, workdir, tuple(prefix))
    finally:
        stop(process)
