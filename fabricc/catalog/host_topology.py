"""Catalog stage: host topologies - the CPU/PCIe/NVLink layout inside a GPU node, per node model.

Consumes the `host_topologies:` section of the catalog files (built-in data in
fabricc/catalog/data/host_topologies.yaml, overridable by user catalogs); produces validated
HostTopology entries that the NCCL emitter turns into topology XML. Bus ids, PCI ids, CPU data and
NVLink/C2C link counts all live here, each with a source, so that a user corrects them for the
real hardware (`lspci -D -nn`, `nvidia-smi topo -m`, an NCCL_TOPO_DUMP_FILE) without touching code.
`cross_check` ties every entry to its node model (GPU indices, rail NICs, NVLink link counts).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fabricc.errors import Diagnostic, error
from fabricc.spec.yamlsource import DataPath, SourceMap, format_path

if TYPE_CHECKING:
    from fabricc.catalog.loader import LoadedCatalog

# NCCL matches bus ids by exact string against its own lower-case "%04x:%02x:%02x.%x" form
# (NCCL src/graph/xml.cc xmlFindTagKv; the form of src/misc/utils.cc int64ToBusId); domains
# above ffff print without padding.
BUSID_PATTERN = r"^(?:[0-9a-f]{4}|[1-9a-f][0-9a-f]{4,7}):[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$"
# NVSwitches that the host cannot see (GB200 trays, Blackwell HGX, VMs) appear as NCCL's
# sentinel target (NCCL src/graph/xml.cc, the empty NVML bus id; dumps in NVIDIA/nccl-tests#256).
NVSWITCH_SENTINEL = "fffffff:ff:ff.0"
CPULIST_PATTERN = r"^[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*$"

Source = Annotated[
    str,
    Field(
        min_length=1, description="where the value comes from (a dump, a guide) or 'assumed: ...'"
    ),
]
BusId = Annotated[str, Field(pattern=BUSID_PATTERN, description="lower-case DDDD:BB:DD.F")]
PciId = Annotated[str, Field(pattern=r"^0x[0-9a-f]{4}$", description="16-bit id, e.g. 0x10de")]
ClassCode = Annotated[
    str, Field(pattern=r"^0x[0-9a-f]{6}$", description="PCI class code as in sysfs, e.g. 0x060400")
]
# The "x.0 GT/s PCIe" spellings of NCCL's link_speed dictionary (NCCL src/graph/topo.cc kvDictPciGen).
LinkSpeed = Literal[
    "2.5 GT/s PCIe",
    "5.0 GT/s PCIe",
    "8.0 GT/s PCIe",
    "16.0 GT/s PCIe",
    "32.0 GT/s PCIe",
    "64.0 GT/s PCIe",
]
NetName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_.+-]{1,64}$")]


class TopologyModel(BaseModel):
    # Same settings as fabricc.catalog.models.CatalogModel; kept separate because models.py
    # imports this module for its Catalog.host_topologies field.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class PciDevice(TopologyModel):
    """The PCI identity of one kind of device (a GPU, a NIC, a switch or root port)."""

    description: str
    class_code: ClassCode
    vendor: PciId | None = Field(None, description="omit when unknown; NCCL reads sysfs")
    device: PciId | None = None
    subsystem_vendor: PciId | None = None
    subsystem_device: PciId | None = None
    link_speed: LinkSpeed
    link_width: Literal[1, 2, 4, 8, 16]
    source: Source

    @property
    def complete(self) -> bool:
        ids = (self.vendor, self.device, self.subsystem_vendor, self.subsystem_device)
        return all(i is not None for i in ids)


class PciNode(TopologyModel):
    """One PCI function in the tree: a switch or root port with children, a GPU or a NIC."""

    busid: BusId
    device: str = Field(description="key into the topology's `devices`")
    gpu: int | None = Field(
        None, ge=0, le=1023, description="GPU index (nvidia-smi) of this function"
    )
    nic: NetName | None = Field(None, description="ibverbs device of this NIC, e.g. mlx5_0")
    children: list[PciNode] = Field(default_factory=list)
    source: str | None = Field(None, description="where this bus id comes from, if not `source`")

    @model_validator(mode="after")
    def _shape(self) -> PciNode:
        if self.gpu is not None and self.nic is not None:
            raise ValueError("a PCI function is either a GPU or a NIC, not both")
        if (self.gpu is not None or self.nic is not None) and self.children:
            raise ValueError("GPU and NIC functions are leaves; only switches have children")
        return self

    def walk(self) -> list[PciNode]:
        nodes = [self]
        for child in self.children:
            nodes.extend(child.walk())
        return nodes


class CpuSocket(TopologyModel):
    """One NUMA node (CPU socket) and the PCI tree below it."""

    numaid: int = Field(ge=0, le=1023)
    cpulist: str = Field(
        pattern=CPULIST_PATTERN,
        description="logical CPUs of this NUMA node as in /sys/devices/system/node/nodeN/cpulist",
    )
    arch: Literal["x86_64", "arm64", "ppc64"]
    vendor: Literal["GenuineIntel", "AuthenticAMD"] | None = None
    familyid: int | None = Field(None, ge=0, le=4095)
    modelid: int | None = Field(None, ge=0, le=4095)
    pci: list[PciNode] = Field(min_length=1)
    source: Source

    @model_validator(mode="after")
    def _cpuid(self) -> CpuSocket:
        # NCCL needs vendor on x86 and family/model on Intel (NCCL src/graph/topo.cc ncclTopoAddCpu).
        if self.arch == "x86_64" and self.vendor is None:
            raise ValueError("an x86_64 CPU needs 'vendor'")
        if self.arch != "x86_64" and self.vendor is not None:
            raise ValueError("only x86_64 CPUs have a CPUID vendor")
        if self.vendor == "GenuineIntel" and (self.familyid is None or self.modelid is None):
            raise ValueError("an Intel CPU needs 'familyid' and 'modelid'")
        return self

    def cpus(self) -> list[int]:
        return parse_cpulist(self.cpulist)


class NvlinkTarget(TopologyModel):
    target: str = Field(
        pattern=rf"{BUSID_PATTERN}|^{re.escape(NVSWITCH_SENTINEL)}$",
        description="NVSwitch PCI bus id, or fffffff:ff:ff.0 when the host cannot see it",
    )
    count: int = Field(ge=1, le=36, description="NVLink links from each GPU to this target")


class NvlinkLinks(TopologyModel):
    """The NVLink links of every GPU of the node (all GPUs of an NVSwitch system are alike)."""

    tclass: ClassCode = Field("0x068000", description="class of the remote end (NVSwitch)")
    targets: list[NvlinkTarget] = Field(min_length=1)
    source: Source

    @property
    def links(self) -> int:
        return sum(t.count for t in self.targets)


class C2cLinks(TopologyModel):
    """NVLink-C2C between a Grace CPU and each of its GPUs."""

    bw: int = Field(ge=1, le=10_000_000, description="MB/s per link (NVML C2C max bandwidth)")
    count: int = Field(ge=1, le=32, description="active C2C links per GPU")
    source: Source


class NetAttributes(TopologyModel):
    """The per-port <net> attributes a dump carries that do not depend on the individual host."""

    port: int = Field(1, ge=0, le=4)
    latency: float = Field(0.0, ge=0, le=1_000_000)
    maxconn: int = Field(131072, ge=1, le=1 << 24)
    source: Source


class HostTopology(TopologyModel):
    description: str
    source: Source = Field(description="source of the tree shape and of the bus ids")
    logical_cpus: int = Field(ge=1, le=8192, description="possible CPUs (width of the masks)")
    gpu_gdr: Literal[0, 1] = Field(1, description="GPUDirect RDMA capability of the GPUs")
    devices: dict[str, PciDevice] = Field(min_length=1)
    cpus: list[CpuSocket] = Field(min_length=1)
    nvlink: NvlinkLinks | None = None
    c2c: C2cLinks | None = None
    net: NetAttributes

    @model_validator(mode="after")
    def _consistent(self) -> HostTopology:
        problems: list[str] = []
        numaids = [c.numaid for c in self.cpus]
        if len(set(numaids)) != len(numaids):
            problems.append("NUMA ids must be unique")
        seen_cpus: set[int] = set()
        for cpu in self.cpus:
            cpus = set(cpu.cpus())
            if seen_cpus & cpus:
                problems.append(f"CPU lists overlap (NUMA node {cpu.numaid})")
            if cpus and max(cpus) >= self.logical_cpus:
                problems.append(f"NUMA node {cpu.numaid} lists CPUs beyond logical_cpus")
            seen_cpus |= cpus
        nodes = [n for cpu in self.cpus for root in cpu.pci for n in root.walk()]
        busids = [n.busid for n in nodes]
        dupes = sorted({b for b in busids if busids.count(b) > 1})
        if dupes:
            problems.append(f"duplicate bus ids: {', '.join(dupes)}")
        unknown = sorted({n.device for n in nodes if n.device not in self.devices})
        if unknown:
            problems.append(f"unknown devices: {', '.join(unknown)}")
        gpus = [n.gpu for n in nodes if n.gpu is not None]
        if len(set(gpus)) != len(gpus):
            problems.append("a GPU index appears twice")
        nics = [n.nic for n in nodes if n.nic is not None]
        if len(set(nics)) != len(nics):
            problems.append("a NIC name appears twice")
        if self.c2c is not None and any(c.arch != "arm64" for c in self.cpus):
            problems.append("c2c links exist only between Grace (arm64) CPUs and their GPUs")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def gpu_nodes(self) -> dict[int, PciNode]:
        return {
            n.gpu: n
            for cpu in self.cpus
            for root in cpu.pci
            for n in root.walk()
            if n.gpu is not None
        }

    def nic_nodes(self) -> dict[str, PciNode]:
        return {
            n.nic: n
            for cpu in self.cpus
            for root in cpu.pci
            for n in root.walk()
            if n.nic is not None
        }


def parse_cpulist(text: str) -> list[int]:
    """``"0-3,8"`` -> ``[0, 1, 2, 3, 8]`` (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.extend(range(int(first), int(last or first) + 1))
    return cpus


def cross_check(loaded: LoadedCatalog) -> list[Diagnostic]:
    """Every host topology belongs to a GPU node model and matches its GPUs and rail NICs."""
    catalog = loaded.catalog
    problems: list[Diagnostic] = []
    for key, topology in catalog.host_topologies.items():
        report = _reporter(loaded, problems, key)
        node = catalog.nodes.get(key)
        if node is None or node.gpu is None:
            report(
                f"host topology {key!r} names no GPU node model",
                hint="host topologies are keyed by the node model (or compute tray) they describe",
            )
            continue
        gpus = sorted(topology.gpu_nodes())
        if gpus != list(range(node.gpus)):
            report(f"the topology places GPUs {gpus}, but {key!r} has GPUs 0..{node.gpus - 1}")
        rails = {
            name
            for p in node.ports
            if p.role == "compute" and p.gpu is not None
            for name in (p.rdma_device, *(leg.rdma_device for leg in p.leg_devices))
            if name is not None
        }
        nics = topology.nic_nodes()
        for name in sorted(set(rails) - set(nics), key=_natural):
            report(f"the rail NIC {name} of {key!r} is missing from the topology")
        for name in sorted(set(nics) - set(rails), key=_natural):
            report(f"NIC {name} is not a compute port (with a gpu) of {key!r}")
        for p in node.ports:
            for rdma, address in (
                (p.rdma_device, p.pci),
                *((g.rdma_device, g.pci) for g in p.leg_devices),
            ):
                if rdma in nics and address is not None and nics[rdma].busid != address:
                    report(
                        f"{key!r} port {p.name} gives {rdma} the PCI address {address}, the "
                        f"topology {nics[rdma].busid}"
                    )
        links = topology.nvlink.links if topology.nvlink is not None else 0
        if links != node.gpu.nvlink_links:
            report(
                f"the topology gives each GPU {links} NVLink links, but {node.gpu.model} has "
                f"{node.gpu.nvlink_links}",
                "nvlink",
            )
        for index, cpu in enumerate(topology.cpus):
            for root_index, root in enumerate(cpu.pci):
                for node_path, pci in _paths(root, ("cpus", index, "pci", root_index)):
                    device = topology.devices.get(pci.device)
                    if device is None:
                        continue
                    # Nodes on a NIC's path must carry every id, or NCCL ranks complete them
                    # differently and cannot fuse their trees (NCCL src/graph/xml.cc ncclTopoFuseXml).
                    if _has_nic(pci) and not device.complete:
                        report(
                            f"device {pci.device!r} is on the path of a NIC and needs vendor, "
                            "device, subsystem_vendor and subsystem_device",
                            *node_path,
                        )
    return problems


def _reporter(loaded: LoadedCatalog, problems: list[Diagnostic], key: str) -> _Reporter:
    """Where a mismatch between a host topology and its node model is shown: at the topology,
    unless the topology is built in and a site catalog replaced the node model - then the site
    catalog's entry is the change that broke it, and the error is shown there."""
    from fabricc.catalog.loader import BUILTIN_PREFIX

    topology = loaded.origins.get(("host_topologies", key))
    node = loaded.origins.get(("nodes", key))
    if (
        topology is not None
        and node is not None
        and topology.name.startswith(BUILTIN_PREFIX)
        and not node.name.startswith(BUILTIN_PREFIX)
    ):
        return _Reporter(problems, node.source, ("nodes", key), builtin=True)
    _, source, _ = loaded.locate("host_topologies", key)
    return _Reporter(problems, source, ("host_topologies", key))


class _Reporter:
    """Appends positioned errors about one host topology entry (or the node model a site
    catalog put in place of the one a built-in topology describes)."""

    def __init__(
        self, problems: list[Diagnostic], source: SourceMap, base: DataPath, builtin: bool = False
    ) -> None:
        self.problems = problems
        self.source = source
        self.base = base
        self.builtin = builtin

    def __call__(self, message: str, *rest: str | int, hint: str | None = None) -> None:
        if self.builtin:
            path: DataPath = self.base
            message = f"the built-in host topology of {self.base[-1]!r} no longer fits: {message}"
            hint = "add a host topology for this model under host_topologies in the site catalog"
        else:
            path = (*self.base, *rest)
        self.problems.append(
            error(message, path=format_path(path), location=self.source.value(path), hint=hint)
        )


def _paths(
    node: PciNode, path: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], PciNode]]:
    found = [(path, node)]
    for index, child in enumerate(node.children):
        found.extend(_paths(child, (*path, "children", index)))
    return found


def _has_nic(node: PciNode) -> bool:
    return any(n.nic is not None for n in node.walk())


def _natural(name: str) -> tuple[str, int]:
    head = name.rstrip("0123456789")
    tail = name[len(head) :]
    return head, int(tail) if tail else -1
