"""A large build runs some emitters in a forked copy of itself (fabricc.forked): the same folder,
byte for byte, as a build that runs them all itself; their failures reported as the build's own,
and nothing half-written left behind."""

from __future__ import annotations

import dataclasses
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import fabricc.build
from fabricc import forked
from fabricc.build import build
from fabricc.checks.rules import check
from fabricc.emit import Emitter, emitters, provisioning
from fabricc.errors import DesignError, Diagnostic, OutputError, error
from fabricc.ir import Fabric
from fabricc.synth import pipeline
from fabricc.writer import Artifact
from tests.support import EXAMPLES, compiled

LAB = EXAMPLES / "roce-lab.yaml"  # SONiC data switches: their configs read cables
SUPERPOD = EXAMPLES / "superpod-h100-4su.yaml"  # InfiniBand: the copy forks before cables

pytestmark = pytest.mark.skipif(not forked.available(), reason="fabricc forks on Linux only")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _emitters_with(
    monkeypatch: pytest.MonkeyPatch, swap: dict[str, Callable[[Fabric], Iterator[Artifact]]]
) -> None:
    """Replace emitters' functions (the copy is forked from this process: it runs them)."""
    current: tuple[Emitter, ...] = vars(fabricc.build)["emitters"]()  # as a call left them
    changed = tuple(dataclasses.replace(e, emit=swap.get(e.name, e.emit)) for e in current)
    monkeypatch.setattr(fabricc.build, "emitters", lambda: changed)


def _forking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fabricc.build, "FORK_LINKS", 0)
    monkeypatch.setattr(fabricc.build, "FORK_CPUS", 1)


def _copy_takes_first(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    emit: Callable[[Fabric], Iterator[Artifact]] | None = None,
) -> None:
    """Emitter `name` (replaced by `emit`, if given) in the first unit, and the copy takes it: this
    process's design rules wait until the copy has begun it (the copy takes turns from the
    fork on, this process once its rules are done)."""
    begun = tmp_path / f"{name}.begun"
    current: tuple[Emitter, ...] = vars(fabricc.build)["emitters"]()
    run = emit or next(e.emit for e in current if e.name == name)

    def marked(fabric: Fabric) -> Iterator[Artifact]:
        begun.write_text(str(os.getpid()))
        yield from run(fabric)

    _emitters_with(monkeypatch, {name: marked})
    first = tuple(u for u in fabricc.build.FORK_UNITS if name in u)
    rest = tuple(u for u in fabricc.build.FORK_UNITS if name not in u)
    monkeypatch.setattr(fabricc.build, "FORK_UNITS", first + rest)
    rules = check  # the design rules, as they are

    def waiting(fabric: Fabric) -> list[Diagnostic]:
        deadline = time.monotonic() + 60
        while not begun.exists():
            assert time.monotonic() < deadline, f"the copy did not begin {name}"
            time.sleep(0.01)
        assert begun.read_text() != str(os.getpid())
        return rules(fabric)

    monkeypatch.setattr(fabricc.build, "check", waiting)
    _forking(monkeypatch)


def _folder_left(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))


def _recording(monkeypatch: pytest.MonkeyPatch, pids: Path) -> Callable[[], dict[str, list[int]]]:
    """Every emitter records the process it runs in (and, in a file of its own, the cables it
    sees and its niceness); the returned function reads the records."""
    pids.mkdir()
    original = {e.name: e.emit for e in emitters()}

    def recorded(name: str) -> Callable[[Fabric], Iterator[Artifact]]:
        def emit(fabric: Fabric) -> Iterator[Artifact]:
            with (pids / name).open("a") as record:
                record.write(f"{os.getpid()}\n")
            seen = pids.parent / "seen"
            seen.mkdir(exist_ok=True)
            (seen / name).write_text(f"{len(fabric.cables)} {os.nice(0)}")
            with (pids.parent / "order").open("a") as order:  # in the order they began
                order.write(f"{os.getpid()} {name}\n")
            yield from original[name](fabric)

        return emit

    _emitters_with(monkeypatch, {name: recorded(name) for name in original})
    return lambda: {p.name: [int(n) for n in p.read_text().split()] for p in pids.iterdir()}


def test_a_forked_build_writes_the_same_folder_and_each_unit_runs_once_in_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    build(LAB, tmp_path / "alone", fork=False)
    ran = _recording(monkeypatch, tmp_path / "pids")
    # the copy begins the first unit before this process takes any (its rules wait for it)
    _copy_takes_first(monkeypatch, tmp_path, "provisioning")
    result = build(LAB, tmp_path / "forked")
    assert _snapshot(tmp_path / "forked") == _snapshot(tmp_path / "alone")
    assert result.file_count == len(_snapshot(tmp_path / "alone")) - 1  # the marker
    by_emitter = ran()
    assert sorted(by_emitter) == sorted(e.name for e in emitters())
    assert all(len(pids) == 1 for pids in by_emitter.values()), by_emitter  # each ran once
    for unit in (*fabricc.build.FORK_UNITS, fabricc.build.REVIEW):
        assert len({by_emitter[name][0] for name in unit}) == 1, unit  # a unit in one process
    assert by_emitter["provisioning"] != [os.getpid()]
    # this process: the review emitters, its turns, then the analysis (which waits for its
    # worker) and the report
    began = (tmp_path / "order").read_text().split("\n")
    mine = [
        name for pid, _, name in (line.partition(" ") for line in began) if pid == str(os.getpid())
    ]
    review = [n for n in fabricc.build.REVIEW if n not in fabricc.build.REVIEW_LAST]
    assert mine[: len(review)] == review
    assert mine[-len(fabricc.build.REVIEW_LAST) :] == list(fabricc.build.REVIEW_LAST)


def test_the_units_are_every_emitter_but_the_review_once_and_an_unnamed_one_is_its_own() -> None:
    every = emitters()
    extra = Emitter("extra", every[0].emit)
    units = fabricc.build.fork_units((*every, extra))
    assert sorted(e.name for unit in units for e in unit) == sorted(
        [e.name for e in every if e.name not in fabricc.build.REVIEW] + ["extra"]
    )
    assert units[-1] == (extra,)
    assert [[e.name for e in u] for u in units[:-1]] == [list(u) for u in fabricc.build.FORK_UNITS]
    assert set(fabricc.build.REVIEW) <= {e.name for e in every}
    assert set(fabricc.build.REVIEW_LAST) <= set(fabricc.build.REVIEW)


def test_the_review_emitters_run_in_the_build_process_whoever_is_free_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The emitters that share the analysis (whose worker this process started and reads), the
    BOM lines and the diagrams run in this process, never the copy's; the copy, free first,
    takes every other unit."""
    ran = _recording(monkeypatch, tmp_path / "pids")
    _forking(monkeypatch)
    monkeypatch.setattr(fabricc.build, "ANALYSIS_PROCESS_LINKS", 0)

    others = {e.name for e in emitters() if e.name not in fabricc.build.REVIEW}

    def slow_rules(fabric: Fabric) -> list[Diagnostic]:
        deadline = time.monotonic() + 60  # the copy is free first: it takes every unit
        while not others <= set(ran()):
            assert time.monotonic() < deadline, "the copy did not take the other units"
            time.sleep(0.01)
        return []

    monkeypatch.setattr(fabricc.build, "check", slow_rules)
    build(LAB, tmp_path / "out")
    by_emitter = ran()
    assert {by_emitter[name][0] for name in fabricc.build.REVIEW} == {os.getpid()}
    assert os.getpid() not in {by_emitter[name][0] for name in others}


def test_an_emitter_failing_in_the_copy_fails_the_build_with_its_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(fabric: Fabric) -> Iterator[Artifact]:
        yield ("provisioning/first.txt", "written before the failure\n")
        raise ValueError("provisioning broke on purpose")

    _copy_takes_first(monkeypatch, tmp_path, "provisioning", broken)
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

    _copy_takes_first(monkeypatch, tmp_path, "cabling", clashing)
    monkeypatch.setattr(fabricc.build, "WRITER_PROCESS_LINKS", 0)  # the copy's writer process
    with pytest.raises(OutputError) as caught:
        build(LAB, tmp_path / "out")
    assert [d.message for d in caught.value.diagnostics] == [
        f"cannot write the output folder {(tmp_path / 'out').as_posix()}: File exists"
    ]
    assert not (tmp_path / "out").exists()
    assert _folder_left(tmp_path) == []


def test_a_copy_that_dies_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def dying(fabric: Fabric) -> Iterator[Artifact]:
        os.kill(os.getpid(), signal.SIGKILL)
        yield ("cabling/never.txt", "")

    _copy_takes_first(monkeypatch, tmp_path, "cabling", dying)
    with pytest.raises(RuntimeError, match=r"ended without an answer \(killed by signal 9\)"):
        build(LAB, tmp_path / "out")
    assert _folder_left(tmp_path) == []


def test_a_failing_build_ends_its_copy_unwaited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The build's own emitter fails while the copy still works: the copy is ended, not waited
    for (it would wait for ever)."""

    def waiting(fabric: Fabric) -> Iterator[Artifact]:
        signal.pause()  # until killed
        yield ("cabling/never.txt", "")

    def failing(fabric: Fabric) -> Iterator[Artifact]:
        raise KeyError("configs broke on purpose")
        yield  # a generator, as the real one

    _copy_takes_first(monkeypatch, tmp_path, "cabling", waiting)
    _emitters_with(monkeypatch, {"configs": failing})
    with pytest.raises(KeyError, match="configs broke on purpose"):
        build(LAB, tmp_path / "out")
    assert _folder_left(tmp_path) == []


def test_turns_are_taken_once_each_in_order_by_every_process() -> None:
    """Two processes taking turns from one Turns take each number once, in rising order."""
    with forked.Turns(200) as turns:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's coverage is not collected
            os.close(read)
            os.write(write, bytes(turns))
            os._exit(0)
        os.close(write)
        mine = list(turns)
        with os.fdopen(read, "rb") as answer:
            theirs = list(answer.read())
        os.waitpid(pid, 0)
    assert sorted(mine + theirs) == list(range(200))
    assert mine == sorted(mine) and theirs == sorted(theirs)
    with pytest.raises(ValueError, match="at most 256"):
        forked.Turns(257)


def test_a_design_rule_error_found_while_the_copy_emits_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The design rules run in the build's process while the copy emits: their error is the
    build's, and the copy's files go with the staging folder."""
    _forking(monkeypatch)
    monkeypatch.setattr(
        fabricc.build, "check", lambda fabric: [error("a rule found this on purpose")]
    )
    with pytest.raises(DesignError) as caught:
        build(LAB, tmp_path / "out")
    assert [d.message for d in caught.value.diagnostics] == ["a rule found this on purpose"]
    assert not (tmp_path / "out").exists()
    assert _folder_left(tmp_path) == []


def _seen(tmp_path: Path) -> dict[str, tuple[int, int]]:
    """Per emitter, the cables it saw and its process's niceness (_recording)."""
    found = {}
    for path in (tmp_path / "seen").iterdir():
        cables, nice = path.read_text().split()
        found[path.name] = (int(cables), int(nice))
    return found


def test_a_build_forked_before_cable_selection_writes_the_same_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the switch configs read no cable, the copy forks once the addresses are final and
    runs only the units that read no cable, nicer than this process (whose cable selection is
    the serial path); this process runs those that read them, then takes the copy's units it
    has not begun. Each unit runs once; the folder is the same, byte for byte."""
    build(SUPERPOD, tmp_path / "alone", fork=False)
    ran = _recording(monkeypatch, tmp_path / "pids")
    _copy_takes_first(monkeypatch, tmp_path, "provisioning")
    result = build(SUPERPOD, tmp_path / "forked")
    assert _snapshot(tmp_path / "forked") == _snapshot(tmp_path / "alone")
    assert result.file_count == len(_snapshot(tmp_path / "alone")) - 1
    by_emitter = ran()
    assert all(len(pids) == 1 for pids in by_emitter.values()), by_emitter
    seen = _seen(tmp_path)
    copy = {name for name, pids in by_emitter.items() if pids != [os.getpid()]}
    assert "provisioning" in copy
    fabric, _ = compiled(SUPERPOD.stem)
    reads = {e.name for e in emitters() if e.cables(fabric)}
    assert "netbox-cables" in reads and "netbox" not in reads and "configs" not in reads
    assert not copy & reads  # the copy never runs an emitter that reads cables
    assert {seen[name][0] for name in copy} == {0}  # and never sees one
    assert all(seen[name][0] > 0 for name in reads)
    nicer = min(os.nice(0) + fabricc.build.BEFORE_CABLES_NICE, 19)
    assert {seen[name][1] for name in copy} == {nicer}


def test_a_cable_selection_error_after_the_copy_forked_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy began emitting before cable selection failed: it is ended, and its files go
    with the staging folder; the error is the design's."""
    began = tmp_path / "began"
    run = provisioning.emit

    def slow(fabric: Fabric) -> Iterator[Artifact]:
        began.touch()
        yield from run(fabric)

    def no_cables(fabric: Fabric, problems: list[Diagnostic]) -> None:
        deadline = time.monotonic() + 60
        while not began.exists():  # the copy is at work
            assert time.monotonic() < deadline, "the copy did not begin"
            time.sleep(0.01)
        problems.append(error("no cable reaches, on purpose"))

    _emitters_with(monkeypatch, {"provisioning": slow})
    monkeypatch.setattr(pipeline, "cable_design", no_cables)
    _forking(monkeypatch)
    with pytest.raises(DesignError, match="no cable reaches, on purpose"):
        build(SUPERPOD, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert _folder_left(tmp_path) == []


@pytest.mark.parametrize("spec", [LAB, SUPERPOD], ids=["after-cables", "before-cables"])
def test_a_finding_of_an_emitter_in_the_copy_is_the_builds_design_error(
    spec: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An emitter that finds the design unserved (a DesignError with its place in the spec) in
    the copy fails the build with that error, not with a traceback."""

    def finding(fabric: Fabric) -> Iterator[Artifact]:
        raise DesignError([error("these files cannot be made, on purpose", path="networks")])
        yield

    _copy_takes_first(monkeypatch, tmp_path, "provisioning", finding)
    with pytest.raises(DesignError) as caught:
        build(spec, tmp_path / "out")
    assert [(d.message, d.path) for d in caught.value.diagnostics] == [
        ("these files cannot be made, on purpose", "networks")
    ]
    assert _folder_left(tmp_path) == []
