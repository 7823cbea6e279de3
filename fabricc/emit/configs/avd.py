"""Emit helper (configs): a narrow, typed door to Arista's pyavd (optional: `fabricc[eos]`).

Consumes an AVD structured configuration (the data model of eos_cli_config_gen, a plain dict);
produces its schema violations (pyavd.validate_structured_config) and the EOS CLI pyavd renders
from the validated data (pyavd.get_device_config). pyavd ships no type information, so every
call goes through here; without pyavd, available() is False and nothing else may be called.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
from dataclasses import dataclass
from typing import Any

INSTALL_HINT = "pip install 'fabricc[eos]'"


@dataclass(frozen=True, slots=True)
class Violation:
    path: str  # dotted path into the structured config
    message: str


class AvdError(Exception):
    """pyavd refused a structured config (its __str__ lists the violations)."""

    def __init__(self, device: str, violations: list[Violation]) -> None:
        self.device = device
        self.violations = violations
        listed = "; ".join(f"{v.path}: {v.message}" for v in violations[:5])
        super().__init__(f"{device}: the AVD structured config fails pyavd's schema: {listed}")


@functools.cache
def available() -> bool:
    """pyavd can be imported (looked for once per process)."""
    return importlib.util.find_spec("pyavd") is not None


@functools.cache
def _pyavd() -> Any:
    return importlib.import_module("pyavd")


def version() -> str:
    return str(_pyavd().__version__)


def _validated(structured: dict[str, Any]) -> tuple[Any, list[Violation]]:
    result = _pyavd().validate_structured_config(structured)
    violations = [
        Violation(".".join(str(part) for part in v.path), str(v.message))
        for v in result.validation_result.violations
    ]
    return result, violations


def violations(structured: dict[str, Any]) -> list[Violation]:
    """pyavd's schema violations of the structured config (none: it is valid)."""
    return _validated(structured)[1]


def eos_cli(device: str, structured: dict[str, Any]) -> str:
    """The EOS CLI pyavd renders from the validated structured config; AvdError on any
    violation (unknown keys pyavd drops silently, so tests compare the CLI with the design)."""
    result, found = _validated(structured)
    if found:
        raise AvdError(device, found)
    return str(_pyavd().get_device_config(result.validated_data))
