"""Check stage for NCCL topology files: rules that look at the whole tree at once.

Consumes the elements NCCL loads (fabricc.nccl.check hands over those outside ignored subtrees)
and a reporting callback; reports duplicate ids, GPU dev numbering, NVSwitch link totals, GPU
peer links, C2C placement, the "do not mix" rule (what NCCL src/graph/xml.cc
ncclTopoFuseXml cannot merge) and overlapping affinity.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from fabricc.nccl.dialect import AFFINITY, NVSWITCH_LINKS, PCI_ATTRIBUTES, strtol
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
        self.nvswitch_totals(gpus)
        self.gpu_peers(nodes, gpus)
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

    def nvswitch_totals(self, gpus: list[Node]) -> None:
        totals: dict[Node, int] = {}
        for gpu in gpus:
            links = [c for c in gpu.children if c.name == "nvlink"]
            totals[gpu] = sum(
                strtol(link.get("count") or "") or 0
                for link in links
                if not (link.get("tclass") or "").startswith("0x03")
                and link.get("tclass") != "0x068001"
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

    def gpu_peers(self, nodes: list[Node], gpus: list[Node]) -> None:
        by_busid: dict[str, Node] = {}
        for gpu in gpus:
            if gpu.parent is not None and (busid := gpu.parent.get("busid")) is not None:
                by_busid.setdefault(busid, gpu)
        for link in (n for n in nodes if n.name == "nvlink"):
            if not (link.get("tclass") or "").startswith("0x03"):
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
        reported: set[int] = set()
        for net in (n for n in nodes if n.name == "net"):
            ancestor = net.parent
            while ancestor is not None:
                if id(ancestor) not in reported:
                    missing = self.incomplete(ancestor)
                    if missing:
                        reported.add(id(ancestor))
                        self.add(
                            ancestor,
                            "profile-mix",
                            f"<{ancestor.name}> above a <net> lacks {', '.join(missing)}: NCCL "
                            "completes it only on some ranks and cannot fuse their trees; write "
                            "it complete or drop the <net> elements (skeleton)",
                            Level.WARNING,
                        )
                ancestor = ancestor.parent

    @staticmethod
    def incomplete(node: Node) -> list[str]:
        wanted: tuple[str, ...] = ()
        if node.name == "pci":
            wanted = PCI_ATTRIBUTES
        elif node.name == "cpu":
            wanted = ("numaid", "affinity", "arch")
            if node.get("arch") == "x86_64":
                wanted += ("vendor", "familyid", "modelid")
        return [name for name in wanted if node.get(name) is None]

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


def _ancestor(node: Node, name: str) -> Node | None:
    current = node.parent
    while current is not None and current.name != name:
        current = current.parent
    return current
