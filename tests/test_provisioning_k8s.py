"""Kubernetes feed: the NVIDIA Network Operator objects and node labels are valid against schemas
written from the CRD reference (schemas/k8s/), their embedded JSON configs against the plugins'
documented formats, and they carry the design: one RDMA resource and one network per rail (and
plane), rail interfaces named by udev from the catalog's RDMA devices, each RoCE node's own /31
per rail, topology labels matching the Slurm tree and the NVLink domains.
"""

from __future__ import annotations

import ipaddress
import json
import re
from pathlib import Path
from typing import Any

import pytest

from fabricc.emit.provisioning.common import groups, host_leaves, is_gpu_host
from fabricc.ir import ENDPOINT_LEAF
from tests.provisioning_support import provisioning, schema_errors, yaml_documents
from tests.support import EXAMPLE_NAMES, EXAMPLES, compile_text, compiled

SCHEMA = {
    "NicClusterPolicy": "k8s/nicclusterpolicy.schema.json",
    "IPoIBNetwork": "k8s/secondary-network.schema.json",
    "HostDeviceNetwork": "k8s/secondary-network.schema.json",
    "MacvlanNetwork": "k8s/secondary-network.schema.json",
    "CIDRPool": "k8s/secondary-network.schema.json",
    "Node": "k8s/node-labels.schema.json",
}
# a rail's netdev by the PCI address of its NIC function, or (no host topology) its RDMA device
UDEV = re.compile(
    r"^ACTION==\"add\", SUBSYSTEM==\"net\", (?:KERNELS==\"(\S+)\"|PROGRAM=\"/bin/sh -c "
    r"'ls /sys/class/net/%k/device/infiniband'\", RESULT==\"(\S+)\"), NAME==?\"(\S+)\"$"
)


def documents(example: str) -> dict[str, list[Any]]:
    files = provisioning(example)
    return {
        name: yaml_documents(files[f"k8s/{name}"])
        for name in ("nic-cluster-policy.yaml", "networks.yaml", "node-labels.yaml")
    }


def design_rails(example: str) -> dict[tuple[int, int], dict[str, str]]:
    """(rail, plane) -> host -> host address (or '' on InfiniBand), from the cabling."""
    fabric, _ = compiled(example)
    network = next(n for n in fabric.networks if host_leaves(fabric, n))
    rails: dict[tuple[int, int], dict[str, str]] = {}
    for link in fabric.links_of(network):
        if link.kind == ENDPOINT_LEAF and is_gpu_host(fabric, fabric.devices[link.a]):
            assert link.rail is not None
            rails.setdefault((link.rail, link.plane or 0), {})[link.a] = link.a_ip or ""
    return rails


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_objects_match_the_crd_schemas(example: str) -> None:
    docs = documents(example)
    for name, items in docs.items():
        assert items, name
        for doc in items:
            assert schema_errors(SCHEMA[doc["kind"]], doc) == [], (name, doc["metadata"])
    (policy,) = docs["nic-cluster-policy.yaml"]
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert schema_errors("k8s/rdma-shared-device-plugin-config.schema.json", config) == []
    if "sriovDevicePlugin" in policy["spec"]:
        sriov = json.loads(policy["spec"]["sriovDevicePlugin"]["config"])
        assert schema_errors("k8s/sriov-device-plugin-config.schema.json", sriov) == []
    for doc in docs["networks.yaml"]:
        if "ipam" in doc["spec"]:
            ipam = json.loads(doc["spec"]["ipam"])
            assert schema_errors("k8s/cni-ipam.schema.json", ipam) == []
    # the schemas bite: an unknown field and a bad label value are refused
    broken = dict(policy, spec={**policy["spec"], "rdmaSharedDevicePlugn": {}})
    assert schema_errors("k8s/nicclusterpolicy.schema.json", broken)
    node = docs["node-labels.yaml"][0]
    bad = {**node, "metadata": {**node["metadata"], "labels": {"a/b": "not ok!"}}}
    assert schema_errors("k8s/node-labels.schema.json", bad)


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_one_resource_and_network_per_rail(example: str) -> None:
    fabric, _ = compiled(example)
    files = provisioning(example)
    docs = documents(example)
    rails = design_rails(example)
    (policy,) = docs["nic-cluster-policy.yaml"]
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    interfaces = [r["selectors"]["ifNames"] for r in config["configList"]]
    assert len(interfaces) == len(rails) and all(len(i) == 1 for i in interfaces)
    names = {i[0] for i in interfaces}
    # udev names each rail's RDMA device of every node model as the resource selects it
    models = {fabric.devices[h].model for hosts in rails.values() for h in hosts}
    for model in models:
        rules = [UDEV.match(line) for line in files[f"k8s/udev/{model}.rules"].splitlines()[2:]]
        assert all(rules)
        renamed = {m.group(3): m.group(1) or m.group(2) for m in rules if m}
        topology = fabric.loaded.catalog.catalog.host_topologies.get(model)
        if topology is not None:  # every rail function of a known PCI tree by its bus id
            busids = {n.busid for n in topology.nic_nodes().values()}
            assert set(renamed.values()) <= busids
        assert set(renamed) == names
        assert len(set(renamed.values())) == len(renamed)  # one device per rail and plane
    networks = [d for d in docs["networks.yaml"] if d["kind"] != "CIDRPool"]
    assert sorted(d["metadata"]["name"] for d in networks) == sorted(names)
    pools = {d["metadata"]["name"]: d for d in docs["networks.yaml"] if d["kind"] == "CIDRPool"}
    network = next(n for n in fabric.networks if host_leaves(fabric, n))
    ib = fabric.loaded.networks[network].fabric == "infiniband"
    ranges = []
    allocated: set[tuple[str, str, str]] = set()  # node, host address, gateway
    for doc in networks:
        ipam = json.loads(doc["spec"]["ipam"])
        if doc["kind"] == "IPoIBNetwork":
            ranges.append(ipaddress.ip_network(ipam["range"]))
            continue
        assert doc["kind"] == "HostDeviceNetwork"
        # each node once per rail, with its own /31: the host end is the address besides the gateway
        pool = pools[ipam["poolName"]]["spec"]
        nodes = [a["nodeName"] for a in pool["staticAllocations"]]
        assert len(nodes) == len(set(nodes))
        for allocation in pool["staticAllocations"]:
            prefix = ipaddress.ip_network(allocation["prefix"])
            assert prefix.prefixlen == 31 and allocation["gateway"] in {str(a) for a in prefix}
            (host,) = {str(a) for a in prefix} - {allocation["gateway"]}
            allocated.add((allocation["nodeName"], host, allocation["gateway"]))
    designed = {
        (link.a, str(link.a_ip), str(link.b_ip))
        for link in fabric.links_of(network)
        if link.kind == ENDPOINT_LEAF and link.a_ip and is_gpu_host(fabric, fabric.devices[link.a])
    }
    assert allocated == designed
    for a in ranges:  # IPoIB ranges of different rails do not overlap
        assert sum(a.overlaps(b) for b in ranges) == 1
    assert bool(ranges) == ib


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_node_labels_follow_the_topology(example: str) -> None:
    fabric, _ = compiled(example)
    network = next(n for n in fabric.networks if host_leaves(fabric, n))
    labels = {
        d["metadata"]["name"]: d["metadata"]["labels"]
        for d in documents(example)["node-labels.yaml"]
    }
    assert sorted(labels) == sorted(host_leaves(fabric, network))
    for group in groups(fabric, network):
        for host in group.hosts:
            assert labels[host]["network.topology.nvidia.com/leaf"] == group.name
            assert labels[host]["topology.fabricc.io/rack"] == fabric.devices[host].rack
    for domain in fabric.nvlink_domains:
        for member in domain.members:
            if member in labels and len(domain.members) > 1:
                assert labels[member]["network.topology.nvidia.com/accelerator"] == domain.name
            elif member in labels:
                assert "network.topology.nvidia.com/accelerator" not in labels[member]


def test_a_fabric_that_is_not_rail_optimized_still_has_rails(tmp_path: Path) -> None:
    """A host's k-th cable is its rail k: every GPU host of roce-lab has two NICs."""
    text = (EXAMPLES / "roce-lab.yaml").read_text()
    text = text.replace("    os: sonic\n", "    os: sonic\n    rail_optimized: false\n")
    _, artifacts = compile_text(text, tmp_path)
    files = dict(artifacts)
    policy = yaml_documents(str(files["provisioning/k8s/nic-cluster-policy.yaml"]))[0]
    config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
    assert [r["resourceName"] for r in config["configList"]] == ["rdma_rail1", "rdma_rail2"]


def test_a_hosts_pool_too_small_for_ipoib_ranges_gives_no_ipoib_networks(tmp_path: Path) -> None:
    text = (EXAMPLES / "gb200-nvl72-su.yaml").read_text() + "\naddressing:\n  hosts: 10.9.0.0/30\n"
    _, artifacts = compile_text(text, tmp_path)
    files = dict(artifacts)
    networks = yaml_documents(str(files["provisioning/k8s/networks.yaml"]))
    assert not [d for d in networks if d["kind"] == "IPoIBNetwork"]
