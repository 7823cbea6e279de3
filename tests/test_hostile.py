"""Hostile input: files that are not files, output folders that cannot be written, injection into
artifacts - each a one-line error (or a neutralised cell), never a traceback, a hang or a leak.

The positioned spec and catalog mistakes of the same campaign live in the error corpus
(tests/errors/*.yaml with their exact messages); these are the cases a YAML file cannot express.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import fabricc.build
import fabricc.emit.configs
import fabricc.emit.configs.files
import fabricc.emit.configs.mgmt
from fabricc.build import build
from fabricc.cli import cli
from fabricc.emit.tables import csv_text, markdown_table
from fabricc.errors import Diagnostic, Location, OutputError, Severity
from fabricc.writer import Filler, OutputTree
from tests.support import EXAMPLES, compiled

LAB = EXAMPLES / "roce-lab.yaml"
SECRET = "root:$y$j9T$Zq7hash:19000"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def assert_one_line_error(result: Result, expected: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    first = result.stderr.splitlines()[0]
    assert expected in first, result.stderr


# -- inputs that are not regular files ---------------------------------------------------------


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "spec.yaml"
    os.mkfifo(path)
    return path


def _zero_link(tmp_path: Path) -> Path:
    path = tmp_path / "zero.yaml"
    path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("make", [lambda _: Path("/dev/zero"), _fifo, _zero_link, lambda t: t])
@pytest.mark.parametrize("verb", ["validate", "build", "check-nccl"])
def test_devices_fifos_and_folders_are_refused_at_once(
    tmp_path: Path, make: Callable[[Path], Path], verb: str
) -> None:
    path = make(tmp_path)
    start = time.perf_counter()
    result = run(verb, str(path))
    assert time.perf_counter() - start < 5
    assert_one_line_error(result, f"{path}: error: ")
    assert "regular file" in result.stderr or "folder" in result.stderr


def test_large_nccl_input_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.xml"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    start = time.perf_counter()
    result = run("check-nccl", str(path))
    assert time.perf_counter() - start < 1
    assert_one_line_error(result, "52,428,800 bytes; NCCL topology files over 4,194,304")


def test_a_secret_file_is_never_quoted(tmp_path: Path) -> None:
    """Named as a catalog (even through a .yaml link) or as the spec, a file that is not one is
    refused without echoing a line of it."""
    secret = tmp_path / "shadow"
    secret.write_text(f"{SECRET}:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n")
    (tmp_path / "shadow.yaml").symlink_to(secret)
    for catalog in (str(secret), "shadow.yaml"):
        spec = tmp_path / "spec.yaml"
        spec.write_text(
            f"metadata: {{name: lab}}\ncatalog: [{catalog!r}]\n"
            "nodes: {gpu: {model: dgx-h100, count: 2}}\n"
        )
        result = run("validate", str(spec))
        assert result.exit_code == 1
        assert "Zq7hash" not in result.output and "99999" not in result.output
    for spec in (secret, tmp_path / "shadow.yaml"):
        result = run("validate", str(spec))
        assert result.exit_code == 1
        assert "Zq7hash" not in result.output and "99999" not in result.output
        assert "not a fabricc spec" in result.stderr


# -- output folders that cannot be written -------------------------------------------------------


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A previous good build, which every failed build below must leave as it was."""
    out = tmp_path / "out"
    assert run("build", str(LAB), "-o", str(out)).exit_code == 0
    return out


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_output_is_readable_as_the_umask_allows(built: Path) -> None:
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE(built.stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((built / "report").stat().st_mode) == 0o777 & ~mask


def test_dangling_symlink_as_output(tmp_path: Path) -> None:
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    assert_one_line_error(run("build", str(LAB), "-o", str(link)), "is a symbolic link")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("out", [".", "..", "./"])
def test_current_folder_or_above_as_output(tmp_path: Path, out: str) -> None:
    inner = tmp_path / "work"
    inner.mkdir()
    previous = Path.cwd()
    os.chdir(inner)
    try:
        result = run("build", str(LAB), "-o", out)
    finally:
        os.chdir(previous)
    assert_one_line_error(result, "is the current folder or contains it")
    assert inner.is_dir() and list(inner.iterdir()) == []


def test_output_name_too_long(tmp_path: Path) -> None:
    out = tmp_path / ("x" * 300)
    assert_one_line_error(run("build", str(LAB), "-o", str(out)), "File name too long")


def test_output_below_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    result = run("build", str(LAB), "-o", str(tmp_path / "file" / "out"))
    assert_one_line_error(result, "cannot write the output folder")
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize(
    ("code", "words"), [(errno.ENOSPC, "No space left"), (errno.EACCES, "Permission denied")]
)
def test_write_failures_keep_the_previous_output(
    built: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    before = _snapshot(built)
    calls = {"n": 0}
    real = Path.write_text

    def failing(self: Path, *args: object, **kwargs: object) -> int:
        calls["n"] += 1
        if calls["n"] > 5:  # fail part-way through, after some files were written
            raise OSError(code, os.strerror(code), str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", failing)
    result = run("build", str(LAB), "-o", str(built))
    assert_one_line_error(result, f"cannot write the output folder {built}: {words}")
    assert _snapshot(built) == before
    assert [p.name for p in built.parent.iterdir()] == [built.name], "no staging folder is left"


@pytest.mark.parametrize("process", [False, True], ids=["thread", "process"])
def test_an_emitter_failing_while_files_are_written_leaves_the_previous_output(
    built: Path, process: bool
) -> None:
    before = _snapshot(built)
    tree = OutputTree(built, process=process)
    with pytest.raises(RuntimeError, match="emitter failed"), tree:
        tree.add([("bom/new.csv", "a,b\n")] * 3)
        tree.add([("configs/x/startup.yaml", b"x")])
        raise RuntimeError("emitter failed")
    assert _snapshot(built) == before
    assert [p.name for p in built.parent.iterdir()] == [built.name], "no staging folder is left"


@pytest.mark.parametrize("process", [False, True], ids=["thread", "process"])
def test_a_write_failure_on_the_writer_is_reported_once(tmp_path: Path, process: bool) -> None:
    out = tmp_path / "out"
    with pytest.raises(OutputError) as caught, OutputTree(out, process=process) as tree:
        tree.add([("a", "file"), ("a/b", "a file where a folder should be")])
        tree.add([("c", "more")])
        tree.commit()
    assert len(caught.value.diagnostics) == 1
    message = caught.value.diagnostics[0].message
    assert message == f"cannot write the output folder {out.as_posix()}: File exists"
    assert list(tmp_path.iterdir()) == []


def test_the_writer_process_writes_what_the_thread_writes(tmp_path: Path) -> None:
    """Same files, same bytes: text (UTF-8, newlines as given), bytes, empty files, nested
    folders, in batches of any size."""
    files: list[tuple[str, str | bytes]] = [
        ("summary.json", '{"name": "lab"}\n'),
        ("configs/leaf-1/startup.yaml", "hostname: leaf-1 \u2013 r\u00e4ck\r\nend\n"),
        ("configs/leaf-1/empty.txt", ""),
        ("diagrams/a.png", bytes(range(256)) * 300),
        # larger than the writer's encoding piece, ASCII (sent piece by piece) and not
        ("cabling/cables.csv", "".join(f"c{i:07d},leaf,swp{i % 64}\n" for i in range(120_000))),
        ("cabling/notes.txt", "r\u00e4ck \u2013 row\n" * 200_000),
        *((f"ztp/sw{i:03}/boot.sh", f"#!/bin/sh\necho {i}\n" * i) for i in range(600)),
    ]
    for process in (False, True):
        with OutputTree(tmp_path / str(process), process=process) as tree:
            tree.add(files[:3])
            tree.add(files[3:])
            tree.commit()
    assert _snapshot(tmp_path / "True") == _snapshot(tmp_path / "False")
    assert len(_snapshot(tmp_path / "True")) == len(files) + 1  # and the marker


def test_a_build_through_the_writer_process_gives_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole build, every emitter's files, through the writer process and through the
    thread alone (large builds take the process; this one is made to)."""
    build(LAB, tmp_path / "thread")
    monkeypatch.setattr(fabricc.build, "WRITER_PROCESS_LINKS", 0)
    monkeypatch.setattr(Filler, "_write_one", None)  # any file the thread wrote would fail
    build(LAB, tmp_path / "process")
    assert _snapshot(tmp_path / "process") == _snapshot(tmp_path / "thread")


def test_switch_configs_are_handed_to_the_writer_as_they_are_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The configs emitter makes its files one after another (the first without the rest) and
    the build passes them on in batches of at most EMIT_BATCH: the same files in the same
    order as a build that waits for every emitter."""
    fabric, artifacts = compiled("superpod-h100-4su")
    made = fabricc.emit.configs.switches(0)(fabric)
    trees: list[str] = []
    management_tree = fabricc.emit.configs.mgmt.management_tree

    def counted(*args: Any) -> Any:
        trees.append(args[2].name)
        return management_tree(*args)

    monkeypatch.setattr(fabricc.emit.configs.files, "management_tree", counted)
    first = next(iter(made))
    assert first[0].startswith("configs/") and len(trees) == 1
    monkeypatch.setattr(fabricc.build, "EMIT_BATCH", 3)
    batches = list(fabricc.build.emit_all(fabric))
    assert max(map(len, batches)) == 3
    assert [a for batch in batches for a in batch] == list(artifacts)


# -- what reaches artifacts --------------------------------------------------------------------


def test_csv_cells_that_spreadsheets_would_run_are_neutralised() -> None:
    text = csv_text(
        ("a", "b", "c", "d"), [("=1+2", "+cmd", "-x", "@SUM(A1)"), ("ok", -1, 2.5, None)]
    )
    assert text.splitlines()[1:] == ["'=1+2,'+cmd,'-x,'@SUM(A1)", "ok,-1,2.5,"]


def test_markdown_cells_cannot_inject_html_or_columns() -> None:
    table = markdown_table(("part", "what"), [("P-1", "<script>alert(1)</script> | x & `y`")])
    row = table.splitlines()[2]
    assert "<script>" not in row
    assert row == "| P-1 | &lt;script&gt;alert(1)&lt;/script&gt; \\| x &amp; \\`y\\` |"


def test_messages_escape_control_characters() -> None:
    diagnostic = Diagnostic(
        Severity.ERROR,
        "unknown key '\x1b[2J'",
        path="nodes.\x1b]0;title\x07",
        location=Location("spec.yaml", 3, 4),
        hint="line\nbreak\u2028",
    )
    text = diagnostic.render()
    assert "\x1b" not in text and "\x07" not in text and "\u2028" not in text
    assert text.count("\n") == 1
    assert text.startswith("spec.yaml:3:4: error: nodes.\\x1b]0;title\\x07: unknown key '\\x1b[2J'")


@pytest.mark.parametrize("option", ["--ibnetdiscover", "--lldp"])
def test_discovery_input_that_is_not_a_file_is_refused(tmp_path: Path, option: str) -> None:
    spec = EXAMPLES / ("superpod-h100-4su.yaml" if option == "--ibnetdiscover" else "roce-lab.yaml")
    fifo = _fifo(tmp_path)
    for path in (Path("/dev/zero"), fifo):
        start = time.perf_counter()
        result = run("verify", str(spec), option, str(path))
        assert time.perf_counter() - start < 60
        assert_one_line_error(result, f"{path}: error: is not a regular file")
