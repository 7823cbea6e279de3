"""Output stage: write the artifacts of a build into the output folder, atomically.

Consumes the list of (relative path, content) pairs produced by the emitters; produces the output
folder. Everything is written to a temporary sibling folder first and swapped into place only when
complete, so a failed build leaves the previous output untouched and never half a folder. A folder
that fabricc did not create is never replaced.
"""

from __future__ import annotations

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


def write_tree(out: Path, files: Iterable[tuple[str, str | bytes]]) -> None:
    """Write all files below `out`, replacing a previous fabricc output there."""
    if out.exists() and not out.is_dir():
        raise OutputError([error(f"output path {out} exists and is not a folder")])
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).exists():
        raise OutputError(
            [
                error(
                    f"output folder {out} is not empty and was not written by fabricc",
                    hint="choose another folder with -o, or empty this one",
                )
            ]
        )
    parent = out.parent
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=parent))
    try:
        (staging / MARKER).write_text(
            "written by fabricc; the whole folder is replaced on rebuild\n"
        )
        for relative, content in files:
            target = staging / _safe_relative(relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                target.write_text(content, encoding="utf-8", newline="\n")
            else:
                target.write_bytes(content)
        _swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


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
