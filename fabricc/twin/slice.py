"""Twin scope: a design larger than the machine can boot runs as a named slice.

Consumes the build folder and a bound on the devices the Ethernet twin boots; produces the folder
the twin boots and the scope it reports. A slice is one scalable unit (SU) with every device that
belongs to no SU (spines, cores, shared servers) and the access switch on the far end of each
management cable of those devices (their path to the provisioning server); cables are kept when
both ends are in the slice. An SU still too large (a design of one SU) keeps its first routed
leaves, as many as the bound on routed cables allows, two per network at least, and the endpoints
they reach. InfiniBand subnets are not sliced: ibsim runs them whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.errors import SpecError, error
from fabricc.twin.folder import SWITCH_KINDS, BuildFolder

MAX_DEVICES = 600  # namespaces on 2 cores and a few GiB; the twin of a larger design is sliced
# routed cables (a BGP session at each end, an MTU check, a veth): spectrum-x-2plane's 256 take
# about a minute on 2 shared cores (docs/performance.md)
MAX_CABLES = 256
MGMT_KINDS = ("mgmt",)
LEAF_UPLINK = "leaf-spine"
WHOLE = "whole"  # --su whole: boot the whole design, however large


@dataclass(frozen=True, slots=True)
class Scope:
    su: str  # "" for the whole design
    sus: int
    devices: int
    total: int
    leaves: tuple[int, int] | None = None  # routed leaves kept of the SU's, when trimmed

    def text(self) -> str:
        if not self.su:
            return "whole design"
        trimmed = (
            f", its first {self.leaves[0]} of {self.leaves[1]} routed leaves"
            if self.leaves is not None
            else ""
        )
        return (
            f"slice: scalable unit {self.su} of {self.sus}{trimmed} with every spine, core and "
            f"shared device ({self.devices:,} of {self.total:,} devices booted)"
        )


def _su_key(su: str) -> tuple[int, str]:
    return (int(su), su) if su.isdigit() else (1 << 30, su)


def units(folder: BuildFolder) -> list[str]:
    return sorted(
        {row.get("scalable_unit", "") for row in folder.devices.values()} - {""}, key=_su_key
    )


def _cabled(folder: BuildFolder, networks: list[str]) -> set[str]:
    wanted = set(networks)
    return {
        row[end]
        for row in folder.cables
        if row.get("network") in wanted
        for end in ("a_device", "b_device")
    }


def routed_cables(folder: BuildFolder, networks: list[str], kept: set[str] | None = None) -> int:
    """Switch-to-switch cables whose two ends boot FRR (an frr.conf in the build)."""
    wanted = set(networks)
    routes: dict[str, bool] = {}

    def routed(device: str) -> bool:
        if device not in routes:
            routes[device] = folder.has(f"configs/{device}/frr.conf")
        return routes[device]

    return sum(
        row.get("kind") in SWITCH_KINDS
        and row.get("network") in wanted
        and (kept is None or (row["a_device"] in kept and row["b_device"] in kept))
        and routed(row["a_device"])
        and routed(row["b_device"])
        for row in folder.cables
    )


def _trim(folder: BuildFolder, networks: list[str], kept: set[str], limit: int) -> tuple[int, int]:
    """Drops routed leaves (last first, per network) until the routed cables fit `limit`, two
    leaves per network at least; their endpoints go with them. Returns (kept, of) leaves."""
    wanted = set(networks)
    leaves: dict[str, list[str]] = {}
    for row in folder.cables:
        if row.get("kind") == LEAF_UPLINK and row.get("network") in wanted:
            leaf = row["a_device"]
            if (
                leaf in kept
                and folder.has(f"configs/{leaf}/frr.conf")
                and leaf not in leaves.setdefault(row["network"], [])
            ):
                leaves[row["network"]].append(leaf)
    ordered = {network: sorted(names) for network, names in leaves.items()}
    total = sum(len(names) for names in ordered.values())
    while routed_cables(folder, networks, kept) > limit:
        network = max(ordered, key=lambda n: (len(ordered[n]), n))
        if len(ordered[network]) <= 2:
            break
        kept.discard(ordered[network].pop())
    # endpoints are booted for the leaves they reach; one that reaches no kept switch goes
    reach: dict[str, bool] = {}
    for row in folder.cables:
        if row.get("kind") == "endpoint-leaf" and row.get("network") in wanted:
            reach[row["a_device"]] = reach.get(row["a_device"], False) or row["b_device"] in kept
    kept.difference_update(device for device, reaches in reach.items() if not reaches)
    return sum(len(names) for names in ordered.values()), total


def cut(
    folder: BuildFolder, su: str, networks: list[str], limit: int | None = None
) -> tuple[BuildFolder, Scope]:
    """The slice of `su`: a BuildFolder over the same files with fewer devices and cables; with
    a `limit` of routed cables, the SU's routed leaves beyond it are left out too."""
    booted = _cabled(folder, networks)

    def unit(device: str) -> str:
        return folder.devices.get(device, {}).get("scalable_unit", "")

    kept = {d for d in booted if unit(d) in ("", su)}
    leaves = None
    if limit is not None and routed_cables(folder, networks, kept) > limit:
        leaves = _trim(folder, networks, kept, limit)
    for row in folder.cables:
        if row.get("kind") not in MGMT_KINDS:
            continue
        # the plan writes a management cable from the managed port (a) to its access switch (b)
        if (
            row["a_device"] in kept
            and folder.devices.get(row["b_device"], {}).get("kind") == "switch"
        ):
            kept.add(row["b_device"])
    sliced = BuildFolder(folder.root)
    sliced.devices = {
        name: row for name, row in folder.devices.items() if name in kept or name not in booted
    }
    for row in folder.cables:
        inside = row["a_device"] in kept and row["b_device"] in kept
        (sliced.cables if inside else sliced.left_out).append(row)
    sliced.site_cables = [
        row for row in folder.site_cables if kept & {row["a_device"], row["b_device"]}
    ]
    return sliced, Scope(su, len(units(folder)), len(kept), len(booted), leaves)


def choose(
    folder: BuildFolder,
    networks: list[str],
    su: str | None,
    limit: int = MAX_DEVICES,
    cables: int = MAX_CABLES,
) -> tuple[BuildFolder, Scope]:
    """The folder to boot: the SU asked for, else the first SU when the design is larger than
    `limit` devices or `cables` routed cables (then trimmed to its first routed leaves when the
    SU alone is still larger), else the whole design."""
    all_units = units(folder)
    total = len(_cabled(folder, networks))
    small = total <= limit and routed_cables(folder, networks) <= cables
    if su == WHOLE or (su is None and (small or not all_units)):
        return folder, Scope("", len(all_units), total, total)
    chosen = su if su is not None else all_units[0]
    if chosen not in all_units:
        raise SpecError(
            [
                error(
                    f"no scalable unit {chosen!r} in this build",
                    hint=f"its units: {', '.join(all_units) or 'none (boot it whole)'}",
                )
            ]
        )
    return cut(folder, chosen, networks, cables)
