"""Twin output: the findings of a run as OUT/twin/report.json.

Consumes the per-stage results the run collected; produces one JSON document (keys sorted, no
timestamps or paths, so the same folder and the same outcome give the same bytes) and the
verdict: it holds when no stage names a failure.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field


@dataclass(slots=True)
class Report:
    design: str
    scope: str = "whole design"
    provisioning: dict[str, object] = field(default_factory=dict)
    networks: dict[str, dict[str, object]] = field(default_factory=dict)
    not_modelled: list[str] = field(default_factory=list)
    # what went wrong with the machine the twin ran on rather than with the design (the kernel
    # refused neighbour entries): in report.json only when something did
    lab: list[str] = field(default_factory=list)
    # wall seconds per stage: not in report.json (same outcome, same bytes), in timings.json
    timings: dict[str, float] = field(default_factory=dict)

    def failures(self) -> int:
        count = len(_list(self.provisioning.get("failures")))
        for network in self.networks.values():
            count += len(_list(network.get("failures")))  # a network that could not boot
            for check in network.values():
                if isinstance(check, dict):
                    count += len(_list(check.get("failures")))
                elif isinstance(check, list):
                    count += sum(
                        len(_list(item.get("failures"))) for item in check if isinstance(item, dict)
                    )
        return count

    @property
    def holds(self) -> bool:
        return self.failures() == 0

    def text(self) -> str:
        data = {
            "design": self.design,
            "scope": self.scope,
            "holds": self.holds,
            "failures": self.failures(),
            "provisioning": self.provisioning,
            "networks": self.networks,
            "not_modelled": self.not_modelled,
        }
        if self.lab:
            data["lab"] = self.lab
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def timings_text(self) -> str:
        """Wall seconds per stage in the order they ran (`<network>: total` includes the
        cleanup of its namespaces; `total` is the whole run)."""
        return json.dumps(self.timings, indent=2) + "\n"


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []
