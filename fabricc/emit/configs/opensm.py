"""Emit stage, configs: OpenSM files of one InfiniBand subnet.

Consumes an IbSubnet (GUIDs, roots, compute nodes, routing engine) and the network's
subnet_manager spec; produces, for the folder configs/<network>-sm/ (one per plane when a network
has several): opensm.conf (routing engine and its GUID files, partitions, QoS and SL-to-VL),
root_guids.conf (node GUIDs of the top tier), cn_guids.conf (port GUIDs of the compute nodes'
CAs), partitions.conf (the default partition plus the spec's tenant partitions, members = port
GUIDs of the named node groups) and guids.yaml (every IB node name with its GUID, in the format
subnet_manager.guids reads back). With several subnet-manager nodes, the first is the master
(sm_priority 15) and the others standbys with falling priorities (their `opensm -p` in the file).
Where the network wants adaptive routing or SHARP and its switches have them, nvidia-sm.conf is
the same file for NVIDIA's SM (UFM, MLNX OpenSM) with its AR routing engine (ar_updn with the
root GUID file over a fat-tree, NDR and XDR alike) and sharp_enabled; opensm.conf stays what
upstream OpenSM reads. Files name their siblings by absolute path under SM_DIR, where the
provisioning system puts them on the subnet-manager node.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.features import adaptive_routing, sharp
from fabricc.emit.configs.guids import guid_text
from fabricc.emit.configs.ibfabric import IbSubnet
from fabricc.emit.configs.torus2qos import torus_conf
from fabricc.emit.templating import render
from fabricc.errors import DesignError, error
from fabricc.spec.yamlsource import format_path

SM_DIR = "/etc/opensm"
DEFAULT_PKEY = 0x7FFF
ROOTED_ENGINES = ("ftree", "updn", "ar_updn")  # engines that read root_guid_file
TORUS_ENGINE = "torus-2QoS"  # reads torus_config
# QoS: 8 data VLs (Quantum-2 switches and ConnectX-7 HCAs have VL0-VL7), equal low-priority
# arbitration weights, no high-priority table, SL n on VL n mod 8.
QOS_MAX_VLS = 8
QOS_VLARB_WEIGHT = 64
SLS = 16
QOS_PREFIXES = ("qos", "qos_ca", "qos_sw0", "qos_swe", "qos_rtr")
QOS_ENDPOINT_PREFIXES = ("qos_ca", "qos_sw0", "qos_rtr")  # links with a CA (or port 0) at one end
TORUS_ENDPOINT_VLS = 2  # torus-2QoS: endpoint links use VLs 0-1 (weights 0 on VLs 2-7)
MASTER_PRIORITY = 15  # highest sm_priority: the master; standbys count down from 14
# NVIDIA SM's adaptive-routing engines over the upstream ones. Fat-trees: ar_updn with the root
# GUID file. NVIDIA's "InfiniBand Cluster Bring-up Procedure", "Adaptive Routing": the default
# routing_engine "ar_updn ... is relevant for a fat tree topology", and "It is recommended to
# specify the correct root GUIDs file"; UFM Enterprise User Manual v6.21, "Appendix - Adaptive
# Routing" (docs.nvidia.com/networking/display/ufmenterpriseumv6210): "For XDR topologies, only
# the ar_updn routing mode is supported", "The root_guid file must be provided by the customer",
# "The ar_ftree routing mode is no longer supported for XDR topologies".
AR_ENGINES = {"ftree": "ar_updn", "updn": "ar_updn", "ar_updn": "ar_updn", "dor": "ar_dor"}
SHARP_ON, SHARP_OFF = 1, 0  # NVIDIA SM sharp_enabled: 0 disable, 1 enable (2: leave as is)


@dataclass(frozen=True, slots=True)
class Member:
    guid: str
    membership: str
    name: str


@dataclass(frozen=True, slots=True)
class PartitionPlan:
    name: str
    pkey: str
    ipoib: bool
    membership: str  # default membership (defmember)
    members: tuple[Member, ...]


def _partitions(ctx: ConfigContext, subnet: IbSubnet) -> list[PartitionPlan]:
    spec = ctx.fabric.loaded.networks[subnet.network].spec.subnet_manager
    plans = []
    for name, partition in spec.partitions.items():
        groups = set(partition.members)
        members = tuple(
            Member(guid_text(ca.guid), partition.membership, ca.name)
            for ca in subnet.cas
            if ca.tier in groups
        )
        if not members:
            resolved = ctx.fabric.loaded.networks[subnet.network]
            path = (*resolved.path, "subnet_manager", "partitions", name, "members")
            raise DesignError(
                [
                    error(
                        f"partition {name!r} has no member in subnet {subnet.folder}",
                        path=format_path(path),
                        location=ctx.fabric.loaded.source.value(path),
                        hint="name node groups whose ports attach to this network",
                    )
                ]
            )
        plans.append(
            PartitionPlan(name, f"0x{partition.pkey:04x}", partition.ipoib, "full", members)
        )
    return plans


@dataclass(frozen=True, slots=True)
class SmNode:
    name: str
    priority: int


def sm_nodes(subnet: IbSubnet) -> list[SmNode]:
    """The subnet-manager nodes in spec order: master first (15), then standbys (14, 13, ...)."""
    names = list(dict.fromkeys(ca.device for ca in subnet.cas if ca.sm))
    return [SmNode(n, max(MASTER_PRIORITY - i, 1)) for i, n in enumerate(names)]


@dataclass(frozen=True, slots=True)
class NvidiaSm:
    engine: str
    engine_note: str
    sharp: int | None


def nvidia_sm(ctx: ConfigContext, subnet: IbSubnet) -> NvidiaSm | None:
    """What nvidia-sm.conf changes, or None when the network wants neither AR nor SHARP (or its
    switches have neither)."""
    models = [ctx.catalog.switches[m] for m in {ctx.devices[n.name].model for n in subnet.switches}]
    ar = adaptive_routing(ctx, subnet.network)
    engine, note = subnet.engine, "adaptive routing off"
    if ar and subnet.engine in AR_ENGINES:
        engine = AR_ENGINES[subnet.engine]
        note = f"adaptive routing over {subnet.engine}" + (
            " as ar_updn with the root GUID file (NVIDIA's AR engine for fat-trees, the only one"
            " UFM supports on XDR)"
            if engine == "ar_updn"
            else ""
        )
    elif ar:
        note = f"{subnet.engine} has no adaptive-routing engine"
    can_sharp = bool(models) and all(m.sharp for m in models)
    level = (SHARP_ON if sharp(ctx, subnet.network) else SHARP_OFF) if can_sharp else None
    if engine == subnet.engine and level != SHARP_ON:
        return None
    return NvidiaSm(engine, note, level)


def _qos(torus: bool) -> dict[str, object]:
    """QoS settings; under torus-2QoS (man torus-2QoS) the engine owns SL-to-VL (it picks the VL
    that breaks each ring's cycle) and endpoint links carry VLs 0-1 only."""
    weights = ",".join(f"{vl}:{QOS_VLARB_WEIGHT}" for vl in range(QOS_MAX_VLS))
    endpoint = (
        ",".join(
            f"{vl}:{QOS_VLARB_WEIGHT if vl < TORUS_ENDPOINT_VLS else 0}"
            for vl in range(QOS_MAX_VLS)
        )
        if torus
        else weights
    )
    return {
        "note": "SL-to-VL set by torus-2QoS, endpoint links on VLs 0-1"
        if torus
        else "the same for CAs, switch external ports and switch port 0",
        "max_vls": QOS_MAX_VLS,
        "high_limit": 0,
        "vlarb_high": ",".join(f"{vl}:0" for vl in range(QOS_MAX_VLS)),
        "sections": [
            {"prefix": p, "vlarb_low": endpoint if p in QOS_ENDPOINT_PREFIXES else weights}
            for p in QOS_PREFIXES
        ],
        "sl2vl": None if torus else ",".join(str(sl % QOS_MAX_VLS) for sl in range(SLS)),
    }


def _files(engine: str, subnet: IbSubnet, computes: bool) -> dict[str, str | None]:
    """The files an engine reads (opensm.conf options naming them), None where it reads none."""
    return {
        "root_guid_file": f"{SM_DIR}/root_guids.conf"
        if engine in ROOTED_ENGINES and subnet.roots
        else None,
        "cn_guid_file": f"{SM_DIR}/cn_guids.conf" if engine == "ftree" and computes else None,
        "torus_config": f"{SM_DIR}/torus-2QoS.conf" if engine == TORUS_ENGINE else None,
        "partition_config_file": f"{SM_DIR}/partitions.conf",
        "config_file": f"{SM_DIR}/opensm.conf",
    }


def opensm_files(ctx: ConfigContext, subnet: IbSubnet) -> list[Artifact]:
    design = ctx.fabric.name
    partitions = _partitions(ctx, subnet)
    computes = [ca for ca in subnet.cas if ca.compute]
    files = _files(subnet.engine, subnet, bool(computes))
    values = {
        "design": design,
        "subnet": subnet,
        "sm_nodes": sm_nodes(subnet),
        "qos": _qos(subnet.engine == TORUS_ENGINE),
    }
    folder = f"configs/{subnet.folder}"
    artifacts: list[Artifact] = [
        (
            f"{folder}/opensm.conf",
            render("opensm/opensm.conf.j2", nvidia=None, files=files, **values),
        )
    ]
    nvidia = nvidia_sm(ctx, subnet)
    if nvidia is not None:
        nvidia_files = _files(nvidia.engine, subnet, bool(computes))
        artifacts.append(
            (
                f"{folder}/nvidia-sm.conf",
                render("opensm/opensm.conf.j2", nvidia=nvidia, files=nvidia_files, **values),
            )
        )
    if files["root_guid_file"] is not None or (
        nvidia is not None and nvidia.engine in ROOTED_ENGINES and subnet.roots
    ):
        artifacts.append(
            (f"{folder}/root_guids.conf", "".join(f"{guid_text(n.guid)}\n" for n in subnet.roots))
        )
    if files["torus_config"] is not None:
        dimensions = ctx.fabric.networks[subnet.network].dimensions
        artifacts.append((f"{folder}/torus-2QoS.conf", torus_conf(subnet, dimensions, design)))
    if files["cn_guid_file"] is not None:
        artifacts.append(
            (f"{folder}/cn_guids.conf", "".join(f"{guid_text(n.guid)}\n" for n in computes))
        )
    artifacts.append(
        (
            f"{folder}/partitions.conf",
            render(
                "opensm/partitions.conf.j2",
                design=design,
                subnet=subnet,
                default_pkey=f"0x{DEFAULT_PKEY:04x}",
                default_membership="limited" if partitions else "full",
                partitions=partitions,
            ),
        )
    )
    artifacts.append(
        (
            f"{folder}/guids.yaml",
            render(
                "opensm/guids.yaml.j2",
                design=design,
                subnet=subnet,
                # a line per node (a hundred thousand at 100k GPUs), formatted here
                nodes="".join(
                    [f'"{n.name}": {guid_text(n.guid)}\n' for n in subnet.nodes.values()]
                ),
            ),
        )
    )
    return artifacts
