"""Output stage: write the artifacts of a build into the output folder, atomically.

Consumes (relative path, content) pairs from the emitters; produces the output folder.
Everything is written to a temporary sibling folder first and swapped into place only when
complete, so a failed build leaves the previous output untouched and never half a folder; the
previous output, swapped out, is removed in the background (_remove_later). A folder
that fabricc did not create is never replaced. The files are written on a thread of their own
while the next emitters compute (`Filler`): the file system's calls release the interpreter,
so on a machine with two cores most of the write overlaps the emitters. A large build hands them
on to a process of its own (fabricc.writer_process), which writes them as they come instead of
whenever the thread gets the interpreter lock back from the emitters.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import queue
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath

from fabricc.errors import OutputError, error
from fabricc.inputs import InputError, read_limited

Artifact = tuple[str, str | bytes]

MARKER = ".fabricc-output"
MARKER_HEADER = "written by fabricc; the whole folder is replaced on rebuild; its entries:"
MARKER_BYTES = 1 << 20
# the marker of fabricc before it listed its entries: still a build where the folder also holds
# the summary and the report every build writes (an output of an older release stays
# rebuildable; a marker copied alone into a folder of one's own files does not pass)
LEGACY_MARKER = "written by fabricc; the whole folder is replaced on rebuild"
LEGACY_ENTRIES = {"summary.json", "report"}


def _safe_relative(relative: str) -> PurePosixPath:
    path = PurePosixPath(relative)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise ValueError(f"emitter produced an unsafe path: {relative!r}")
    return path


_HINTS = {
    errno.ENOSPC: "free space on that disk or write elsewhere with -o",
    errno.EDQUOT: "free space within your quota or write elsewhere with -o",
    errno.EACCES: "choose a folder you may write to with -o",
    errno.EPERM: "choose a folder you may write to with -o",
    errno.EROFS: "the file system is read-only; choose another folder with -o",
    errno.ENAMETOOLONG: "choose a shorter output path with -o",
    errno.ENOTDIR: "a part of the output path is a file, not a folder; choose another -o",
    errno.EEXIST: "a part of the output path is a file, not a folder; choose another -o",
}


def write_tree(out: Path, files: Iterable[tuple[str, str | bytes]]) -> None:
    """Write all files below `out`, replacing a previous fabricc output there.

    Every file-system failure (no space, no permission, a name too long, a file where a folder
    should be) becomes one OutputError line; the previous output stays as it was.
    """
    with OutputTree(out) as tree:
        tree.add(files)
        tree.commit()


class OutputTree:
    """A staging folder beside `out`, filled by a Filler and swapped in by commit().

    Entering checks the target and makes the staging folder (`staging`); add() hands files to
    the filler and returns at once; commit() waits for it and swaps the folder in. Leaving
    without a commit (an emitter failed, a write failed) removes the staging folder. Every
    file-system failure becomes one OutputError line, raised by the add() or commit() that
    follows it.
    """

    def __init__(self, out: Path, *, process: bool = False) -> None:
        """`process`: the files go through a writer process (Filler)."""
        self.out = out
        self._use_process = process
        self._staging: Path | None = None
        self._filler: Filler | None = None

    @property
    def staging(self) -> Path:
        """The folder the output is written into until commit() swaps it in; another process
        may write files of its own there before the commit (fabricc.forked)."""
        assert self._staging is not None, "entered OutputTree only"
        return self._staging

    def __enter__(self) -> OutputTree:
        try:
            self._open()
        except BaseException:
            self.__exit__()
            raise
        return self

    def _open(self) -> None:
        with self.as_output_error():
            _check_target(self.out, self.out.as_posix())
            parent = self.out.parent
            parent.mkdir(parents=True, exist_ok=True)
            _sweep_stale(parent, self.out.name)
            self._staging = Path(
                tempfile.mkdtemp(prefix=f".{self.out.name}.tmp-{os.getpid()}-", dir=parent)
            )
            # mkdtemp makes the folder private (0700); the output is meant to be read by others
            # (a web server, colleagues) as far as the user's umask allows, like any folder.
            self._staging.chmod(0o777 & ~_umask())
            self._filler = Filler(self._staging, process=self._use_process)

    def add(self, files: Iterable[Artifact]) -> None:
        assert self._filler is not None
        with self.as_output_error():
            self._filler.add(list(files))

    def commit(self) -> None:
        assert self._filler is not None and self._staging is not None
        with self.as_output_error():
            self._filler.finish()
            _write_marker(self._staging)
            _swap_in(self._staging, self.out)
        self._staging = None

    def __exit__(self, *exc: object) -> None:
        if self._filler is not None:
            self._filler.abandon()
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None

    @contextlib.contextmanager
    def as_output_error(self) -> Iterator[None]:
        """An OSError in the block becomes this output's one OutputError line."""
        try:
            yield
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise OutputError(
                [
                    error(
                        f"cannot write the output folder {self.out.as_posix()}: {reason}",
                        hint=_HINTS.get(exc.errno or 0),
                    )
                ]
            ) from None


class Filler:
    """Writes files below `root` on a thread of its own, started by the first add(), while the
    caller computes the next ones: the file system's calls release the interpreter, so on a
    machine with two cores most of the write overlaps the emitters. With `process`, the thread
    hands them on to a process of its own (fabricc.writer_process), which writes them as they
    come instead of whenever the thread gets the interpreter lock back from the emitters; it is
    worth its start (a few tens of milliseconds) for a few thousand files, where the platform
    can start one. add() raises the failure (an OSError) of an earlier write, finish() the
    first one at all; abandon() drops what is not written yet."""

    def __init__(self, root: Path, *, process: bool = False) -> None:
        self.root = root
        self._process: subprocess.Popen[bytes] | None = None
        self._queue: queue.SimpleQueue[list[Artifact] | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._drain, name="fabricc-writer", daemon=True)
        self._failure: BaseException | None = None
        self._made: set[Path] = set()  # folders made so far: one mkdir per folder, not per file
        if process and sys.executable and hasattr(os, "writev"):
            helper = Path(__file__).with_name("writer_process.py")
            self._process = subprocess.Popen(
                [sys.executable, "-I", str(helper), str(root)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            assert self._process.stdin is not None
            widen_pipe(self._process.stdin.fileno())

    def add(self, batch: list[Artifact]) -> None:
        self._raise_failure()
        if not self._thread.is_alive():
            self._thread.start()
        self._queue.put(batch)

    def finish(self) -> None:
        self._stop()
        self._finish_process()
        self._raise_failure()

    def abandon(self) -> None:
        if self._process is not None:  # not finished: what it would still write is void
            self._process.kill()
        self._stop()
        self._finish_process()

    def _stop(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
            self._thread.join()

    def _finish_process(self) -> None:
        """Wait for the writer process, if any; its failure (the first file it could not
        write) replaces any the thread saw (a pipe broken by it)."""
        process, self._process = self._process, None
        if process is None:
            return
        assert process.stdin is not None and process.stdout is not None
        with contextlib.suppress(OSError):  # a broken pipe: the status below says why
            process.stdin.close()
        report = process.stdout.read()
        process.stdout.close()
        if process.wait() == 0:
            return
        code, message, relative = [*report.decode("utf-8", "replace").split("\0"), "", ""][:3]
        failure = OSError(
            int(code or 0), message or f"the writer process failed ({process.returncode})"
        )
        failure.filename = relative
        self._failure = failure

    def _drain(self) -> None:
        root = self.root
        process = self._process
        while (batch := self._queue.get()) is not None:
            if self._failure is not None:
                continue  # keep taking batches, so that add() never waits, until the stop
            try:
                if process is not None:
                    _send(process, batch)
                    continue
                for relative, content in batch:
                    self._write_one(root / _safe_relative(relative), content)
            except BaseException as exc:  # reported by the next add() or finish()
                self._failure = exc

    def _write_one(self, target: Path, content: str | bytes) -> None:
        if target.parent not in self._made:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(target.parent)
        if isinstance(content, str):
            target.write_text(content, encoding="utf-8", newline="\n")
        else:
            target.write_bytes(content)

    def _raise_failure(self) -> None:
        failure, self._failure = self._failure, None
        if failure is not None:
            raise failure


# Linux pipes hold 64 KiB unless widened: a few hundred MB through one would wake the reader and
# block the writer thousands of times. 1 MiB is the unprivileged limit (fs.pipe-max-size).
PIPE_BYTES = 1 << 20


def widen_pipe(fd: int) -> None:
    """Let the pipe at `fd` hold PIPE_BYTES where the platform allows (a no-op elsewhere)."""
    if sys.platform == "linux":
        import fcntl

        with contextlib.suppress(OSError):  # a lower system limit: the pipe stays as it is
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _send(process: subprocess.Popen[bytes], batch: list[Artifact]) -> None:
    """Files to the writer process, framed as fabricc.writer_process reads them, up to a few
    hundred files or a MiB per system call: the thread holds the interpreter lock only to frame
    them, and the kernel moves the bytes while the emitters compute."""
    assert process.stdin is not None
    fd = process.stdin.fileno()
    buffers: list[bytes] = []  # encoded as they are sent, not the whole batch at once
    held = 0  # bytes in buffers
    for relative, content in batch:
        name = _safe_relative(relative).as_posix().encode("utf-8")
        pieces: Iterable[bytes]
        if isinstance(content, str) and content.isascii():
            # its bytes are its characters: encoded a piece at a time, so that a large file
            # (a 70 MB cabling plan) is never copied whole a second time
            size = len(content)
            pieces = (content[at : at + _PIECE].encode("ascii") for at in range(0, size, _PIECE))
        else:
            data = content.encode("utf-8") if isinstance(content, str) else content
            size, pieces = len(data), (data,)
        header = b"%d %d\n%s" % (len(name), size, name)
        for piece in itertools.chain((header,), pieces):
            buffers.append(piece)
            held += len(piece)
            if len(buffers) >= _BUFFERS_PER_CALL or held >= _PIECE:
                _write_all(fd, buffers)
                buffers, held = [], 0
    _write_all(fd, buffers)


_BUFFERS_PER_CALL = 512  # within IOV_MAX (1024 on Linux)
_PIECE = 1 << 20  # characters of a text file encoded at a time, and bytes held before a send


def _write_all(fd: int, buffers: list[bytes]) -> None:
    """os.writev until every byte is written (a signal can cut a write to a pipe short)."""
    views = [memoryview(b) for b in buffers if b]
    while views:
        written = os.writev(fd, views)
        while views and written >= len(views[0]):
            written -= len(views.pop(0))
        if views:
            views[0] = views[0][written:]


def _check_target(out: Path, shown: str) -> None:
    try:
        out.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(
                [
                    error(
                        f"output path {shown} runs through a loop of symbolic links",
                        hint="fix or remove the links, or choose another folder with -o",
                    )
                ]
            ) from None
    if out.is_symlink():
        raise OutputError(
            [
                error(
                    f"output path {shown} is a symbolic link",
                    hint="fabricc replaces the output folder itself; name a real folder with -o",
                )
            ]
        )
    here = Path.cwd()
    # abspath, not resolve(): "." and ".." are normalised without following links.
    target = Path(os.path.abspath(out))  # noqa: PTH100
    if target == here or target in here.parents:
        raise OutputError(
            [
                error(
                    f"output folder {shown} is the current folder or contains it",
                    hint="fabricc replaces the whole output folder; name a new one, e.g. -o out/x",
                )
            ]
        )
    if out.exists() and not out.is_dir():
        raise OutputError(
            [
                error(
                    f"output path {shown} exists and is not a folder",
                    hint="-o names the output folder; name a new folder or an earlier build's "
                    "(that file is left alone)",
                )
            ]
        )
    if out.is_dir() and any(out.iterdir()) and not _is_build(out):
        raise OutputError(
            [
                error(
                    f"output folder {shown} is not empty and was not written by fabricc",
                    hint="choose another folder with -o, or empty this one",
                )
            ]
        )


def _is_build(folder: Path) -> bool:
    """True when `folder` still holds the output that wrote its marker: the marker lists the
    entries at the top of that output, and each is there. A marker copied into a folder of
    one's own files does not have them replaced; files added to an output later do not keep it
    from being rebuilt."""
    try:
        text = read_limited(folder / MARKER, MARKER_BYTES).decode("utf-8", errors="replace")
        present = {entry.name for entry in folder.iterdir()}
    except (OSError, InputError):
        return False
    lines = text.splitlines()
    if lines == [LEGACY_MARKER]:
        return present >= LEGACY_ENTRIES
    listed = set(lines[1:])
    return bool(lines) and lines[0] == MARKER_HEADER and bool(listed) and listed <= present


def _sweep_stale(parent: Path, name: str) -> None:
    """Remove the staging folders of earlier runs for the same output that were killed before
    they finished (`.NAME.tmp-PID-*` whose process is gone; a running build's is left alone),
    and earlier outputs swapped out whose removal did not finish (`.NAME.old-*`, in the
    background as _swap_in does: one may still be under way); never anything not of this
    naming, a symbolic link or a folder of another owner."""
    staging = re.compile(rf"\.{re.escape(name)}\.tmp-(\d{{1,9}})-[A-Za-z0-9_]+")
    retired = re.compile(rf"\.{re.escape(name)}\.old-[A-Za-z0-9_]+")
    try:
        entries = [entry.name for entry in parent.iterdir()]
    except OSError:
        return
    for entry in entries:
        found = staging.fullmatch(entry)
        if found is not None:
            if _alive(int(found[1])):
                continue
            remove = _remove_now
        elif retired.fullmatch(entry) is not None:
            remove = _remove_later
        else:
            continue
        path = parent / entry
        with contextlib.suppress(OSError):
            info = path.lstat()
            if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
                remove(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process, or no such call here: assume it runs
        return True
    return True


def _write_marker(staging: Path) -> None:
    """The marker of a finished output: its header, then the entries at the folder's top."""
    names = sorted({entry.name for entry in staging.iterdir()} - {MARKER})
    (staging / MARKER).write_text("\n".join([MARKER_HEADER, *names]) + "\n")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _swap_in(staging: Path, out: Path) -> None:
    if not out.exists():
        staging.replace(out)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    retired.rmdir()
    out.replace(retired)
    try:
        staging.replace(out)
    except BaseException:
        retired.replace(out)
        raise
    _remove_later(retired)


def _remove_later(path: Path) -> None:
    """Remove `path`, an earlier output already swapped out, in the background: `rm -rf` in a
    session of its own that outlives the build, so that a rebuild returns once its output is in
    place (removing an earlier output of 13,700 files took 2 s on the development machine; the
    build waited for it). Inline where no shell starts; one that is cut short (a reboot) leaves
    a hidden `.NAME.old-*` folder that the next build of the output removes (_sweep_stale)."""
    try:
        subprocess.run(
            ["sh", "-c", 'rm -rf -- "$1" &', "sh", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # no terminal's hang-up or interrupt reaches it
            check=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        _remove_now(path)


def _remove_now(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
