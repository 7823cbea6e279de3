"""Emit stage, configs: per-node RoCE NIC settings that match the switches.

Consumes the nodes attached to routed ethernet (RoCE) networks, their link ends (addresses from
the IR), each network's QoS plan and MTU, and the node model's host topology (PCI bus ids of its
NIC functions); produces configs/hosts/<node>.sh: one table of the node's NICs and one loop that,
for each, finds the netdev at run time (by PCI address - the catalog port's own, else its host
topology's - else RDMA device, else the catalog's netdev, or an `IF_<port>` variable), sets
the MTU of the network (the RoCE path MTU is the largest of 1024..4096 below it), the trust mode
(dscp), DSCP -> priority map, PFC priority, ECN on the RoCE priority, CNP DSCP and priority, the
RDMA-CM ToS byte, the /31 address with a per-NIC routing table towards its leaf, and for GPU
nodes /etc/nccl.conf with NCCL_IB_TC = DSCP << 2 and the RDMA devices the compute NICs were
found to have. A NIC the host does not show is reported and skipped, so the others are
configured all the same. The values are the ones the switch configs are generated from, so NIC
and switch agree.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.index import point_to_point
from fabricc.emit.configs.qos import QosPlan
from fabricc.emit.provisioning.common import port_devices
from fabricc.emit.templating import render, render_framed
from fabricc.ir import ENDPOINT_LEAF, Device, Fabric

# NCCL_SOCKET_IFNAME without an in-band network: exact names NCCL must not bootstrap over (the
# loopback, Docker's and libvirt's default bridges), to which the script adds its RoCE netdevs
SOCKET_EXCLUDE = "lo,docker0,virbr0"
TABLE_BASE = 100  # per-NIC policy routing tables: 100, 101, ...
UNKNOWN = "-"  # a field of the NIC table the catalog does not give


@dataclass(slots=True)  # (not frozen: a frozen dataclass sets each field by a call, per NIC)
class HostNic:
    network: str
    port: str
    rdma_device: str | None
    netdev: str | None
    pci: str | None  # PCI address of the NIC function (host topology)
    address: str  # with prefix length
    source: str
    gateway: str
    table: int
    leaf: str  # far end, as the leaf names its port
    compute: bool
    mtu: int
    qos: QosPlan

    @property
    def variable(self) -> str:
        """The environment variable that names the NIC's netdev by hand: IF_<port>."""
        return port_variable(self.port)

    def row(self, plan: int) -> str:
        """The NIC's line of the script's table (formatted here, not by a template per NIC:
        thousands of hosts, several NICs each)."""
        return (
            f"{self.port} {port_variable(self.port)} {self.pci or UNKNOWN} "
            f"{self.rdma_device or UNKNOWN} {self.netdev or UNKNOWN} {self.address} "
            f"{self.source} {self.gateway} {self.table} {self.mtu} {plan} "
            f"{'yes' if self.compute else 'no'} {self.leaf}\n"
        )


@functools.lru_cache(maxsize=1 << 10)
def port_variable(port: str) -> str:
    """IF_<port>, the port's name with every character but letters and digits as `_` (a few
    names per node model, asked per NIC)."""
    return "IF_" + "".join(c if c.isalnum() else "_" for c in port)


@functools.lru_cache(maxsize=64)
def qos_function(plan: QosPlan, number: int) -> str:
    """templates/host/_nic_qos.j2 for one QoS plan: the shell function qos<number>."""
    return render("host/_nic_qos.j2", qos=plan, number=number)


def pci_addresses(fabric: Fabric, model: str) -> dict[str, str]:
    """RDMA device -> PCI address of the NIC functions in the model's host topology."""

    def compute() -> dict[str, str]:
        topology = fabric.loaded.catalog.catalog.host_topologies.get(model)
        if topology is None:
            return {}
        return {name: node.busid for name, node in topology.nic_nodes().items()}

    return fabric.derived(f"hosts.pci.{model}", compute)


def host_nics(ctx: ConfigContext, device: Device) -> list[HostNic]:
    """The node's NICs on routed (RoCE) networks, with their addresses, leaf and QoS plan.
    A port's devices come from the fabric's port_devices, a network's QoS plan and MTU from the
    context: each is looked up once, not per NIC."""
    of_port = port_devices(ctx.fabric)
    # (model, port) -> (RDMA device, netdev, PCI address): the same few per node model
    functions: dict[tuple[str, str], tuple[str | None, str | None, str | None]] = (
        ctx.fabric.derived("hosts.functions", dict)
    )
    nics: list[HostNic] = []
    routed = ctx.routed_switch
    networks = ctx.fabric.loaded.networks
    plans: dict[str, tuple[bool, int, QosPlan]] = {}
    for end in ctx.ends(device.name):
        if end.kind != ENDPOINT_LEAF or not end.upward or end.local_ip is None:
            continue
        if end.far_ip is None or not routed(end.far):
            continue
        port = (device.model, end.port)
        found = functions.get(port)
        if found is None:
            rdma, netdev = of_port[port]
            model = ctx.catalog.nodes[device.model]
            pci = model.port_pci(end.port) or (
                pci_addresses(ctx.fabric, device.model).get(rdma) if rdma is not None else None
            )
            found = functions[port] = (rdma, netdev, pci)
        network = end.link.network
        plan = plans.get(network)
        if plan is None:
            spec = networks[network].spec
            plan = plans[network] = (spec.role == "compute", spec.port_mtu, ctx.qos(network))
        nics.append(
            HostNic(
                network,
                end.port,
                *found,
                point_to_point(end.local_ip)[0],
                end.local_ip,
                end.far_ip,
                TABLE_BASE + len(nics),
                ctx.far_end(end),
                *plan,
            )
        )
    return nics


def host_file(ctx: ConfigContext, device: Device, nics: list[HostNic]) -> Artifact:
    gpus = ctx.catalog.nodes[device.model].gpus > 0
    # by value: networks with equal plans share one shell function
    plans = list(dict.fromkeys(n.qos for n in nics))
    number = {plan: i for i, plan in enumerate(plans, 1)}
    compute = [n for n in nics if n.compute]
    nccl_tc = sorted({n.qos.roce_tos for n in compute})
    networks = ctx.fabric.loaded.networks
    inband_networks = ctx.fabric.derived(
        "hosts.inband", lambda: {n for n, net in networks.items() if net.spec.role == "inband"}
    )
    inband = any(e.link.network in inband_networks for e in ctx.ends(device.name))
    text = render_framed(
        "host/roce.sh.j2",
        {
            "design": ctx.fabric.name,
            "nccl": gpus and bool(compute),
            "nccl_tc": nccl_tc[0] if nccl_tc else None,
            "socket_exclude": None if inband else SOCKET_EXCLUDE,
        },
        host=device.name,
        qos_functions="".join(qos_function(plan, number[plan]) for plan in plans),
        rows="".join([nic.row(number[nic.qos]) for nic in nics]),
    )
    return f"configs/hosts/{device.name}.sh", text
