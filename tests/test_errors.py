"""Bad input: every mistake in the corpus gives its exact positioned message, never a traceback,
and hostile YAML is refused quickly."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fabricc.errors import DesignError, Location, SpecError, error, group_alike
from fabricc.spec.yamlsource import MAX_DEPTH, load_yaml_bytes, load_yaml_file
from tests.errors_support import render_error
from tests.support import ERRORS

CORPUS = sorted(ERRORS.glob("*.yaml"))


def test_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 25


@pytest.mark.parametrize("spec", CORPUS, ids=[p.stem for p in CORPUS])
def test_error_message_matches_golden(spec: Path) -> None:
    expected = spec.with_suffix(".err")
    assert expected.exists(), f"no {expected.name}; run python scripts/regen.py"
    actual = render_error(spec)
    assert actual == expected.read_text()
    first = actual.splitlines()[0]
    assert first.startswith("tests/errors/"), "the first line names the offending file"
    assert ": error: " in first
    assert "Traceback" not in actual


def _timed_refusal(raw: bytes) -> tuple[float, str]:
    start = time.perf_counter()
    with pytest.raises(SpecError) as info:
        load_yaml_bytes(raw, "hostile.yaml")
    return time.perf_counter() - start, str(info.value)


def test_huge_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    with path.open("wb") as handle:
        handle.truncate(100 * 1024 * 1024)
    start = time.perf_counter()
    with pytest.raises(SpecError) as info:
        load_yaml_file(path, "huge.yaml")
    assert time.perf_counter() - start < 0.5
    assert "104,857,600 bytes" in str(info.value)


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    elapsed, message = _timed_refusal("\n".join(lines).encode())
    assert elapsed < 0.5
    assert "alias bomb" in message


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 100_000])
def test_deep_nesting_is_refused_quickly(depth: int) -> None:
    elapsed, message = _timed_refusal(b"x: " + b"[" * depth + b"]" * depth)
    assert elapsed < 0.5
    assert "nesting deeper" in message


def test_invalid_utf8_is_positioned() -> None:
    with pytest.raises(SpecError) as info:
        load_yaml_bytes(b"metadata:\n  name: caf\xe9\n", "latin1.yaml")
    assert str(info.value).startswith("latin1.yaml:2:12: error: file is not valid UTF-8")


def test_alike_findings_become_one_with_count_worst_case_and_fix() -> None:
    """Findings of one cause (same spec position, hint and message but for names and numbers)
    are one error: the count, the member with the largest measure, the shared hint."""
    at = Location("spec.yaml", 13, 13)
    hint = "use 'medium: auto'"
    alike = [
        error(
            f"no mmf transceiver for leaf{n:02d} cage {n} reaches {m} m",
            path="p",
            location=at,
            hint=hint,
        )
        for n, m in ((1, 60.5), (2, 152.49), (3, 99.0))
    ]
    other = error("rack A01 draws 50 kW", path="q", location=at)
    grouped = group_alike([*alike, other])
    assert len(grouped) == 2
    first = grouped[0]
    assert (
        first.message == "3 alike, the worst: no mmf transceiver for leaf02 cage 2 reaches 152.49 m"
    )
    assert first.hint == hint and first.location == at
    assert grouped[1] == other
    # names alone differ: no measure to rank by, the first is shown
    names = group_alike([error(f"hostname 'node{n}' is generated twice") for n in (1, 2)])
    assert [d.message for d in names] == ["2 alike, the first: hostname 'node1' is generated twice"]
    assert str(DesignError(alike)).count("error:") == 1
