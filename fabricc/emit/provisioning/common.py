"""Emit helper, provisioning: the views of the Fabric IR that several provisioning feeds share.

Consumes the Fabric IR; produces the compute hosts (nodes and compute trays with GPUs, in device
order), each host's compute leaves, the scheduling groups of a compute network (leaves joined by
the hosts they share: a rail-optimized scalable unit, or a single leaf), the NVLink domain of a
host, the NVLink domains that span hosts, and Slurm hostlist expressions (`dgx[001-004,007]`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from fabricc.ir import ENDPOINT_LEAF, Device, Fabric, Link, NvlinkDomain

HOST_KINDS = ("node", "tray")
_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compute_networks(fabric: Fabric) -> list[str]:
    """Compute networks present in the design, in spec order."""
    return [
        name
        for name, network in fabric.loaded.networks.items()
        if network.spec.role == "compute" and name in fabric.networks
    ]


def is_gpu_host(fabric: Fabric, device: Device) -> bool:
    nodes = fabric.loaded.catalog.catalog.nodes
    return device.kind in HOST_KINDS and device.model in nodes and nodes[device.model].gpus > 0


def host_links(fabric: Fabric, network: str) -> list[Link]:
    """The links of `network` from a GPU host to a leaf, in link order (one scan per build)."""

    def compute() -> list[Link]:
        nodes = fabric.loaded.catalog.catalog.nodes
        gpu_models = {name for name, node in nodes.items() if node.gpus > 0}
        devices = fabric.devices
        out = []
        for link in fabric.links_of(network):
            if link.kind == ENDPOINT_LEAF:
                host = devices[link.a]
                if host.kind in HOST_KINDS and host.model in gpu_models:
                    out.append(link)
        return out

    return fabric.derived(f"provisioning.host_links.{network}", compute)


class PortDevices(dict[tuple[str, str], tuple[str | None, str | None]]):
    """(node model, port) -> (RDMA device, netdev) of that cabled port, each looked up in the
    catalog once (per link it was a search of the model's ports)."""

    def __init__(self, fabric: Fabric) -> None:
        super().__init__()
        self._nodes = fabric.loaded.catalog.catalog.nodes

    def __missing__(self, key: tuple[str, str]) -> tuple[str | None, str | None]:
        model, port = key
        found = self[key] = self._nodes[model].port_devices(port)
        return found


def port_devices(fabric: Fabric) -> PortDevices:
    return fabric.derived("provisioning.port_devices", lambda: PortDevices(fabric))


def host_leaves(fabric: Fabric, network: str) -> dict[str, list[str]]:
    """GPU host -> the leaves of `network` it is cabled to (link order), hosts in device order."""
    return fabric.derived(
        f"provisioning.host_leaves.{network}", lambda: _host_leaves(fabric, network)
    )


def _host_leaves(fabric: Fabric, network: str) -> dict[str, list[str]]:
    leaves: dict[str, dict[str, None]] = {}
    for link in host_links(fabric, network):
        leaves.setdefault(link.a, {})[link.b] = None
    order = device_order(fabric)
    return {host: list(leaves[host]) for host in sorted(leaves, key=order.__getitem__)}


def device_order(fabric: Fabric) -> dict[str, int]:
    """Device name -> its position in the design's device order, built once per build."""
    return fabric.derived(
        "provisioning.device_order", lambda: {name: i for i, name in enumerate(fabric.devices)}
    )


@dataclass(frozen=True, slots=True)
class Group:
    """Leaves joined by the hosts they share, and those hosts: the smallest switch set a job
    inside it never leaves (a rail-optimized scalable unit reaches all its leaves from every
    host; a single-homed leaf is a group of its own)."""

    name: str
    leaves: tuple[str, ...]
    hosts: tuple[str, ...]
    su: int | None
    pod: tuple[str | None, int] | None  # (leaf class series, pod in it): pods count per class


def groups(fabric: Fabric, network: str) -> list[Group]:
    """Scheduling groups of a compute network, in the order of their first host."""
    return fabric.derived(f"provisioning.groups.{network}", lambda: _groups(fabric, network))


def _components(attached: dict[str, list[str]]) -> list[tuple[list[str], list[str]]]:
    """The connected components of the graph of hosts and the leaves each is cabled to, as
    (hosts, leaves), in the order of their first host: a breadth-first walk from each host not
    yet reached."""
    hosts_of: dict[str, list[str]] = {}
    for host, leaves in attached.items():
        for leaf in leaves:
            hosts_of.setdefault(leaf, []).append(host)
    reached: set[str] = set()
    found: list[tuple[list[str], list[str]]] = []
    for first in attached:
        if first in reached:
            continue
        reached.add(first)
        hosts, leaves = [first], []
        for host in hosts:  # grows while it is walked
            for leaf in attached[host]:
                if leaf not in reached:
                    reached.add(leaf)
                    leaves.append(leaf)
                    for other in hosts_of[leaf]:
                        if other not in reached:
                            reached.add(other)
                            hosts.append(other)
        found.append((hosts, leaves))
    return found


def _groups(fabric: Fabric, network: str) -> list[Group]:
    attached = host_leaves(fabric, network)
    order = device_order(fabric)
    found = [
        (sorted(hosts, key=order.__getitem__), sorted(leaves, key=order.__getitem__))
        for hosts, leaves in _components(attached)
    ]
    sus = [_common(fabric.devices[leaf].su for leaf in leaves) for _, leaves in found]
    unique_su = len(set(sus)) == len(sus) and None not in sus
    out = []
    for index, ((hosts, leaves), su) in enumerate(zip(found, sus, strict=True)):
        if len(leaves) == 1:
            name = leaves[0]
        elif unique_su and su is not None:
            name = f"{network}-su{fabric.su_label(su)}"
        else:
            name = f"{network}-group{index + 1}"
        pod = _common_pod(fabric, leaves)
        out.append(Group(name, tuple(leaves), tuple(hosts), su, pod))
    return out


def _common_pod(fabric: Fabric, leaves: list[str]) -> tuple[str | None, int] | None:
    pods = {(fabric.devices[leaf].series, fabric.devices[leaf].pod) for leaf in leaves}
    if len(pods) != 1:
        return None
    series, pod = pods.pop()
    return None if pod is None else (series, pod)


def _common(values: Iterable[int | None]) -> int | None:
    distinct = set(values)
    return distinct.pop() if len(distinct) == 1 else None


def multi_node_domains(fabric: Fabric) -> list[NvlinkDomain]:
    """NVLink domains that span several OS instances (the trays of a rack-scale system)."""
    return [d for d in fabric.nvlink_domains if len(d.members) > 1]


def nvlink_domain_of(fabric: Fabric) -> dict[str, str]:
    """Host -> the name of its NVLink domain."""
    return {member: domain.name for domain in fabric.nvlink_domains for member in domain.members}


def hostlist(names: Iterable[str]) -> str:
    """A Slurm hostlist expression for the names: numbered names sharing a prefix and a digit
    width become ranges, `prefix[01-04,07]`; the order is by prefix, then number."""
    numbered: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in names:
        match = _NUMBERED.match(name)
        if match is None:
            plain.append(name)
            continue
        prefix, digits = match.groups()
        numbered.setdefault((prefix, len(digits)), []).append(int(digits))
    parts = sorted(set(plain))
    for (prefix, width), numbers in sorted(numbered.items()):
        values = sorted(set(numbers))
        if len(values) == 1:
            parts.append(f"{prefix}{values[0]:0{width}d}")
            continue
        ranges: list[str] = []
        start = previous = values[0]
        for value in [*values[1:], None]:
            if value is not None and value == previous + 1:
                previous = value
                continue
            ranges.append(
                f"{start:0{width}d}"
                if start == previous
                else f"{start:0{width}d}-{previous:0{width}d}"
            )
            if value is not None:
                start = previous = value
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join(parts)
