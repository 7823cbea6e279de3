"""Emit-stage helper: one node type's host topology -> the NCCL topology XML tree.

Consumes a catalog HostTopology, its NodeModel (GPU count and sm), the profile chosen in the spec
and the per-NIC settings the design decides (ibverbs name, NCCL device index, speed, the class
that follows the fabric); produces an Element tree for fabricc.nccl.document.render.

Profiles (what NCCL src/graph/xml.cc ncclTopoFillGpu and ncclTopoFillNet complete): `skeleton`
writes only <cpu> and <pci> with GPU and NIC functions as self-closing <pci/> leaves, and NCCL adds
<gpu>, <nvlink>, <c2c>, <nic> and <net> from NVML and its net plugin. `complete` writes what
NCCL_TOPO_DUMP_FILE would hold, minus what belongs to one host or one run (host_hash, keep, mlopart,
net guid and gdr); because it carries <net> elements, every <cpu> and <pci> above them is written
complete ("do not mix").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from fabricc.catalog.host_topology import CpuSocket, HostTopology, PciNode
from fabricc.catalog.models import NodeModel
from fabricc.nccl.document import Element, element

Profile = Literal["skeleton", "complete"]
# The only version NCCL 2.6-2.30 accepts (NCCL src/graph/xml.cc ncclTopoXmlLoadSystem).
SYSTEM_VERSION = 1


@dataclass(frozen=True, slots=True)
class NicPlan:
    """What the design decides about one rail NIC."""

    name: str  # ibverbs device, e.g. mlx5_0
    dev: int  # NCCL net index (NCCL overrides it with the plugin's; rail order here)
    speed_mbps: int  # port speed in Mb/s, as NCCL's net speed
    class_code: str | None = None  # PCI class for the fabric (0x020700 IB, 0x020000 Ethernet)


def cpu_affinity(cpus: list[int], logical_cpus: int) -> str:
    """The sysfs cpumap format: comma-separated 32-bit hex groups, most significant first."""
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    groups = -(-logical_cpus // 32)
    return ",".join(f"{(mask >> (32 * g)) & 0xFFFFFFFF:08x}" for g in reversed(range(groups)))


def build_topology(
    name: str,
    topology: HostTopology,
    node: NodeModel,
    profile: Profile,
    nics: Mapping[str, NicPlan],
) -> Element:
    """The <system> tree of one node type."""
    # A port run unsplit has no function for its second leg: that NIC is left out (NCCL would
    # trim a device its plugin does not report anyway). Any other NIC needs its settings.
    legs = {leg.rdma_device for port in node.ports for leg in port.leg_devices}
    missing = sorted(set(topology.nic_nodes()) - set(nics) - legs)
    if missing:
        raise ValueError(f"no NIC settings for {', '.join(missing)}")
    builder = _Builder(topology, node, profile, nics)
    cpus = [builder.cpu(cpu) for cpu in topology.cpus]
    return element("system", {"version": SYSTEM_VERSION, "name": name}, *cpus)


@dataclass(frozen=True, slots=True)
class _Builder:
    topology: HostTopology
    node: NodeModel
    profile: Profile
    nics: Mapping[str, NicPlan]

    def cpu(self, cpu: CpuSocket) -> Element:
        attributes: dict[str, str | int] = {
            "numaid": cpu.numaid,
            "affinity": cpu_affinity(cpu.cpus(), self.topology.logical_cpus),
            "arch": cpu.arch,
        }
        if cpu.vendor is not None:
            attributes["vendor"] = cpu.vendor
        if cpu.familyid is not None and cpu.modelid is not None:
            attributes["familyid"] = cpu.familyid
            attributes["modelid"] = cpu.modelid
        return element("cpu", attributes, *(self.pci(child) for child in cpu.pci))

    def pci(self, node: PciNode) -> Element:
        device = self.topology.devices[node.device]
        class_code = device.class_code
        if node.nic is not None and self.nics[node.nic].class_code is not None:
            class_code = self.nics[node.nic].class_code or class_code
        attributes: dict[str, str | int] = {"busid": node.busid, "class": class_code}
        for key in ("vendor", "device", "subsystem_vendor", "subsystem_device"):
            value = getattr(device, key)
            if value is not None:
                attributes[key] = value
        attributes["link_speed"] = device.link_speed
        attributes["link_width"] = device.link_width
        children: list[Element] = [
            self.pci(child)
            for child in node.children
            if child.nic is None or child.nic in self.nics
        ]
        if self.profile == "complete":
            if node.gpu is not None:
                children.append(self.gpu(node.gpu))
            if node.nic is not None:
                children.append(element("nic", {}, self.net(self.nics[node.nic])))
        return element("pci", attributes, *children)

    def gpu(self, index: int) -> Element:
        assert self.node.gpu is not None  # cross-checked in the catalog
        links: list[Element] = []
        nvlink = self.topology.nvlink
        if nvlink is not None:
            links.extend(
                element("nvlink", {"target": t.target, "count": t.count, "tclass": nvlink.tclass})
                for t in nvlink.targets
            )
        c2c = self.topology.c2c
        if c2c is not None:
            links.append(element("c2c", {"bw": c2c.bw, "count": c2c.count}))
        # rank is overridden by NCCL with the communicator rank; dumps show rank = dev.
        attributes = {"dev": index, "sm": self.node.gpu.sm, "rank": index}
        return element("gpu", {**attributes, "gdr": self.topology.gpu_gdr}, *links)

    def net(self, plan: NicPlan) -> Element:
        net = self.topology.net
        return element(
            "net",
            {
                "name": plan.name,
                "dev": plan.dev,
                "speed": plan.speed_mbps,
                "port": net.port,
                "latency": f"{net.latency:.6f}",
                "maxconn": net.maxconn,
            },
        )
