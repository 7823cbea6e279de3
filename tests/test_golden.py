"""Golden files: every example x selected artifact must equal the committed copy byte for byte.

Regenerate with `python scripts/regen.py` and review the diff.
"""

from __future__ import annotations

import pytest

from tests.support import (
    EXAMPLE_NAMES,
    GOLDEN,
    GOLDEN_FULL,
    GOLDEN_PYAVD,
    GOLDEN_SELECTED,
    golden_artifacts,
    require_pyavd,
)

CASES = [
    (example, path)
    for example in EXAMPLE_NAMES
    if example in GOLDEN_FULL or example in GOLDEN_SELECTED
    for path in sorted(golden_artifacts(example))
]


@pytest.mark.parametrize(("example", "path"), CASES, ids=[f"{e}/{p}" for e, p in CASES])
def test_artifact_matches_golden(example: str, path: str) -> None:
    if example in GOLDEN_PYAVD:
        require_pyavd()
    content = golden_artifacts(example)[path]
    expected_file = GOLDEN / example / path
    assert expected_file.exists(), f"no golden file {expected_file}; run python scripts/regen.py"
    data = content.encode() if isinstance(content, str) else content
    assert data == expected_file.read_bytes(), (
        f"{example}/{path} differs; run python scripts/regen.py and review"
    )


@pytest.mark.parametrize("example", sorted(set(GOLDEN_FULL)))
def test_no_stale_golden_files(example: str) -> None:
    expected = set(golden_artifacts(example))
    present = {
        p.relative_to(GOLDEN / example).as_posix()
        for p in (GOLDEN / example).rglob("*")
        if p.is_file()
    }
    assert present == expected
