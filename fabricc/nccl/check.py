"""Check stage for NCCL topology files, part 2: the entry point and the per-element rules.

Consumes a file's bytes; produces a sorted list of Findings (line, column, rule, message, error
or warning) from the scanner (fabricc.nccl.parse), the root, nesting, limits, required attributes
and value formats checked here against fabricc.nccl.dialect, and the whole-file rules of
fabricc.nccl.consistency. Errors are what makes NCCL fail, or what it accepts but builds a damaged
system from (said with NCCL's consequence); warnings are legal but risky. The verdicts follow
NCCL 2.30.7's own code (src/graph/xml.cc, topo.cc), each rule citing the function it mirrors
where that code decides; RULES names each one (the test corpus has a file per rule).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from fabricc.inputs import read_limited
from fabricc.nccl.consistency import check_consistency
from fabricc.nccl.dialect import (
    AFFINITY,
    ARCHES,
    ATTRIBUTES,
    BUSID,
    CHILDREN,
    CLASS_CODE,
    CPU_VENDORS,
    CPUID_MODEL_VENDORS,
    FLAGS,
    FLOAT,
    GPU_PCI_REQUIRED,
    HEX,
    HEXES,
    INT,
    INTEGERS,
    INTERNAL,
    LINK_SPEEDS,
    LINK_WIDTHS,
    MAX_ATTRIBUTES,
    MAX_ATTRIBUTES_SAFE,
    MAX_CHILDREN,
    MAX_CHILDREN_COMPAT,
    MAX_ELEMENTS,
    MAX_NET_SPEED,
    MLOPART_MASK,
    NCCL_VERSION,
    REQUIRED,
    SIGNED,
    SIGNED_INT,
    TARGET,
    strtol,
)
from fabricc.nccl.parse import Attribute, Finding, Level, Node, parse

RULES: dict[str, str] = {
    # lexical (fabricc.nccl.parse)
    "encoding": "the file is UTF-8",
    "bom": "no byte order mark",
    "tab": "no TAB characters between or inside tags",
    "text-node": "no text outside tags",
    "xml-declaration": "no <?xml ...?> declaration or <!...> markup other than comments",
    "unterminated": "every tag, comment and value is closed",
    "closing-tag": "closing tags are </name> without spaces",
    "tag-mismatch": "closing tags match the open element",
    "element-name": "'<' is followed by an element name",
    "token-too-long": "names and values have at most 253 characters",
    "multiline-start-tag": "each start tag is on one line",
    "attribute-spacing": "k=\"v\" without spaces around '=', one space between attributes",
    "attribute-syntax": 'attributes are name="value"',
    "unquoted-value": "values are quoted",
    "single-quote": "double quotes (single quotes need NCCL 2.27+)",
    # structure
    "root-element": "exactly one root element, <system>",
    "system-version": '<system version="1">',
    "unknown-element": "only NCCL's elements (system cpu pci gpu nvlink c2c nic net pcilink)",
    "nesting": "elements sit under the parents NCCL loads them from",
    "nesting-depth": "elements nest at most 256 deep (NCCL reads at most 256 elements)",
    "child-count": "one <nic> per <pci>, one <c2c> per <gpu>, <net> in every <nic>",
    "too-many-elements": "at most 256 elements",
    "too-many-children": "at most 640 children per element (128 before NCCL 2.29)",
    "too-many-attributes": "at most 16 attributes per element (better 12)",
    "duplicate-attribute": "an attribute appears once per element",
    "unknown-attribute": "attributes NCCL knows",
    "internal-attribute": "no host_hash, keep or mlopart in generated files",
    "required-attribute": "the attributes NCCL needs to build its graph",
    # values
    "busid-format": "bus ids are lower-case DDDD:BB:DD.F",
    "class-format": "class codes are 0x plus six lower-case hex digits",
    "link-speed": "link_speed is a value of NCCL's dictionary",
    "link-width": "link_width is 0, 1, 2, 4, 8, 16 or 32",
    "integer-format": "integers are decimal without leading zeros (or 0x hex)",
    "hex-format": "ids and guids are 0x hex",
    "float-format": "latency is a decimal number",
    "flag-value": "flags are 0 or 1",
    "affinity-format": "affinity is the sysfs cpumap format (hex groups, not a range list)",
    "arch": "arch is x86_64, arm64 or ppc64",
    "cpu-vendor": "vendor is a CPUID vendor NCCL knows",
    "gpu-class": "a <pci> holding a <gpu> has a GPU class (0x03...)",
    "mlopart-busid": "a GPU's bus id has function 0 (NCCL keeps two bits for MLOPart)",
    "gpu-sm": "sm is major*10+minor",
    "net-speed": "net speed is in Mb/s",
    # whole file
    "duplicate-busid": "bus ids are unique",
    "duplicate-net-name": "net names are unique",
    "duplicate-numaid": "NUMA ids are unique",
    "duplicate-gpu-dev": "GPU dev indices are unique",
    "gpu-dev-range": "GPU dev indices are 0..n-1",
    "nvswitch-link-total": "every GPU of an NVSwitch system has the same NVSwitch link total",
    "nvlink-peer": "GPU-to-GPU NVLinks point at GPUs of the file and are listed on both ends",
    "c2c-arch": "<c2c> only under arm64 (Grace) CPUs",
    "profile-mix": "with <net> elements, every <cpu> and <pci> above them is complete",
    "affinity-overlap": "CPU affinity masks are disjoint",
}


def check_bytes(data: bytes) -> list[Finding]:
    """Every finding for one file, in file order."""
    document = parse(data)
    checker = _Checker()
    checker.findings.extend(document.findings)
    checker.run(document.roots, document.elements)
    return sorted(set(checker.findings))


# NCCL topology files describe one node: a few to a few hundred kB. The bound keeps a wrong file
# (a log, a disk image) from exhausting memory; fabricc.inputs.InputError says why it is refused.
MAX_TOPOLOGY_BYTES = 4 * 1024 * 1024


def check_file(path: Path) -> list[Finding]:
    return check_bytes(read_limited(path, MAX_TOPOLOGY_BYTES, what="NCCL topology files"))


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.level is Level.ERROR for f in findings)


class _Checker:
    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self.loaded: list[Node] = []  # elements NCCL loads (not inside ignored subtrees)

    def add(
        self, where: Node | Attribute, rule: str, message: str, level: Level = Level.ERROR
    ) -> None:
        self.findings.append(Finding(where.line, where.col, rule, message, level))

    # -- driver ----------------------------------------------------------------------------------

    def run(self, roots: list[Node], elements: list[Node]) -> None:
        if len(elements) > MAX_ELEMENTS:
            self.add(
                elements[MAX_ELEMENTS],
                "too-many-elements",
                f"{len(elements)} elements; NCCL's parser stops at {MAX_ELEMENTS} "
                "('XML parser is limited to 256 nodes'), and it adds elements of its own",
            )
        for node in elements:
            self.attributes_of(node)
        if not roots:
            self.findings.append(
                Finding(1, 1, "root-element", "no <system> element; NCCL ignores the file")
            )
            return
        first, *rest = roots
        if first.name != "system":
            hint = " (names are case-sensitive)" if first.name.lower() == "system" else ""
            self.add(
                first,
                "root-element",
                f"root element <{first.name}>{hint}: NCCL ignores it and auto-detects everything",
            )
            return
        for other in rest:
            self.add(
                other,
                "root-element",
                f"second root element <{other.name}>; NCCL only reads the first <system>",
                Level.WARNING,
            )
        self.system(first)
        self.structure(first)
        check_consistency(self.loaded, self.add)

    # -- per element -----------------------------------------------------------------------------

    def attributes_of(self, node: Node) -> None:
        count = len(node.attributes) + node.blank_attributes
        if count > MAX_ATTRIBUTES:
            self.add(
                node,
                "too-many-attributes",
                f"<{node.name}> has {count} attributes; NCCL drops all after the {MAX_ATTRIBUTES}th",
            )
        elif count > MAX_ATTRIBUTES_SAFE:
            self.add(
                node,
                "too-many-attributes",
                f"<{node.name}> has {count} attributes; keep to {MAX_ATTRIBUTES_SAFE} so NCCL can "
                f"add its own within the limit of {MAX_ATTRIBUTES}",
                Level.WARNING,
            )
        seen: set[str] = set()
        for attribute in node.attributes:
            if attribute.name in seen:
                self.add(
                    attribute,
                    "duplicate-attribute",
                    f"{attribute.name} appears twice on <{node.name}>; NCCL reads only the first",
                )
            seen.add(attribute.name)

    def system(self, node: Node) -> None:
        version = node.attribute("version")
        if version is None:
            self.add(node, "system-version", '<system> needs version="1"; NCCL fails without it')
        elif version.value != "1":
            read = strtol(version.value)
            if read != 1:
                self.add(
                    version,
                    "system-version",
                    f"version {version.value!r}: NCCL needs version 1 ('wrong version')",
                )
            else:
                self.add(version, "integer-format", f'write version="1", not {version.value!r}')

    def structure(self, root: Node) -> None:
        pending = [root]
        while pending:
            node = pending.pop()
            self.loaded.append(node)
            self.element(node)
            allowed = CHILDREN.get(node.name, frozenset())
            if len(node.children) > MAX_CHILDREN:
                self.add(
                    node.children[MAX_CHILDREN],
                    "too-many-children",
                    f"<{node.name}> has {len(node.children)} children; NCCL allows {MAX_CHILDREN}",
                )
            elif len(node.children) > MAX_CHILDREN_COMPAT:
                self.add(
                    node.children[MAX_CHILDREN_COMPAT],
                    "too-many-children",
                    f"<{node.name}> has {len(node.children)} children; NCCL before 2.29 allows "
                    f"{MAX_CHILDREN_COMPAT}",
                    Level.WARNING,
                )
            for child in node.children:
                if not child.name:
                    continue  # already reported by the scanner (element-name)
                if child.name not in CHILDREN:
                    self.add(
                        child,
                        "unknown-element",
                        f"<{child.name}> is not an NCCL topology element; NCCL ignores it and "
                        'everything inside (NVSwitches are <nvlink tclass="0x068000">)',
                    )
                elif child.name not in allowed:
                    where = "a leaf" if not allowed else f"<{node.name}>"
                    self.add(
                        child,
                        "nesting",
                        f"<{child.name}> cannot sit under {where}; NCCL ignores it and everything "
                        f"inside (allowed under <{node.name}>: "
                        f"{', '.join(sorted(allowed)) or 'nothing'})",
                    )
                else:
                    pending.append(child)
        self.loaded.sort(key=lambda n: (n.line, n.col))

    def element(self, node: Node) -> None:
        known = ATTRIBUTES.get(node.name, frozenset())
        for attribute in node.attributes:
            if attribute.name in INTERNAL or attribute.name == "keep":
                self.add(
                    attribute,
                    "internal-attribute",
                    f"{attribute.name} is set or overwritten by NCCL itself; generated files "
                    "should omit it",
                    Level.WARNING,
                )
            elif attribute.name not in known:
                self.add(
                    attribute,
                    "unknown-attribute",
                    f"NCCL does not read {attribute.name} on <{node.name}>",
                    Level.WARNING,
                )
            else:
                self.value(node, attribute)
        counts = Counter(child.name for child in node.children)
        holds_gpu = node.name == "pci" and counts["gpu"] > 0
        required = list(REQUIRED.get(node.name, ()))
        if node.name == "cpu":
            if node.get("arch") == "x86_64":
                required.append("vendor")
            if node.get("vendor") in CPUID_MODEL_VENDORS:
                required.extend(("familyid", "modelid"))
        if holds_gpu:
            required = list(GPU_PCI_REQUIRED)
        if node.name == "nvlink" and (node.get("tclass") or "0x03").startswith("0x03"):
            required.append("target")  # a GPU peer, or the lookup that fills tclass
        for name in required:
            if node.attribute(name) is None:
                self.add(node, "required-attribute", _missing(node.name, name))
        if node.name == "net" and node.attribute("name") is None:
            self.add(
                node,
                "required-attribute",
                "<net> has no name: NCCL finds a <net> by the name of a network device "
                f"(topo.cc ncclTopoPopulateNics, NCCL {NCCL_VERSION}), so it never keeps this "
                "one and drops the NIC silently (ncclTopoTrimXml); a real host's NIC is placed "
                "from /sys without this element's settings",
            )
        if holds_gpu:
            self.gpu_pci(node)
        if node.name == "pci" and counts["nic"] > 1:
            self.add(node, "child-count", "a <pci> holds at most one <nic> (one per PCI function)")
        if node.name == "gpu" and counts["c2c"] > 1:
            self.add(node, "child-count", "a <gpu> holds at most one <c2c>")
        if node.name == "nic" and counts["net"] == 0:
            self.add(node, "child-count", "a <nic> without <net> is trimmed by NCCL", Level.WARNING)

    def gpu_pci(self, pci: Node) -> None:
        """A <pci> holding a <gpu>: a GPU class where it has one (NCCL sets 0x03 when absent)
        and a bus id NCCL can encode the MLOPart partition in."""
        pci_class = pci.get("class")
        if pci_class is not None and not pci_class.startswith("0x03"):
            self.add(
                pci,
                "gpu-class",
                f"this <pci> holds a <gpu> but has class {pci_class!r}; GPUs are 0x03xxxx",
            )
        self.mlopart(pci)

    def mlopart(self, pci: Node) -> None:
        """NCCL 2.30.7 (the first release with this check) keeps the low two bits of a GPU's bus
        id for its MLOPart partition and stops when they are set (topo.cc
        ncclTopoCheckMloPartBusId)."""
        busid = pci.attribute("busid")
        if busid is None or not BUSID.match(busid.value):
            return
        value = int(re.sub(r"[:.]", "", busid.value), 16)  # busIdToInt64
        if value & MLOPART_MASK:
            self.add(
                busid,
                "mlopart-busid",
                f"GPU function .{busid.value[-1]}: NCCL stops building the system with 'BusId "
                f"0x{value:x} has non-zero bits in MLOPart mask 0x{MLOPART_MASK:x}, cannot encode "
                "MLOPart partition index without collision' (topo.cc "
                f"ncclTopoCheckMloPartBusId, NCCL {NCCL_VERSION}); write the GPU as function 0",
            )

    def value(self, node: Node, attribute: Attribute) -> None:
        key = (node.name, attribute.name)
        text = attribute.value
        name = attribute.name
        if key == ("pci", "busid"):
            self.busid(attribute, BUSID)
        elif key in (("nvlink", "target"), ("pcilink", "target")):
            self.busid(attribute, TARGET)
        elif key in (("pci", "class"), ("nvlink", "tclass")):
            if not CLASS_CODE.match(text):
                self.add(
                    attribute,
                    "class-format",
                    f"{name}={text!r}: write the sysfs class code, 0x plus six lower-case hex "
                    "digits (e.g. 0x060400)",
                )
        elif key == ("pci", "link_speed"):
            if text not in LINK_SPEEDS:
                self.add(
                    attribute,
                    "link-speed",
                    f"link_speed={text!r} is not in NCCL's dictionary; NCCL falls back to Gen3 "
                    '(use e.g. "32.0 GT/s PCIe")',
                )
        elif key == ("pci", "link_width"):
            if text not in LINK_WIDTHS:
                self.add(attribute, "link-width", f"link_width={text!r}: use 1, 2, 4, 8, 16 or 32")
        elif key == ("cpu", "affinity"):
            if not AFFINITY.match(text):
                hint = " (not a CPU range list)" if "-" in text else ""
                self.add(
                    attribute,
                    "affinity-format",
                    f"affinity={text!r}{hint}: write the sysfs cpumap, 32-bit hex groups most "
                    "significant first, e.g. 0000ffff,ffffffff",
                )
        elif key == ("cpu", "arch"):
            if text not in ARCHES:
                self.add(attribute, "arch", f"arch={text!r}: NCCL knows x86_64, arm64 and ppc64")
        elif key == ("cpu", "vendor"):
            if text not in CPU_VENDORS:
                self.add(
                    attribute,
                    "cpu-vendor",
                    f"vendor={text!r}: NCCL knows GenuineIntel, AuthenticAMD, CentaurHauls",
                )
        elif key == ("net", "latency"):
            if not FLOAT.match(text):
                self.add(attribute, "float-format", f"latency={text!r} is not a decimal number")
        elif key in HEXES:
            if not HEX.match(text):
                self.add(attribute, "hex-format", f"{name}={text!r}: write 0x plus hex digits")
        elif key in FLAGS:
            if text not in ("0", "1"):
                self.add(attribute, "flag-value", f"{name}={text!r}: use 0 or 1")
        elif key in INTEGERS or key in SIGNED:
            pattern = SIGNED_INT if key in SIGNED else INT
            if not pattern.match(text):
                reason = (
                    'a leading 0 makes NCCL read octal ("08" reads as 0, "010" as 8)'
                    if re.match(r"^-?0[0-9]+$", text)
                    else "not a decimal integer"
                )
                self.add(attribute, "integer-format", f"{name}={text!r}: {reason}")
                return
            self.number(node, attribute)

    def busid(self, attribute: Attribute, pattern: re.Pattern[str]) -> None:
        text = attribute.value
        if pattern.match(text):
            return
        if pattern.match(text.lower()):
            message = "upper-case hex never matches NCCL's lower-case ids; the node is unused"
        else:
            message = "write DDDD:BB:DD.F with a 4-digit domain, e.g. 0000:1b:00.0"
        self.add(attribute, "busid-format", f"{attribute.name}={text!r}: {message}")

    def number(self, node: Node, attribute: Attribute) -> None:
        value = strtol(attribute.value)
        if value is None:
            return
        if (node.name, attribute.name) == ("gpu", "sm") and not 30 <= value < 200:
            self.add(attribute, "gpu-sm", f"sm={value}: write major*10+minor, e.g. 90 for H100")
        if (node.name, attribute.name) == ("net", "speed"):
            if value > MAX_NET_SPEED:
                self.add(attribute, "net-speed", f"speed={value} overflows NCCL's 32-bit integer")
            elif 0 < value < 1000:
                self.add(
                    attribute,
                    "net-speed",
                    f"speed={value}: NCCL reads Mb/s (400G is 400000)",
                    Level.WARNING,
                )

    # -- whole file ------------------------------------------------------------------------------


def _missing(element: str, name: str) -> str:
    """What NCCL does without a required attribute."""
    if element == "gpu":
        return (
            f"<gpu> has no {name}: NCCL asks NVML for it (xml.cc ncclTopoGetXmlFromGpu), so the "
            "file does not stand alone and fails where NVML cannot answer"
        )
    if element == "nvlink" and name == "target":
        return (
            "<nvlink> has no target: NCCL reads it to fill tclass and to find the peer "
            "(xml.cc ncclTopoGetXmlFromGpu, topo.cc ncclTopoAddNvLinks) and fails without it"
        )
    return (
        f"<{element}> has no {name}: NCCL fails with 'Attribute {name} of node {element} not found'"
    )
