"""Output stage: write the artifacts of a build into the output folder, atomically.

Consumes the list of (relative path, content) pairs produced by the emitters; produces the output
folder. Everything is written to a temporary sibling folder first and swapped into place only when
complete, so a failed build leaves the previous output untouched and never half a folder. A folder
that fabricc did not create is never replaced.
"""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from fabricc.errors import OutputError, error

MARKER = ".fabricc-output"


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
    shown = out.as_posix()
    try:
        _check_target(out, shown)
        _write(out, files)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(
            [
                error(
                    f"cannot write the output folder {shown}: {reason}",
                    hint=_HINTS.get(exc.errno or 0),
                )
            ]
        ) from None


def _check_target(out: Path, shown: str) -> None:
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
        raise OutputError([error(f"output path {shown} exists and is not a folder")])
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise OutputError(
            [
                error(
                    f"output folder {shown} is not empty and was not written by fabricc",
                    hint="choose another folder with -o, or empty this one",
                )
            ]
        )


def _write(out: Path, files: Iterable[tuple[str, str | bytes]]) -> None:
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    try:
        # mkdtemp makes the folder private (0700); the output is meant to be read by others (a web
        # server, colleagues) as far as the user's umask allows, like any folder they create.
        staging.chmod(0o777 & ~_umask())
        (staging / MARKER).write_text(
            "written by fabricc; the whole folder is replaced on rebuild\n"
        )
        made: set[Path] = set()  # folders made so far: one mkdir per folder, not per file
        for relative, content in files:
            target = staging / _safe_relative(relative)
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            if isinstance(content, str):
                target.write_text(content, encoding="utf-8", newline="\n")
            else:
                target.write_bytes(content)
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


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
    shutil.rmtree(retired, ignore_errors=True)
