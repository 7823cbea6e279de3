"""Emit stage, configs: per-node RoCE NIC settings that match the switches.

Consumes the nodes attached to routed ethernet (RoCE) networks, their link ends (addresses from
the IR) and each network's QoS plan; produces configs/hosts/<node>.sh: for every RoCE NIC the
trust mode (dscp), DSCP -> priority map, PFC priority, ECN (DCQCN) on the RoCE priority, CNP DSCP
and priority, the RDMA-CM ToS byte, the /31 address with a per-NIC routing table towards its leaf,
and for GPU nodes /etc/nccl.conf with NCCL_IB_TC = DSCP << 2 and the RDMA devices of the compute
NICs. The values are the ones the switch configs are generated from, so NIC and switch agree.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.index import point_to_point
from fabricc.emit.configs.qos import QosPlan
from fabricc.emit.provisioning.common import port_devices
from fabricc.emit.templating import render
from fabricc.ir import ENDPOINT_LEAF, Device

TABLE_BASE = 100  # per-NIC policy routing tables: 100, 101, ...


@dataclass(slots=True)  # (not frozen: a frozen dataclass sets each field by a call, per NIC)
class HostNic:
    network: str
    port: str
    rdma_device: str | None
    ifname: str  # netdev, or shell that finds it at run time
    address: str  # with prefix length
    source: str
    gateway: str
    table: int
    leaf: str  # far end, as the leaf names its port
    qos: QosPlan
    qos_commands: str  # the NIC's QoS commands on "$IF" (the same for every NIC of the plan)
    qos_comment: str  # the line that says what they set (the same for every NIC of the plan)

    def block(self) -> str:
        """The NIC's lines of the script, after a blank line: formatted here, not by a template
        per NIC (thousands of hosts, several NICs each)."""
        qos = self.qos
        tos = (
            f"cma_roce_tos -d {self.rdma_device} -t {qos.roce_tos}\n"
            if self.rdma_device is not None
            else ""
        )
        table = self.table
        return (
            f"\n# {self.port} on network {self.network} -> {self.leaf}\n"
            f"{self.qos_comment}"
            f"IF={self.ifname}\n"
            f"{self.qos_commands}{tos}"
            f'ip address replace {self.address} dev "$IF"\n'
            'ip link set dev "$IF" up\n'
            'sysctl -qw "net.ipv4.conf.$IF.arp_ignore=1" "net.ipv4.conf.$IF.arp_announce=2"\n'
            f'ip route replace default via {self.gateway} dev "$IF" table {table}\n'
            f"ip rule del priority {table} 2>/dev/null || true\n"
            f"ip rule add from {self.source} table {table} priority {table}\n"
        )


@functools.lru_cache(maxsize=64)
def qos_commands(plan: QosPlan) -> str:
    """templates/host/_nic_qos.j2 for one QoS plan: rendered once, written for every NIC."""
    return render("host/_nic_qos.j2", qos=plan)


@functools.lru_cache(maxsize=64)
def qos_comment(qos: QosPlan) -> str:
    return (
        f"# RoCE DSCP {qos.roce_dscp} -> priority {qos.roce_priority} (PFC), CNP DSCP "
        f"{qos.cnp_dscp} -> priority {qos.cnp_priority}, ToS {qos.roce_tos}\n"
    )


def _ifname(rdma: str | None, netdev: str | None, port: str) -> str:
    if netdev is not None:
        return netdev
    if rdma is not None:
        return f"$(netdev_of {rdma})"
    variable = "IF_" + "".join(c if c.isalnum() else "_" for c in port)
    return f"${{{variable}:?set {variable} to the netdev of port {port}}}"


def host_nics(ctx: ConfigContext, device: Device) -> list[HostNic]:
    """The node's NICs on routed (RoCE) networks, with their addresses, leaf and QoS plan.
    A port's devices come from the fabric's port_devices, a network's QoS plan from the
    context and its commands from qos_commands: each is looked up once, not per NIC."""
    of_port = port_devices(ctx.fabric)
    nics: list[HostNic] = []
    routed = ctx.routed_switch
    # network -> its plan and their texts: hashing a plan (ten fields, for the caches) per NIC
    # was a fifth of this function
    plans: dict[str, tuple[QosPlan, str, str]] = {}
    for end in ctx.ends(device.name):
        if end.kind != ENDPOINT_LEAF or not end.upward or end.local_ip is None:
            continue
        if end.far_ip is None or not routed(end.far):
            continue
        rdma, netdev = of_port[(device.model, end.port)]
        network = end.link.network
        plan = plans.get(network)
        if plan is None:
            qos = ctx.qos(network)
            plan = plans[network] = (qos, qos_commands(qos), qos_comment(qos))
        nics.append(
            HostNic(
                network,
                end.port,
                rdma,
                _ifname(rdma, netdev, end.port),
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
    compute = [n for n in nics if ctx.fabric.loaded.networks[n.network].spec.role == "compute"]
    nccl_devices = list(dict.fromkeys(n.rdma_device for n in compute if n.rdma_device))
    nccl_tc = sorted({n.qos.roce_tos for n in compute})
    text = render(
        "host/roce.sh.j2",
        design=ctx.fabric.name,
        host=device.name,
        nic_blocks="".join(nic.block() for nic in nics),
        nccl=gpus and bool(compute),
        nccl_tc=nccl_tc[0] if nccl_tc else None,
        nccl_hca="=" + ",".join(nccl_devices) if nccl_devices else None,
    )
    return f"configs/hosts/{device.name}.sh", text
