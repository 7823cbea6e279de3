"""Diagnostics and the exception hierarchy shared by every stage.

Every stage reports problems as Diagnostic values (severity, spec path, message, source location
and a hint); a stage that cannot continue raises a FabriccError carrying all of them at once.
Only the CLI turns them into text on stderr and exit codes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A position in a source file; line and column are 1-based."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in a spec, a catalog file or a synthesized design.

    `path` is the dotted spec path of the offending key or value (``networks.compute.tiers``),
    empty when the problem concerns the whole file.
    """

    severity: Severity
    message: str
    path: str = ""
    location: Location | None = None
    hint: str | None = None
    code: str = ""

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        path = f"{self.path}: " if self.path else ""
        text = f"{where}{self.severity.value}: {path}{self.message}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text

    def sort_key(self) -> tuple[str, int, int, str, str]:
        loc = self.location
        return (
            (loc.file, loc.line, loc.col, self.path, self.message)
            if loc
            else (
                "",
                0,
                0,
                self.path,
                self.message,
            )
        )


def error(
    message: str,
    *,
    path: str = "",
    location: Location | None = None,
    hint: str | None = None,
    code: str = "",
) -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, path, location, hint, code)


def warning(
    message: str,
    *,
    path: str = "",
    location: Location | None = None,
    hint: str | None = None,
    code: str = "",
) -> Diagnostic:
    return Diagnostic(Severity.WARNING, message, path, location, hint, code)


def sorted_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Order by file position so that output is stable and reads top to bottom."""
    unique = list(dict.fromkeys(diagnostics))
    return sorted(unique, key=Diagnostic.sort_key)


class FabriccError(Exception):
    """Base of every error the library raises; str() is the user-facing text."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = sorted_diagnostics(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))


class SpecError(FabriccError):
    """The spec or a catalog file is malformed or inconsistent (load stage)."""


class DesignError(FabriccError):
    """The spec is well-formed but the design it asks for breaks a design rule."""


class OutputError(FabriccError):
    """The output folder cannot be written."""


def raise_if_errors(
    diagnostics: Sequence[Diagnostic], exc_type: type[FabriccError] = SpecError
) -> None:
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise exc_type(diagnostics)
