"""Change management output: the work order and the files `fabricc diff -o` writes.

Consumes a Diff; produces the rack-by-rack work order (per rack, in the order a crew works: take
out cables, take out devices, move devices, install devices, re-terminate and replace cables, run
new cables, load configs) and the output files - work-order.csv and .html, devices.csv,
cables.csv, bom-delta.csv (parts to order are the positive deltas), configs.diff - plus the
summary the CLI prints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from fabricc.change.compare import (
    ADDED,
    CHANGED,
    REMOVED,
    RENUMBERED,
    RETERMINATED,
    CableChange,
    Diff,
)
from fabricc.emit.tables import csv_text
from fabricc.emit.templating import render

NO_RACK = "no rack"  # steps of devices without one (listed last)
ACTIONS = (
    "remove cable",
    "remove device",
    "move device",
    "install device",
    "re-terminate cable",
    "replace cable",
    "run cable",
    "load config",
)


@dataclass(frozen=True, slots=True)
class Step:
    rack: str
    step: int
    action: str
    item: str
    where: str
    detail: str


def _rack_key(rack: str) -> tuple[int, list[int | str]]:
    parts: list[int | str] = [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", rack) if p]
    return (rack == NO_RACK, parts)


def _cable_step(change: CableChange) -> tuple[str, str, str, str]:
    """rack, action, where, detail of a cable change."""
    span = f"{change.a} ({change.a_rack}) - {change.b} ({change.b_rack})"
    if change.change == REMOVED:
        return change.a_rack, "remove cable", span, change.part
    if change.change == ADDED:
        return change.a_rack, "run cable", span, change.part
    if change.change == CHANGED:
        return change.a_rack, "replace cable", span, change.detail
    rack = change.b_rack if change.moved == "b" else change.a_rack
    action = "replace cable" if change.replaced else "re-terminate cable"
    return rack, action, span, change.detail


def _config_device(path: str) -> str:
    """The device a config file is for: configs/<device>/..., configs/hosts/<device>.sh; a
    subnet manager folder (compute-sm) names no device."""
    head, _, rest = path.partition("/")
    if head == "hosts":
        return rest.rsplit(".", 1)[0]
    return head


def work_order(diff: Diff) -> list[Step]:
    raw: list[tuple[str, str, str, str, str]] = []  # rack, action, item, where, detail
    for change in diff.cables:
        if change.change in (REMOVED, ADDED, RETERMINATED, CHANGED):
            rack, action, where, detail = _cable_step(change)
            raw.append((rack or NO_RACK, action, change.cable_id, where, detail))
    for device in diff.devices:
        if device.change in (ADDED, REMOVED):
            action = "install device" if device.change == ADDED else "remove device"
            where = f"{device.rack} U{device.u}" if device.u else device.rack
            raw.append((device.rack or NO_RACK, action, device.name, where, device.model))
        elif device.change == CHANGED:
            place = {key: (old, new) for key, old, new in device.fields if key in ("rack", "u")}
            if place:
                before = diff.old.devices[device.name]
                where = (
                    f"{before.get('rack', '')} U{before.get('u', '')} -> {device.rack} U{device.u}"
                )
                raw.append(
                    (device.rack or NO_RACK, "move device", device.name, where, device.model)
                )
    for config in diff.configs:
        if config.change == REMOVED:
            continue
        owner = _config_device(config.path)
        row = diff.new.devices.get(owner)
        rack = row.get("rack", "") if row else ""
        raw.append(
            (rack or NO_RACK, "load config", owner, rack or NO_RACK, f"configs/{config.path}")
        )
    raw.sort(key=lambda r: (_rack_key(r[0]), ACTIONS.index(r[1]), r[2], r[3]))
    steps: list[Step] = []
    number = 0
    for i, (rack, action, item, where, detail) in enumerate(raw):
        number = 1 if i == 0 or raw[i - 1][0] != rack else number + 1
        steps.append(Step(rack, number, action, item, where, detail))
    return steps


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _amount(value: float) -> int | float:
    """A quantity as a CSV number (a negative delta stays a number, not formula-like text)."""
    return int(value) if float(value).is_integer() else value


def files(diff: Diff) -> list[tuple[str, str]]:
    steps = work_order(diff)
    return [
        ("work-order.csv", csv_text(
            ("rack", "step", "action", "item", "where", "detail"),
            ((s.rack, s.step, s.action, s.item, s.where, s.detail) for s in steps))),
        ("work-order.html", render(
            "change/work-order.html.j2", diff=diff, steps=steps, racks=_by_rack(steps),
            summary=summary_lines(diff), number=_number)),
        ("devices.csv", csv_text(
            ("name", "change", "kind", "model", "rack", "u", "fields"),
            ((d.name, d.change, d.kind, d.model, d.rack, d.u,
              "; ".join(f"{k}: {a} -> {b}" for k, a, b in d.fields)) for d in diff.devices))),
        ("cables.csv", csv_text(
            ("cable_id", "change", "old_cable_id", "network", "kind", "a", "a_rack", "b", "b_rack",
             "cable_part", "detail"),
            ((c.cable_id, c.change, c.old_id, c.network, c.kind, c.a, c.a_rack, c.b, c.b_rack,
              c.part, c.detail) for c in diff.cables))),
        ("bom-delta.csv", csv_text(
            ("part_number", "description", "category", "old", "new", "delta", "order",
             "return"),
            ((p.part, p.description, p.category, _amount(p.old), _amount(p.new),
              _amount(p.delta), _amount(p.order), _amount(p.returned)) for p in diff.bom))),
        ("configs.diff", "".join(c.diff for c in diff.configs)),
    ]  # fmt: skip


def _by_rack(steps: list[Step]) -> list[tuple[str, list[Step]]]:
    racks: dict[str, list[Step]] = {}
    for step in steps:
        racks.setdefault(step.rack, []).append(step)
    return list(racks.items())


def summary_lines(diff: Diff) -> list[str]:
    def count(items: Iterable[str]) -> str:
        counts: dict[str, int] = {}
        for item in items:
            counts[item] = counts.get(item, 0) + 1
        order = (ADDED, REMOVED, RETERMINATED, RENUMBERED, CHANGED)
        return ", ".join(f"{counts[k]} {k}" for k in order if k in counts) or "no change"

    order = [p for p in diff.bom if p.order > 0]
    back = [p for p in diff.bom if p.returned > 0]
    replaced = sum(1 for c in diff.cables if c.replaced)
    lines = [
        f"devices: {count(d.change for d in diff.devices)}",
        f"cables: {count(c.change for c in diff.cables)}"
        + (f" ({replaced} of them replaced by a new cable)" if replaced else ""),
        f"configs: {count(c.change for c in diff.configs)}",
        f"parts to order: {len(order)} part numbers"
        + (f", {_number(sum(p.order for p in order))} items" if order else ""),
    ]
    if back:
        lines.append(
            f"parts that come out: {len(back)} part numbers, "
            f"{_number(sum(p.returned for p in back))} items"
        )
    lines.extend(diff.topology)
    return lines


def summary_text(diff: Diff) -> str:
    head = f"{diff.old.label} -> {diff.new.label}"
    return "\n".join([head, *(f"  {line}" for line in summary_lines(diff))]) + "\n"
