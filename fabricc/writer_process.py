"""Output stage helper: a process of its own that writes the files fabricc.writer sends it.

Run as `python -I writer_process.py STAGING` by fabricc.writer.OutputTree for large builds;
reads frames from stdin - `<path length> <content length>\\n`, the path (UTF-8, relative, checked
by the sender), the content bytes - and writes each file below STAGING, making folders as
needed. On the first failure it writes `errno NUL message NUL path` to stdout, keeps reading
(the sender never blocks on a dead reader) and exits 1. Standard library only, and no import of
fabricc: a fresh interpreter starts in a few tens of milliseconds and holds next to no memory.

Why a process: writing a file costs a few file-system calls, and a thread of the build can make
each one only when it gets the interpreter lock back from the emitters (every few milliseconds),
so at 100k GPUs most files waited for the end of the build; this process writes them as they come.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20  # bytes copied at a time: a 70 MB cabling plan never sits here whole


def serve(staging: str, frames: BinaryIO, report: BinaryIO) -> int:
    root = Path(staging)
    made: set[Path] = set()
    failed = False
    while header := frames.readline():
        path_length, length = map(int, header.split())
        relative = frames.read(path_length).decode("utf-8")
        if failed:
            _copy(frames, length, None)
            continue
        failure: OSError | None = None
        file: BinaryIO | None = None
        target = root / relative
        try:
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            file = target.open("wb")
        except OSError as exc:
            failure = exc
        failure = _copy(frames, length, file) or failure
        if file is not None:
            try:
                file.close()
            except OSError as exc:
                failure = failure or exc
        if failure is not None:
            failed = True
            fields = (str(failure.errno or 0), failure.strerror or str(failure), relative)
            report.write("\0".join(fields).encode("utf-8", "replace"))
            report.flush()
    return 1 if failed else 0


def _copy(frames: BinaryIO, length: int, file: BinaryIO | None) -> OSError | None:
    """Copy `length` bytes of `frames` into `file` (None: read past them); after a failed write
    the rest is read past too, and the failure returned."""
    failure: OSError | None = None
    while length:
        chunk = frames.read(min(length, CHUNK))
        if not chunk:
            raise EOFError("the sender stopped in the middle of a file")
        if file is not None and failure is None:
            try:
                file.write(chunk)
            except OSError as exc:
                failure = exc
        length -= len(chunk)
    return failure


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer))
