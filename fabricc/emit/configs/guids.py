"""Emit helper (configs): InfiniBand GUIDs - the user's mapping, or deterministic placeholders.

Consumes the spec's subnet_manager.guids files (YAML, relative to the spec: IB node name -> GUID,
as int or hex string) and stable indices of the IB nodes; produces one GUID per IB node: for a
switch its node GUID (what root_guid_file lists), for an HCA port its port GUID (what partitions
and cn_guid_file list; `ibstat` shows it as "Port GUID"). GUIDs are unknown at design time, so
nodes missing from the mapping get placeholders laid out from indices - never from iteration order
- so the same spec always gives the same GUIDs and a new node never renumbers the others:

  switch    0xfa1c5 (20 bits) | network (8) | tier (4: leaf 1, spine 2, core 3) | series (8)
            | plane (4) | index (20)      (series: the leaf class, 0 for the network's first)
  HCA port  0xfa1cc (20 bits) | network (8) | group (8) | node (20) | port (4) | plane (3) | 1
"""

from __future__ import annotations

from fabricc.errors import Diagnostic, SpecError, error
from fabricc.ir import Fabric
from fabricc.spec.validation import did_you_mean
from fabricc.spec.yamlsource import DataPath

SWITCH_PREFIX = 0xFA1C5
CA_PREFIX = 0xFA1CC
TIERS = {"leaf": 1, "spine": 2, "core": 3}
GUID_MAX = (1 << 64) - 1


def switch_guid(network: int, tier: str, series: int, plane: int, index: int) -> int:
    if series >= 1 << 8 or plane >= 1 << 4 or index >= 1 << 20:
        raise ValueError(
            f"placeholder GUID fields out of range (series {series}, plane {plane}, switch "
            f"{index}); give real GUIDs in subnet_manager.guids"
        )
    return (
        (SWITCH_PREFIX << 44)
        | (network << 36)
        | (TIERS[tier] << 32)
        | (series << 24)
        | (plane << 20)
        | index
    )


def ca_port_guid(network: int, group: int, node: int, port: int, plane: int) -> int:
    if group >= 1 << 8 or node >= 1 << 20 or port >= 1 << 4 or plane >= 1 << 3:
        raise ValueError(
            f"placeholder GUID fields out of range (group {group}, node {node}, port {port}, "
            f"plane {plane}); give real GUIDs in subnet_manager.guids"
        )
    return (
        (CA_PREFIX << 44)
        | (network << 36)
        | (group << 28)
        | (node << 8)
        | (port << 4)
        | (plane << 1)
        | 1
    )


def guid_text(guid: int) -> str:
    return f"0x{guid:016x}"


def load_mappings(fabric: Fabric, known: set[str]) -> dict[str, dict[str, int]]:
    """network -> (IB node name -> GUID) for every IB network whose spec names a guids file.

    The files were read (bounded, with positions) by the load stage; problems point into them.
    """
    problems: list[Diagnostic] = []
    result: dict[str, dict[str, int]] = {}
    for name, guid_file in fabric.loaded.guid_files.items():
        shown = guid_file.display
        mapping: dict[str, int] = {}
        owner: dict[int, str] = {}
        for key, value in guid_file.data.items():
            node = str(key)
            at: DataPath = (key,) if isinstance(key, str | int) else ()
            guid = _parse_guid(value)
            if node not in known:
                problems.append(
                    error(
                        f"{node!r} is not an InfiniBand node of network {name!r}",
                        location=guid_file.source.key(at),
                        hint=did_you_mean(node, sorted(known), "IB nodes"),
                    )
                )
            elif guid is None:
                problems.append(
                    error(
                        f"{node!r} has no valid 64-bit GUID",
                        location=guid_file.source.value(at),
                        hint="write the GUID as 0x followed by up to 16 hex digits",
                    )
                )
            elif guid in owner:
                problems.append(
                    error(
                        f"{guid_text(guid)} is given to {owner[guid]!r} and {node!r}",
                        location=guid_file.source.value(at),
                        hint=f"every GUID in {shown} must be unique",
                    )
                )
            else:
                owner[guid] = node
                mapping[node] = guid
        result[name] = mapping
    if problems:
        raise SpecError(problems)
    return result


def _parse_guid(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        guid = value
    elif isinstance(value, str):
        try:
            guid = int(value, 16)  # "0x..." or bare hex digits
        except ValueError:
            return None
    else:
        return None
    return guid if 0 < guid <= GUID_MAX else None
