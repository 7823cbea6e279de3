"""The project's one test entry point: lint, format check, strict typing, then the test suite.

  python scripts/test.py [pytest arguments]

Runs with the interpreter that runs it (use the project's virtual environment). Stops at the
first failing step and exits with its code.
"""

from __future__ import annotations

import subprocess
import sys
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
    run("pytest", *sys.argv[1:])


if __name__ == "__main__":
    main()
