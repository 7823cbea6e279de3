"""Load stage helper: check a hostname pattern before anything formats it.

Consumes a pattern string from the spec ("{group}{n:03d}"); produces the problems found, each a
(message, hint) pair, or none. A pattern is a Python format string, so it is held to what the
spec reference documents: only the listed fields, no attribute or index access ("{group.x}",
"{n[0]}"), no conversions ("!r"), integer formats of bounded width ("03d") and literal text that
a hostname may contain. Anything else would reach str.format with the user's text - tracebacks,
object internals or a format width that asks for gigabytes.
"""

from __future__ import annotations

import re
import string

from fabricc.spec.validation import did_you_mean

TEXT_FIELDS = frozenset({"group", "network", "role"})
INDEX_FIELDS = frozenset({"n", "i", "su", "rail", "plane", "pod"})
FIELDS = TEXT_FIELDS | INDEX_FIELDS
MAX_WIDTH = 16  # a 63-character hostname has room for no wider number
_INDEX_FORMAT = re.compile(r"^(?:0([1-9][0-9]?))?d?$")
_LITERAL = re.compile(r"^[A-Za-z0-9-]*$")

Problem = tuple[str, str]


def check_pattern(pattern: str) -> list[Problem]:
    try:
        parts = list(string.Formatter().parse(pattern))
    except ValueError as exc:
        return [(f"invalid hostname pattern: {exc}", "write fields as {n:03d}; '{{' for a brace")]
    problems: list[Problem] = []
    used: set[str] = set()
    for literal, field, spec, conversion in parts:
        if not _LITERAL.match(literal):
            problems.append(
                (
                    f"{literal!r} cannot be part of a hostname",
                    "use letters, digits and '-' around the {fields}",
                )
            )
        if field is None:
            continue
        if field not in FIELDS:
            base = re.split(r"[.\[]", field, maxsplit=1)[0]
            hint = (
                "fields are plain names: no '.attribute' or '[index]'"
                if base in FIELDS
                else did_you_mean(base, sorted(FIELDS), "fields")
            )
            problems.append((f"unknown field {{{field}}} in hostname pattern", hint))
            continue
        used.add(field)
        if conversion is not None:
            problems.append(
                (f"{{{field}!{conversion}}}: conversions are not allowed", f"write {{{field}}}")
            )
        problems.extend(_check_format(field, spec or ""))
    if not problems and not used & INDEX_FIELDS:
        problems.append(
            ("hostname pattern has no index field, so names would repeat", "add {n:03d}")
        )
    return problems


def _check_format(field: str, spec: str) -> list[Problem]:
    if not spec:
        return []
    if field in TEXT_FIELDS:
        return [(f"{{{field}:{spec}}}: {{{field}}} takes no format", f"write {{{field}}}")]
    match = _INDEX_FORMAT.match(spec)
    if match is None or (match.group(1) and int(match.group(1)) > MAX_WIDTH):
        return [
            (
                f"{{{field}:{spec}}} is not an allowed number format",
                f"use a zero-padded width of at most {MAX_WIDTH}, e.g. {{{field}:03d}}",
            )
        ]
    return []
