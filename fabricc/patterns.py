"""Shared input patterns: what names and free text from specs and catalog files may contain.

Consumed by the spec and catalog models (pydantic `pattern=`) and by the error messages of
fabricc.spec.validation, which turn a failed match into a hint in words. Every string of a spec
or catalog reaches an artifact - a config file, a shell script run as root, a CSV a spreadsheet
opens, a Markdown or HTML page - so names are held to strict patterns (no whitespace, quotes,
shell or formula characters, newlines) and free text to one printable line. The emitters escape
on top of that (fabricc.emit.tables); safety never rests on one layer alone.
"""

from __future__ import annotations

NAME = r"^[a-z][a-z0-9-]{0,31}$"
RATIO = r"^[1-9][0-9]*:[1-9][0-9]*$"
KEY = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$"
PART_NUMBER = r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,63}$"
PORT_NAME = r"^[A-Za-z0-9][A-Za-z0-9._/:-]{0,31}$"
NETDEV = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$"  # Linux IFNAMSIZ: 15 characters
RDMA_DEVICE = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
TOKEN = r"^[A-Za-z0-9][A-Za-z0-9 ._/+-]{0,63}$"
TEXT = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029]{0,500}$"
YAML_FILE = r"^[^\x00-\x1f\x7f-\x9f]{1,1024}\.ya?ml$"
RACK_MEMBER_SUFFIX = r"^-?[a-z0-9-]*(?:\{(?:role_short|n(?::0?[1-9]d)?)\}[a-z0-9-]*)*$"

HINTS = {
    NAME: "use lower-case letters, digits and '-', starting with a letter (at most 32 characters)",
    RATIO: "write a ratio as 'down:up', e.g. '1:1' or '2:1' (quote it)",
    KEY: "use letters, digits, '.', '_', '+' and '-', starting with a letter or digit "
    "(at most 64 characters)",
    PART_NUMBER: "a part number is letters, digits, '.', '_', '/', '+' and '-', starting with a "
    "letter or digit (at most 64 characters)",
    PORT_NAME: "a port name is letters, digits, '.', '_', '/', ':' and '-', starting with a letter "
    "or digit (at most 32 characters)",
    NETDEV: "a Linux interface name is letters, digits, '_', '.' and '-', starting with a letter "
    "or digit, at most 15 characters",
    RDMA_DEVICE: "an RDMA device name is letters, digits, '_', '.' and '-', e.g. mlx5_0",
    TOKEN: "use letters, digits, spaces, '.', '_', '/', '+' and '-' (at most 64 characters)",
    TEXT: "one line of printable text (no control characters), at most 500 characters",
    YAML_FILE: "name a .yaml or .yml file",
    RACK_MEMBER_SUFFIX: "lower-case letters, digits and '-' with the fields {role_short} and {n} "
    "(e.g. '-c{n:02d}')",
}


def exact_literal(value: object) -> object:
    """Before-validator of a Literal of integers, which compares True == 1 and 1.0 == 1: a spec
    or catalog must write the integer itself."""
    if isinstance(value, bool | float):
        raise ValueError(f"{value!r} is not one of the allowed values; write the integer itself")
    return value
