"""The command line: exit codes, help on every verb, atomic and safe output folders."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc import __version__
from fabricc.cli import cli
from tests.support import ROOT

VERBS = sorted(cli.commands)


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fabricc", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def test_validate_ok_exits_zero() -> None:
    result = run("validate", "examples/roce-lab.yaml")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("examples/roce-lab.yaml: ok")


def test_validate_error_exits_one_with_positions() -> None:
    result = run("validate", "tests/errors/unknown-node-model.yaml")
    assert result.returncode == 1
    assert result.stderr.startswith("tests/errors/unknown-node-model.yaml:5:12: error:")
    assert "Traceback" not in result.stderr


def test_the_program_flushes_everything_before_its_quick_exit() -> None:
    # main() ends the process with os._exit: what click wrote to a pipe must all be there
    result = run("schema")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (ROOT / "schemas" / "fabricc.schema.json").read_text()


def test_designs_are_held_only_by_the_program() -> None:
    # CliRunner runs the commands, not main(): a test's designs are freed as usual
    result = CliRunner().invoke(cli, ["validate", "examples/roce-lab.yaml"])
    assert result.exit_code == 0, result.output
    from fabricc import cli as module

    assert module._held is None


def test_usage_error_exits_two() -> None:
    assert run("validate").returncode == 2
    assert run("no-such-verb").returncode == 2
    assert run("build", "examples/roce-lab.yaml", "--no-such-flag").returncode == 2


@pytest.mark.parametrize("verb", [None, *VERBS])
def test_help_on_every_verb(verb: str | None) -> None:
    args = ["--help"] if verb is None else [verb, "--help"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0
    assert "Usage:" in result.output


def test_schema_verb_prints_committed_schema() -> None:
    result = CliRunner().invoke(cli, ["schema"])
    assert result.exit_code == 0
    assert result.output == (ROOT / "schemas" / "fabricc.schema.json").read_text()


def test_build_writes_summary(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = run("build", "examples/roce-lab.yaml", "-o", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["gpus"] == 16
    assert summary["nodes"] == {"gpu": 4}


def test_failed_build_leaves_previous_output_untouched(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("build", "examples/roce-lab.yaml", "-o", str(out)).returncode == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = tmp_path / "bad.yaml"
    bad.write_text((ROOT / "tests/errors/rack-power-exceeded.yaml").read_text())
    result = run("build", str(bad), "-o", str(out))
    assert result.returncode == 1
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yaml", "out"], (
        "no staging folder left behind"
    )


def test_failed_first_build_creates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "fresh"
    result = run("build", "tests/errors/rack-power-exceeded.yaml", "-o", str(out))
    assert result.returncode == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_refuses_to_replace_a_foreign_folder(tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    result = run("build", "examples/roce-lab.yaml", "-o", str(precious))
    assert result.returncode == 1
    assert "not written by fabricc" in result.stderr
    assert (precious / "thesis.tex").read_text() == "years of work"


def test_rebuild_replaces_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("build", "examples/roce-lab.yaml", "-o", str(out)).returncode == 0
    (out / "stale.txt").write_text("from an older build")
    assert run("build", "examples/roce-lab.yaml", "-o", str(out)).returncode == 0
    assert not (out / "stale.txt").exists()


def test_same_spec_same_bytes_whatever_the_hash_seed(tmp_path: Path) -> None:
    digests = []
    for seed in ("0", "4242"):
        out = tmp_path / f"out-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "fabricc",
                "build",
                "examples/gb200-nvl72-su.yaml",
                "-o",
                str(out),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        digests.append(
            {
                p.relative_to(out).as_posix(): p.read_bytes()
                for p in sorted(out.rglob("*"))
                if p.is_file()
            }
        )
    assert digests[0] == digests[1]


def test_output_contains_no_absolute_paths(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run("build", "examples/superpod-h100-4su.yaml", "-o", str(out)).returncode == 0
    for path in out.rglob("*"):
        if path.is_file() and path.suffix in (
            ".json",
            ".csv",
            ".md",
            ".topo",
            ".yaml",
            ".conf",
            ".xml",
            ".dot",
            ".env",
        ):
            text = path.read_text()
            assert str(tmp_path) not in text and str(ROOT) not in text, path


def test_short_version_flag() -> None:
    for flag in ("-V", "--version"):
        result = CliRunner().invoke(cli, [flag])
        assert result.exit_code == 0
        assert result.output == f"fabricc, version {__version__}\n"


def test_shell_completion_script_as_documented() -> None:
    """The documented `_FABRICC_COMPLETE=bash_source fabricc` (getting started) prints a bash
    completion function, and completing `fabricc b` offers `build`."""
    guide = (ROOT / "docs" / "getting-started.md").read_text()
    assert "_FABRICC_COMPLETE=bash_source fabricc" in guide
    env = {**os.environ, "_FABRICC_COMPLETE": "bash_source"}
    script = CliRunner().invoke(cli, [], env=env, prog_name="fabricc")
    assert (
        script.exit_code == 0
        and "complete -o nosort -F _fabricc_completion fabricc" in script.output
    )
    env = {
        **os.environ,
        "_FABRICC_COMPLETE": "bash_complete",
        "COMP_WORDS": "fabricc b",
        "COMP_CWORD": "1",
    }
    offered = CliRunner().invoke(cli, [], env=env, prog_name="fabricc")
    assert "plain,build" in offered.output.splitlines()
