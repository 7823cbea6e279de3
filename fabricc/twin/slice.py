"""Twin scope: a design larger than the machine can boot runs as a named slice.

Consumes the build folder and a bound on the devices the Ethernet twin boots; produces the folder
the twin boots and the scope it reports. A slice is one scalable unit (SU) with every device that
belongs to no SU (spines, cores, shared servers) and the access switch on the far end of each
management cable of those devices (their path to the provisioning server); cables are kept when
both ends are in the slice. InfiniBand subnets are not sliced: ibsim runs them whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.errors import SpecError, error
from fabricc.twin.folder import BuildFolder

MAX_DEVICES = 600  # namespaces on 2 cores and a few GiB; the twin of a larger design is sliced
MGMT_KINDS = ("mgmt",)


@dataclass(frozen=True, slots=True)
class Scope:
    su: str  # "" for the whole design
    sus: int
    devices: int
    total: int

    def text(self) -> str:
        if not self.su:
            return "whole design"
        return (
            f"slice: scalable unit {self.su} of {self.sus} with every spine, core and shared "
            f"device ({self.devices:,} of {self.total:,} devices booted)"
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


def cut(folder: BuildFolder, su: str, networks: list[str]) -> tuple[BuildFolder, Scope]:
    """The slice of `su`: a BuildFolder over the same files with fewer devices and cables."""
    booted = _cabled(folder, networks)

    def unit(device: str) -> str:
        return folder.devices.get(device, {}).get("scalable_unit", "")

    kept = {d for d in booted if unit(d) in ("", su)}
    for row in folder.cables:
        if row.get("kind") not in MGMT_KINDS:
            continue
        for near, far in (("a_device", "b_device"), ("b_device", "a_device")):
            if row[near] in kept and folder.devices.get(row[far], {}).get("kind") == "switch":
                kept.add(row[far])
    sliced = BuildFolder(folder.root)
    sliced.devices = {
        name: row for name, row in folder.devices.items() if name in kept or name not in booted
    }
    sliced.cables = [r for r in folder.cables if r["a_device"] in kept and r["b_device"] in kept]
    return sliced, Scope(su, len(units(folder)), len(kept), len(booted))


def choose(
    folder: BuildFolder, networks: list[str], su: str | None, limit: int = MAX_DEVICES
) -> tuple[BuildFolder, Scope]:
    """The folder to boot: the SU asked for, else the first SU when the design is larger than
    `limit` devices, else the whole design."""
    all_units = units(folder)
    total = len(_cabled(folder, networks))
    if su is None and (total <= limit or not all_units):
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
    return cut(folder, chosen, networks)
