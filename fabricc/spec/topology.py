"""Load stage, part 5b: which network keys belong to which switch topology.

Consumes the resolved networks (their spec and which keys the YAML set); produces positioned
Diagnostics for keys that do not belong to the chosen `topology` (spines on a torus, dimensions
on a dragonfly), for a family's missing size key, and for families that a fabric cannot carry:
Ethernet networks are configured as eBGP over leaf-spine(-core) links, so they are built as
fat-trees or rail-only; dragonfly-plus and torus are InfiniBand, routed by OpenSM.
Sizes that need the switch radix (too many groups, too many nodes per rail) are checked by the
synthesis pass of each family, which knows the radix after breakout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from fabricc.errors import Diagnostic
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.spec.yamlsource import DataPath

FAT_TREE = "fat-tree"
RAIL_ONLY = "rail-only"
DRAGONFLY_PLUS = "dragonfly-plus"
TORUS = "torus"

# Keys that shape one family only; any other family rejects them when the spec sets them.
OWN_KEYS: dict[str, tuple[str, ...]] = {
    FAT_TREE: (
        "tiers",
        "spines",
        "spines_for_sus",
        "pod_sus",
        "spine_leaf_groups",
        "core_groups",
        "reserved_slots",
        "dual_homed",
        "spread_ports",
    ),
    DRAGONFLY_PLUS: ("groups", "global_links"),
    TORUS: ("dimensions",),
}
REQUIRED: dict[str, str] = {DRAGONFLY_PLUS: "groups", TORUS: "dimensions"}
ETHERNET_TOPOLOGIES = (FAT_TREE, RAIL_ONLY)

At = Callable[..., Diagnostic]


def check_topology(networks: dict[str, ResolvedNetwork], at: At) -> Iterator[Diagnostic]:
    for network in networks.values():
        yield from _network(network, at)


def _network(network: ResolvedNetwork, at: At) -> Iterator[Diagnostic]:
    spec = network.spec
    path: DataPath = network.path
    family = spec.topology
    given = spec.model_fields_set
    for owner, keys in OWN_KEYS.items():
        if owner == family:
            continue
        for key in keys:
            if key in given:
                yield at(
                    f"{key} belongs to topology: {owner}; this network is topology: {family}",
                    (*path, key),
                    f"remove {key}, or set topology: {owner}",
                    key=True,
                )
    needed = REQUIRED.get(family)
    if needed is not None and needed not in given:
        example = "groups: 4" if needed == "groups" else "dimensions: [4, 4, 4]"
        yield at(
            f"topology: {family} needs {needed}",
            (*path, "topology"),
            f"add {needed} to this network, e.g. {example}",
        )
    if spec.subnet_manager.routing_engine == "torus-2QoS" and family != TORUS:
        yield at(
            "torus-2QoS routes a torus, from the torus-2QoS.conf fabricc writes for one; this "
            f"network is topology: {family}",
            (*path, "subnet_manager", "routing_engine"),
            "use routing_engine: auto, or topology: torus",
        )
    if family == FAT_TREE:
        return
    if network.fabric == "ethernet" and family not in ETHERNET_TOPOLOGIES:
        yield at(
            f"Ethernet networks are configured as eBGP over leaf-spine links and are built as "
            f"{' or '.join(ETHERNET_TOPOLOGIES)}; {family} is built for InfiniBand",
            (*path, "topology"),
            f"use fabric: infiniband for {family}, or topology: fat-tree",
        )
    if spec.role == "oob":
        yield at(
            "the out-of-band network is built as a fat-tree of access switches",
            (*path, "topology"),
            "remove topology from the out-of-band network",
        )
    if spec.uplink_to is not None:
        yield at(
            f"uplink_to joins the top tier of a fat-tree to another network; a {family} "
            "network has no top tier",
            (*path, "uplink_to"),
            "remove uplink_to, or set topology: fat-tree",
            key=True,
        )
