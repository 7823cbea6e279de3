"""Analysis helper: the plane figures of a large design, computed in a process of its own.

Consumes a finished Fabric: the plane graphs and tier switch names of each network are built here
(they read the links); produces fabricc.analysis.network.plane_figures of each network, computed
in another Python process while the build's process runs the emitters before the analysis.
Max-flows, path searches and failure impacts are most of the analysis (about 2 s at 100k GPUs)
and read nothing but the graphs, which are small (a few thousand switches; endpoints are
attachments). The process is a plain `python -I` with this process's import path that imports
this fabricc package and runs serve() (fabricc.analysis.process): nothing of the caller's
program runs again in it, as multiprocessing's spawn would re-run an unguarded main script. The
graphs go to its stdin pickled, in length-prefixed frames, with attachments as plain tuples (a
named tuple pickles through a Python call each). A large build starts the process before
synthesis, waiting for its graphs (its 0.3 s of start and imports on the core that synthesis
leaves idle). The networks that nothing changes once built (those before the first uplink
target: the compute and storage fabrics of a SuperPOD) go first, as soon as they are built
(send_settled), and the worker computes them while synthesis goes on; once the topology is
final, before cable selection, the rest go: each frame made and written into its stdin pipe by
a forked copy of the build while the build goes on (send). Started with its graphs, the process
has them in an unnamed temporary file as its stdin. Either way the build never waits for the
process to start and runs no thread of it (the build forks its emitting copy later,
fabricc.forked). The figures come back on its stdout. They are the same data as in-process
(tests/test_analysis.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import traceback
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from fabricc import forked
from fabricc.analysis.graph import Attachment, PlaneGraph, plane_graphs
from fabricc.analysis.network import plane_figures, tier_switches
from fabricc.analysis.process import FRAME_HEAD
from fabricc.ir import Fabric

MEMO_KEY = "analysis.worker"  # Fabric.memo: the worker of a build that started one
SETTLED_KEY = "analysis.settled"  # Fabric.memo: the networks sent before the rest (send_settled)
# The process's import path: the folder that holds this fabricc package, then this process's
# path (the same code runs there, its dependencies found where they were found here).
_ROOT = str(Path(__file__).resolve().parent.parent.parent)
_SERVE = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from fabricc.analysis.process import main; main()"
)
# A pipe this large takes a payload (4 MB at nvl72-512) in a few reads of the process's reading
# thread, which shares the interpreter with its imports (Linux's limit for a user: 1 MiB,
# /proc/sys/fs/pipe-max-size); where refused, the pipe stays as it is
PIPE_BYTES = 1 << 20
# From this size a forked copy makes and sends a waiting worker's graphs (send): below it their
# 0.05 s (roce-512x32, 49k links) is less than what a third process costs the two cores that
# cable selection and the worker then share (bench/bench.py: 0.05-0.1 s more wall)
FORKED_SEND_LINKS = 100_000

_Packed = tuple[
    str, int, list[str], list[str], list[dict[int, tuple[int, int]]], list[tuple[Any, ...]]
]
Jobs = dict[str, tuple[list[PlaneGraph], dict[str, list[str]]]]


class PlaneWorker:
    """A process computing plane_figures of each job; figures() waits for them. Given its jobs,
    it starts with them as its stdin; without, it starts waiting for them (send), its imports
    done on a core that synthesis leaves idle."""

    def __init__(self, jobs: Jobs | None = None) -> None:
        command = [sys.executable, "-I", "-c", _SERVE, json.dumps([_ROOT, *sys.path])]
        self._sender: int | None = None  # the forked copy writing the jobs (send)
        if jobs is None:
            self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert self._process.stdin is not None
            with contextlib.suppress(OSError):
                fcntl.fcntl(self._process.stdin, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
            return
        with tempfile.TemporaryFile() as payload:
            payload.write(_frame(pickle.dumps(_packed(jobs), protocol=pickle.HIGHEST_PROTOCOL)))
            payload.seek(0)
            self._process = subprocess.Popen(command, stdin=payload, stdout=subprocess.PIPE)

    def send(self, jobs: Callable[[], Jobs], *, copy: bool = True, last: bool = True) -> None:
        """Jobs of a worker started without them, made by `jobs`: one frame, the last one
        unless `last` is False (more jobs follow; the worker computes each frame as it comes).
        With `copy`, where this process can fork (fabricc.forked), a forked copy makes and
        writes them while this process goes on: the graphs and their pickling (0.2-0.3 s at
        nvl72-512 and 65k-all) run on the core that the waiting worker leaves idle, and its
        copy of the design changes nothing here; a frame is written once the copy writing the
        one before has ended, so that frames never interleave. A failure to make them reaches
        the worker, which answers it; a worker that has died takes nothing: figures() reports
        either."""
        stdin = self._process.stdin
        assert stdin is not None and not stdin.closed, "the worker has its jobs"
        self._sent()
        if not (copy and forked.available()):
            _write_jobs(jobs, stdin)
        else:
            with warnings.catch_warnings():  # (Python 3.12+ on threads: this process runs none)
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
            if pid == 0:  # pragma: no cover - the copy's coverage is not collected
                try:
                    _write_jobs(jobs, stdin)
                finally:
                    os._exit(0)
            self._sender = pid
        if last:
            with contextlib.suppress(BrokenPipeError):
                stdin.close()

    def _sent(self) -> None:
        """Wait for the copy writing a frame, if one still writes (a frame is a few MB: it has
        long been written by the time the next is made)."""
        if self._sender is not None:
            with contextlib.suppress(ChildProcessError):  # (none to wait for: SIGCHLD ignored)
                os.waitpid(self._sender, 0)
            self._sender = None

    def figures(self) -> dict[str, dict[str, Any]]:
        """Per network, its plane figures; RuntimeError (with the process's traceback) when the
        process failed or ended without them."""
        try:
            assert self._process.stdout is not None
            answer = self._process.stdout.read()
            code = self._process.wait()
        finally:
            self.close()
        try:
            status, value = pickle.loads(answer)
        except (pickle.UnpicklingError, EOFError, ValueError):  # nothing, or not its answer
            raise RuntimeError(
                f"the analysis process ended without a result (exit code {code})"
            ) from None
        if status != "ok":
            raise RuntimeError(f"the analysis process failed:\n{value}")
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the process if it still runs (a build that failed, or one that did not need
        it), and the copy sending its jobs if it still sends, and release the pipes."""
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        if self._sender is not None:  # done once the process has read its jobs
            with contextlib.suppress(ProcessLookupError, ChildProcessError):
                os.kill(self._sender, signal.SIGKILL)
                os.waitpid(self._sender, 0)  # (none to wait for where SIGCHLD is ignored)
            self._sender = None
        for pipe in (self._process.stdin, self._process.stdout):
            if pipe is not None:
                with contextlib.suppress(BrokenPipeError):
                    pipe.close()

    def __enter__(self) -> PlaneWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(fabric: Fabric, waiting: PlaneWorker | None = None) -> PlaneWorker:
    """Build the plane graphs of every network and hand them to the `waiting` worker (from a
    forked copy of this process from FORKED_SEND_LINKS: send), else to a new one, which
    analysis.design.analyze then asks for the figures (through Fabric.memo). Networks the
    waiting worker was sent before (send_settled) are not sent again."""
    sent = fabric.memo.get(SETTLED_KEY, ())
    assert isinstance(sent, tuple)

    def jobs() -> Jobs:
        return {name: _job(fabric, name) for name in fabric.networks if name not in sent}

    if waiting is None:
        worker = PlaneWorker(jobs())
    else:
        worker = waiting
        worker.send(jobs, copy=len(fabric.links) >= FORKED_SEND_LINKS)
    fabric.memo[MEMO_KEY] = worker
    return worker


def send_settled(fabric: Fabric, names: Sequence[str], waiting: PlaneWorker) -> None:
    """Send the `waiting` worker the graphs of networks that nothing will change any more
    (fabricc.synth.pipeline.Settled), from a forked copy, as a first frame: the worker computes
    their figures while synthesis goes on, on the core it would otherwise leave idle until the
    topology is final (start sends the rest, and then not these). Only where this process can
    fork: here, the graphs would be made on the serial path."""
    built = tuple(name for name in names if name in fabric.networks)
    if not built or not forked.available():
        return
    fabric.memo[SETTLED_KEY] = built
    waiting.send(lambda: {name: _job(fabric, name) for name in built}, last=False)


def _job(fabric: Fabric, name: str) -> tuple[list[PlaneGraph], dict[str, list[str]]]:
    return plane_graphs(fabric, name), tier_switches(fabric, name)


def taken_figures(fabric: Fabric) -> dict[str, dict[str, Any]]:
    """The figures of the build's worker, if it started one (once: the worker is closed)."""
    worker = fabric.memo.pop(MEMO_KEY, None)
    return worker.figures() if isinstance(worker, PlaneWorker) else {}


def _write_jobs(jobs: Callable[[], Jobs], stdin: IO[bytes]) -> None:
    """Make the jobs and write them pickled as one frame, or the traceback of their failure
    (serve raises it again in the process); a process that has died takes nothing."""
    try:
        payload = pickle.dumps(_packed(jobs()), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        payload = pickle.dumps(_Failed(traceback.format_exc()), protocol=pickle.HIGHEST_PROTOCOL)
    with contextlib.suppress(BrokenPipeError):
        stdin.write(_frame(payload))
        stdin.flush()


def _frame(payload: bytes) -> bytes:
    """`payload` as a frame of the worker's stdin (fabricc.analysis.process reads them)."""
    return len(payload).to_bytes(FRAME_HEAD, "big") + payload


class _Failed(str):
    """The traceback of jobs that could not be made, in place of the jobs."""


def _packed(jobs: Jobs) -> dict[str, tuple[list[_Packed], dict[str, list[str]]]]:
    return {
        name: ([_pack(graph) for graph in graphs], tiers) for name, (graphs, tiers) in jobs.items()
    }


def _pack(graph: PlaneGraph) -> _Packed:
    return (
        graph.network,
        graph.plane,
        graph.names,
        graph.roles,
        graph.adjacency,
        list(map(tuple, graph.attachments)),
    )


def _unpack(packed: _Packed) -> PlaneGraph:
    network, plane, names, roles, adjacency, attachments = packed
    return PlaneGraph(
        network, plane, names, roles, adjacency, list(map(Attachment._make, attachments))
    )


def serve(frames: Iterable[bytes]) -> None:
    """The process (fabricc.analysis.process, which reads the `frames` from stdin): figures of
    each network of every frame, each frame computed as it comes, or the traceback, pickled to
    stdout once the frames end."""
    try:
        figures: dict[str, dict[str, Any]] = {}
        came = False
        for payload in frames:
            came = True
            packed: dict[str, tuple[list[_Packed], dict[str, list[str]]]] = pickle.loads(payload)
            if isinstance(packed, _Failed):
                raise RuntimeError(f"the plane graphs could not be made:\n{packed}")
            for name, (graphs, tiers) in packed.items():
                figures[name] = plane_figures([_unpack(graph) for graph in graphs], tiers)
        if not came:
            raise RuntimeError("no plane graphs came")
        answer: tuple[str, Any] = ("ok", figures)
    except BaseException:  # whatever it is, the build reports it
        answer = ("error", traceback.format_exc())
    sys.stdout.buffer.write(pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.buffer.flush()
