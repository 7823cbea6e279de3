"""The build driver: spec file -> load -> synthesize -> check -> emit -> atomic write.

Consumes a spec path and an output folder; produces the output folder and a BuildResult for the
CLI. Nothing is written unless every stage succeeded.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fabricc import forked
from fabricc.checks.early import rack_power
from fabricc.checks.guids import check_guid_files
from fabricc.checks.rules import check
from fabricc.checks.sonic import check_sonic_switches
from fabricc.collector import fewer_collections
from fabricc.emit import Artifact, Emitter, emitters
from fabricc.errors import (
    DesignError,
    Diagnostic,
    OutputError,
    Severity,
    error,
    raise_if_errors,
)
from fabricc.ir import Fabric
from fabricc.spec.loader import KeptPlace, LoadedSpec, load_spec
from fabricc.spec.size import check_size, estimated_links
from fabricc.synth.pipeline import (
    Linked,
    Settled,
    Stage,
    quiet,
    synthesize,
    unlinked,
    unsettled,
)
from fabricc.writer import OutputTree

# From about this size (a few hundred files) a writer process repays its start (fabricc.writer).
WRITER_PROCESS_LINKS = 5_000
# From about this size the analysis repays a process of its own (fabricc.analysis.worker: about
# 0.3 s of start and imports, on the core that synthesis leaves idle: the worker starts before
# cable selection): roce-512x32's 0.26 s of figures left the build's process; the published
# designs stay below it.
ANALYSIS_PROCESS_LINKS = 20_000
# From this size, on a machine with FORK_CPUS or more, a forked copy of the build runs emitters
# while this process runs the design rules and the REVIEW emitters (REVIEW_LAST after its turns);
# each process takes the next of FORK_UNITS when it is free (fabricc.forked.Turns). The copy
# costs a few tens of ms to start, about 1 s of CPU at 65k GPUs (the pages it copies on write,
# what it derives again) and 300-450 MB of private pages (docs/performance.md).
FORK_LINKS = 20_000
FORK_CPUS = 2  # on one CPU the copy (and the analysis worker) is only its cost
# The emitters that read the same derived views (BOM lines, summary, analysis, the diagrams'
# SVG): one process runs them all, this one, where the analysis worker's figures come back.
REVIEW = ("bom", "summary", "diagrams", "analysis", "report")
# Of them, those this process runs after its turns at FORK_UNITS: the analysis waits for its
# worker's figures (a second and more at nvl72-512 when it ran first), the report prints them.
REVIEW_LAST = ("analysis", "report")
# The units the two processes take, in this order: the costliest at scale first, then the
# small ones that let the two end together (bench/stages.py at nvl72-512 and 65k-all:
# provisioning but NetBox 1.1-1.2 s, NetBox 0.6-0.9 s, cabling 0.6-1.1 s with NetBox's cables
# 0.1 s, the hosts', SuperNICs' and subnet managers' files 0.4-0.8 s, each third of the switch
# configs 0.2-0.5 s).
# An emitter named here nor in REVIEW is a unit of its own, after these.
FORK_UNITS = (
    ("provisioning",),
    ("netbox",),
    ("cabling", "netbox-cables"),
    ("configs-hosts",),
    ("configs",),
    ("configs-2",),
    ("configs-3",),
    ("inventory", "nccl"),
)
# Where these units read no cable (the switch configs: a third to a half of the copy's share at
# scale; an Ethernet data network's read its cables' lengths, fabricc.emit.configs.reads_cables),
# the copy forks once the addresses are final, before cable selection, and runs the units that
# read no cable (Emitter.cables) while this process selects cables, then runs the design rules
# and the units that read them; this process then takes the copy's units it has not begun.
# The copy shares the other core with the analysis worker during cable selection, which is
# this process's serial path: it runs BEFORE_CABLES_NICE steps nicer (unniced, nvl72-512 took
# 6.5 s). nvl72-512 in bench/bench.py: 5.6-5.9 s against 5.9-6.3 s forking after cable selection,
# 100k-xdr 9.7 s against 11 s (docs/performance.md, 2026-11-29 19:30 UTC).
BEFORE_CABLES = ("configs", "configs-2", "configs-3")
BEFORE_CABLES_NICE = 5
EMIT_BATCH = 256  # files handed to the writer at a time


@dataclass(slots=True)
class BuildResult:
    out: Path
    file_count: int
    warnings: list[Diagnostic]
    notices: list[str] = field(default_factory=list)


def design(loaded: LoadedSpec, stage: Stage = quiet) -> Fabric:
    """Synthesis, then the design rules over the finished IR (judge): everything that build
    would read, writing nothing (validate runs this)."""
    fabric = synthesized(loaded, stage)
    judge(fabric, stage)
    return fabric


def synthesized(
    loaded: LoadedSpec,
    stage: Stage = quiet,
    linked: Linked = unlinked,
    settled: Settled = unsettled,
) -> Fabric:
    """The Fabric IR of `loaded`; a DesignError with every error of the phase that stopped it
    and those the spec alone shows. `linked` is told the Fabric once its topology and addresses
    are final, `settled` the networks that nothing changes once built
    (fabricc.synth.pipeline.synthesize)."""
    raise_if_errors(check_size(loaded), DesignError)
    with fewer_collections():
        try:
            return synthesize(loaded, stage, linked, settled)
        except DesignError as exc:
            # the design stopped on one mistake: add those the spec alone shows, so that one
            # run reports every independent error
            seen = {d.path for d in exc.diagnostics}
            early = [d for d in rack_power(loaded) if d.path not in seen]
            if early:
                raise DesignError([*exc.diagnostics, *early]) from None
            raise


def judge(fabric: Fabric, stage: Stage = quiet) -> None:
    """The design rules over the finished IR (an independent second look that raises on any
    error and keeps the warnings on the fabric), then the GUID files against the IB node names
    and the SONiC switches against their platform's SKUs."""
    with fewer_collections():
        stage("design rules")
        findings = check(fabric)
        raise_if_errors(findings, DesignError)
        fabric.warnings.extend(d for d in findings if d.severity is Severity.WARNING)
        check_guid_files(fabric)
        check_sonic_switches(fabric)


def emit_all(
    fabric: Fabric, stage: Stage = quiet, chosen: Iterable[Emitter] | None = None
) -> Iterator[list[Artifact]]:
    """The artifacts of the `chosen` emitters (default: every one), emitter after emitter
    (`stage` is told each one's name), in batches of at most EMIT_BATCH as an emitter makes
    them: the writer has a switch's files while the next switches' are made."""
    for emitter in emitters() if chosen is None else chosen:
        stage(emitter.name)
        made = iter(emitter.emit(fabric))
        while batch := list(itertools.islice(made, EMIT_BATCH)):
            yield batch


def fork_units(every: Sequence[Emitter]) -> list[tuple[Emitter, ...]]:
    """The emitters of `every` not in REVIEW, in FORK_UNITS and in their order; one named in
    none is a unit of its own."""
    by_name = {e.name: e for e in every}
    units = [tuple(by_name[n] for n in unit if n in by_name) for unit in FORK_UNITS]
    named = {n for unit in (*FORK_UNITS, REVIEW) for n in unit}
    units += [(e,) for e in every if e.name not in named]
    return [unit for unit in units if unit]


def cable_free(units: Sequence[tuple[Emitter, ...]], fabric: Fabric) -> list[tuple[Emitter, ...]]:
    """The units of which no emitter reads the cable selection of this design."""
    return [unit for unit in units if not any(e.cables(fabric) for e in unit)]


def fork_before_cables(free: Sequence[tuple[Emitter, ...]]) -> bool:
    """Whether the copy forks before cable selection to run the `free` units: where they hold
    every unit of BEFORE_CABLES."""
    names = {e.name for unit in free for e in unit}
    return all(name in names for name in BEFORE_CABLES)


@dataclass(slots=True)
class _Copy:
    """A forked copy of the build: its staging folder, the copy, the units it takes turns at
    with this process (every shared unit, or the cable-free ones where it forked before cable
    selection) and their turns."""

    tree: OutputTree
    side: forked.Forked
    units: list[tuple[Emitter, ...]]
    turns: forked.Turns


def taken(units: Sequence[tuple[Emitter, ...]], turns: forked.Turns) -> Iterator[Emitter]:
    """The emitters of each unit this process takes its turn at."""
    for index in turns:
        yield from units[index]


def compile_design(loaded: LoadedSpec, stage: Stage = quiet) -> tuple[Fabric, list[Artifact]]:
    fabric = design(loaded, stage)
    return fabric, [artifact for batch in emit_all(fabric, stage) for artifact in batch]


def build(
    spec: Path,
    out: Path | None = None,
    stage: Stage = quiet,
    kept: Mapping[str, KeptPlace] | None = None,
    fresh: bool = False,
    fork: bool = True,
) -> BuildResult:
    """Load, compile and write; `stage` is told each phase as it starts (the CLI shows it);
    `kept`: an earlier build's device places, which central devices keep (`build --keep`);
    without it, an earlier build of the same design in the output folder is kept the same way
    (growth in place), unless `fresh` asks for a new layout.

    Each emitter's files go to the writer thread as soon as the emitter is done, so the file
    system works while the next emitters compute; "write" is the wait for the last of them and
    the swap into place. A large build forks a copy of itself that runs emitters on the other
    core, each process taking the next of FORK_UNITS when it is free (fabricc.forked), unless
    `fork` is False (bench/stages.py times every emitter in one process); where the switch
    configs read no cable, the copy forks before cable selection and takes only the units that
    read none (BEFORE_CABLES)."""
    # The emitters load here, not at import: validate, analyze and compare never need them.
    from fabricc.emit.configs.eos_files import notices as eos_notices
    from fabricc.emit.diagrams.render import notices as diagram_notices
    from fabricc.emit.report import PATH as REPORT

    stage("load")
    loaded = load_spec(spec, spec.as_posix(), kept)
    target = out if out is not None else Path("out") / loaded.spec.metadata.name
    grown = kept is None and not fresh and _grow_in_place(loaded, target)
    if grown:
        stage("earlier build")
        from fabricc.change.snapshot import kept_places, load_places

        loaded = dataclasses.replace(loaded, kept=kept_places(load_places(target)))
    paths: list[str] = []
    # The emitters and the write, too, make next to no reference cycles (tests/test_collector.py)
    # while they hold millions of rows and strings: no cyclic collections over them either.
    with fewer_collections(), contextlib.ExitStack() as running:
        # a design that looks large has its analysis worker started now, waiting for its
        # graphs: its start and imports run on the core that synthesis leaves idle (on one CPU
        # there is none: the analysis runs in this process, without the worker's start)
        cores = forked.cpus() >= FORK_CPUS
        waiting = None
        if cores and estimated_links(loaded) >= ANALYSIS_PROCESS_LINKS:
            from fabricc.analysis import worker

            waiting = running.enter_context(worker.PlaneWorker())

        def settled(fabric: Fabric, names: list[str]) -> None:
            """The networks nothing changes any more go to the waiting worker at once: it
            computes their figures on the core that synthesis leaves idle."""
            if waiting is not None:
                from fabricc.analysis import worker

                worker.send_settled(fabric, names, waiting)

        def analysis_worker(fabric: Fabric) -> None:
            """The analysis' worker of a large design, given its graphs once the topology is
            final: it computes on the other core while this process selects cables (about 1.5 s
            at nvl72-512 in bench/bench.py), where it would otherwise take from the emitters'."""
            if cores and len(fabric.links) >= ANALYSIS_PROCESS_LINKS:
                from fabricc.analysis import worker  # networkx and all: loaded when needed

                stage("analysis graphs")
                started = worker.start(fabric, waiting)
                if waiting is None:
                    running.enter_context(started)
            elif waiting is not None:
                waiting.close()  # smaller than it looked: analysed in this process

        every = emitters()
        shared = fork_units(every)
        copy: _Copy | None = None

        def split(fabric: Fabric) -> bool:
            return (
                fork
                and len(fabric.links) >= FORK_LINKS
                and forked.available()
                and forked.cpus() >= FORK_CPUS
            )

        def output(fabric: Fabric) -> OutputTree:
            return running.enter_context(
                OutputTree(target, process=len(fabric.links) >= WRITER_PROCESS_LINKS)
            )

        def fork_copy(fabric: Fabric, units: list[tuple[Emitter, ...]], nice: int = 0) -> _Copy:
            """The copy taking turns at `units` with this process; forked before this process
            starts a thread (the writer's starts with its first files; the analysis worker runs
            none here); ended unjoined when the build fails."""
            tree = output(fabric)
            turns = running.enter_context(forked.Turns(len(units)))
            side = running.enter_context(
                forked.start(
                    functools.partial(emit_all, fabric, quiet, taken(units, turns)),
                    tree.staging,
                    process=len(fabric.links) >= WRITER_PROCESS_LINKS,
                    nice=nice,
                )
            )
            return _Copy(tree, side, units, turns)

        def linked(fabric: Fabric) -> None:
            """The topology and the addresses are final: the worker takes its graphs, and
            where the cable-free emitters are the larger share a copy forks to run them while
            this process selects cables (BEFORE_CABLES)."""
            nonlocal copy
            analysis_worker(fabric)
            if split(fabric) and fork_before_cables(free := cable_free(shared, fabric)):
                copy = fork_copy(fabric, free, BEFORE_CABLES_NICE)

        fabric = synthesized(loaded, stage, linked, settled)
        if copy is None and split(fabric):
            copy = fork_copy(fabric, shared)
        # the design rules run while the copy emits (its emitters read none of their findings):
        # an error ends the copy and removes the staging folder unseen
        judge(fabric, stage)
        mine: Iterable[Emitter] = every
        side = None
        if copy is None:
            tree = output(fabric)
        else:
            tree, side = copy.tree, copy.side
            # this process's units (those that read cables, where the copy forked before cable
            # selection), the review emitters, its turns at the copy's units, then the last
            own = [e for unit in shared if unit not in copy.units for e in unit]
            first = [e for e in every if e.name in REVIEW and e.name not in REVIEW_LAST]
            last = [e for e in every if e.name in REVIEW_LAST]
            mine = itertools.chain(own, first, taken(copy.units, copy.turns), last)
        for batch in emit_all(fabric, stage, mine):
            paths.extend(path for path, _ in batch)
            tree.add(batch)
        stage("write")
        if side is not None:
            with tree.as_output_error():
                paths.extend(side.join())
        notices = [*eos_notices(fabric), *diagram_notices(fabric)]
        warnings = [*loaded.warnings, *fabric.warnings]
        # Nothing reads the design any more: it is freed (about 0.4 s at 100k GPUs) while
        # the writer finishes the last files, not after them.
        del fabric
        tree.commit()
    if REPORT in paths:
        notices.append(f"report: {(target / REPORT).as_posix()}")
    if grown:
        notices.append(
            f"grown in place: the devices of the earlier build in {target.as_posix()} kept "
            "their racks and units (--fresh: a new layout)"
        )
    return BuildResult(target, len(paths), warnings, notices)


def _grow_in_place(loaded: LoadedSpec, target: Path) -> bool:
    """True when `target` holds an earlier build of this design (same metadata.name): the
    build reads it as `--keep` does. A build of another design there is refused."""
    from fabricc.change.snapshot import built_design

    try:
        name = built_design(target) if target.is_dir() else None
    except OSError:  # a name the file system refuses: the writer reports it
        return False
    if name is None:
        return False
    if name != loaded.spec.metadata.name:
        raise OutputError(
            [
                error(
                    f"output folder {target.as_posix()} holds a build of another design "
                    f"({name!r}, this is {loaded.spec.metadata.name!r})",
                    hint="name another folder with -o, or pass --fresh to replace it",
                )
            ]
        )
    return True
