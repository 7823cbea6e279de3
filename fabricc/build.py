"""The build driver: spec file -> load -> synthesize -> check -> emit -> atomic write.

Consumes a spec path and an output folder; produces the output folder and a BuildResult for the
CLI. Nothing is written unless every stage succeeded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fabricc.checks.rules import check
from fabricc.collector import fewer_collections
from fabricc.emit import Artifact, emitters
from fabricc.emit.configs.ibfabric import check_guid_files
from fabricc.errors import DesignError, Diagnostic, Severity, raise_if_errors
from fabricc.ir import Fabric
from fabricc.spec.loader import LoadedSpec, load_spec
from fabricc.synth.pipeline import Stage, quiet, synthesize
from fabricc.writer import write_tree


@dataclass(slots=True)
class BuildResult:
    out: Path
    file_count: int
    warnings: list[Diagnostic]
    notices: list[str] = field(default_factory=list)


def design(loaded: LoadedSpec, stage: Stage = quiet) -> Fabric:
    """Synthesis, then the design rules over the finished IR (an independent second look that
    raises on any error and keeps the warnings on the fabric), then the GUID files against the
    IB node names: everything that build would read, writing nothing (validate runs this)."""
    with fewer_collections():
        fabric = synthesize(loaded, stage)
        stage("design rules")
        findings = check(fabric)
        raise_if_errors(findings, DesignError)
        fabric.warnings.extend(d for d in findings if d.severity is Severity.WARNING)
        check_guid_files(fabric)
    return fabric


def compile_design(loaded: LoadedSpec, stage: Stage = quiet) -> tuple[Fabric, list[Artifact]]:
    fabric = design(loaded, stage)
    artifacts: list[Artifact] = []
    for emitter in emitters():
        stage(emitter.name)
        artifacts.extend(emitter.emit(fabric))
    return fabric, artifacts


def build(spec: Path, out: Path | None = None, stage: Stage = quiet) -> BuildResult:
    """Load, compile and write; `stage` is told each phase as it starts (the CLI shows it)."""
    # The emitters load here, not at import: validate, analyze and compare never need them.
    from fabricc.emit.diagrams.render import notices as diagram_notices
    from fabricc.emit.report import PATH as REPORT

    stage("load")
    loaded = load_spec(spec, spec.as_posix())
    # The emitters and the write, too, make next to no reference cycles (tests/test_collector.py)
    # while they hold millions of rows and strings: no cyclic collections over them either.
    with fewer_collections():
        fabric, artifacts = compile_design(loaded, stage)
        target = out if out is not None else Path("out") / loaded.spec.metadata.name
        stage("write")
        write_tree(target, artifacts)
    notices = diagram_notices(fabric)
    if any(path == REPORT for path, _ in artifacts):
        notices.append(f"report: {(target / REPORT).as_posix()}")
    return BuildResult(target, len(artifacts), [*loaded.warnings, *fabric.warnings], notices)
