"""Catalog stage: load the built-in hardware data and the user's catalog files into one Catalog.

Consumes fabricc/catalog/data/*.yaml and the files named in the spec's `catalog:` list; produces a
merged, cross-checked Catalog. A user entry replaces the built-in entry of the same key whole.
Errors carry the file, line and column of the offending entry, exactly as for specs.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fabricc.catalog import host_topology
from fabricc.catalog.media import fits_at_a_rate
from fabricc.catalog.models import Catalog, PortSpec
from fabricc.errors import Diagnostic, Location, SpecError, error, raise_if_errors
from fabricc.spec.validation import did_you_mean, validate
from fabricc.spec.yamlsource import (
    DataPath,
    SourceMap,
    format_path,
    load_yaml_bytes,
    load_yaml_file,
)

SECTIONS = ("nodes", "switches", "transceivers", "cables", "parts", "host_topologies")
BUILTIN_PREFIX = "fabricc/catalog/data"


@dataclass(frozen=True, slots=True)
class CatalogFile:
    """One catalog file as loaded: its entries and where each one is written."""

    name: str
    catalog: Catalog
    source: SourceMap


@dataclass(slots=True)
class LoadedCatalog:
    """The merged catalog and, per (section, key), the file that defined the entry."""

    catalog: Catalog
    origins: dict[tuple[str, str], CatalogFile] = field(default_factory=dict)

    def locate(self, section: str, key: str, *rest: str | int) -> tuple[str, SourceMap, DataPath]:
        origin = self.origins[(section, key)]
        path: DataPath = (section, key, *rest)
        return origin.name, origin.source, path


def _parse(raw: bytes, name: str) -> CatalogFile:
    data, source = load_yaml_bytes(raw, name)
    if data is None:
        data = {}
    model, problems = validate(Catalog, data, source)
    raise_if_errors(problems)
    assert model is not None
    return CatalogFile(name, model, source)


@functools.cache
def builtin_files() -> tuple[CatalogFile, ...]:
    folder = resources.files("fabricc.catalog") / "data"
    files = sorted(
        (entry for entry in folder.iterdir() if entry.name.endswith(".yaml")), key=lambda e: e.name
    )
    return tuple(_parse(entry.read_bytes(), f"{BUILTIN_PREFIX}/{entry.name}") for entry in files)


def load_user_file(path: Path, display_name: str) -> CatalogFile:
    data, source = load_yaml_file(path, display_name)
    if data is None:
        data = {}
    if not isinstance(data, dict) or (data and not set(data) & {*SECTIONS, "default_switches"}):
        # Not a catalog at all (a wrong file named in `catalog:`): say so without quoting any of
        # its content - the file may be anything the user can read.
        raise SpecError(
            [
                error(
                    "not a fabricc catalog file: expected a mapping with sections such as "
                    "nodes, switches, transceivers, cables, parts",
                    location=Location(display_name),
                    hint="name catalog YAML files in the spec's catalog list",
                )
            ]
        )
    model, problems = validate(Catalog, data, source)
    raise_if_errors(problems)
    assert model is not None
    return CatalogFile(display_name, model, source)


BUILTIN_OPTICS_VENDOR = "NVIDIA"


def merge(files: Sequence[CatalogFile], builtin_count: int) -> LoadedCatalog:
    """Merge files in order; built-in files may not define a key twice, user files override."""
    problems: list[Diagnostic] = []
    sections: dict[str, dict[str, Any]] = {name: {} for name in SECTIONS}
    origins: dict[tuple[str, str], CatalogFile] = {}
    default_switches = None
    for position, catalog_file in enumerate(files):
        builtin = position < builtin_count
        for section in SECTIONS:
            entries: dict[str, Any] = getattr(catalog_file.catalog, section)
            for key, entry in entries.items():
                if builtin and (section, key) in origins:
                    first = origins[(section, key)]
                    problems.append(
                        error(
                            f"{section} entry {key!r} is defined twice in the built-in catalog",
                            path=format_path((section, key)),
                            location=catalog_file.source.key((section, key)),
                            hint=f"also in {first.name}",
                        )
                    )
                if builtin and section == "transceivers" and entry.vendor is None:
                    # the built-in optics are NVIDIA LinkX parts (optics.yaml names each spec)
                    entry = entry.model_copy(update={"vendor": BUILTIN_OPTICS_VENDOR})
                sections[section][key] = entry
                origins[(section, key)] = catalog_file
        if catalog_file.catalog.default_switches is not None:
            default_switches = catalog_file.catalog.default_switches
            origins[("default_switches", "")] = catalog_file
    raise_if_errors(problems)
    merged = Catalog(default_switches=default_switches, **sections)
    loaded = LoadedCatalog(merged, origins)
    raise_if_errors(
        [*_cross_check(loaded), *_port_cables(loaded), *host_topology.cross_check(loaded)]
    )
    return loaded


def _port_cables(loaded: LoadedCatalog) -> list[Diagnostic]:
    """A node port's `cable` (the one the vendor's design orders for it) names a catalog cable
    with its plugs on whose plug fits the port's cage at one of the cable's rates; a switch's
    management port names none (the cabling pass reads it on node ports only)."""
    cat = loaded.catalog
    problems: list[Diagnostic] = []
    ports: list[tuple[str, str, str, int, PortSpec]] = [
        ("nodes", key, "ports", index, port)
        for key, node in cat.nodes.items()
        for index, port in enumerate(node.ports)
    ]
    ports += [
        ("switches", key, "mgmt_ports", index, port)
        for key, switch in cat.switches.items()
        for index, port in enumerate(switch.mgmt_ports)
    ]
    for section, key, field_name, index, port in ports:
        if port.cable is None:
            continue
        _, source, _ = loaded.locate(section, key)
        path: DataPath = (section, key, field_name, index, "cable", "family")
        family = cat.cables.get(port.cable.family)
        message, hint = None, None
        if section == "switches":
            message = "a switch's management port names no cable (only node ports do)"
            hint = "remove 'cable'"
        elif family is None:
            message = f"unknown cable {port.cable.family!r}"
            hint = did_you_mean(port.cable.family, list(cat.cables), "cables")
        elif not family.direct:
            message = f"cable {port.cable.family!r} needs transceivers: name a DAC, ACC or AOC"
        elif not any(
            fits_at_a_rate(port.form, plug, family) for plug in (family.a_form, family.b_form)
        ):
            message = (
                f"cable {port.cable.family!r} has {family.a_form}/{family.b_form} plugs, which "
                f"do not fit the port's {port.form} cage"
            )
        if message is not None:
            problems.append(
                error(message, path=format_path(path), location=source.value(path), hint=hint)
            )
    return problems


def _cross_check(loaded: LoadedCatalog) -> list[Diagnostic]:
    """References between entries: rack members, default switches, port forms."""
    cat = loaded.catalog
    problems: list[Diagnostic] = []
    path: DataPath
    for key, node in cat.nodes.items():
        if node.rack_scale is None:
            continue
        _, source, _ = loaded.locate("nodes", key)
        if node.rack_scale.rack_part not in cat.parts:
            path = ("nodes", key, "rack_scale", "rack_part")
            problems.append(
                error(
                    f"unknown part {node.rack_scale.rack_part!r}",
                    path=format_path(path),
                    location=source.value(path),
                    hint=did_you_mean(node.rack_scale.rack_part, list(cat.parts), "parts"),
                )
            )
        if not node.rack_scale.compute_trays:
            path = ("nodes", key, "rack_scale", "members")
            problems.append(
                error(
                    "a rack system needs a member with role compute-tray: its GPUs and network "
                    "ports are the tray's",
                    path=format_path(path),
                    location=source.value(path),
                    hint="add the tray, e.g. {role: compute-tray, model: <a node of kind "
                    "compute-tray>, u: [...]}",
                )
            )
        used: dict[int, str] = {}
        for index, member in enumerate(node.rack_scale.members):
            path = ("nodes", key, "rack_scale", "members", index, "model")
            known = list(cat.nodes) if member.role != "power-shelf" else list(cat.parts)
            if member.model not in known:
                problems.append(
                    error(
                        f"unknown model {member.model!r}",
                        path=format_path(path),
                        location=source.value(path),
                        hint=did_you_mean(member.model, known, "models"),
                    )
                )
            elif member.role == "compute-tray" and cat.nodes[member.model].kind != "compute-tray":
                problems.append(
                    error(
                        f"{member.model!r} is of kind {cat.nodes[member.model].kind}, not a compute tray",
                        path=format_path(path),
                        location=source.value(path),
                        hint="name a node model of kind compute-tray",
                    )
                )
            for u in member.u:
                if u in used or not 1 <= u <= node.rack_scale.height_u:
                    upath = ("nodes", key, "rack_scale", "members", index, "u")
                    problems.append(
                        error(
                            f"rack unit {u} is outside the rack or used twice",
                            path=format_path(upath),
                            location=source.value(upath),
                        )
                    )
                used[u] = member.role
    defaults = cat.default_switches
    if defaults is not None:
        _, source, _ = loaded.locate("default_switches", "")
        for role, model in [("infiniband", defaults.infiniband), *defaults.ethernet.items()]:
            if model not in cat.switches:
                path = ("default_switches", role)
                problems.append(
                    error(
                        f"unknown switch model {model!r}",
                        path=format_path(path),
                        location=source.value(path),
                        hint=did_you_mean(model, list(cat.switches), "switches"),
                    )
                )
    else:
        problems.append(error("the catalog defines no default_switches"))
    return problems


def load_catalog(user_files: Sequence[tuple[Path, str]] = ()) -> LoadedCatalog:
    """The built-in catalog merged with user files given as (path, display name)."""
    files = list(builtin_files())
    problems: list[Diagnostic] = []
    for path, display in user_files:
        try:
            files.append(load_user_file(path, display))
        except SpecError as exc:
            problems.extend(exc.diagnostics)
    raise_if_errors(problems)
    return merge(files, len(builtin_files()))
