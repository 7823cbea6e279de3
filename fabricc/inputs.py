"""Input helper: read a user-named file with a size bound, refusing anything but a regular file.

Consumes a path (spec, catalog, GUID map, NCCL topology file) and a byte limit; produces the bytes
or raises InputError with a one-line reason. Devices (/dev/zero), FIFOs, sockets and folders are
refused before any byte is read - also behind a symbolic link - and a file that grows past the
limit while it is read is refused too, so no input can exhaust memory or block the build.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from fabricc.errors import Location, SpecError, error


class InputError(Exception):
    """A file cannot be read as input; str() is the reason, without the file's contents."""


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "file not found"
    if exc.errno == errno.EACCES:
        return "permission denied"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
        return "not a file path (a part of it is not a folder, or links loop)"
    return f"cannot read file: {exc.strerror or exc}"


def not_a_file(path: Path) -> str | None:
    """Why `path` is no regular file to read (None: it is one), in words for an error: "not
    found", "is a folder", "is a FIFO", "links loop", ... - following symbolic links."""
    try:
        info = path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "is a loop of symbolic links"
        return "not found" if exc.errno == errno.ENOENT else _reason(exc)
    mode = info.st_mode
    for test, what in (
        (stat.S_ISDIR, "is a folder, not a file"),
        (stat.S_ISFIFO, "is a FIFO (named pipe), not a file"),
        (stat.S_ISSOCK, "is a socket, not a file"),
        (stat.S_ISCHR, "is a device, not a file"),
        (stat.S_ISBLK, "is a device, not a file"),
    ):
        if test(mode):
            return what + (" (behind a symbolic link)" if path.is_symlink() else "")
    return None if stat.S_ISREG(mode) else "is not a regular file"


def read_input(path: Path, limit: int, *, what: str) -> bytes:
    """read_limited for a file the user named, its failure a SpecError naming the file."""
    try:
        return read_limited(path, limit, what=what)
    except InputError as exc:
        raise SpecError([error(str(exc), location=Location(path.as_posix()))]) from None


def read_limited(path: Path, limit: int, *, what: str = "input files") -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them."""
    try:
        # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting forever.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            raise InputError("is a folder, not a file") from None
        raise InputError(_reason(exc)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError("is a folder, not a file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError("is not a regular file (a device, FIFO or socket); give a file path")
        if info.st_size > limit:
            raise InputError(f"file is {info.st_size:,} bytes; {what} over {limit:,} are refused")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputError(f"file grew past {limit:,} bytes while it was read; refused")
        return b"".join(chunks)
    except OSError as exc:
        raise InputError(_reason(exc)) from None
    finally:
        os.close(fd)
