"""Load stage, part 5: cross-field rules of the spec that need no synthesis.

Consumes the validated Spec, its positions, the catalog and the resolved networks; produces
positioned Diagnostics for designs that would build but be wrong: address pools that overlap,
settings that do not apply to a network's fabric or tier count (MLAG on InfiniBand, subnet
managers on Ethernet, pod_sus without a third tier), partitions sharing a key, networks that
connect nothing, a second Ethernet in-band network (the management plan, synth/mgmtnet.py, has
one in-band gateway and pool: a second network's hosts would get none), and site parts that
name the wrong kind of catalog entry.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Protocol

from fabricc.catalog.loader import LoadedCatalog
from fabricc.errors import Diagnostic, error
from fabricc.spec.models import Spec
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.spec.topology import check_topology
from fabricc.spec.validation import did_you_mean
from fabricc.spec.yamlsource import DataPath, SourceMap, format_path

AnyNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


def check(
    spec: Spec, source: SourceMap, catalog: LoadedCatalog, networks: dict[str, ResolvedNetwork]
) -> list[Diagnostic]:
    def at(
        message: str, path: DataPath, hint: str | None = None, *, key: bool = False
    ) -> Diagnostic:
        location = source.key(path) if key else source.value(path)
        return error(message, path=format_path(path), location=location, hint=hint)

    return [
        *_site_parts(spec, catalog, at),
        *_pools(spec, networks, at),
        *_network_settings(spec, networks, at),
        *_inband_networks(networks, at),
        *check_topology(networks, at),
    ]


class _At(Protocol):
    def __call__(
        self, message: str, path: DataPath, hint: str | None = None, *, key: bool = False
    ) -> Diagnostic: ...


def _site_parts(spec: Spec, catalog: LoadedCatalog, at: _At) -> Iterator[Diagnostic]:
    parts = catalog.catalog.parts
    checked: tuple[tuple[object, str, str, DataPath], ...] = (
        (spec.site.rack, "model", "rack", ("site", "rack", "model")),
        (spec.site.rack, "pdu_model", "pdu", ("site", "rack", "pdu_model")),
        (spec.site.cooling, "cdu_model", "cdu", ("site", "cooling", "cdu_model")),
    )
    for holder, field, category, path in checked:
        name = getattr(holder, field)
        known = sorted(k for k, p in parts.items() if p.category == category)
        part = parts.get(name)
        if part is None or part.category != category:
            if part is not None:
                what = f" (it is a {part.category} part)"
            elif name in catalog.catalog.nodes or name in catalog.catalog.switches:
                what = " (it is a node or switch model)"
            else:
                what = ""
            yield at(
                f"{name!r} is not a {category} part of the catalog{what}",
                path,
                did_you_mean(name, known, f"{category} parts"),
            )


def _pools_in_use(spec: Spec, networks: dict[str, ResolvedNetwork]) -> list[str]:
    roles = {n.spec.role for n in networks.values()}
    routed = any(
        n.fabric == "ethernet" and n.spec.role in ("compute", "storage") for n in networks.values()
    )
    used = []
    if "oob" in roles:
        used.append("oob")
    if "inband" in roles:
        used.append("inband")
    if routed:
        used += ["loopbacks", "hosts"]
        if spec.addressing.p2p is not None:
            used.append("p2p")
    return used


def _pools(spec: Spec, networks: dict[str, ResolvedNetwork], at: _At) -> Iterator[Diagnostic]:
    """Pools the design draws from must not overlap, or two devices get one address."""
    pools: list[tuple[str, AnyNetwork]] = []
    for name in _pools_in_use(spec, networks):
        text = getattr(spec.addressing, name)
        pools.append((name, ipaddress.IPv4Network(text)))
    for index, (name, pool) in enumerate(pools):
        for other, other_pool in pools[:index]:
            if pool.overlaps(other_pool):
                yield at(
                    f"the {name} pool {pool} overlaps the {other} pool {other_pool}",
                    ("addressing", name),
                    f"give addressing.{name} and addressing.{other} disjoint ranges; every pool "
                    "the design uses must be separate, or two devices get one address",
                )


# Network keys that only an Ethernet network reads, and what to do instead on InfiniBand.
ETHERNET_ONLY = {
    "os": "remove os: it picks the config flavour of Ethernet switches (Cumulus NVUE or SONiC); "
    "an InfiniBand fabric is configured through its subnet manager (subnet_manager)",
    "mtu": "remove mtu: it sets Ethernet interface MTUs; the InfiniBand MTU is the partition's, "
    "set by the subnet manager",
    "qos": "remove qos: it holds lossless RoCE settings (PFC, ECN); InfiniBand is lossless by "
    "its credit-based flow control",
}


DATA_ROLES = ("compute", "storage")


def _redundancy(network: ResolvedNetwork, at: _At) -> Iterator[Diagnostic]:
    """dual_homed bonds a node to an MLAG leaf pair, which only the in-band network's L2
    leaves configure; spread_ports splits a node's routed ports over a leaf pair, which only
    the routed (BGP) Ethernet data networks do."""
    options = network.spec
    path = network.path
    routed = network.fabric == "ethernet" and options.role in DATA_ROLES
    if routed and options.dual_homed:
        yield at(
            f"dual_homed (MLAG leaf pairs, host bonds) does not apply to a routed Ethernet "
            f"{options.role} network: its leaves route every host port as its own /31 with "
            "BGP, and RoCE runs per port, not over a bond, so no MLAG, peer link or bond "
            "would be configured for the peer links it cables",
            (*path, "dual_homed"),
            "replace dual_homed: true with spread_ports: true: each node's ports land on two "
            "different leaves, each port routed on its own, so one leaf failure leaves every "
            "node reachable",
        )
    if options.spread_ports and not routed:
        what = (
            "an InfiniBand network"
            if network.fabric == "infiniband"
            else "an out-of-band network"
            if options.role == "oob"
            else "an in-band network"
        )
        yield at(
            f"spread_ports splits nodes' routed ports over leaf pairs on Ethernet compute and "
            f"storage networks; this is {what}",
            (*path, "spread_ports"),
            "remove spread_ports; an in-band network pairs its leaves with dual_homed: true "
            "(MLAG, host bonds); out-of-band hosts have one management port"
            if network.fabric == "ethernet"
            else "remove spread_ports; on InfiniBand, set endpoints.<group>.leaf_downlinks "
            "below the ports the nodes bring so that they spread over two or more leaves",
        )


def _network_settings(
    spec: Spec, networks: dict[str, ResolvedNetwork], at: _At
) -> Iterator[Diagnostic]:
    for name, network in networks.items():
        path = network.path
        options = network.spec
        if network.fabric == "infiniband" and options.dual_homed:
            yield at(
                "dual_homed (MLAG leaf pairs) is an Ethernet feature; InfiniBand has no MLAG",
                (*path, "dual_homed"),
                "remove dual_homed; InfiniBand gets redundancy from several HCA ports or planes",
            )
        yield from _redundancy(network, at)
        if network.fabric == "infiniband":
            for key, hint in ETHERNET_ONLY.items():
                if key in options.model_fields_set:
                    yield at(
                        f"{key} is a setting of Ethernet networks; this network is InfiniBand",
                        (*path, key),
                        hint,
                        key=True,
                    )
        sm = options.subnet_manager
        if network.fabric != "infiniband":
            if sm.sm_nodes:
                yield at(
                    "sm_nodes names subnet managers, which only InfiniBand networks have",
                    (*path, "subnet_manager", "sm_nodes"),
                    "remove subnet_manager from this Ethernet network",
                )
            if sm.partitions:
                yield at(
                    "partitions are InfiniBand partitions (P_Keys); this network is Ethernet",
                    (*path, "subnet_manager", "partitions"),
                    "remove subnet_manager from this Ethernet network",
                )
        if options.pod_sus is not None and options.tiers in (1, 2):
            yield at(
                f"pod_sus sizes the spine-leaf groups of a 3-tier fabric; this one has "
                f"tiers: {options.tiers}",
                (*path, "pod_sus"),
                "remove pod_sus, or set tiers: 3 (or auto)",
            )
        owners: dict[int, str] = {}
        for pname, partition in sm.partitions.items():
            if partition.pkey in owners:
                yield at(
                    f"partition {pname!r} has pkey {partition.pkey:#06x}, like "
                    f"{owners[partition.pkey]!r}",
                    (*path, "subnet_manager", "partitions", pname, "pkey"),
                    "give every partition its own pkey",
                )
            owners.setdefault(partition.pkey, pname)
        if not network.attachments and options.role != "oob":
            yield at(
                f"network {name!r} connects no node group",
                path,
                "list node groups under endpoints (or give the nodes ports of role "
                f"{options.role!r}), or remove the network",
                key=True,
            )


def _inband_networks(networks: dict[str, ResolvedNetwork], at: _At) -> Iterator[Diagnostic]:
    first = None
    for name, network in networks.items():
        if network.spec.role != "inband" or network.fabric != "ethernet":
            continue
        if first is None:
            first = name
            continue
        yield at(
            f"network {name!r} is a second Ethernet in-band network after {first!r}: the design "
            "has one in-band gateway, address pool and provisioning server (the first "
            "network's), so its hosts would have no gateway",
            (*network.path, "role"),
            f"list its node groups under networks.{first}.endpoints, or remove it",
        )
