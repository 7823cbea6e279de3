"""The project's one test entry point: lint, format check, strict typing, the documentation site
(`mkdocs build --strict` into a temporary folder: a broken link or a missing page fails), then
the test suite.

  python scripts/test.py [pytest arguments]

Runs with the interpreter that runs it (use the project's virtual environment). Stops at the
first failing step and exits with its code.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> None:
    print("+", " ".join(args), flush=True)
    code = subprocess.call([sys.executable, "-m", *args], cwd=ROOT)
    if code:
        sys.exit(code)


def main() -> None:
    run("ruff", "check", ".")
    run("ruff", "format", "--check", ".")
    run("mypy")
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material's banner about its successor
    with tempfile.TemporaryDirectory(prefix="fabricc-site-") as site:
        # Not --quiet: mkdocs 1.6 then stops counting warnings and --strict passes anything.
        run("mkdocs", "build", "--strict", "--site-dir", site)
    run("pytest", *sys.argv[1:])


if __name__ == "__main__":
    main()
