"""Analysis, part 11: the analysis as rich tables for the terminal, and as flat rows to compare.

Consumes analysis data (fabricc.analysis.design); produces rich renderables for `fabricc
analyze` and the headline rows (label, value) that `fabricc compare` sets side by side. Building
a table prints nothing: fabricc.cli prints them.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table

from fabricc.analysis.plots import gbps_text

Value = int | float | str | None


def _fmt(value: Value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 10 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return value


def renderables(data: dict[str, Any]) -> list[Table]:
    networks = Table(title="Networks", title_justify="left")
    for column in ("network", "endpoints", "bisection", "of half", "oversubscription"):
        networks.add_column(
            column, justify="left" if column in ("network", "oversubscription") else "right"
        )
    for column in ("switch hops", "ECMP paths", "connected"):
        networks.add_column(column, justify="right")
    failures = Table(title="Single failures (worst of each kind)", title_justify="left")
    for column in (
        "network",
        "failure",
        "failed",
        "ports lost",
        "nodes lost",
        "endpoint bw lost",
        "bisection left",
    ):
        failures.add_column(
            column, justify="left" if column in ("network", "failure", "failed") else "right"
        )
    for name, net in data["networks"].items():
        networks.add_row(
            name,
            gbps_text(net["endpoint_gbps"]),
            gbps_text(net["bisection_gbps"]),
            f"{net['bisection_ratio']:.1%}",
            ", ".join(f"{t} {v:g}:1" for t, v in net["oversubscription"].items()),
            str(net["max_switch_hops"]),
            f"{net['ecmp_paths']:,}",
            "yes" if net["connected"] else "no",
        )
        cases = list(net["single_failure"].items())
        if "plane_loss" in net:
            cases.append(("plane", net["plane_loss"]))
        whole = net["bisection_gbps"] or 1
        for kind, impact in cases:
            failures.add_row(
                name,
                kind.replace("_", " "),
                impact["failed"],
                f"{impact['endpoints_lost']:,}",
                f"{impact['nodes_lost']:,}",
                gbps_text(impact["endpoint_gbps_lost"]),
                f"{impact['bisection_gbps_after'] / whole:.1%}",
            )
    others = Table(title="Collectives, capacity, power and cost", title_justify="left")
    others.add_column("figure")
    others.add_column("value", justify="right")
    for label, value in headline(data):
        if ":" not in label:
            others.add_row(label, _fmt(value))
    return [networks, failures, others]


def headline(data: dict[str, Any]) -> list[tuple[str, Value]]:
    """The numbers a reader compares between two designs, as (label, value) in a fixed order.
    Network figures are labelled "<network>: ..."."""
    rows: list[tuple[str, Value]] = []
    for name, net in data["networks"].items():
        rows += [
            (f"{name}: endpoint Gb/s", net["endpoint_gbps"]),
            (f"{name}: bisection Gb/s", net["bisection_gbps"]),
            (f"{name}: bisection / half endpoint bw", net["bisection_ratio"]),
            *((f"{name}: oversubscription {t}", v) for t, v in net["oversubscription"].items()),
            (f"{name}: max switch hops", net["max_switch_hops"]),
            (f"{name}: ECMP paths", net["ecmp_paths"]),
        ]
        for kind, impact in net["single_failure"].items():
            label = kind.replace("_", " ")
            rows += [
                (f"{name}: {label} failure, nodes lost", impact["nodes_lost"]),
                (f"{name}: {label} failure, bisection Gb/s lost", impact["bisection_gbps_lost"]),
            ]
        rows += [(f"{name}: {what}", count) for what, count in net.get("hardware", {}).items()]
        if "cost" in data and name in data["cost"].get("by_network", {}):
            rows.append((f"{name}: cost", data["cost"]["by_network"][name]))
        if "plane_loss" in net:
            rows.append(
                (
                    f"{name}: plane lost, bisection Gb/s lost",
                    net["plane_loss"]["bisection_gbps_lost"],
                )
            )
    reduce = data["all_reduce"]
    if reduce:
        rows += [
            ("all-reduce network", reduce["network"]),
            ("all-reduce GB", reduce["message_gb"]),
            ("all-reduce GPUs", reduce["gpus"]),
            ("all-reduce s", reduce["time_s"]),
            ("all-reduce algbw GB/s", reduce["algbw_gbs"]),
            ("all-reduce busbw GB/s", reduce["busbw_gbs"]),
        ]
    capacity = data["capacity"]
    power = data["power"]
    rows += [
        ("GPUs", capacity["gpus"]),
        ("GPU memory TB", capacity["gpu_memory_tb"]),
        ("FP16 dense PFLOPS", capacity["fp16_dense_pflops"]),
        ("FP8 dense PFLOPS", capacity["fp8_dense_pflops"]),
        ("IT power kW", power["site_kw"]),
        ("rack budgets kW", power["site_budget_kw"]),
        ("largest rack kW", power["rack_max_kw"]),
        ("racks", power["racks"]),
        ("racks over budget", power["racks_over_budget"]),
    ]
    if "cost" in data:
        rows += [
            ("cost", data["cost"]["total"]),
            ("parts without a price", len(data["cost"]["unpriced"])),
        ]
    return rows


def _figures(
    first: dict[str, Any], second: dict[str, Any]
) -> list[tuple[str, Value, Value, float | None]]:
    """Every headline figure of either analysis (A's order, then B's own): both values and
    B / A (None where either is not a number or A is 0)."""
    a = dict(headline(first))
    b = dict(headline(second))
    rows = []
    for label in list(a) + [label for label in b if label not in a]:
        x, y = a.get(label), b.get(label)
        ratio = None
        if isinstance(x, int | float) and isinstance(y, int | float) and x:
            ratio = y / x
        rows.append((label, x, y, ratio))
    return rows


def comparison_data(
    first: dict[str, Any], second: dict[str, Any], names: tuple[str, str]
) -> dict[str, Any]:
    """The comparison as data (`compare --json`): both specs and, per figure, both values and
    B / A (null where either is not a number or A is 0)."""
    rows = [
        {"figure": label, "a": x, "b": y, "b_over_a": None if ratio is None else round(ratio, 4)}
        for label, x, y, ratio in _figures(first, second)
    ]
    return {"a": names[0], "b": names[1], "figures": rows}


def comparison(first: dict[str, Any], second: dict[str, Any], names: tuple[str, str]) -> Table:
    table = Table(title=f"{names[0]} vs {names[1]}", title_justify="left")
    table.add_column("figure")
    table.add_column(names[0], justify="right")
    table.add_column(names[1], justify="right")
    table.add_column("B / A", justify="right")
    for label, x, y, ratio in _figures(first, second):
        table.add_row(label, _fmt(x), _fmt(y), "" if ratio is None else f"{ratio:.3g}x")
    return table
