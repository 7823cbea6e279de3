"""Emit stage, provisioning: NVIDIA Network Operator objects and topology node labels.

Consumes the compute networks of the Fabric IR (rails and planes of the GPU hosts' cables, their
RDMA devices from the catalog, routed /31 addresses), the hosts pool and the scheduling groups;
produces provisioning/k8s/:
- udev/<node model>.rules: names the netdev of each rail's NIC function (matched by its PCI
  address from the host topology, else by its RDMA device) `rail<r>` (`rail<r>p<p>` on
  multi-plane fabrics), so every node model shows the same rail interface names;
- nic-cluster-policy.yaml: NicClusterPolicy (mellanox.com/v1alpha1) with the RDMA shared device
  plugin, one resource per rail (selected by that interface name), Multus, the CNI plugins and
  the IPAM plugins; RoCE designs add the SR-IOV device plugin exposing each rail's PF;
- networks.yaml: per rail an IPoIBNetwork (InfiniBand; a whereabouts range per rail, carved from
  the hosts pool, which only routed RoCE uses otherwise) or a HostDeviceNetwork (RoCE; the rail's
  PF moves into the pod with the node's own /31 from the design: an nv-ipam CIDRPool with one
  static allocation per node, gateway the leaf end - whereabouts hands out cluster-wide ranges
  and cannot give each node its own routed /31);
- node-labels.yaml: per GPU host a Node with its labels: topograph's
  network.topology.nvidia.com/{accelerator,leaf,spine,core} (NVLink domain; the Slurm switch
  levels of provisioning.slurm) and topology.fabricc.io/{rack,su,leaf-group,nvlink-domain}.
Image repositories and tags are those of the Network Operator release the spec names
(outputs.k8s.network_operator; provisioning/network_operator.py).
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass, field
from typing import Any

import yaml

from fabricc.emit import Artifact
from fabricc.emit.configs.index import point_to_point
from fabricc.emit.provisioning.common import (
    compute_networks,
    groups,
    host_leaves,
    host_links,
    multi_node_domains,
    port_devices,
)
from fabricc.emit.provisioning.network_operator import Release, image
from fabricc.emit.provisioning.slurm import tree
from fabricc.emit.provisioning.yamldocs import dump_documents
from fabricc.ir import Fabric

NAMESPACE = "nvidia-network-operator"
RESOURCE_PREFIX = "rdma"
RDMA_HCA_MAX = 63
TOPOGRAPH = "network.topology.nvidia.com"
FABRICC = "topology.fabricc.io"


@dataclass(slots=True)
class Rail:
    network: str
    rail: int  # 0-based
    plane: int  # 0-based
    name: str  # interface name on every node
    fabric: str  # infiniband | ethernet
    devices: dict[str, str] = field(default_factory=dict)  # node model -> RDMA device
    ends: list[tuple[str, str, str]] = field(default_factory=list)  # node, host ip, leaf ip

    @property
    def resource(self) -> str:
        return f"rdma_{self.name}"


def rail_stems(fabric: Fabric) -> list[str]:
    """The stem of the rail interface names the udev rules give, per compute network in spec
    order: `rail` (`n<i>rail` with several compute networks), then the rail number and, on
    multi-plane fabrics, `p<plane>`. NCCL's socket exclusion reads the same stems."""
    networks = compute_networks(fabric)
    return [f"n{i + 1}rail" if len(networks) > 1 else "rail" for i in range(len(networks))]


def rails(fabric: Fabric) -> list[Rail]:
    networks = compute_networks(fabric)
    stems = rail_stems(fabric)
    of_port = port_devices(fabric)
    found: dict[tuple[str, int, int], Rail] = {}
    for index, network in enumerate(networks):
        planes = fabric.networks[network].planes
        kind = fabric.loaded.networks[network].fabric or "ethernet"
        seen: dict[tuple[str, int], int] = {}  # (host, plane) -> its cables so far
        for link in host_links(fabric, network):
            host = fabric.devices[link.a]
            plane = link.plane or 0
            # not rail-optimized: a host's k-th cable of a plane is its rail k
            number = link.rail if link.rail is not None else seen.get((host.name, plane), 0)
            seen[(host.name, plane)] = seen.get((host.name, plane), 0) + 1
            key = (network, number, plane)
            if key not in found:
                name = f"{stems[index]}{number + 1}" + (f"p{plane + 1}" if planes > 1 else "")
                found[key] = Rail(network, number, plane, name, kind)
            rail = found[key]
            rdma, _ = of_port[host.model, link.a_port]
            if rdma is not None:
                rail.devices.setdefault(host.model, rdma)
            if link.a_ip is not None and link.b_ip is not None:
                rail.ends.append((host.name, link.a_ip, link.b_ip))
    return [found[k] for k in sorted(found)]


def by_rdma_device(rdma: str) -> str:
    """A udev match for the netdev whose PCI function holds the RDMA device `rdma`."""
    return f'PROGRAM="/bin/sh -c \'ls /sys/class/net/%k/device/infiniband\'", RESULT=="{rdma}"'


def rename_rule(match: str, name: str) -> str:
    """The udev rule that names the netdev `match` selects (shared with netplan.py)."""
    return f'ACTION=="add", SUBSYSTEM=="net", {match}, NAME="{name}"'


def udev_rules(fabric: Fabric, found: list[Rail]) -> list[Artifact]:
    """A rail's netdev is matched by the PCI address of its NIC function where the model's host
    topology gives one (the kernel numbers RDMA devices in probe order, so the second function
    of a ConnectX-8 split across planes need not be the mlx5_<n> the catalog assumes), else by
    its RDMA device."""
    by_model: dict[str, list[str]] = {}
    topologies = fabric.loaded.catalog.catalog.host_topologies
    for rail in found:
        for model, rdma in sorted(rail.devices.items()):
            topology = topologies.get(model)
            node = topology.nic_nodes().get(rdma) if topology is not None else None
            match = f'KERNELS=="{node.busid}"' if node is not None else by_rdma_device(rdma)
            by_model.setdefault(model, []).append(rename_rule(match, rail.name))
    return [
        (
            f"provisioning/k8s/udev/{model}.rules",
            f"# Rail interface names of {model} ({fabric.name}), generated by fabricc.\n"
            "# Install as /etc/udev/rules.d/70-fabricc-rails.rules on the nodes.\n"
            + "\n".join(lines)
            + "\n",
        )
        for model, lines in sorted(by_model.items())
    ]


def nic_cluster_policy(found: list[Rail], release: Release) -> dict[str, object]:
    def _image(key: str) -> dict[str, object]:
        return image(release, key)

    rdma_config = {
        "configList": [
            {
                "resourceName": rail.resource,
                "rdmaHcaMax": RDMA_HCA_MAX,
                "selectors": {"ifNames": [rail.name]},
            }
            for rail in found
        ]
    }
    spec: dict[str, object] = {
        "rdmaSharedDevicePlugin": {
            **_image("rdmaSharedDevicePlugin"),
            "config": json.dumps(rdma_config, indent=2),
        },
    }
    roce = [r for r in found if r.fabric != "infiniband"]
    if roce:
        sriov = {
            "resourceList": [
                {
                    "resourcePrefix": "nvidia.com",
                    "resourceName": f"hostdev_{rail.name}",
                    "selectors": {"vendors": ["15b3"], "pfNames": [rail.name], "isRdma": True},
                }
                for rail in roce
            ]
        }
        spec["sriovDevicePlugin"] = {
            **_image("sriovDevicePlugin"),
            "config": json.dumps(sriov, indent=2),
        }
    secondary: dict[str, object] = {
        "cniPlugins": _image("cniPlugins"),
        "multus": _image("multus"),
        "ipamPlugin": _image("ipamPlugin"),
    }
    if any(r.fabric == "infiniband" for r in found):
        secondary["ipoib"] = _image("ipoib")
    spec["secondaryNetwork"] = secondary
    if roce:
        spec["nvIpam"] = {**_image("nvIpam"), "enableWebhook": False}
    return {
        "apiVersion": "mellanox.com/v1alpha1",
        "kind": "NicClusterPolicy",
        "metadata": {"name": "nic-cluster-policy"},
        "spec": spec,
    }


def ipoib_ranges(fabric: Fabric, found: list[Rail]) -> dict[str, str]:
    """One range per InfiniBand rail: the hosts pool split in the fewest equal subnets."""
    ib = [r for r in found if r.fabric == "infiniband"]
    if not ib:
        return {}
    pool = ipaddress.ip_network(fabric.loaded.spec.addressing.hosts)
    bits = (len(ib) - 1).bit_length()
    if pool.max_prefixlen - pool.prefixlen < bits + 2:
        return {}  # too small a pool to give every rail a range: no IPoIB networks
    subnets = list(pool.subnets(prefixlen_diff=bits))
    return {rail.name: str(subnets[i]) for i, rail in enumerate(ib)}


def networks(fabric: Fabric, found: list[Rail]) -> list[dict[str, object]]:
    ranges = ipoib_ranges(fabric, found)
    docs: list[dict[str, object]] = []
    for rail in found:
        if rail.fabric == "infiniband":
            if rail.name not in ranges:
                continue
            ipam = {"type": "whereabouts", "range": ranges[rail.name]}
            docs.append(
                {
                    "apiVersion": "mellanox.com/v1alpha1",
                    "kind": "IPoIBNetwork",
                    "metadata": {"name": rail.name},
                    "spec": {
                        "networkNamespace": "default",
                        "master": rail.name,
                        "ipam": json.dumps(ipam),
                    },
                }
            )
            continue
        pool = f"pool-{rail.name}"
        hosts_pool = fabric.loaded.spec.addressing.hosts
        docs.append(
            {
                "apiVersion": "nv-ipam.nvidia.com/v1alpha1",
                "kind": "CIDRPool",
                "metadata": {"name": pool, "namespace": NAMESPACE},
                "spec": {
                    "cidr": hosts_pool,
                    "perNodeNetworkPrefix": 31,
                    "staticAllocations": [
                        {
                            "nodeName": node,
                            "prefix": point_to_point(host_ip)[1],
                            "gateway": leaf_ip,
                        }
                        for node, host_ip, leaf_ip in rail.ends
                    ],
                },
            }
        )
        ipam = {"type": "nv-ipam", "poolName": pool, "poolType": "cidrpool"}
        docs.append(
            {
                "apiVersion": "mellanox.com/v1alpha1",
                "kind": "HostDeviceNetwork",
                "metadata": {"name": rail.name},
                "spec": {
                    "networkNamespace": "default",
                    "resourceName": f"hostdev_{rail.name}",
                    "ipam": json.dumps(ipam),
                },
            }
        )
    return docs


def node_labels(fabric: Fabric) -> list[dict[str, object]]:
    labels: dict[str, dict[str, str]] = {}
    # NVLink domains that span nodes (an NVL72 rack); a node-scope domain is the node itself
    domains = {m: d.name for d in multi_node_domains(fabric) for m in d.members}
    for network in compute_networks(fabric)[:1]:
        switches = tree(fabric, network)
        parent = {child: s.name for s in switches for child in s.switches}
        for group in groups(fabric, network):
            spine = parent.get(group.name)
            core = parent.get(spine) if spine else None
            for host in group.hosts:
                entry = labels.setdefault(host, {})
                entry[f"{TOPOGRAPH}/leaf"] = group.name
                if spine:
                    entry[f"{TOPOGRAPH}/spine"] = spine
                if core:
                    entry[f"{TOPOGRAPH}/core"] = core
                entry[f"{FABRICC}/leaf-group"] = group.name
        for host in host_leaves(fabric, network):
            labels.setdefault(host, {})
    docs: list[dict[str, object]] = []
    for name, entry in labels.items():
        device = fabric.devices[name]
        if name in domains:
            entry[f"{TOPOGRAPH}/accelerator"] = domains[name]
            entry[f"{FABRICC}/nvlink-domain"] = domains[name]
        if device.rack is not None:
            entry[f"{FABRICC}/rack"] = device.rack
        if device.su is not None:
            entry[f"{FABRICC}/su"] = str(fabric.su_label(device.su))
        docs.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": dict(sorted(entry.items()))},
            }
        )
    return docs


# libyaml's emitter where PyYAML has it (the same text, several times faster)
_Base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


_STR, _INT = "tag:yaml.org,2002:str", "tag:yaml.org,2002:int"
_MAP, _SEQ = "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _Dumper(_Base):  # type: ignore[misc,valid-type]
    """Multi-line strings (the JSON configs) as literal blocks. The documents' own types (dict,
    list, str, int) get the nodes PyYAML's representer would give them (block style, aliases for
    a repeated dict or list), built directly: its generic dispatch per scalar was most of this
    emitter's time at scale."""

    def represent_data(self, data: Any) -> yaml.Node:
        kind = type(data)
        if kind is str:
            return yaml.ScalarNode(_STR, data, style="|" if "\n" in data else None)
        if kind is int:
            return yaml.ScalarNode(_INT, str(data))
        if (kind is not dict and kind is not list) or self.default_flow_style is not False:
            return super().represent_data(data)  # type: ignore[no-any-return]
        known = self.represented_objects.get(id(data))
        if known is not None:
            return known  # type: ignore[no-any-return]
        self.object_keeper.append(data)
        node: yaml.MappingNode | yaml.SequenceNode
        if kind is dict:
            pairs: list[tuple[yaml.Node, yaml.Node]] = []
            node = self.represented_objects[id(data)] = yaml.MappingNode(
                _MAP, pairs, flow_style=False
            )
            for key, value in data.items():
                pairs.append((self.represent_data(key), self.represent_data(value)))
        else:
            items: list[yaml.Node] = []
            node = self.represented_objects[id(data)] = yaml.SequenceNode(
                _SEQ, items, flow_style=False
            )
            items.extend(self.represent_data(item) for item in data)
        return node

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        """The tag a scalar would resolve to, which decides whether it may be written plain:
        the same answer for the same text, so kept (keys, labels and values repeat in every
        node's document) up to a bound."""
        if kind is not yaml.ScalarNode or self.yaml_path_resolvers:
            return super().resolve(kind, value, implicit)  # type: ignore[no-any-return]
        key = (value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = super().resolve(kind, value, implicit)
            if len(_RESOLVED) < _RESOLVED_MAX:
                _RESOLVED[key] = tag
        return tag


_RESOLVED: dict[tuple[str, Any], str] = {}
_RESOLVED_MAX = 1 << 16


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _documents(header: str, docs: list[dict[str, object]]) -> str:
    return header + dump_documents(docs, _Dumper)


def emit(fabric: Fabric) -> list[Artifact]:
    found = rails(fabric)
    if not found:
        return []
    head = f"# {{}} of {fabric.name}, generated by fabricc.\n"
    release = fabric.loaded.spec.outputs.k8s.network_operator
    policy = f"NVIDIA Network Operator {release} NicClusterPolicy"
    return [
        *udev_rules(fabric, found),
        (
            "provisioning/k8s/nic-cluster-policy.yaml",
            _documents(head.format(policy), [nic_cluster_policy(found, release)]),
        ),
        (
            "provisioning/k8s/networks.yaml",
            _documents(head.format("Per-rail secondary networks"), networks(fabric, found)),
        ),
        (
            "provisioning/k8s/node-labels.yaml",
            _documents(head.format("Topology labels of the GPU nodes"), node_labels(fabric)),
        ),
    ]
