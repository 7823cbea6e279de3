"""Check stage for NCCL topology files: rules that look at the whole tree at once.

Consumes the elements NCCL loads (fabricc.nccl.check hands over those outside ignored subtrees)
and a reporting callback; reports duplicate ids, GPU dev numbering, NVSwitch link totals, GPU
peer links, C2C placement, the per-rank fill-in that splits NCCL's XML fusion ("do not mix":
a <cpu> or <pci> above a <net> written incomplete) and overlapping affinity. The fusion rule
replays what NCCL 2.30.7 does per rank (src/graph/topo.cc ncclTopoGetSystem, xml.cc
ncclTopoGetXmlFromSys/ncclTopoGetXmlFromCpu, ncclTopoTrimXml, ncclTopoFuseXml).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Container

from fabricc.nccl.dialect import (
    AFFINITY,
    NCCL_VERSION,
    NVSWITCH_CLASS,
    NVSWITCH_LINKS,
    PCI_ATTRIBUTES,
    strtol,
)
from fabricc.nccl.parse import Attribute, Level, Node

Report = Callable[[Node | Attribute, str, str, Level], None]


def check_consistency(nodes: list[Node], report: Report) -> None:
    """All whole-file rules over the loaded elements, in file order."""
    _Consistency(report).run(nodes)


class _Consistency:
    def __init__(self, report: Report) -> None:
        self.report = report

    def add(
        self, where: Node | Attribute, rule: str, message: str, level: Level = Level.ERROR
    ) -> None:
        self.report(where, rule, message, level)

    def run(self, nodes: list[Node]) -> None:
        self.unique(nodes, "pci", "busid", "duplicate-busid")
        self.unique(nodes, "net", "name", "duplicate-net-name")
        self.unique(nodes, "cpu", "numaid", "duplicate-numaid")
        self.unique(nodes, "gpu", "dev", "duplicate-gpu-dev")
        gpus = [n for n in nodes if n.name == "gpu"]
        devs = sorted(v for g in gpus if (v := strtol(g.get("dev") or "")) is not None and v >= 0)
        if gpus and devs and devs != list(range(len(devs))):
            self.add(
                gpus[0],
                "gpu-dev-range",
                f"GPU dev indices {devs} are not 0..{len(devs) - 1} (the nvidia-smi indices)",
                Level.WARNING,
            )
        by_busid: dict[str, Node] = {}  # a GPU's <pci> bus id -> the first <gpu> under it
        for gpu in gpus:
            if gpu.parent is not None and (busid := gpu.parent.get("busid")) is not None:
                by_busid.setdefault(busid, gpu)
        self.nvswitch_totals(gpus, by_busid)
        self.gpu_peers(nodes, by_busid)
        for node in nodes:
            if node.name == "c2c":
                cpu = _ancestor(node, "cpu")
                if cpu is None or cpu.get("arch") != "arm64":
                    self.add(
                        node,
                        "c2c-arch",
                        "<c2c> under a non-arm64 CPU: NVLink-C2C exists only on Grace",
                        Level.WARNING,
                    )
        self.profile_mix(nodes)
        self.affinity_overlap([n for n in nodes if n.name == "cpu"])

    def unique(self, nodes: list[Node], element: str, attribute: str, rule: str) -> None:
        first: dict[str, Attribute] = {}
        for node in nodes:
            if node.name != element:
                continue
            found = node.attribute(attribute)
            if found is None:
                continue
            if found.value in first:
                earlier = first[found.value]
                self.add(
                    found,
                    rule,
                    f"{element} {attribute} {found.value!r} also on line {earlier.line}; "
                    "NCCL uses only the first",
                )
            else:
                first[found.value] = found

    def nvswitch_totals(self, gpus: list[Node], gpu_busids: Container[str]) -> None:
        totals: dict[Node, int] = {}
        for gpu in gpus:
            links = [c for c in gpu.children if c.name == "nvlink"]
            totals[gpu] = sum(
                strtol(link.get("count") or "") or 0
                for link in links
                if not (kind := target_class(link, gpu_busids)).startswith("0x03")
                and kind != "0x068001"
            )
        if not any(totals.values()):
            return
        common = Counter(totals.values()).most_common(1)[0][0]
        for gpu, total in totals.items():
            if total != common:
                self.add(
                    gpu,
                    "nvswitch-link-total",
                    f"GPU dev={gpu.get('dev')} has {total} NVSwitch links, the others {common}; "
                    "NVLS needs every GPU on the NVSwitch",
                )
        sm = {strtol(g.get("sm") or "") for g in gpus}
        expected = NVSWITCH_LINKS.get(next(iter(sm)) or 0) if len(sm) == 1 else None
        if expected is not None and common != expected:
            self.add(
                gpus[0],
                "nvswitch-link-total",
                f"{common} NVSwitch links per GPU, but sm {next(iter(sm))} GPUs have {expected} "
                "(NCCL multiplies the count by the per-link bandwidth)",
            )

    def gpu_peers(self, nodes: list[Node], by_busid: dict[str, Node]) -> None:
        for link in (n for n in nodes if n.name == "nvlink"):
            if not target_class(link, by_busid).startswith("0x03"):
                continue
            target = link.get("target")
            owner = link.parent
            if target is None or owner is None:
                continue
            peer = by_busid.get(target)
            if peer is None:
                self.add(
                    link,
                    "nvlink-peer",
                    f"NVLink to GPU {target}, which is not in the file; NCCL drops the link",
                    Level.WARNING,
                )
                continue
            own = owner.parent.get("busid") if owner.parent is not None else None
            back = [
                c
                for c in peer.children
                if c.name == "nvlink"
                and c.get("target") == own
                and c.get("count") == link.get("count")
            ]
            if not back:
                self.add(
                    link,
                    "nvlink-peer",
                    f"GPU {target} lists no NVLink back to {own} with count {link.get('count')}; "
                    "NCCL adds GPU links in one direction only",
                )

    def profile_mix(self, nodes: list[Node]) -> None:
        """A <cpu> or <pci> above a <net> that lacks attributes NCCL fills from /sys: each rank
        fills them on the path of its own GPU only, and keeps the rest of the tree as written
        for its NICs. Where a node is filled by some ranks and kept unfilled by others, NCCL's
        fusion finds two different nodes and the system holds it (and the NICs below) twice."""
        gpus = [n for n in nodes if n.name == "gpu" and n.parent is not None]
        nets = [n for n in nodes if n.name == "net" and n.get("name") is not None]
        missing = {id(n): m for n in nodes if n.name in ("cpu", "pci") and (m := _incomplete(n))}
        if not nets or not missing:
            return
        fused = _Fusion(gpus, nets, missing)
        reported: set[int] = set()
        for net in nets:
            for ancestor in _ancestors(net):
                key = id(ancestor)
                if key in missing and key not in reported:
                    reported.add(key)
                    self.fill_split(ancestor, missing[key], fused)

    def fill_split(self, node: Node, missing: list[str], fused: _Fusion) -> None:
        what = f"<{node.name}> above a <net> lacks {', '.join(missing)}"
        if not fused.split(node):
            self.add(
                node,
                "profile-mix",
                f"{what}: NCCL completes it only on the ranks whose GPU is below it; write it "
                "complete or drop the <net> elements (skeleton)",
                Level.WARNING,
            )
            return
        cpus, nets = fused.counts()
        self.add(
            node,
            "profile-mix",
            f"{what}: NCCL fills it on the ranks whose GPU is below it (xml.cc "
            "ncclTopoGetXmlFromSys/ncclTopoGetXmlFromCpu) while the other ranks keep it as "
            "written for their NICs, so ncclTopoFuseXml sees two different nodes: the system "
            f"NCCL {NCCL_VERSION} builds has {cpus[1]} CPUs and {nets[1]} NETs instead of "
            f"{cpus[0]} and {nets[0]}; write it complete",
        )

    def affinity_overlap(self, cpus: list[Node]) -> None:
        masks: list[tuple[Node, int]] = []
        for cpu in cpus:
            text = cpu.get("affinity")
            if text is None or not AFFINITY.match(text):
                continue
            mask = int(text.replace(",", ""), 16)
            for other, other_mask in masks:
                if mask & other_mask:
                    self.add(
                        cpu,
                        "affinity-overlap",
                        f"affinity shares CPUs with the <cpu> on line {other.line}",
                        Level.WARNING,
                    )
                    break
            masks.append((cpu, mask))


def target_class(link: Node, gpu_busids: Container[str]) -> str:
    """An <nvlink>'s tclass, or the one NCCL fills in when it is absent (xml.cc
    ncclTopoGetXmlFromGpu): the target's PCI class from sysfs, which for a GPU of the file is a
    GPU class, and the NVSwitch class for anything that is not a PCI device."""
    tclass = link.get("tclass")
    if tclass is not None:
        return tclass
    return "0x0302" if link.get("target") in gpu_busids else NVSWITCH_CLASS


def _incomplete(node: Node) -> list[str]:
    """The attributes of a <cpu> or <pci> that NCCL fills from /sys and CPUID when absent."""
    wanted: tuple[str, ...] = ()
    if node.name == "pci":
        wanted = tuple(name for name in PCI_ATTRIBUTES if name != "busid")
    elif node.name == "cpu":
        wanted = ("affinity", "arch")
        if node.get("arch") == "x86_64":
            wanted += ("vendor", "familyid", "modelid")
    return [name for name in wanted if node.get(name) is None]


class _Fusion:
    """The per-rank XML trees of one node and their fusion, reduced to what tells copies apart.

    One rank per <gpu>. A rank keeps the path of its GPU and of every <net> (a named <net> is a
    device of the network plugin, kept by every rank); it fills the incomplete nodes on its GPU's
    path. ncclTopoFuseXml merges two nodes only when all their attributes match, so an element
    has as many copies in the fused tree as there are distinct fill patterns of its incomplete
    ancestors (itself included) among the ranks that keep it."""

    def __init__(self, gpus: list[Node], nets: list[Node], missing: dict[int, list[str]]) -> None:
        self.paths = [{id(a) for a in _ancestors(gpu)} for gpu in gpus]
        self.nets = nets
        self.missing = missing
        self.cpus: dict[int, Node] = {
            id(a): a for item in (*gpus, *nets) for a in _ancestors(item) if a.name == "cpu"
        }
        self.cpus_with_net = {id(a) for net in nets for a in _ancestors(net) if a.name == "cpu"}

    def copies(self, node: Node, kept_by_all: bool) -> int:
        chain = [id(a) for a in (node, *_ancestors(node)) if id(a) in self.missing]
        patterns = {
            tuple(key in path for key in chain)
            for path in self.paths
            if kept_by_all or id(node) in path
        }
        return max(len(patterns), 1)

    def split(self, node: Node) -> bool:
        return self.copies(node, kept_by_all=True) > 1

    def counts(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(CPUs, NETs) as written and after NCCL's fusion."""
        fused_cpus = sum(
            self.copies(cpu, key in self.cpus_with_net) for key, cpu in self.cpus.items()
        )
        fused_nets = sum(self.copies(net, kept_by_all=True) for net in self.nets)
        return (len(self.cpus), fused_cpus), (len(self.nets), fused_nets)


def _ancestors(node: Node) -> list[Node]:
    found = []
    current = node.parent
    while current is not None:
        found.append(current)
        current = current.parent
    return found


def _ancestor(node: Node, name: str) -> Node | None:
    return next((a for a in _ancestors(node) if a.name == name), None)
