"""Analysis, part 10: the analysis as small SVG charts, written directly (no plotting library).

Consumes the analysis data of fabricc.analysis.design; produces SVG text: bisection against half
the endpoint bandwidth per network and plane, all-reduce time against GPU count, and bisection
left after each single failure of the compute network. Same data, same bytes.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

FONT = "font-family:Helvetica,Arial,sans-serif"
DARK = "#1d4ed8"
LIGHT = "#bfdbfe"
GREY = "#6b7280"
RED = "#dc2626"


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}" style="{FONT}">\n'
        f"<title>{escape(title)}</title>\n" + "\n".join(body) + "\n</svg>\n"
    )


def _text(
    x: float, y: float, text: str, size: int = 12, anchor: str = "start", fill: str = "#111827"
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{fill}">{escape(text)}</text>'
    )


def gbps_text(gbps: float) -> str:
    if gbps >= 1_000_000:
        return f"{gbps / 1_000_000:,.2f} Pb/s"
    if gbps >= 1000:
        return f"{gbps / 1000:,.1f} Tb/s"
    return f"{gbps:,.0f} Gb/s"


def bisection(data: dict[str, Any]) -> str:
    """One pair of bars per network: half the endpoint bandwidth, and the bisection."""
    rows = [
        (name, net["endpoint_gbps"] / 2, net["bisection_gbps"], net["bisection_ratio"])
        for name, net in data["networks"].items()
        if net["endpoint_gbps"]
    ]
    label_w, bar_w, pad = 130, 420, 16
    height = 52 + 44 * len(rows)
    body = [
        _text(pad, 22, "Bisection bandwidth against half the endpoint bandwidth", 14),
        f'<rect x="{pad}" y="32" width="10" height="10" fill="{LIGHT}"/>',
        _text(pad + 14, 41, "half the endpoint bandwidth", 11, fill=GREY),
        f'<rect x="{pad + 190}" y="32" width="10" height="10" fill="{DARK}"/>',
        _text(pad + 204, 41, "bisection (max-flow)", 11, fill=GREY),
    ]
    for i, (name, half, cut, ratio) in enumerate(rows):
        y = 52 + 44 * i
        scale = bar_w / half if half else 0
        body.append(_text(pad, y + 20, name, 12))
        body.append(f'<rect x="{label_w}" y="{y + 6}" width="{bar_w}" height="14" fill="{LIGHT}"/>')
        body.append(
            f'<rect x="{label_w}" y="{y + 14}" width="{min(cut * scale, bar_w):.1f}" height="14" fill="{DARK}"/>'
        )
        body.append(_text(label_w + bar_w + 8, y + 25, f"{gbps_text(cut)} ({ratio:.0%})", 11))
    return _svg(label_w + bar_w + 150, height, "Bisection bandwidth per network", body)


def all_reduce(data: dict[str, Any]) -> str:
    """All-reduce time of the default message against the number of GPUs (log scale)."""
    info = data["all_reduce"]
    left, top, plot_w, plot_h = 70, 40, 460, 220
    width, height = left + plot_w + 30, top + plot_h + 50
    title = (
        f"All-reduce of {info['message_gb']:g} GB on {info['network']}" if info else "All-reduce"
    )
    body = [_text(16, 22, title, 14)]
    curve = info.get("curve", []) if info else []
    if len(curve) < 2:
        body.append(_text(16, 60, "fewer than two GPUs on a compute network", 12, fill=GREY))
        return _svg(width, height, title, body)
    xs = [math.log2(p["gpus"]) for p in curve]
    longest = max(p["time_s"] for p in curve) or 1.0
    x0, x1 = xs[0], xs[-1]

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * plot_w

    def py(t: float) -> float:
        return top + plot_h - t / longest * plot_h

    body.append(
        f'<path d="M{left},{top} V{top + plot_h} H{left + plot_w}" fill="none" stroke="{GREY}"/>'
    )
    for k in range(5):
        t = longest * k / 4
        body.append(_text(left - 6, py(t) + 4, f"{t:.2f} s", 10, "end", GREY))
    points = " ".join(f"{px(x):.1f},{py(p['time_s']):.1f}" for x, p in zip(xs, curve, strict=True))
    body.append(f'<polyline points="{points}" fill="none" stroke="{DARK}" stroke-width="2"/>')
    for x, p in zip(xs, curve, strict=True):
        body.append(f'<circle cx="{px(x):.1f}" cy="{py(p["time_s"]):.1f}" r="3" fill="{DARK}"/>')
        body.append(_text(px(x), top + plot_h + 16, f"{p['gpus']:,}", 10, "middle", GREY))
    last = curve[-1]
    body.append(
        _text(
            px(xs[-1]) - 4,
            py(last["time_s"]) - 8,
            f"{last['time_s']:.2f} s, busbw {last['busbw_gbs']:,.0f} GB/s",
            11,
            "end",
        )
    )
    body.append(_text(left + plot_w / 2, top + plot_h + 36, "GPUs (log scale)", 11, "middle", GREY))
    return _svg(width, height, title, body)


def failures(data: dict[str, Any], network: str) -> str:
    """Bisection left after each single failure of one network, as a share of the intact one."""
    net = data["networks"][network]
    cases = list(net["single_failure"].items())
    if "plane_loss" in net:
        cases.append(("plane", net["plane_loss"]))
    label_w, bar_w, pad = 130, 380, 16
    height = 40 + 30 * max(len(cases), 1)
    title = f"Bisection left after one failure on {network}"
    body = [_text(pad, 22, title, 14)]
    whole = net["bisection_gbps"] or 1
    for i, (what, impact) in enumerate(cases):
        y = 34 + 30 * i
        share = impact["bisection_gbps_after"] / whole
        body.append(_text(pad, y + 16, what.replace("_", " "), 12))
        body.append(f'<rect x="{label_w}" y="{y + 4}" width="{bar_w}" height="16" fill="#e5e7eb"/>')
        colour = RED if share < 0.9 else DARK
        filled = max(0.0, min(share, 1.0)) * bar_w
        body.append(
            f'<rect x="{label_w}" y="{y + 4}" width="{filled:.1f}" height="16" fill="{colour}"/>'
        )
        lost = impact["nodes_lost"]
        note = f"{share:.1%}" + (f", {lost:,} node{'s' * (lost != 1)} cut off" if lost else "")
        body.append(_text(label_w + bar_w + 8, y + 16, note, 11))
    return _svg(label_w + bar_w + 200, height, title, body)
