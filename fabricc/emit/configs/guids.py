"""Emit helper (configs): InfiniBand GUIDs - the user's mapping, or deterministic placeholders.

Consumes the user's GUID mapping (IB node name -> GUID, read and checked by checks/guids.py)
and stable indices of the IB nodes; produces one GUID per IB node: for a switch its node GUID
(what root_guid_file lists), for an HCA port its port GUID (what partitions and cn_guid_file
list; `ibstat` shows it as "Port GUID"). GUIDs are unknown at design time, so nodes missing from
the mapping get placeholders laid out from indices - never from iteration order - so the same
spec always gives the same GUIDs and a new node never renumbers the others:

  switch    0xfa1c5 (20 bits) | network (8) | tier (4: leaf 1, spine 2, core 3) | series (8)
            | plane (4) | index (20)      (series: the leaf class, 0 for the network's first)
  HCA port  0xfa1cc (20 bits) | network (8) | group (8) | node (20) | port (4) | plane (3) | 1
"""

from __future__ import annotations

SWITCH_PREFIX = 0xFA1C5
CA_PREFIX = 0xFA1CC
TIERS = {"leaf": 1, "spine": 2, "core": 3}


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
