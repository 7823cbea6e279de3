"""Emitter `analysis`: analysis/analysis.json and its charts, and the report's analysis section.

Consumes the Fabric IR through fabricc.analysis.design (default options: a 140 GB all-reduce
over every GPU of the compute network, no prices); produces analysis/analysis.json (the numbers
`fabricc analyze` prints), analysis/bisection.svg, analysis/allreduce.svg and, per network
with switches, analysis/failures-<network>.svg.
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup

from fabricc.analysis import plots
from fabricc.analysis.design import analysis, compute_network
from fabricc.emit import Artifact
from fabricc.emit.diagrams.style import plural
from fabricc.emit.tables import json_text
from fabricc.ir import Fabric


def charts(fabric: Fabric) -> list[tuple[str, str, str]]:
    """(file name, title, SVG) of every chart, in page order."""
    data = analysis(fabric)
    found = [
        ("bisection.svg", "Bisection bandwidth per network", plots.bisection(data)),
        ("allreduce.svg", "All-reduce time against GPU count", plots.all_reduce(data)),
    ]
    compute = compute_network(fabric)
    if compute is not None:
        found.append(
            (
                f"failures-{compute}.svg",
                f"Bisection left after single failures on {compute}",
                plots.failures(data, compute),
            )
        )
    return found


def emit(fabric: Fabric) -> list[Artifact]:
    artifacts: list[Artifact] = [("analysis/analysis.json", json_text(analysis(fabric)))]
    artifacts.extend((f"analysis/{name}", svg) for name, _, svg in charts(fabric))
    return artifacts


def section(fabric: Fabric) -> dict[str, Any]:
    """What the report's analysis section prints: a row per network, the all-reduce figures,
    capacity and power, and the charts inline."""
    data = analysis(fabric)
    networks = []
    for name, net in data["networks"].items():
        failures = net["single_failure"]
        worst = max(failures.items(), key=lambda kv: kv[1]["bisection_gbps_lost"], default=None)
        networks.append(
            {
                "name": name,
                "endpoint": plots.gbps_text(net["endpoint_gbps"]),
                "bisection": plots.gbps_text(net["bisection_gbps"]),
                "ratio": f"{net['bisection_ratio']:.0%}",
                "oversubscription": ", ".join(
                    f"{tier} {value:g}:1" for tier, value in net["oversubscription"].items()
                ),
                "hops": net["max_switch_hops"],
                "ecmp": f"{net['ecmp_paths']:,}",
                "leaf_loss": _loss(failures.get("leaf")),
                "worst": f"{worst[0].replace('_', ' ')}: -{plots.gbps_text(worst[1]['bisection_gbps_lost'])}"
                if worst
                else "",
                "plane_loss": _loss(net.get("plane_loss")),
            }
        )
    capacity = data["capacity"]
    power = data["power"]
    return {
        "networks": networks,
        "all_reduce": data["all_reduce"],
        "capacity": capacity,
        "power": power,
        "charts": [
            {"name": name, "title": title, "svg": Markup(svg.strip()), "width_px": _width(svg)}
            for name, title, svg in charts(fabric)
        ],
    }


def _loss(impact: dict[str, Any] | None) -> str:
    if not impact:
        return ""
    return (
        f"{plural(impact['endpoints_lost'], 'port')}, {plural(impact['nodes_lost'], 'node')}, "
        f"-{plots.gbps_text(impact['bisection_gbps_lost'])}"
    )


def _width(svg: str) -> int:
    found = re.search(r'<svg\b[^>]*?\bwidth="([0-9]+)"', svg)
    return int(found.group(1)) if found else 800
