"""Change management input: one side of a diff as the files a build writes.

Consumes a spec file (compiled in memory, Graphviz rendering off: only tables and configs are
compared) or a build folder; produces a Snapshot - devices and cables (the inventory and cabling
CSVs), BOM lines and the text of every file under configs/. Both kinds of input go through the
same CSVs, so a spec and the folder it was built into compare equal.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import repeat
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING

from fabricc.errors import Location, SpecError, error
from fabricc.inputs import InputError, read_input
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, MGMT, SPINE_CORE

if TYPE_CHECKING:
    from fabricc.spec.loader import KeptPlace

DEVICES = "inventory/devices.csv"
CABLES = "cabling/cables.csv"
BOM = "bom/bom.csv"
CONFIGS = "configs/"
SUMMARY = "summary.json"
# The largest artifact diff reads (cables.csv of a 100k-GPU design) is some tens of MB.
MAX_ARTIFACT_BYTES = 256 * 1024 * 1024

Row = dict[str, str]
Record = tuple[str, ...]  # a row's values of some columns, in their order


@dataclass(slots=True)
class Snapshot:
    label: str
    devices: dict[str, Row] = field(default_factory=dict)  # name -> inventory row
    cables: list[Row] = field(default_factory=list)  # cabling plan rows, one per link
    bom: dict[str, Row] = field(default_factory=dict)  # part number -> BOM line
    configs: dict[str, str] = field(default_factory=dict)  # path under configs/ -> text


# The columns diff and --keep read by name; a file without one is not a build's.
REQUIRED = {
    DEVICES: ("name",),
    CABLES: (
        "cable_id", "network", "kind", "a_device", "a_port", "a_rack", "b_device", "b_port",
        "b_rack", "cable_part",
    ),
    BOM: ("part_number", "quantity"),
}  # fmt: skip
# The columns kept_places reads: a build growing in place reads only these of its earlier build.
PLACE_COLUMNS = {
    DEVICES: ("name", "model", "rack", "u", "scalable_unit", "network"),
    CABLES: ("network", "kind", "a_device", "a_port", "b_device", "b_port"),
}
# A number as a build writes it in the BOM's quantity column.
_QUANTITY = re.compile(r"(?:\d{1,12}(?:\.\d{1,6})?)?")


def _bad(where: Location, message: str) -> SpecError:
    return SpecError(
        [
            error(
                message,
                location=where,
                hint="give a folder written by `fabricc build`, or rebuild it (--fresh)",
            )
        ]
    )


def _rows(label: str, relative: str, text: str) -> list[Row]:
    """The rows of one CSV a build wrote, checked as input: every row as long as the header,
    the columns this module reads present; a mistake is a SpecError at its file and line."""
    source = f"{label}/{relative}"
    if not text:
        return []
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[Row] = []
    try:
        header = next(reader)
        for column in REQUIRED.get(relative, ()):
            if column not in header:
                raise _bad(Location(source, 1, 1), f"no column {column!r} in the header")
        quantity = header.index("quantity") if relative == BOM else None
        for record in reader:
            if len(record) != len(header):
                where = Location(source, reader.line_num, 1)
                raise _bad(where, f"row has {len(record)} fields, the header {len(header)}")
            if quantity is not None and not _QUANTITY.fullmatch(record[quantity]):
                where = Location(source, reader.line_num, quantity + 1)
                raise _bad(where, "quantity is not a number")
            rows.append(dict(zip(header, record, strict=True)))
    except csv.Error as exc:
        raise _bad(Location(source, reader.line_num or 1, 1), f"not a CSV file: {exc}") from None
    return rows


def _columns(label: str, relative: str, text: str, columns: tuple[str, ...]) -> list[Row]:
    """The rows of one CSV a build wrote, as _rows checks them, holding only those of `columns`
    the header has. A build writes plain cells (emit/tables.py: no quotes, no line breaks
    inside a cell), and such a text splits at its commas and line breaks exactly as the csv
    module reads it, in a fraction of the time (no string for the columns after the last
    wanted one); any other text goes through the csv module."""
    picked = _picked(label, relative, text, columns)
    if picked is None:
        return [{c: row[c] for c in columns if c in row} for row in _rows(label, relative, text)]
    names, values = picked
    return list(map(dict, map(zip, repeat(names), values)))


def _records(label: str, relative: str, text: str, columns: tuple[str, ...]) -> list[Record]:
    """The rows of one CSV a build wrote as _columns reads them, each a tuple of `columns`'
    values ("" for a column the header lacks): no dict per row (a 65k-GPU cabling plan has
    a quarter of a million)."""
    picked = _picked(label, relative, text, columns)
    if picked is not None and len(picked[0]) == len(columns):
        return picked[1]
    # text for the csv module, or a header without some of `columns` (never one of CABLES':
    # REQUIRED holds them all)
    return _as_records(_columns(label, relative, text, columns), columns)


def _as_records(rows: list[Row], columns: tuple[str, ...]) -> list[Record]:
    return [tuple(row.get(c, "") for c in columns) for row in rows]


def _picked(
    label: str, relative: str, text: str, columns: tuple[str, ...]
) -> tuple[list[str], list[Record]] | None:
    """_columns' split of plain text: the names of `columns` the header has and each row's
    values of them, in that order; None for text that only the csv module reads as it should."""
    lines = text.split("\n")
    if not lines[-1]:
        lines.pop()
    if (
        not lines
        or '"' in text
        or "\r" in text
        or "\0" in text
        or max(map(len, lines)) > csv.field_size_limit()
    ):
        return None
    header = lines[0].split(",") if lines[0] else []
    for column in REQUIRED.get(relative, ()):
        if column not in header:
            raise _bad(Location(f"{label}/{relative}", 1, 1), f"no column {column!r} in the header")
    position = {column: index for index, column in enumerate(header)}  # the last of a name
    names = [c for c in columns if c in position]
    indices = [position[c] for c in names]
    fields = len(header)
    last = max(indices) + 1
    body = lines[1:]
    if "" in body or set(map(str.count, body, repeat(","))) - {fields - 1}:
        for number, line in enumerate(body, 2):  # the first row of another length
            count = line.count(",") + 1 if line else 0
            if count != fields:
                where = Location(f"{label}/{relative}", number, 1)
                raise _bad(where, f"row has {count} fields, the header {fields}")
    # every row has the header's fields: split and picked in C, row by row (map)
    split = map(str.split, body, repeat(","), repeat(last))
    if len(indices) == 1:
        (index,) = indices
        return names, [(row[index],) for row in split]
    return names, list(map(itemgetter(*indices), split))


def from_files(label: str, files: dict[str, str]) -> Snapshot:
    snapshot = Snapshot(label)
    snapshot.devices = {row["name"]: row for row in _rows(label, DEVICES, files.get(DEVICES, ""))}
    snapshot.cables = _rows(label, CABLES, files.get(CABLES, ""))
    snapshot.bom = {row["part_number"]: row for row in _rows(label, BOM, files.get(BOM, ""))}
    snapshot.configs = {
        path[len(CONFIGS) :]: text
        for path, text in sorted(files.items())
        if path.startswith(CONFIGS)
    }
    return snapshot


@dataclass(slots=True)
class Places:
    """What kept_places reads of a build: its devices (name -> row) and each cable's values of
    PLACE_COLUMNS[CABLES], in that order."""

    devices: dict[str, Row]
    cables: list[Record]

    @staticmethod
    def of(snapshot: Snapshot) -> Places:
        return Places(snapshot.devices, _as_records(snapshot.cables, PLACE_COLUMNS[CABLES]))


def kept_places(source: Snapshot | Places) -> dict[str, KeptPlace]:
    """Where the build's devices stand (rack, lowest unit) and the number of their
    scalable unit, for a build that keeps them (`fabricc build --keep`); devices without a
    rack have no place to keep."""
    from fabricc.spec.loader import KeptPlace

    snapshot = source if isinstance(source, Places) else Places.of(source)
    ranks = _endpoint_ranks(snapshot)
    uplinks: dict[str, list[tuple[str, str, str]]] = {}
    roots: dict[str, tuple[str, str, str]] = {}
    devices = snapshot.devices
    for network, kind, a_device, a_port, b_device, b_port in snapshot.cables:
        if kind in (LEAF_SPINE, SPINE_CORE):
            uplinks.setdefault(a_device, []).append((a_port, b_device, b_port))
        elif kind == MGMT:
            # a management cable ends on a switch of its own (out-of-band) network, but for a
            # tree root's cable to the in-band network (synth/rootlinks.py)
            far = devices.get(b_device, {}).get("network", "")
            if far and far != network:
                roots[a_device] = (a_port, b_device, b_port)
    places: dict[str, KeptPlace] = {}
    for name, row in snapshot.devices.items():
        rack, u = row.get("rack", ""), _count(row.get("u", ""))
        if rack and u is not None:
            places[name] = KeptPlace(
                row.get("model", ""),
                rack,
                u,
                _count(row.get("scalable_unit", "")),
                tuple(sorted(ranks.get(name, {}).items())),
                tuple(uplinks.get(name, ())),
                roots.get(name),
            )
    return places


def _endpoint_ranks(snapshot: Places) -> dict[str, dict[str, int]]:
    """Device -> network -> its rank among the network's endpoints, ordered by the first leaf
    port each has (leaves in inventory order, ports by cage and lane): the order in which a
    build filled top-of-rack leaves, so that a build keeping it fills them the same way."""
    order = {name: index for index, name in enumerate(snapshot.devices)}
    first: dict[tuple[str, str], tuple[int, tuple[int, ...]]] = {}
    ports: dict[str, tuple[int, ...]] = {}  # a leaf port's name, once per name (they repeat)
    for network, kind, a_device, _, b_device, name in snapshot.cables:
        if kind != ENDPOINT_LEAF:
            continue
        leaf = order.get(b_device)
        if leaf is None:
            continue
        port = ports.get(name)
        if port is None:
            port = ports[name] = tuple(_count(part) or 0 for part in name.split("/"))
        key = (network, a_device)
        place = (leaf, port)
        if key not in first or place < first[key]:
            first[key] = place
    ranks: dict[str, dict[str, int]] = {}
    counts: dict[str, int] = {}
    for network, device in sorted(first, key=lambda k: (k[0], first[k])):
        ranks.setdefault(device, {})[network] = counts.get(network, 0)
        counts[network] = counts.get(network, 0) + 1
    return ranks


def _count(text: str) -> int | None:
    """A rack unit or unit number as a build writes it (a few ASCII digits), else None."""
    return int(text) if text.isascii() and text.isdecimal() and len(text) <= 9 else None


def load(path: Path, kept: Mapping[str, KeptPlace] | None = None) -> Snapshot:
    """A build folder, or a spec compiled now (its central devices at the `kept` places, as
    `build --keep` would). Raises SpecError/DesignError like `build`."""
    label = path.as_posix()
    if path.is_dir():
        _check_folder(path)
        files: dict[str, str] = {}
        for file in _regular_files(path):
            relative = file.relative_to(path).as_posix()
            if relative in (DEVICES, CABLES, BOM) or relative.startswith(CONFIGS):
                files[relative] = _text(file)
        return from_files(label, files)
    return from_files(label, compile_files(path, kept))


def load_places(path: Path) -> Places:
    """What kept_places reads of a build folder (the columns PLACE_COLUMNS names of its
    devices and cables: a build growing in place reads no more; `build --keep` reads the whole
    folder with load, as diff does), or all of a spec compiled now; the same rows and errors as
    load for those columns."""
    if not path.is_dir():
        return Places.of(load(path))
    _check_folder(path)
    label = path.as_posix()
    texts = dict.fromkeys(PLACE_COLUMNS, "")
    for relative in PLACE_COLUMNS:  # as load's walk finds them: regular files under folders
        file, parts = path, relative.split("/")
        for index, part in enumerate(parts):
            file = file / part
            try:
                mode = file.lstat().st_mode
            except OSError:
                break
            if not (stat.S_ISREG(mode) if index == len(parts) - 1 else stat.S_ISDIR(mode)):
                break
        else:
            texts[relative] = _text(file)
    devices = _columns(label, DEVICES, texts[DEVICES], PLACE_COLUMNS[DEVICES])
    cables = _records(label, CABLES, texts[CABLES], PLACE_COLUMNS[CABLES])
    return Places({row["name"]: row for row in devices}, cables)


def _check_folder(path: Path) -> None:
    if not (path / DEVICES).is_file() or not (path / CABLES).is_file():
        raise SpecError(
            [
                error(
                    f"not a fabricc build folder (no {DEVICES} or {CABLES})",
                    location=Location(path.as_posix(), 1, 1),
                    hint="give a spec file or a folder written by `fabricc build`",
                )
            ]
        )


def _text(file: Path) -> str:
    raw = read_input(file, MAX_ARTIFACT_BYTES, what="build artifacts")
    return raw.decode("utf-8", errors="replace")


def _regular_files(folder: Path) -> list[Path]:
    """The regular files under `folder`, sorted; symbolic links (to files or folders, inside or
    outside it), devices, FIFOs and sockets are passed over, so that a link planted in an old
    build never carries its target's bytes into a diff."""
    found: list[Path] = []
    for root, folders, names in os.walk(folder, followlinks=False):
        folders.sort()
        for name in names:
            file = Path(root, name)
            if stat.S_ISREG(file.lstat().st_mode):
                found.append(file)
    return sorted(found)


def compile_files(spec: Path, kept: Mapping[str, KeptPlace] | None = None) -> dict[str, str]:
    from fabricc.build import compile_design
    from fabricc.spec.loader import load_spec

    loaded = load_spec(spec, spec.as_posix(), kept)
    outputs = loaded.spec.outputs
    diagrams = outputs.diagrams.model_copy(update={"render": "never"})
    loaded = dataclasses.replace(
        loaded,
        spec=loaded.spec.model_copy(
            update={"outputs": outputs.model_copy(update={"diagrams": diagrams})}
        ),
    )
    _, artifacts = compile_design(loaded)
    return {path: content for path, content in artifacts if isinstance(content, str)}


def built_design(folder: Path) -> str | None:
    """The design name of the fabricc build in `folder` (its summary.json's name), or None when
    the folder holds no complete build."""
    from fabricc.writer import MARKER

    if not all((folder / name).is_file() for name in (MARKER, DEVICES, SUMMARY)):
        return None
    source = (folder / SUMMARY).as_posix()
    try:
        data = json.loads(read_input(folder / SUMMARY, MAX_ARTIFACT_BYTES, what="build artifacts"))
    except json.JSONDecodeError as exc:
        raise _bad(Location(source, exc.lineno, exc.colno), f"not JSON: {exc.msg}") from None
    except RecursionError:
        raise _bad(Location(source, 1, 1), "JSON nested too deep") from None
    except (OSError, ValueError, InputError):
        return None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) else None
