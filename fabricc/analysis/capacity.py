"""Analysis, part 8: power against the rack budgets, and what the GPUs add up to.

Consumes the Fabric IR, the rack device power of synth/power.py and the catalog; produces IT
power per rack (largest, mean, over budget), per row and for the site against the sum of the
rack budgets, and the GPU count, GPU memory and dense FP16/FP8 PFLOPS from the catalog's GPU
figures (with the models whose figures are assumed or missing named, so a reader can tell a
datasheet number from a guess).
"""

from __future__ import annotations

from typing import Any

from fabricc.ir import Fabric
from fabricc.synth.power import rack_device_power_w


def power(fabric: Fabric) -> dict[str, Any]:
    racks: list[tuple[int, int, int, str]] = []  # (row, watts, budget, role)
    for rack in fabric.racks:
        watts = rack_device_power_w(fabric, rack)
        racks.append((rack.row, watts, rack.power_budget_w, rack.role))
    rows: dict[int, list[int]] = {}
    by_role: dict[str, int] = {}
    for row, watts, budget, role in racks:
        entry = rows.setdefault(row, [0, 0, 0])
        entry[0] += 1
        entry[1] += watts
        entry[2] += budget
        by_role[role] = by_role.get(role, 0) + watts
    total = sum(w for _, w, _, _ in racks)
    budget = sum(b for _, _, b, _ in racks)
    shares = [w / b for _, w, b, _ in racks if b]
    return {
        "site_kw": _kw(total),
        "site_budget_kw": _kw(budget),
        "site_share": round(total / budget, 4) if budget else 0.0,
        "racks": len(racks),
        "rack_max_kw": _kw(max((w for _, w, _, _ in racks), default=0)),
        "rack_mean_kw": _kw(total / len(racks)) if racks else 0.0,
        "rack_max_share": round(max(shares, default=0.0), 4),
        "racks_over_budget": sum(1 for s in shares if s > 1),
        "racks_over_90_percent": sum(1 for s in shares if s > 0.9),
        "by_rack_role_kw": {role: _kw(w) for role, w in sorted(by_role.items())},
        "rows": [
            {"row": row + 1, "racks": n, "kw": _kw(w), "budget_kw": _kw(b)}
            for row, (n, w, b) in sorted(rows.items())
        ],
    }


def gpus(fabric: Fabric) -> dict[str, Any]:
    catalog = fabric.loaded.catalog.catalog
    models: dict[str, dict[str, Any]] = {}
    missing: dict[str, list[str]] = {}  # GPU model -> the figures the catalog lacks
    for device in fabric.devices.values():
        node = catalog.nodes.get(device.model)
        if node is None or node.gpu is None or not node.gpus or device.kind not in ("node", "tray"):
            continue
        gpu = node.gpu
        entry = models.setdefault(
            gpu.model,
            {
                "gpus": 0,
                "memory_gb": gpu.memory_gb,
                "fp16_dense_tflops": gpu.fp16_dense_tflops,
                "fp8_dense_tflops": gpu.fp8_dense_tflops,
                "source": gpu.figures_source or "assumed: no figures in the catalog",
            },
        )
        entry["gpus"] += node.gpus
        lacks = gpu.missing_figures()
        if lacks:
            missing[gpu.model] = lacks
    total = sum(m["gpus"] for m in models.values())

    def pflops(key: str) -> float | None:
        """The sum over the models, or None when a model lacks the figure (never taken as 0)."""
        if any(m[key] is None for m in models.values()):
            return None
        return round(float(sum(m["gpus"] * m[key] for m in models.values())) / 1000, 1)

    return {
        "gpus": total,
        "gpu_memory_tb": round(sum(m["gpus"] * m["memory_gb"] for m in models.values()) / 1000, 2),
        "fp16_dense_pflops": pflops("fp16_dense_tflops"),
        "fp8_dense_pflops": pflops("fp8_dense_tflops"),
        "assumed": sorted(
            name
            for name, m in models.items()
            if m["source"].startswith("assumed") or m["fp8_dense_tflops"] is None
        ),
        "missing": dict(sorted(missing.items())),
        "by_model": dict(sorted(models.items())),
    }


def _kw(watts: float) -> float:
    return round(watts / 1000, 2)
