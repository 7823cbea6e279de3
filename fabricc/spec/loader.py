"""Load stage entry point: spec file -> LoadedSpec (validated spec, positions, catalog, networks).

Runs, in order: YAML parsing with positions, pydantic validation, catalog loading (built-in data
plus the spec's own catalog files), and the cross-field checks of fabricc.spec.resolve. Problems
of one phase are all reported together; a later phase runs only when the earlier one passed.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NamedTuple

from fabricc.catalog.loader import LoadedCatalog, load_catalog
from fabricc.errors import Diagnostic, Location, Severity, SpecError, error, raise_if_errors
from fabricc.inputs import not_a_file
from fabricc.spec import consistency
from fabricc.spec.models import Spec
from fabricc.spec.references import check_references
from fabricc.spec.resolve import ResolvedNetwork, resolve
from fabricc.spec.validation import validate
from fabricc.spec.yamlsource import SourceMap, format_path, load_yaml_file


@dataclass(frozen=True, slots=True)
class LoadedSpec:
    path: Path
    display: str  # the path as the user wrote it; used in every message, never made absolute
    spec: Spec
    source: SourceMap
    catalog: LoadedCatalog
    networks: dict[str, ResolvedNetwork]
    warnings: tuple[Diagnostic, ...]
    # subnet_manager.guids files of InfiniBand networks, read (bounded) at load time so that
    # validate and build read the same inputs: network -> (display name, data, positions)
    guid_files: dict[str, GuidFile] = field(default_factory=dict)
    # where an earlier build put its devices (`build --keep`): device name -> place; a device
    # of the central racks keeps its place there, so growth never moves installed equipment
    kept: Mapping[str, KeptPlace] = field(default_factory=dict)


class KeptPlace(NamedTuple):
    """A device's place in an earlier build: its model, rack and lowest rack unit, the number
    its scalable unit was printed with (the inventory's `scalable_unit`), if any, and, per
    network, its rank among the endpoints of that network's leaves (by leaf, then port): the
    order in which top-of-rack leaves were filled; a switch's links to the tier above; and a
    management tree root's cable to the in-band network."""

    model: str
    rack: str
    u: int
    su: int | None = None
    ranks: tuple[tuple[str, int], ...] = ()  # (network, rank)
    uplinks: tuple[tuple[str, str, str], ...] = ()  # a switch's (port, upper switch, its port)
    # a management tree's root: its cable to the in-band network (its port, that switch, its
    # port; synth/rootlinks.py)
    root_link: tuple[str, str, str] | None = None


@dataclass(frozen=True, slots=True)
class GuidFile:
    display: str
    data: dict[object, object]
    source: SourceMap


def load_spec(
    path: Path, display: str | None = None, kept: Mapping[str, KeptPlace] | None = None
) -> LoadedSpec:
    """`kept`: an earlier build's device places (`build --keep`), carried to synthesis."""
    name = display if display is not None else path.as_posix()
    data, source = load_yaml_file(path, name)
    if not isinstance(data, dict) or (data and not set(data) & set(Spec.model_fields)):
        # Not a spec at all: say so without quoting any of the file's content.
        raise SpecError(
            [
                error(
                    "not a fabricc spec: a spec is a mapping with at least 'metadata' and 'nodes'",
                    location=source.value(()) if isinstance(data, dict) else Location(name),
                    hint="start from one of the files in examples/",
                )
            ]
        )
    spec, problems = validate(Spec, data, source)
    if spec is None:
        # Schema errors end the round, but names that do not exist are independent mistakes:
        # they are reported now too, not after the schema errors are fixed.
        raise_if_errors(_with_references(problems, data, source, path))
    raise_if_errors(problems)
    assert spec is not None
    user_files: list[tuple[Path, str]] = []
    missing: list[Diagnostic] = []
    for index, relative in enumerate(spec.catalog):
        file_path = path.parent / relative
        shown = _shown(name, relative)
        problem = not_a_file(file_path)
        if problem is not None:
            missing.append(
                error(
                    f"catalog file {relative!r} {problem}",
                    path=f"catalog[{index}]",
                    location=source.value(("catalog", index)),
                    hint="paths are relative to the spec file",
                )
            )
        user_files.append((file_path, shown))
    raise_if_errors(missing)
    catalog = load_catalog(user_files)
    resolution = resolve(spec, source, catalog)
    # the cross-field rules read the networks that resolved: their mistakes are independent of
    # a network that did not, so both phases report in one round
    raise_if_errors(
        [*resolution.diagnostics, *consistency.check(spec, source, catalog, resolution.networks)]
    )
    warnings = tuple(d for d in resolution.diagnostics if d.severity is Severity.WARNING)
    guid_files = _guid_files(path, name, source, resolution.networks)
    return LoadedSpec(
        path,
        name,
        spec,
        source,
        catalog,
        resolution.networks,
        warnings,
        guid_files,
        kept or {},
    )


def _with_references(
    problems: list[Diagnostic], data: object, source: SourceMap, path: Path
) -> list[Diagnostic]:
    """The schema errors and, where the catalog loads, every unknown name the spec refers to
    (at a place no schema error already speaks of)."""
    files = data.get("catalog") if isinstance(data, dict) else None
    if files is not None and not (
        isinstance(files, list) and all(isinstance(f, str) for f in files)
    ):
        return problems
    user_files = [(path.parent / f, f) for f in files or []]
    if not all(p.is_file() for p, _ in user_files):
        return problems
    try:
        catalog = load_catalog(user_files)
    except SpecError:
        return problems
    taken = {(d.location, d.path) for d in problems}
    found = [
        d for d in check_references(data, source, catalog) if (d.location, d.path) not in taken
    ]
    return sorted(
        [*problems, *found],
        key=lambda d: (d.location.line, d.location.col) if d.location else (0, 0),
    )


def _shown(name: str, relative: str) -> str:
    """A file named in the spec, as messages show it: relative to where the user stands."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(name), relative))


def _guid_files(
    path: Path, name: str, source: SourceMap, networks: dict[str, ResolvedNetwork]
) -> dict[str, GuidFile]:
    files: dict[str, GuidFile] = {}
    problems: list[Diagnostic] = []
    for network_name, network in networks.items():
        relative = network.spec.subnet_manager.guids
        if network.fabric != "infiniband" or relative is None:
            continue
        shown = _shown(name, relative)
        at = (*network.path, "subnet_manager", "guids")
        try:
            data, guid_source = load_yaml_file(path.parent / relative, shown)
        except SpecError as exc:
            # A file that cannot be read at all (missing, a FIFO, a device) is the spec's
            # mistake: say so at the spec line that names it; a problem inside the file is
            # shown there, with that spec line in the hint.
            problems.extend(
                error(
                    f"{shown}: {d.message}",
                    path=format_path(at),
                    location=source.value(at),
                    hint=d.hint,
                )
                if d.location is None or not d.location.line
                else replace(d, hint=d.hint or f"named by {format_path(at)} at {source.value(at)}")
                for d in exc.diagnostics
            )
            continue
        if data is None:
            data = {}
        if not isinstance(data, dict):
            problems.append(
                error(
                    "a GUID file maps IB node names to GUIDs ('name: 0x...')",
                    location=guid_source.value(()),
                    hint=f"named by {format_path(at)} at {source.value(at)}",
                )
            )
            continue
        files[network_name] = GuidFile(shown, data, guid_source)
    raise_if_errors(problems)
    return files
