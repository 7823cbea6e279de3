"""Diagnostics and the exception hierarchy shared by every stage.

Every stage reports problems as Diagnostic values (severity, spec path, message, source location
and a hint); a stage that cannot continue raises a FabriccError carrying all of them at once.
Only the CLI turns them into text on stderr and exit codes.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

# C0 and C1 control characters and DEL, shown as Python escapes so that input can never move the
# cursor, recolour the terminal or start a line of its own in an error message.
_CONTROL = {c: repr(chr(c))[1:-1] for c in (*range(0x20), *range(0x7F, 0xA0))}
_CONTROL.update({0x2028: "\\u2028", 0x2029: "\\u2029"})


def printable(text: str) -> str:
    return text.translate(_CONTROL)


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True, order=True)
class Location:
    """A position in a source file; line and column are 1-based, 0 for the whole file."""

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line else self.file


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
        """One line (and an indented hint line); control characters in names that came from the
        input (a key with a terminal escape sequence, a newline) are shown escaped."""
        where = f"{self.location}: " if self.location else ""
        path = f"{self.path}: " if self.path else ""
        text = printable(f"{where}{self.severity.value}: {path}{self.message}")
        if self.hint:
            text += f"\n    hint: {printable(self.hint)}"
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


_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_WORD_WITH_DIGITS = re.compile(r"[^\s,;:()]*\d[^\s,;:()]*")


def _shape(diagnostic: Diagnostic) -> tuple[object, ...]:
    """What alike findings share: severity, spec position, hint and the message with every word
    that holds a digit (device names, ports, lengths) blanked out."""
    template = _WORD_WITH_DIGITS.sub("#", diagnostic.message)
    return (diagnostic.severity, diagnostic.path, diagnostic.location, diagnostic.hint, template)


def _worst(members: list[Diagnostic]) -> tuple[Diagnostic, bool]:
    """The member with the largest measure (a free-standing number - a length, a power - that
    differs between members; the last such), and True; else the first member and False."""
    measures = [
        [float(w) for w in _WORD_WITH_DIGITS.findall(d.message) if _NUMBER.fullmatch(w)]
        for d in members
    ]
    if len({len(m) for m in measures}) != 1 or not measures[0]:
        return members[0], False
    varying = [i for i in range(len(measures[0])) if len({m[i] for m in measures}) > 1]
    if not varying:
        return members[0], False
    last = varying[-1]
    return max(zip(members, measures, strict=True), key=lambda m: m[1][last])[0], True


def group_alike(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """One finding per cause: findings that differ only in names and numbers (5,120 cages that
    multimode cannot reach, from one `medium:` line) become one, naming the count and the worst
    case, with the shared hint. Order follows each group's first member."""
    groups: dict[tuple[object, ...], list[Diagnostic]] = {}
    for diagnostic in dict.fromkeys(diagnostics):
        groups.setdefault(_shape(diagnostic), []).append(diagnostic)
    out = []
    for members in groups.values():
        if len(members) == 1:
            out.append(members[0])
            continue
        shown, worst = _worst(members)
        label = "the worst" if worst else "the first"
        out.append(replace(shown, message=f"{len(members):,} alike, {label}: {shown.message}"))
    return out


class FabriccError(Exception):
    """Base of every error the library raises; str() is the user-facing text. Alike findings
    are grouped (group_alike)."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = sorted_diagnostics(group_alike(diagnostics))
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
