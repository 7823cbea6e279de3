"""Twin input: a build folder read back from disk, as the deployment tools would read it.

Consumes the folder `fabricc build` wrote (inventory, cabling plan, configs, provisioning tree);
produces a BuildFolder whose readers are bounded (fabricc.inputs) and raise SpecError naming the
file. The twin never recomputes anything from the spec: what is on disk is what boots.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from fabricc.change.snapshot import CABLES, DEVICES, MAX_ARTIFACT_BYTES
from fabricc.errors import Location, SpecError, error
from fabricc.inputs import read_input
from fabricc.ir import EXTERNAL

Row = dict[str, str]
SWITCH_KINDS = ("leaf-spine", "spine-core", "peer")  # cables between two routed switches


@dataclass(slots=True)
class BuildFolder:
    root: Path
    devices: dict[str, Row] = field(default_factory=dict)
    cables: list[Row] = field(default_factory=list)
    left_out: list[Row] = field(default_factory=list)  # cables outside a slice (twin.slice)
    # border links to the site network (kind external in devices.csv): the twin has no site
    # router to boot, so these stay out of `cables` and are only counted in its summary
    site_cables: list[Row] = field(default_factory=list)

    def path(self, relative: str) -> Path:
        return self.root / relative

    def has(self, relative: str) -> bool:
        return (self.root / relative).is_file()

    def data(self, relative: str) -> bytes:
        return read_input(self.root / relative, MAX_ARTIFACT_BYTES, what="build artifacts")

    def text(self, relative: str) -> str:
        return self.data(relative).decode("utf-8", errors="replace")

    def json(self, relative: str) -> object:
        try:
            return json.loads(self.text(relative))
        except json.JSONDecodeError as exc:
            where = Location((self.root / relative).as_posix(), exc.lineno, exc.colno)
            raise SpecError([error(f"not JSON: {exc.msg}", location=where)]) from None

    def networks(self) -> list[str]:
        return sorted({row["network"] for row in self.cables if row.get("network")})


def _rows(text: str) -> list[Row]:
    return list(csv.DictReader(io.StringIO(text)))


def load(root: Path) -> BuildFolder:
    if not (root / DEVICES).is_file() or not (root / CABLES).is_file():
        raise SpecError(
            [
                error(
                    f"not a fabricc build folder (no {DEVICES} or {CABLES})",
                    location=Location(root.as_posix(), 1, 1),
                    hint="give a folder written by `fabricc build`",
                )
            ]
        )
    folder = BuildFolder(root)
    folder.devices = {row["name"]: row for row in _rows(folder.text(DEVICES))}
    external = {name for name, row in folder.devices.items() if row.get("kind") == EXTERNAL}
    for row in _rows(folder.text(CABLES)):
        far = row.get("b_device") in external or row.get("a_device") in external
        (folder.site_cables if far else folder.cables).append(row)
    return folder
