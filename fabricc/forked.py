"""Emit stage on the second core: some emitters run in a forked copy of the build's process.

Consumes the finished Fabric's emitters to run there (a function that yields their artifacts in
batches) and the staging folder of the build's OutputTree; the copy writes those files into the
folder through a Filler of its own (its own writer thread and process) and answers on a pipe with
the paths it wrote, or its first failure: the OSError of a write (raised again here, so the build
reports it as it reports its own), an emitter's finding (a DesignError, raised again here with
its diagnostics), or an emitter's exception (a RuntimeError here, with the copy's traceback).
Produces the paths. Which emitters run where is decided as they run: both processes take the
next unit of emitters from one Turns (a queue in a pipe), so that the one that is free first
takes the next, whatever the design makes each emitter cost. A large build forks the copy once
its design is final, or, where the emitters that read no cable are the larger share, before
cable selection, to run only those (fabricc.build.BEFORE_CABLES).

Why: a large build's emitters are a few seconds of pure Python after synthesis, on one core;
on a machine with more than one (fabricc.build.FORK_CPUS), half of them run on another.
Emitters are pure functions of the Fabric
(fabricc.emit) that write paths of their own, so which process runs one changes no byte of the
output. Forked, not spawned: the copy has the design as it is, where a spawned process would
have to be sent it (hundreds of MB at 100k GPUs). Linux only (fork is unsafe on macOS with
some system libraries, absent on Windows): elsewhere (available()) the build runs every
emitter itself. The copy never writes to the terminal and ends with os._exit, so nothing
of the parent (its open files, its clean-up handlers) runs twice.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NoReturn

from fabricc.errors import FabriccError
from fabricc.writer import Artifact, Filler

Batches = Callable[[], Iterable[list[Artifact]]]


class Forked:
    """The forked copy; join() waits for its answer, close() ends it unanswered."""

    def __init__(self, pid: int, answer: int) -> None:
        self._pid: int | None = pid
        self._answer = answer

    def join(self) -> list[str]:
        """The paths the copy wrote; raises its failure (OSError, or RuntimeError)."""
        assert self._pid is not None, "joined once"
        with os.fdopen(self._answer, "rb") as answer:
            data = answer.read()
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        try:
            kind, value = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, ValueError):
            raise RuntimeError(
                f"the forked emitter process ended without an answer ({_ended(status)})"
            ) from None
        if kind == "done":
            return list(value)
        if kind == "oserror":
            number, message, filename = value
            failure = OSError(number, message)
            failure.filename = filename
            raise failure
        if kind == "finding":
            error_type, diagnostics = value
            raise error_type(diagnostics)
        raise RuntimeError(f"an emitter failed in the forked emitter process:\n{value}")

    def close(self) -> None:
        """End a copy that was not joined (the build failed): its files are void."""
        if self._pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        os.waitpid(self._pid, 0)
        self._pid = None
        os.close(self._answer)

    def __enter__(self) -> Forked:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Turns:
    """The numbers 0 to count - 1, each taken once, in order, by whichever of the processes
    forked after its making asks first: one byte each in a pipe that every process reads a byte
    at a time (a read from a pipe is atomic). Made before the fork; each process closes its
    own end when done."""

    def __init__(self, count: int) -> None:
        if count > 256:
            raise ValueError(f"{count} turns: a byte each, at most 256")
        self._read, write = os.pipe()
        try:
            os.write(write, bytes(range(count)))  # at most 256 bytes: the pipe holds them
        finally:
            os.close(write)

    def __iter__(self) -> Iterator[int]:
        while taken := os.read(self._read, 1):
            yield taken[0]

    def close(self) -> None:
        if self._read >= 0:
            os.close(self._read)
            self._read = -1

    def __enter__(self) -> Turns:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def available() -> bool:
    return sys.platform == "linux" and hasattr(os, "fork")


def cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def start(batches: Batches, staging: Path, *, process: bool, nice: int = 0) -> Forked:
    """Run `batches` in a forked copy writing into `staging` (`process`: through a writer
    process, fabricc.writer.Filler), `nice` steps below this process in the CPU's favour (the
    copy then yields a shared core to this process's serial path); only where available()."""
    read, write = os.pipe()
    with warnings.catch_warnings():
        # Python 3.12+ warns when other threads run (a terminal's progress display): the copy
        # touches nothing of theirs, neither the terminal nor their locks
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the copy's coverage is not collected
        os.close(read)
        if nice:
            with contextlib.suppress(OSError):  # (a platform or a limit that refuses it)
                os.nice(nice)
        _child(batches, staging, process, write)
    os.close(write)
    return Forked(pid, read)


def _child(batches: Batches, staging: Path, process: bool, answer: int) -> NoReturn:
    status = 1
    reply: tuple[str, object]
    try:
        try:
            reply = ("done", _write(batches, staging, process))
            status = 0
        except OSError as exc:
            reply = ("oserror", (exc.errno or 0, exc.strerror or str(exc), exc.filename))
        except FabriccError as exc:  # an emitter's finding (a design its files cannot serve)
            reply = ("finding", (type(exc), exc.diagnostics))
        except BaseException as exc:  # an emitter's bug: its traceback goes to the parent
            reply = ("failed", "".join(traceback.format_exception(exc)).rstrip())
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(answer, view) :]
    finally:
        os._exit(status)


def _write(batches: Batches, staging: Path, process: bool) -> list[str]:
    filler = Filler(staging, process=process)
    paths: list[str] = []
    try:
        for batch in batches():
            paths.extend(path for path, _ in batch)
            filler.add(batch)
        filler.finish()
    except BaseException:
        filler.abandon()
        raise
    return paths


def _ended(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
