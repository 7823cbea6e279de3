"""Change management: the differences between two snapshots of a design.

Consumes an old and a new Snapshot; produces a Diff - devices added, removed or changed (field by
field), cables matched by their two ends (added, removed, re-terminated when one end stays and the
other moves, renumbered or changed when both ends stay), config files as unified diffs, the BOM
delta per part, and the topology changes this amounts to per network (tiers, spine and core counts,
rewired cables). Growing a design should show only additions; anything else is listed as a
topology or identity change so that nobody is surprised on the floor.
"""

from __future__ import annotations

import difflib
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from fabricc.change.snapshot import Row, Snapshot

ADDED = "added"
REMOVED = "removed"
CHANGED = "changed"
RETERMINATED = "re-terminated"
RENUMBERED = "renumbered"

# Inventory fields that name a device's identity or place; any change to an existing device is
# shown, these are the ones a growth must never touch.
IDENTITY_FIELDS = ("rack", "u", "mgmt_ip", "inband_ip", "loopback", "asn")
CABLE_FIELDS = (
    "speed_gbps", "medium", "length_m", "cable_part", "cable_quantity", "a_transceiver",
    "b_transceiver",
)  # fmt: skip
SWITCH_TIERS = ("leaf", "spine", "core")

End = tuple[str, str]


def a_end(row: Row) -> End:
    return (row["a_device"], row["a_port"])


def b_end(row: Row) -> End:
    return (row["b_device"], row["b_port"])


def end_text(end: End) -> str:
    return f"{end[0]}:{end[1]}"


def _link_key(row: Row) -> tuple[End, End]:
    a, b = a_end(row), b_end(row)
    return (a, b) if a <= b else (b, a)


@dataclass(frozen=True, slots=True)
class DeviceChange:
    name: str
    change: str
    kind: str
    model: str
    rack: str
    u: str
    fields: tuple[tuple[str, str, str], ...] = ()  # field, old, new


@dataclass(frozen=True, slots=True)
class CableChange:
    change: str
    cable_id: str  # the new plan's ID; the old one for a removed cable
    old_id: str
    network: str
    kind: str
    a: str
    b: str
    a_rack: str
    b_rack: str
    part: str
    detail: str = ""
    moved: str = ""  # re-terminated: the end that moves, "a" or "b"
    old_part: str = ""  # changed, or re-terminated onto a different cable: the part it replaces
    quantity: float = 1  # cable_quantity: parts per link (a splitter's share)
    old_quantity: float = 1

    @property
    def replaced(self) -> bool:
        """A new cable takes this one's place (a different part or length): one to order, the
        old one to return."""
        return bool(self.old_part) and (
            self.old_part != self.part or self.old_quantity != self.quantity
        )


@dataclass(frozen=True, slots=True)
class PartDelta:
    part: str
    description: str
    category: str
    old: float
    new: float
    order: float = 0  # new parts to order: a replaced cable counts, not only the net growth
    returned: float = 0  # parts that come out: removed, and replaced cables' old parts

    @property
    def delta(self) -> float:
        return self.new - self.old


@dataclass(frozen=True, slots=True)
class ConfigChange:
    path: str  # under configs/
    change: str
    diff: str


@dataclass(slots=True)
class Diff:
    old: Snapshot
    new: Snapshot
    devices: list[DeviceChange] = field(default_factory=list)
    cables: list[CableChange] = field(default_factory=list)
    configs: list[ConfigChange] = field(default_factory=list)
    bom: list[PartDelta] = field(default_factory=list)
    topology: list[str] = field(default_factory=list)


def diff(old: Snapshot, new: Snapshot) -> Diff:
    result = Diff(old, new)
    result.devices = _devices(old, new)
    result.cables = _cables(old, new)
    result.configs = _configs(old, new)
    result.bom = _bom(old, new, result.cables)
    result.topology = _topology(old, new, result)
    return result


def _devices(old: Snapshot, new: Snapshot) -> list[DeviceChange]:
    changes: list[DeviceChange] = []
    for name in sorted(old.devices.keys() | new.devices.keys()):
        before, after = old.devices.get(name), new.devices.get(name)
        row = after or before
        assert row is not None
        base = (row.get("kind", ""), row.get("model", ""), row.get("rack", ""), row.get("u", ""))
        if before is None:
            changes.append(DeviceChange(name, ADDED, *base))
        elif after is None:
            changes.append(DeviceChange(name, REMOVED, *base))
        else:
            fields = tuple(
                (key, before.get(key, ""), after.get(key, ""))
                for key in sorted(before.keys() | after.keys())
                if before.get(key, "") != after.get(key, "")
            )
            if fields:
                changes.append(DeviceChange(name, CHANGED, *base, fields=fields))
    return changes


def _cable(
    change: str,
    row: Row,
    old_id: str = "",
    detail: str = "",
    moved: str = "",
    before: Row | None = None,
) -> CableChange:
    return CableChange(
        change,
        row["cable_id"],
        old_id,
        row["network"],
        row["kind"],
        end_text(a_end(row)),
        end_text(b_end(row)),
        row["a_rack"],
        row["b_rack"],
        row["cable_part"],
        detail,
        moved,
        before["cable_part"] if before is not None else "",
        _amount(row.get("cable_quantity")),
        _amount(before.get("cable_quantity")) if before is not None else 1,
    )


def _amount(text: str | None) -> float:
    try:
        value = float(text or 1)
    except ValueError:
        return 1
    return int(value) if value.is_integer() else value


def _changed(before: Row, after: Row) -> str:
    """The cable fields that differ, as `field old -> new` (empty when none do)."""
    return ", ".join(
        f"{f} {before.get(f, '')} -> {after.get(f, '')}"
        for f in CABLE_FIELDS
        if before.get(f, "") != after.get(f, "")
    )


def _cables(old: Snapshot, new: Snapshot) -> list[CableChange]:
    changes: list[CableChange] = []
    new_by_key = {_link_key(row): row for row in new.cables}
    left_old: list[Row] = []
    matched: set[tuple[End, End]] = set()
    for row in old.cables:
        key = _link_key(row)
        after = new_by_key.get(key)
        if after is None:
            left_old.append(row)
            continue
        matched.add(key)
        detail = _changed(row, after)
        if detail:
            # a different cable on the same ends (part, length, a splitter split in two): a
            # replacement, which may well carry a new ID
            if after["cable_id"] != row["cable_id"]:
                detail += f", cable_id {row['cable_id']} -> {after['cable_id']}"
            changes.append(_cable(CHANGED, after, row["cable_id"], detail, before=row))
        elif after["cable_id"] != row["cable_id"]:
            changes.append(_cable(RENUMBERED, after, row["cable_id"], f"was {row['cable_id']}"))
    left_new = [row for row in new.cables if _link_key(row) not in matched]
    by_end: dict[End, Row] = {}
    for row in left_new:
        by_end.setdefault(a_end(row), row)
        by_end.setdefault(b_end(row), row)
    used: set[int] = set()
    for row in left_old:
        for stays, goes, side in ((a_end, b_end, "b"), (b_end, a_end, "a")):
            after = by_end.get(stays(row))
            if after is None or id(after) in used:
                continue
            used.add(id(after))
            kept = stays(row)
            target = b_end(after) if a_end(after) == kept else a_end(after)
            detail = (
                f"keep {end_text(kept)}; move the other end from "
                f"{end_text(goes(row))} to {end_text(target)}"
            )
            other = _changed(row, after)
            if row.get("cable_part", "") != after.get("cable_part", "") or _amount(
                row.get("cable_quantity")
            ) != _amount(after.get("cable_quantity")):
                # the new run needs another cable (length, part): a new one, the old returned
                detail += f"; a new cable: {other}"
            changes.append(_cable(RETERMINATED, after, row["cable_id"], detail, side, row))
            break
        else:
            changes.append(_cable(REMOVED, row))
    for row in left_new:
        if id(row) not in used:
            changes.append(_cable(ADDED, row))
    order = {REMOVED: 0, RETERMINATED: 1, ADDED: 2, RENUMBERED: 3, CHANGED: 4}
    return sorted(changes, key=lambda c: (order[c.change], c.cable_id, c.a, c.b))


def _configs(old: Snapshot, new: Snapshot) -> list[ConfigChange]:
    changes: list[ConfigChange] = []
    for path in sorted(old.configs.keys() | new.configs.keys()):
        before, after = old.configs.get(path), new.configs.get(path)
        if before == after:
            continue
        change = ADDED if before is None else REMOVED if after is None else CHANGED
        text = "".join(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                (after or "").splitlines(keepends=True),
                fromfile=f"a/configs/{path}" if before is not None else "/dev/null",
                tofile=f"b/configs/{path}" if after is not None else "/dev/null",
                n=2,
            )
        )
        changes.append(ConfigChange(path, change, text))
    return changes


def _quantity(row: Row | None) -> float:
    if row is None:
        return 0
    value = float(row.get("quantity") or 0)
    return int(value) if value.is_integer() else value


def _bom(old: Snapshot, new: Snapshot, cables: list[CableChange]) -> list[PartDelta]:
    """Per part: old and new totals, and what to order and return. Every cable that has to be
    a new one (added, or replaced by another part or length) is ordered, and every cable that
    comes out (removed, or replaced) is returned, so a replacement never nets away against a
    surplus of its old part; the rest of the change (devices, transceivers, parts that no
    cable row names) is the net delta."""
    # the legs of a splitter or twin-port cable are rows of one cable ID: counted once
    new_cables: dict[tuple[str, str], float] = {}
    old_cables: dict[tuple[str, str], float] = {}
    for change in cables:
        if change.change == ADDED or change.replaced:
            new_cables[(change.cable_id, change.part)] = change.quantity
        if change.change == REMOVED:
            old_cables[(change.cable_id, change.part)] = change.quantity
        elif change.replaced:
            old_cables[(change.old_id, change.old_part)] = change.old_quantity
    ordered: dict[str, float] = defaultdict(float)
    returned: dict[str, float] = defaultdict(float)
    for (_, part), quantity in new_cables.items():
        ordered[part] += quantity
    for (_, part), quantity in old_cables.items():
        returned[part] += quantity
    deltas: list[PartDelta] = []
    for part in sorted(old.bom.keys() | new.bom.keys() | ordered.keys() | returned.keys()):
        before, after = old.bom.get(part), new.bom.get(part)
        row = after or before or {}
        was, now = _quantity(before), _quantity(after)
        order, back = ordered[part], returned[part]
        rest = (now - was) - (order - back)  # what the cable rows leave: spares, devices
        order, back = order + max(rest, 0), back + max(-rest, 0)
        if now != was or order or back:
            deltas.append(
                PartDelta(
                    part,
                    row.get("description", ""),
                    row.get("category", ""),
                    was,
                    now,
                    _whole(order),
                    _whole(back),
                )
            )
    return deltas


def _whole(value: float) -> float:
    return int(value) if float(value).is_integer() else round(value, 6)


def _tiers(snapshot: Snapshot) -> dict[str, Counter[str]]:
    """Switches per network and tier, and (under "planes") the network's planes."""
    tiers: dict[str, Counter[str]] = {}
    planes: dict[str, set[str]] = {}
    for row in snapshot.devices.values():
        if row.get("kind") == "switch" and row.get("network") and row.get("role") in SWITCH_TIERS:
            tiers.setdefault(row["network"], Counter())[row["role"]] += 1
            planes.setdefault(row["network"], set()).add(row.get("plane") or "1")
    for network, counts in tiers.items():
        counts["planes"] = len(planes[network])
    return tiers


def _topology(old: Snapshot, new: Snapshot, result: Diff) -> list[str]:
    """What the change does to the shape of each network and to existing identities."""
    notes: list[str] = []
    before, after = _tiers(old), _tiers(new)
    for network in sorted(before.keys() | after.keys()):
        was, now = before.get(network, Counter()), after.get(network, Counter())
        if not was or not now:
            notes.append(f"network {network}: {'added' if not was else 'removed'}")
            continue
        was_tiers = sum(1 for t in SWITCH_TIERS if was[t])
        now_tiers = sum(1 for t in SWITCH_TIERS if now[t])
        if was_tiers != now_tiers:
            notes.append(f"network {network}: topology change: {was_tiers} to {now_tiers} tiers")
        if was["planes"] != now["planes"]:
            # every endpoint port splits (or joins) across planes: the fabric is re-derived
            notes.append(
                f"network {network}: topology change: {was['planes']} to {now['planes']} planes"
            )
        for tier in ("spine", "core"):
            if was[tier] and now[tier] and was[tier] != now[tier]:
                notes.append(f"network {network}: {tier}s {was[tier]} -> {now[tier]}")
    rewired = Counter(
        (c.network, c.kind) for c in result.cables if c.change in (RETERMINATED, REMOVED)
    )
    for (network, kind), count in sorted(rewired.items()):
        notes.append(
            f"network {network}: rewire: {count} existing {kind} cable"
            f"{'s' if count != 1 else ''} re-terminated or removed"
        )
    renumbered = sum(1 for c in result.cables if c.change == RENUMBERED)
    if renumbered:
        notes.append(f"identity: {renumbered} existing cables get a new cable ID")
    moved = Counter(
        key
        for d in result.devices
        if d.change == CHANGED
        for key, _, _ in d.fields
        if key in IDENTITY_FIELDS
    )
    for key, count in sorted(moved.items()):
        notes.append(f"identity: {count} existing devices change {key}")
    return notes


def moves(result: Diff) -> int:
    """Existing devices that change rack or unit: installed gear someone has to move."""
    return sum(
        1
        for change in result.devices
        if change.change == CHANGED and any(f in ("rack", "u") for f, _, _ in change.fields)
    )
