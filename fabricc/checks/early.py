"""Check stage, before the design exists: rules that the spec alone decides.

Consumes a LoadedSpec; produces the errors a spec's own numbers already show (a rack of
nodes_per_rack nodes, or of one rack-scale system, over the rack power budget). The design rules
find the same problems on the finished design; these run when synthesis stops on another error,
so that one run reports every independent mistake (`spines: 3` and `nodes_per_rack: 5`
together), not one per run.
"""

from __future__ import annotations

import math

from fabricc.catalog.models import rack_system_power_w
from fabricc.errors import Diagnostic, error
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.yamlsource import DataPath, format_path


def power_hint(draw_w: int, fits: int | None) -> str:
    """What a rack drawing draw_w needs, and how many nodes fit its budget (`fits`, when one
    or more); said alike by this check and the design rule (checks/rules.py)."""
    needed = math.ceil(draw_w / 1000)
    hint = f"the rack needs {needed} kW: set site.rack.power_kw: {needed}"
    if fits is not None and fits >= 1:
        hint += f", or lower nodes_per_rack to {fits}"
    return hint


def rack_power(loaded: LoadedSpec) -> list[Diagnostic]:
    catalog = loaded.catalog.catalog
    budget = int(loaded.spec.site.rack.power_kw * 1000)
    found = []
    for name, group in loaded.spec.nodes.items():
        model = catalog.nodes.get(group.model)
        if model is None:
            continue
        path: DataPath
        if model.rack_scale is not None:
            draw = rack_system_power_w(catalog, model)
            what = f"one {group.model}"
            path = ("site", "rack", "power_kw")
            fits = None
        elif group.nodes_per_rack is not None:
            draw = group.nodes_per_rack * model.power_w
            what = f"{group.nodes_per_rack} {group.model}"
            path = ("nodes", name, "nodes_per_rack")
            fits = budget // model.power_w if model.power_w else None
        else:
            continue
        if draw <= budget:
            continue
        hint = power_hint(draw, fits)
        where = path if path in loaded.source.values else ("nodes", name)
        found.append(
            error(
                f"{what} draw {draw / 1000:g} kW, over the {budget / 1000:g} kW rack budget",
                path=format_path(path),
                location=loaded.source.value(where),
                hint=hint,
            )
        )
    return found
