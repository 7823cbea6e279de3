"""Check stage: every InfiniBand subnet has a subnet-manager host, or a warning names the subnet.

Consumes a Fabric; produces warnings. An InfiniBand subnet is one plane of an IB network (one
rail leaf and plane on a rail-only network, which no switch joins); its SM hosts are the nodes of
the network's subnet_manager.sm_nodes groups cabled into it (UFM appliances, management nodes),
master first with sm_priority 15 and standbys counting down (configs/<subnet>/opensm.conf). A
subnet with none comes up only if someone runs an SM there - a host, or the SM embedded in a
managed switch - which the design does not say, so the build warns and names the subnet.
"""

from __future__ import annotations

from fabricc.errors import Diagnostic, warning
from fabricc.ir import ENDPOINT_LEAF, Fabric, NetworkTopology
from fabricc.spec.topology import RAIL_ONLY
from fabricc.spec.yamlsource import format_path


def subnet_name(network: str, plane: int | None, rail: int | None) -> str:
    """The subnet's name as its configs folder spells it (configs/<name>-sm)."""
    return (
        network
        + (f"-plane{plane + 1}" if plane is not None else "")
        + (f"-rail{rail + 1}" if rail is not None else "")
    )


def subnet_rails(topology: NetworkTopology) -> int:
    """Subnets per plane: rail-only has no switch joining two rails, so every rail leaf of a
    plane is a subnet of its own; every other topology has one subnet per plane."""
    if topology.topology != RAIL_ONLY:
        return 1
    return len(topology.switches.get("leaf", [])) // topology.planes


def check_subnet_managers(fabric: Fabric) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    loaded = fabric.loaded
    for name, network in loaded.networks.items():
        if network.fabric != "infiniband" or name not in fabric.networks:
            continue
        topology = fabric.networks[name]
        planes = topology.planes
        rails = subnet_rails(topology)
        sm_groups = set(network.spec.subnet_manager.sm_nodes)
        hosts: dict[tuple[int, int], set[str]] = {
            (p, r): set() for p in range(planes) for r in range(rails)
        }
        for link in fabric.links_of(name):
            if link.kind != ENDPOINT_LEAF:
                continue
            host, leaf = fabric.devices[link.a], fabric.devices[link.b]
            if host.group in sm_groups:
                key = (leaf.plane or 0, (leaf.rail or 0) if rails > 1 else 0)
                hosts[key].add(host.name)
        bare = [
            subnet_name(name, p if planes > 1 else None, r if rails > 1 else None)
            for (p, r), names in sorted(hosts.items())
            if not names
        ]
        if not bare:
            continue
        path = (*network.path, "subnet_manager", "sm_nodes")
        shown = ", ".join(bare[:4]) + (f" and {len(bare) - 4} more" if len(bare) > 4 else "")
        subject = f"subnet {shown} has" if len(bare) == 1 else f"subnets {shown} have"
        found.append(
            warning(
                f"InfiniBand {subject} no subnet-manager host (network {name!r}): no port comes "
                "up until an SM runs there",
                path=format_path(path),
                location=loaded.source.value(path),
                hint="name the node groups that run the SM (UFM appliances, management nodes "
                "cabled into this network) in subnet_manager.sm_nodes - the first is the master, "
                "the others standbys - or enable the SM embedded in a managed switch of the "
                "subnet",
            )
        )
    return found
