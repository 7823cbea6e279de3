"""Output helper: whether a string may be written as a plain YAML scalar.

Consumes a string; answers whether some YAML reader would type its plain spelling as something
other than a string - a YAML 1.2 core-schema reader (Go's yaml.v3 behind Kubernetes, ruamel),
a YAML 1.1 reader (PyYAML, Ansible, Slurm's libyaml users) or a lax one that takes `_` in
numbers. Every YAML emitter of fabricc asks this before writing a string plain: `{n}e5` becomes
`1e5` for a hostname and must be quoted, as must `yes`, `off`, `0x10`, `1_000`, `.inf`, `~`,
`2026-01-01` or `1:20`. Sources: YAML 1.2.2 section 10.3 (core schema tags and regular
expressions), YAML 1.1 type repository (yaml.org/type: bool, null, int, float, timestamp, merge,
value).
"""

from __future__ import annotations

import re

import yaml

# bool (1.1 and 1.2), null (1.1 and 1.2), merge and value keys (1.1), in any letter case: a lax
# reader matching case-insensitively still gets a string.
_WORDS = frozenset(
    ("y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "", "<<", "=")
)
_NUMBER = re.compile(
    r"[-+]?(?:"
    r"0b[01_]+"  # 1.1 binary
    r"|0o?[0-7_]+"  # 1.2 octal, 1.1 octal (leading 0)
    r"|0x[0-9a-fA-F_]+"  # hexadecimal
    r"|[0-9][0-9_]*(?::[0-5]?[0-9])*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"  # int, float, 1.1 base 60
    r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"  # .5
    r"|\.(?:inf|Inf|INF)"
    r")"
    r"|\.(?:nan|NaN|NAN)"
)
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+).*)?")


def typed_if_plain(text: str) -> bool:
    """True when some YAML reader would read `text`, written plain, as no string."""
    return (
        text.lower() in _WORDS
        or _NUMBER.fullmatch(text) is not None
        or _TIMESTAMP.fullmatch(text) is not None
    )


STR_TAG = "tag:yaml.org,2002:str"
# Any tag but str: a resolver answering it for a plain spelling makes PyYAML's emitter quote.
QUOTE_TAG = "tag:fabricc,2026:quoted"


def resolve_quoting(tag: str, kind: type[yaml.Node], value: str, implicit: object) -> str:
    """The tag a PyYAML dumper's resolve() answers: `tag` (its own resolver's), except for a
    string that would type otherwise when plain, whose plain spelling is then refused."""
    plain = isinstance(implicit, tuple) and bool(implicit[0])
    if plain and kind is yaml.ScalarNode and tag == STR_TAG and typed_if_plain(value):
        return QUOTE_TAG
    return tag


class SafeDumper(yaml.SafeDumper):
    """PyYAML's SafeDumper quoting every string that some reader would type otherwise."""

    def resolve(self, kind: type[yaml.Node], value: str, implicit: object) -> str:
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        return resolve_quoting(tag, kind, value, implicit)
