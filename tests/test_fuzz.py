"""Fuzzing the whole pipeline with generated specs (hypothesis): whatever a spec says, fabricc
answers with diagnostics or with artifacts - never a traceback - and the same spec compiles to the
same bytes twice.

Specs are small working designs with random damage: a value replaced by a hostile one (format
fields, control characters, huge or negative numbers, wrong types), a key removed or added.
"""

from __future__ import annotations

import copy
import functools
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricc.build import compile_design
from fabricc.change import compare, snapshot
from fabricc.errors import FabriccError, SpecError
from fabricc.spec.loader import load_spec
from fabricc.verify import lldp
from tests.support import compiled

BASES: list[dict[str, Any]] = [
    {
        "metadata": {"name": "fuzz-roce"},
        "site": {"racks_per_row": 4, "rack": {"power_kw": 20}},
        "nodes": {"gpu": {"model": "lab-server", "count": 4, "hostname": "gpu{n:02d}"}},
        "networks": {
            "fabric": {
                "role": "compute",
                "fabric": "ethernet",
                "tiers": 2,
                "spines": 2,
                "os": "sonic",
                "endpoints": {"gpu": {"leaf_downlinks": 8}},
                "hostnames": {"leaf": "leaf{n:02d}"},
            },
            "oob": {"role": "oob"},
        },
        "addressing": {"p2p": "10.1.0.0/24"},
        "outputs": {"diagrams": {"render": "never"}},
    },
    {
        "metadata": {"name": "fuzz-ib", "description": "small InfiniBand design"},
        "nodes": {
            "dgx": {"model": "dgx-h100", "count": 6},
            "ufm": {"model": "ufm-3.1", "count": 1},
        },
        "networks": {
            "compute": {
                "role": "compute",
                "fabric": "infiniband",
                "reserved_slots": 1,
                "endpoints": {"dgx": {}, "ufm": {"reserved": True}},
                "subnet_manager": {
                    "sm_nodes": ["ufm"],
                    "partitions": {"research": {"pkey": 16, "members": ["dgx"]}},
                },
            },
            "inband": {"role": "inband", "dual_homed": True},
            "oob": {"role": "oob", "uplink_to": "inband"},
        },
        "outputs": {"diagrams": {"render": "never"}},
    },
]

HOSTILE_TEXT = st.one_of(
    st.sampled_from(
        [
            "",
            "{n}",
            "{group.__class__}{n}",
            "{n:0200000000d}",
            "{n:s}",
            "{",
            "}{",
            "a;rm -rf /",
            "=cmd|' /C calc'!A0",
            "<script>x</script>",
            "\x1b[2J",
            "line\nbreak",
            "../../etc/passwd",
            "/dev/zero",
            "x" * 300,
            "0:0",
            "1:0",
            "10.0.0.0/33",
            "::/0",
            "auto",
            "dgx-h100",
            "q3400",
            "compute",
        ]
    ),
    st.text(max_size=12),
)
HOSTILE_VALUE = st.one_of(
    HOSTILE_TEXT,
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, 1, 2, 3, 7, 64, 10**9]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.just([]),
    st.just({}),
    st.lists(HOSTILE_TEXT, max_size=3),
)

# Values a user might plausibly write, so that damaged specs often still compile and the later
# stages (synthesis, rules, emitters) get fuzzed too, not only the loader.
PLAUSIBLE = st.one_of(
    st.integers(min_value=0, max_value=300),
    st.sampled_from(
        [
            "1:1",
            "2:1",
            "4:3",
            "auto",
            "never",
            "sonic",
            "cumulus",
            "ethernet",
            "infiniband",
            "compute",
            "storage",
            "inband",
            "oob",
            "gpu",
            "dgx",
            "ufm",
            "lab-server",
            "dgx-h100",
            "qm9700",
            "sn5600",
            "sn4600c",
            "sn2201",
            "10.9.0.0/16",
            "10.200.0.0/24",
            "{network}-x{n:03d}",
            "{group}-{su}-{n}",
            "fd00::/64",
        ]
    ),
    st.booleans(),
)
DAMAGE = st.one_of(PLAUSIBLE, HOSTILE_VALUE)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(data, dict):
        for key, value in data.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            out += _paths(value, (*prefix, index))
    return out


def _parent(data: Any, path: tuple[Any, ...]) -> Any:
    for item in path[:-1]:
        data = data[item]
    return data


@st.composite
def damaged_specs(draw: st.DrawFn) -> str:
    spec = copy.deepcopy(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        path = draw(st.sampled_from(_paths(spec)))
        parent = _parent(spec, path)
        action = draw(st.sampled_from(["replace", "replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(HOSTILE_TEXT)] = draw(DAMAGE)
        else:
            parent[path[-1]] = draw(DAMAGE)
    return yaml.safe_dump(spec, allow_unicode=True, sort_keys=False)


def _compile(path: Path) -> list[tuple[str, str | bytes]] | None:
    """Artifacts, or None when fabricc reported the spec's problems (the expected outcome)."""
    try:
        _, artifacts = compile_design(load_spec(path, path.name))
    except FabriccError as exc:
        assert exc.diagnostics, "an error without diagnostics tells the user nothing"
        for diagnostic in exc.diagnostics:
            assert "\n" not in diagnostic.render().split("\n    hint: ")[0]
        return None
    return artifacts


@pytest.mark.slow
@settings(
    max_examples=int(os.environ.get("FABRICC_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=damaged_specs())
def test_damaged_specs_give_diagnostics_or_the_same_bytes_twice(tmp_path: Path, text: str) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    first = _compile(path)
    if first is not None:
        assert _compile(path) == first


@pytest.mark.parametrize("base", BASES, ids=[b["metadata"]["name"] for b in BASES])
def test_undamaged_bases_compile(tmp_path: Path, base: dict[str, Any]) -> None:
    """The fuzzer starts from working designs, so damage is what it tests."""
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(base))
    assert _compile(path)


# -- the other doors: a build folder read back, LLDP discovery files -----------------------------

_JSON = st.recursive(
    st.one_of(
        st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), HOSTILE_TEXT
    ),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(
            st.sampled_from(["lldp", "interface", "name", "chassis", "port", "id", "value",
                             "type", "descr", "auto-negotiation", "current"]),
            children,
            max_size=4,
        ),
    ),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=int(os.environ.get("FABRICC_FUZZ_EXAMPLES", "150")), deadline=None)
@given(document=_JSON)
def test_lldp_files_of_any_shape_give_a_diagnostic_or_neighbours(document: Any) -> None:
    try:
        found = lldp.parse(json.dumps({"lldp": document}), "leaf1.json")
    except SpecError as exc:
        assert exc.diagnostics[0].location is not None
    else:
        assert all(isinstance(n.port, str) and isinstance(n.system, str) for n in found)


_CELL = st.one_of(HOSTILE_TEXT, st.sampled_from(["1", "A01", "leaf-1", "swp1", "2.5", '"']))


@st.composite
def damaged_build_files(draw: st.DrawFn) -> dict[str, str]:
    files = dict(_BUILT_FILES())
    name = draw(st.sampled_from(sorted(files)))
    lines = files[name].split("\n")
    index = draw(st.integers(0, len(lines) - 1))
    cells = lines[index].split(",")
    action = draw(st.sampled_from(["replace", "drop", "add", "line"]))
    at = draw(st.integers(0, max(0, len(cells) - 1)))
    if action == "replace":
        cells[at] = draw(_CELL)
    elif action == "drop":
        del cells[at]
    elif action == "add":
        cells.insert(at, draw(_CELL))
    else:
        cells = [draw(_CELL)]
    lines[index] = ",".join(cells)
    files[name] = "\n".join(lines)
    return files


@settings(
    max_examples=int(os.environ.get("FABRICC_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(files=damaged_build_files())
def test_the_growth_read_of_a_damaged_build_is_the_full_read_cut_to_its_columns(
    files: dict[str, str],
) -> None:
    """load_places's split of plain CSV text gives the rows (cut to the columns growth reads)
    and the first error that the csv module's reading gives, whatever the damage."""
    for name, columns in snapshot.PLACE_COLUMNS.items():
        text = files[name]
        try:
            full = [
                {c: row[c] for c in columns if c in row} for row in snapshot._rows("b", name, text)
            ]
        except SpecError as exc:
            with pytest.raises(SpecError) as raised:
                snapshot._columns("b", name, text, columns)
            assert raised.value.diagnostics == exc.diagnostics
        else:
            assert snapshot._columns("b", name, text, columns) == full


@functools.cache
def _BUILT_FILES() -> tuple[tuple[str, str], ...]:
    wanted = (snapshot.DEVICES, snapshot.CABLES, snapshot.BOM)
    _, artifacts = compiled("roce-lab")
    return tuple((path, str(content)) for path, content in artifacts if path in wanted)


@settings(
    max_examples=int(os.environ.get("FABRICC_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(files=damaged_build_files())
def test_damaged_build_folders_give_a_diagnostic_or_a_diff(files: dict[str, str]) -> None:
    good = snapshot.from_files("old", dict(_BUILT_FILES()))
    try:
        damaged = snapshot.from_files("new", files)
    except SpecError as exc:
        location = exc.diagnostics[0].location
        assert location is not None and location.line >= 1
        return
    compare.diff(good, damaged)
    snapshot.kept_places(damaged)
