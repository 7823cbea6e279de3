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
import weakref
from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.index import point_to_point
from fabricc.emit.configs.qos import QosPlan
from fabricc.emit.templating import render
from fabricc.ir import ENDPOINT_LEAF, Device

TABLE_BASE = 100  # per-NIC policy routing tables: 100, 101, ...


@dataclass(frozen=True, slots=True)
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
            f"{qos_comment(qos)}"
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


class _Shared:
    """What the hosts of one config context share, looked up once: a model's port devices,
    whether a far device is a routed switch, a network's QoS plan. (Not the context itself:
    kept per context in a weak mapping, it must not keep the context alive.)"""

    def __init__(self) -> None:
        self._ports: dict[tuple[str, str], tuple[str | None, str]] = {}
        self._routed: dict[str, bool] = {}
        self._plans: dict[str, tuple[QosPlan, str]] = {}

    def nics(self, ctx: ConfigContext, device: Device) -> list[HostNic]:
        nics: list[HostNic] = []
        for end in ctx.ends(device.name):
            if end.kind != ENDPOINT_LEAF or not end.upward or end.local_ip is None:
                continue
            routed = self._routed.get(end.far)
            if routed is None:
                routed = self._routed[end.far] = ctx.routed(ctx.devices[end.far])
            if end.far_ip is None or not routed:
                continue
            key = (device.model, end.port)
            port = self._ports.get(key)
            if port is None:
                rdma, netdev = ctx.catalog.nodes[device.model].port_devices(end.port)
                port = self._ports[key] = (rdma, _ifname(rdma, netdev, end.port))
            network = end.link.network
            plan = self._plans.get(network)
            if plan is None:
                qos = ctx.qos(network)
                plan = self._plans[network] = (qos, qos_commands(qos))
            nics.append(
                HostNic(
                    network=network,
                    port=end.port,
                    rdma_device=port[0],
                    ifname=port[1],
                    address=point_to_point(end.local_ip)[0],
                    source=end.local_ip,
                    gateway=end.far_ip,
                    table=TABLE_BASE + len(nics),
                    leaf=ctx.far_end(end),
                    qos=plan[0],
                    qos_commands=plan[1],
                )
            )
        return nics


_SHARED: weakref.WeakKeyDictionary[ConfigContext, _Shared] = weakref.WeakKeyDictionary()


def host_nics(ctx: ConfigContext, device: Device) -> list[HostNic]:
    shared = _SHARED.get(ctx)
    if shared is None:
        shared = _SHARED[ctx] = _Shared()
    return shared.nics(ctx, device)


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
