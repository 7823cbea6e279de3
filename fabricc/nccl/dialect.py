"""Check stage for NCCL topology files: the NCCL dialect as data.

Consumes nothing; provides the tables that fabricc.nccl.check and fabricc.nccl.consistency apply:
which elements nest where, which attributes exist and which NCCL requires, the value
dictionaries and formats, and the limits. Integers are read the way NCCL reads them (`strtol`
with base 0). The required attributes and what NCCL fills in itself follow NCCL 2.30.7's own
code (NVIDIA/nccl, src/graph/xml.cc, topo.cc; NCCL_VERSION below).
"""

from __future__ import annotations

import re

from fabricc.catalog.host_topology import BUSID_PATTERN

NCCL_VERSION = "2.30.7"  # the NCCL release whose code the rules below were read from
MAX_ELEMENTS = 256  # NCCL_TOPO_XML_MAX_NODES (src/graph/topo.h)
MAX_CHILDREN = 640  # 2.29+
MAX_CHILDREN_COMPAT = 128  # 2.19-2.28
MAX_ATTRIBUTES = 16
MAX_ATTRIBUTES_SAFE = 12  # NCCL itself may add up to ~3
MAX_NET_SPEED = 2**31 - 1

CHILDREN: dict[str, frozenset[str]] = {
    "system": frozenset({"cpu"}),
    "cpu": frozenset({"pci", "nic"}),
    "pci": frozenset({"pci", "gpu", "nic", "pcilink"}),
    "gpu": frozenset({"nvlink", "c2c"}),
    "nic": frozenset({"net"}),
    "nvlink": frozenset(),
    "c2c": frozenset(),
    "net": frozenset(),
    "pcilink": frozenset(),
}
# The attributes of <pci>, in the order NCCL_TOPO_DUMP_FILE writes them; a dump carries all of
# them on the path above a <net> (NCCL src/graph/xml.cc ncclTopoFuseXml merges only equal nodes).
PCI_ATTRIBUTES = (
    "busid",
    "class",
    "vendor",
    "device",
    "subsystem_vendor",
    "subsystem_device",
    "link_speed",
    "link_width",
)
ATTRIBUTES: dict[str, frozenset[str]] = {
    "system": frozenset({"version", "name"}),
    "cpu": frozenset({"numaid", "affinity", "arch", "vendor", "familyid", "modelid", "host_hash"}),
    "pci": frozenset(PCI_ATTRIBUTES),
    "gpu": frozenset({"dev", "sm", "rank", "gdr", "mlopart"}),
    "nvlink": frozenset({"target", "count", "tclass"}),
    "c2c": frozenset({"bw", "count"}),
    "nic": frozenset(),
    "net": frozenset(
        {
            "name",
            "dev",
            "speed",
            "port",
            "latency",
            "guid",
            "maxconn",
            "gdr",
            "coll",
            "net",
            "gin",
            "rma",
            "rail",
            "plane",
        }
    ),
    "pcilink": frozenset({"target"}),
}
INTERNAL = frozenset({"keep", "host_hash", "mlopart"})
# Attributes NCCL reads with xmlGetAttrInt/xmlGetAttrStr, which fail when the attribute is absent
# (topo.cc ncclTopoAddCpu, ncclTopoAddPci, ncclTopoAddNvLinks, ncclTopoAddC2c, ncclTopoAddPciLinks),
# less those NCCL sets itself before it reads them:
# - <gpu rank gdr>: ncclTopoGetSystem sets rank and (when absent) gdr on each rank's own GPU;
# - <nvlink tclass>: ncclTopoGetXmlFromGpu fills it from the target's sysfs class (NVSwitch when
#   the target is not a PCI device);
# - <pci> holding a <gpu>: ncclTopoFillGpu sets class 0x03 when absent and ncclTopoGetXmlFromSys
#   the ids and link from NVML/sysfs (GPU_PCI_REQUIRED);
# - <net dev>: ncclTopoPopulateNics sets it to the plugin's device index. A <net> is found by its
#   name (fabricc.nccl.check says what a missing name does).
# <gpu dev sm> come from NVML when absent: a file without them does not stand alone.
REQUIRED: dict[str, tuple[str, ...]] = {
    "cpu": ("numaid", "arch"),
    "pci": ("busid", "class", "link_speed", "link_width"),
    "gpu": ("dev", "sm"),
    "nvlink": ("count",),
    "c2c": ("bw", "count"),
    "pcilink": ("target",),
}
GPU_PCI_REQUIRED = ("busid",)
# Bits of a GPU's bus id (as busIdToInt64 reads it: the function is the last hex digit) that
# NCCL 2.30.7 keeps for the MLOPart partition (topo.h NCCL_TOPO_MLOPART_MASK; no earlier release
# checks them).
MLOPART_MASK = 0x3
NVSWITCH_CLASS = "0x068000"  # PCI_NVSWITCH_CLASS, what NCCL assumes for an unknown NVLink target
LINK_SPEEDS = frozenset(
    {
        "",
        "2.5 GT/s",
        "5 GT/s",
        "8 GT/s",
        "16 GT/s",
        "32 GT/s",
        "2.5 GT/s PCIe",
        "5.0 GT/s PCIe",
        "8.0 GT/s PCIe",
        "16.0 GT/s PCIe",
        "32.0 GT/s PCIe",
        "64.0 GT/s PCIe",
    }
)
LINK_WIDTHS = frozenset({"", "0", "1", "2", "4", "8", "16", "32"})
ARCHES = frozenset({"x86_64", "arm64", "ppc64"})
CPU_VENDORS = frozenset({"GenuineIntel", "AuthenticAMD", "CentaurHauls", "  Shanghai  "})
CPUID_MODEL_VENDORS = frozenset({"GenuineIntel", "CentaurHauls", "  Shanghai  "})
# NVSwitch links per GPU by generation (NCCL src/graph/topo.cc ncclTopoAddNvLinks; public dumps):
# A100 12, H100/H200/B200/GB200/GB300 18.
NVSWITCH_LINKS = {80: 12, 90: 18, 100: 18, 103: 18}

BUSID = re.compile(BUSID_PATTERN)
TARGET = re.compile(rf"{BUSID_PATTERN}|^fffffff:ff:ff\.0$|^fffffff:ffff:ff$")
CLASS_CODE = re.compile(r"^0x[0-9a-f]{6}$")
INT = re.compile(r"^(?:0|[1-9][0-9]*|0x[0-9a-fA-F]+)$")
SIGNED_INT = re.compile(r"^(?:-1|0|[1-9][0-9]*|0x[0-9a-fA-F]+)$")
HEX = re.compile(r"^0x[0-9a-fA-F]{1,16}$")
FLOAT = re.compile(r"^[0-9]+(?:\.[0-9]+)?$")
AFFINITY = re.compile(r"^[0-9a-f]{1,8}(?:,[0-9a-f]{8})*$")

# Value formats by (element, attribute); "*" applies to every element.
INTEGERS = {
    ("cpu", "familyid"),
    ("cpu", "modelid"),
    ("gpu", "sm"),
    ("gpu", "rank"),
    ("nvlink", "count"),
    ("c2c", "bw"),
    ("c2c", "count"),
    ("net", "dev"),
    ("net", "speed"),
    ("net", "port"),
    ("net", "maxconn"),
    ("net", "rail"),
    ("net", "plane"),
}
SIGNED = {("cpu", "numaid"), ("gpu", "dev"), ("gpu", "mlopart")}
FLAGS = {
    ("gpu", "gdr"),
    ("net", "gdr"),
    ("net", "coll"),
    ("net", "net"),
    ("net", "gin"),
    ("net", "rma"),
}
HEXES = {
    ("pci", "vendor"),
    ("pci", "device"),
    ("pci", "subsystem_vendor"),
    ("pci", "subsystem_device"),
    ("net", "guid"),
    ("cpu", "host_hash"),
}


def strtol(text: str) -> int | None:
    """An integer the way NCCL reads it (base 0: 0x hex, leading 0 octal), or None."""
    value = text.strip()
    sign = -1 if value.startswith("-") else 1
    value = value.lstrip("+-")
    try:
        if value.lower().startswith("0x"):
            return sign * int(value, 16)
        if len(value) > 1 and value.startswith("0"):
            return sign * int(value, 8)
        return sign * int(value)
    except ValueError:
        return None
