"""Load stage entry point: spec file -> LoadedSpec (validated spec, positions, catalog, networks).

Runs, in order: YAML parsing with positions, pydantic validation, catalog loading (built-in data
plus the spec's own catalog files), and the cross-field checks of fabricc.spec.resolve. Problems
of one phase are all reported together; a later phase runs only when the earlier one passed.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

from fabricc.catalog.loader import LoadedCatalog, load_catalog
from fabricc.errors import Diagnostic, Severity, SpecError, error, raise_if_errors
from fabricc.spec.models import Spec
from fabricc.spec.resolve import ResolvedNetwork, resolve
from fabricc.spec.validation import validate
from fabricc.spec.yamlsource import SourceMap, load_yaml_file


@dataclass(frozen=True, slots=True)
class LoadedSpec:
    path: Path
    display: str  # the path as the user wrote it; used in every message, never made absolute
    spec: Spec
    source: SourceMap
    catalog: LoadedCatalog
    networks: dict[str, ResolvedNetwork]
    warnings: tuple[Diagnostic, ...]


def load_spec(path: Path, display: str | None = None) -> LoadedSpec:
    name = display if display is not None else path.as_posix()
    data, source = load_yaml_file(path, name)
    if not isinstance(data, dict):
        raise SpecError(
            [
                error(
                    "a spec is a mapping with at least 'metadata' and 'nodes'",
                    location=source.value(()),
                    hint="start from one of the files in examples/",
                )
            ]
        )
    spec, problems = validate(Spec, data, source)
    raise_if_errors(problems)
    assert spec is not None
    user_files: list[tuple[Path, str]] = []
    missing: list[Diagnostic] = []
    for index, relative in enumerate(spec.catalog):
        file_path = path.parent / relative
        shown = posixpath.normpath(posixpath.join(posixpath.dirname(name), relative))
        if not file_path.is_file():
            missing.append(
                error(
                    f"catalog file {relative!r} not found",
                    path=f"catalog[{index}]",
                    location=source.value(("catalog", index)),
                    hint="paths are relative to the spec file",
                )
            )
        user_files.append((file_path, shown))
    raise_if_errors(missing)
    catalog = load_catalog(user_files)
    resolution = resolve(spec, source, catalog)
    raise_if_errors(resolution.diagnostics)
    warnings = tuple(d for d in resolution.diagnostics if d.severity is Severity.WARNING)
    return LoadedSpec(path, name, spec, source, catalog, resolution.networks, warnings)
