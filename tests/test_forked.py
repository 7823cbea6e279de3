"""A large build runs some emitters in a forked copy of itself (fabricc.forked): the same folder,
byte for byte, as a build that runs them all itself; their failures reported as the build's own,
and nothing half-written left behind."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import fabricc.build
from fabricc import forked
from fabricc.build import build
from fabricc.emit import Emitter, emitters
from fabricc.errors import DesignError, OutputError, error
from fabricc.ir import Fabric
from fabricc.writer import Artifact
from tests.support import EXAMPLES

LAB = EXAMPLES / "roce-lab.yaml"

pytestmark = pytest.mark.skipif(not forked.available(), reason="fabricc forks on Linux only")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _emitters_with(
    monkeypatch: pytest.MonkeyPatch, name: str, emit: Callable[[Fabric], Iterator[Artifact]]
) -> None:
    """Replace emitter `name`'s function (the copy is forked from this process: it runs it)."""
    every = emitters()
    changed = tuple(Emitter(e.name, emit) if e.name == name else e for e in every)
    monkeypatch.setattr(fabricc.build, "emitters", lambda: changed)


def _folder_left(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))


def test_a_forked_build_writes_the_same_folder_and_the_copy_runs_its_emitters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(LAB, tmp_path / "alone", fork=False)
    pids = tmp_path / "pids"
    pids.mkdir()
    original = {e.name: e.emit for e in emitters()}
    every = emitters()

    def recorded(name: str) -> Callable[[Fabric], Iterator[Artifact]]:
        def emit(fabric: Fabric) -> Iterator[Artifact]:
            (pids / name).write_text(str(os.getpid()))
            yield from original[name](fabric)

        return emit

    changed = tuple(Emitter(e.name, recorded(e.name)) for e in every)
    monkeypatch.setattr(fabricc.build, "emitters", lambda: changed)
    monkeypatch.setattr(fabricc.build, "FORK_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)
    result = build(LAB, tmp_path / "forked")
    assert _snapshot(tmp_path / "forked") == _snapshot(tmp_path / "alone")
    assert result.file_count == len(_snapshot(tmp_path / "alone")) - 1  # the marker
    ran = {path.name: int(path.read_text()) for path in pids.iterdir()}
    assert set(ran) == {e.name for e in every}
    for name, pid in ran.items():
        assert (pid != os.getpid()) is (name in fabricc.build.FORKED_EMITTERS), name


def test_an_emitter_failing_in_the_copy_fails_the_build_with_its_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(fabric: Fabric) -> Iterator[Artifact]:
        yield ("provisioning/first.txt", "written before the failure\n")
        raise ValueError("provisioning broke on purpose")

    _emitters_with(monkeypatch, "provisioning", broken)
    monkeypatch.setattr(fabricc.build, "FORK_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)
    with pytest.raises(RuntimeError) as caught:
        build(LAB, tmp_path / "out")
    message = str(caught.value)
    assert message.startswith("an emitter failed in the forked emitter process:")
    assert "ValueError: provisioning broke on purpose" in message
    assert "in broken" in message  # the copy's traceback, not this process's
    assert not (tmp_path / "out").exists()
    assert _folder_left(tmp_path) == [], "no staging folder is left"


def test_a_write_failure_in_the_copy_is_one_output_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def clashing(fabric: Fabric) -> Iterator[Artifact]:
        yield ("cabling/a", "a file")
        yield ("cabling/a/b", "a file where a folder should be")

    _emitters_with(monkeypatch, "cabling", clashing)
    monkeypatch.setattr(fabricc.build, "FORK_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)
    monkeypatch.setattr(fabricc.build, "WRITER_PROCESS_LINKS", 0)  # the copy's writer process
    with pytest.raises(OutputError) as caught:
        build(LAB, tmp_path / "out")
    assert [d.message for d in caught.value.diagnostics] == [
        f"cannot write the output folder {(tmp_path / 'out').as_posix()}: File exists"
    ]
    assert not (tmp_path / "out").exists()
    assert _folder_left(tmp_path) == []


def test_a_copy_that_dies_is_named_and_a_failing_build_ends_its_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def dying(fabric: Fabric) -> Iterator[Artifact]:
        os.kill(os.getpid(), signal.SIGKILL)
        yield ("cabling/never.txt", "")

    _emitters_with(monkeypatch, "cabling", dying)
    monkeypatch.setattr(fabricc.build, "FORK_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)
    with pytest.raises(RuntimeError, match=r"ended without an answer \(killed by signal 9\)"):
        build(LAB, tmp_path / "out")
    assert _folder_left(tmp_path) == []

    # the build's own emitter fails while the copy still works: the copy is ended, not waited for
    def waiting(fabric: Fabric) -> Iterator[Artifact]:
        signal.pause()  # until killed
        yield ("cabling/never.txt", "")

    def failing(fabric: Fabric) -> Iterator[Artifact]:
        raise KeyError("configs broke on purpose")
        yield  # a generator, as the real one

    every = emitters()
    swap = {"cabling": waiting, "configs": failing}
    changed = tuple(Emitter(e.name, swap.get(e.name, e.emit)) for e in every)
    monkeypatch.setattr(fabricc.build, "emitters", lambda: changed)
    with pytest.raises(KeyError, match="configs broke on purpose"):
        build(LAB, tmp_path / "out")
    assert _folder_left(tmp_path) == []


def test_a_design_rule_error_found_while_the_copy_emits_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The design rules run in the build's process while the copy emits: their error is the
    build's, and the copy's files go with the staging folder."""
    monkeypatch.setattr(fabricc.build, "FORK_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)
    monkeypatch.setattr(
        fabricc.build, "check", lambda fabric: [error("a rule found this on purpose")]
    )
    with pytest.raises(DesignError) as caught:
        build(LAB, tmp_path / "out")
    assert [d.message for d in caught.value.diagnostics] == ["a rule found this on purpose"]
    assert not (tmp_path / "out").exists()
    assert _folder_left(tmp_path) == []
