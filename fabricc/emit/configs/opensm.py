"""Emit stage, configs: OpenSM files of one InfiniBand subnet.

Consumes an IbSubnet (GUIDs, roots, compute nodes, routing engine) and the network's
subnet_manager spec; produces, for the folder configs/<network>-sm/ (one per plane when a network
has several): opensm.conf (routing engine and its GUID files, partitions, QoS over as many data
VLs as the design's SLs need, SL-to-VL), root_guids.conf (node GUIDs of the top tier; a torus's
origin switch), cn_guids.conf (port GUIDs of the compute nodes' CAs), partitions.conf (the
default partition plus the spec's tenant partitions, members = port GUIDs of the named node
groups, IPoIB MTU by link speed) and guids.yaml (every IB node name with its GUID, in the format
subnet_manager.guids reads back). With several subnet-manager nodes, the first is the master
(sm_priority 15) and the others standbys with falling priorities (their `opensm -p` in the file).
Where NVIDIA's SM (UFM, MLNX OpenSM) would run anything else, nvidia-sm.conf is the same file
for it: its engine for the topology (ar_updn with the root GUID file over a fat-tree, NDR and
XDR alike; dfp on a Dragonfly+: spec/routing.py), sharp_enabled (2, or 1 with the reason where
SHARP's Aggregation Manager builds no tree under the engine), and for XDR subnets, which
upstream OpenSM 3.3.x cannot run; with SHARP on ufm-gv-sharp.cfg starts UFM's SHARP Aggregation
Manager. opensm.conf stays what upstream OpenSM reads; each file's header says which SM it is
for. Files name their siblings by absolute path under SM_DIR, where the provisioning system
puts them on the subnet-manager node.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.checks.guids import guid_text
from fabricc.emit import Artifact
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.features import adaptive_routing, sharp, sharp_blocker, sharp_capable
from fabricc.emit.configs.ibfabric import IbSubnet
from fabricc.emit.configs.torus2qos import torus_conf
from fabricc.emit.templating import render
from fabricc.errors import DesignError, error
from fabricc.spec.routing import (
    NUE_ENGINE,
    NUE_MAX_VLS,
    TORUS_ENGINE,
    nvidia_family_engine,
)
from fabricc.spec.yamlsource import format_path

SM_DIR = "/etc/opensm"
DEFAULT_PKEY = 0x7FFF
ROOTED_ENGINES = ("ftree", "updn", "ar_updn")  # engines that read root_guid_file
# QoS: as many data VLs as the design's SLs use, since every operational VL takes its share of a
# port's buffers. The design's traffic runs on SL 0 (NCCL_IB_SL, IPoIB and storage keep the
# default): one data VL. torus-2QoS (man torus-2QoS, "QUALITY OF SERVICE CONFIGURATION") encodes
# the datelines a path crosses in SL bits 0-2 and uses "VL values 0-3 to implement one of its
# supported QoS levels" on inter-switch links: four, which also route around a failed switch
# (osm_torus.c: "need 4"). max_op_vls takes PortInfo's OperationalVLs code (IBA 14.2.5.6: 1 VL0,
# 2 VL0-1, 3 VL0-3, 4 VL0-7, 5 VL0-14; osm_subnet.c's default is 5).
DESIGN_SLS = (0,)
TORUS_VLS = 4
OP_VLS_CODE = {1: 1, 2: 2, 4: 3, 8: 4, 15: 5}
QOS_VLARB_WEIGHT = 64
SLS = 16
QOS_PREFIXES = ("qos", "qos_ca", "qos_sw0", "qos_swe", "qos_rtr")
QOS_ENDPOINT_PREFIXES = ("qos_ca", "qos_sw0", "qos_rtr")  # links with a CA (or port 0) at one end
TORUS_ENDPOINT_VLS = 1  # torus-2QoS: endpoint links carry QoS level 0 on VL 0 (level 1: VL 1)
# IPoIB broadcast-group MTU of the partitions, IBTA-coded (OpenSM doc/partition-config.txt: "mtu=4
# for 2048", the default). MLNX_OFED User Manual, OpenSM partition configuration: "To use 4K MTU,
# edit that entry to mtu=5". fabricc uses 4096 from NDR up, where NVIDIA's HCAs and switches
# (ConnectX-7/8, Quantum-2/X800) all carry it, and keeps OpenSM's 2048 below.
IPOIB_MTU_CODE = {2048: 4, 4096: 5}
IPOIB_4K_FROM_GBPS = 400
MASTER_PRIORITY = 15  # highest sm_priority: the master; standbys count down from 14
# NVIDIA SM's adaptive-routing engines over the upstream ones. Fat-trees: ar_updn with the root
# GUID file. NVIDIA's "InfiniBand Cluster Bring-up Procedure", "Adaptive Routing": the default
# routing_engine "ar_updn ... is relevant for a fat tree topology", and "It is recommended to
# specify the correct root GUIDs file"; UFM Enterprise User Manual v6.21, "Appendix - Adaptive
# Routing" (docs.nvidia.com/networking/display/ufmenterpriseumv6210): "For XDR topologies, only
# the ar_updn routing mode is supported", "The root_guid file must be provided by the customer",
# "The ar_ftree routing mode is no longer supported for XDR topologies".
AR_ENGINES = {"ftree": "ar_updn", "updn": "ar_updn", "ar_updn": "ar_updn", "dor": "ar_dor"}
# engines of NVIDIA's SM that route adaptively themselves, with their AR group algorithm
# (InfiniBand Cluster Bring-up Procedure, "Adaptive Routing": "DF_PLUS: This algorithm is
# designed for the Dragonfly plus topology")
AR_NATIVE = {"dfp": "DF_PLUS"}
# Upstream OpenSM's highest link speed (linux-rdma/opensm include/iba/ib_types.h, 3.3.x: NDR);
# an XDR subnet (800G ports) is NVIDIA's SM's alone.
UPSTREAM_MAX_GBPS = 400
# NVIDIA SM sharp_enabled: 0 ignore SHARP, 1 disable it on every SHARP switch, 2 enable it (the
# values of MLNX OpenSM's opensm.conf; Mellanox/nccl-rdma-sharp-plugins .ci/configure_sharp.sh
# checks for "sharp_enabled 2" before it starts the SHARP Aggregation Manager) - the scale of
# its sister option vs_key_enable (UFM "Subnet Manager Default Properties": 0 ignore, 1 disable,
# 2 enable).
SHARP_ON, SHARP_OFF = 2, 1
# UFM starts its SHARP Aggregation Manager only when conf/gv.cfg says so: "SHARP Aggregation
# Manager is disabled by default. To enable it, set: [Sharp] sharp_enabled = true" (UFM
# Enterprise User Manual, "Additional Configuration (Optional)").
UFM_SHARP_SECTION = "[Sharp]\nsharp_enabled = true\n"


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
    engine_reason: str  # the "# Routing:" line: why this engine
    engine_note: str  # adaptive routing over it, or why not
    sharp: int | None
    sharp_note: str  # why SHARP is on or off


def upstream_limit(ctx: ConfigContext, subnet: IbSubnet) -> str | None:
    """Why upstream OpenSM 3.3.x cannot run this subnet (links faster than NDR), or None."""
    speed = ctx.fabric.loaded.networks[subnet.network].fabric_speed
    if speed <= UPSTREAM_MAX_GBPS:
        return None
    return (
        f"its {speed}G links are XDR, beyond upstream OpenSM 3.3.x (its highest link speed is "
        "NDR: linux-rdma/opensm include/iba/ib_types.h)"
    )


def nvidia_sm(ctx: ConfigContext, subnet: IbSubnet) -> NvidiaSm | None:
    """What nvidia-sm.conf changes, or None where NVIDIA's SM would run opensm.conf as it is
    (the same engine, SHARP not on, links upstream OpenSM knows)."""
    spec = ctx.fabric.loaded.networks[subnet.network].spec
    family = nvidia_family_engine(spec)
    base, reason = family if family is not None else (subnet.engine, subnet.engine_reason)
    ar = adaptive_routing(ctx.fabric, subnet.network)
    engine, note = base, "adaptive routing off"
    if ar and base in AR_ENGINES:
        engine = AR_ENGINES[base]
        note = f"adaptive routing over {base}" + (
            " as ar_updn with the root GUID file (NVIDIA's AR engine for fat-trees, the only one"
            " UFM supports on XDR)"
            if engine == "ar_updn"
            else ""
        )
    elif ar and base in AR_NATIVE:
        note = f"adaptive routing by {base} itself ({AR_NATIVE[base]} AR groups)"
    elif ar:
        note = f"{base} has no adaptive-routing engine"
    level, sharp_note = None, ""
    blocker = sharp_blocker(ctx.fabric, subnet.network)
    if sharp_capable(ctx.fabric, subnet.network):
        on = sharp(ctx.fabric, subnet.network)
        level = SHARP_ON if on else SHARP_OFF
        sharp_note = (
            "on (subnet_manager.sharp)"
            if on
            else f"off: {blocker}"
            if blocker is not None
            else "off (subnet_manager.sharp)"
        )
    # opensm.conf serves NVIDIA's SM as well where nothing here differs; a SHARP that cannot
    # build trees is said off (sharp_enabled 1) with the reason
    same = engine == subnet.engine and level != SHARP_ON and blocker is None
    if same and upstream_limit(ctx, subnet) is None:
        return None
    return NvidiaSm(engine, reason, note, level, sharp_note)


def data_vls(engine: str) -> int:
    """Data VLs the subnet needs: one per SL the design uses, or torus-2QoS's four."""
    return TORUS_VLS if engine == TORUS_ENGINE else len(DESIGN_SLS)


def _qos(engine: str) -> dict[str, object]:
    """QoS settings over data_vls(engine) VLs with equal arbitration weights. Under torus-2QoS
    the engine owns SL-to-VL (it picks the VL that breaks each ring's cycle), endpoint links
    carry VL 0, and the generic qos_vlarb_high/qos_vlarb_low are not written (man torus-2QoS:
    the engine maps SLs to VLs differently on inter-switch and endport links, "This is why
    qos_vlarb_high and qos_vlarb_low should not be used")."""
    torus = engine == TORUS_ENGINE
    vls = data_vls(engine)
    sls = ", ".join(map(str, DESIGN_SLS))
    vl_of = {sl: vl for vl, sl in enumerate(DESIGN_SLS)}
    return {
        "note": f"SL-to-VL set by torus-2QoS: VLs 0-{vls - 1} on inter-switch links (one QoS "
        "level, a failed switch routed around), VL 0 on endpoint links"
        if torus
        else f"the design's traffic uses SL {sls}: {vls} data VL{'s' if vls > 1 else ''}, "
        "the same for CAs, switch external ports and switch port 0",
        "op_vls": OP_VLS_CODE[vls],
        "op_vls_note": f"VL0-{vls - 1}" if vls > 1 else "VL0 only",
        "high_limit": 0,
        "sections": [_section(p, vls, torus) for p in QOS_PREFIXES if not (torus and p == "qos")],
        # each SL the design uses on a VL of its own, any other SL on VL 0
        "sl2vl": None if torus else ",".join(str(vl_of.get(sl, 0)) for sl in range(SLS)),
    }


def ipoib_mtu(speed_gbps: int) -> tuple[int, int]:
    """The IPoIB MTU (bytes, IBTA code) of a network's partitions by its link speed."""
    size = 4096 if speed_gbps >= IPOIB_4K_FROM_GBPS else 2048
    return size, IPOIB_MTU_CODE[size]


def _section(prefix: str, vls: int, torus: bool) -> dict[str, object]:
    """One qos_<prefix>_* block: its VLs (torus-2QoS endpoint links: VL 0) at equal low-priority
    weights, no high-priority table."""
    count = min(vls, TORUS_ENDPOINT_VLS) if torus and prefix in QOS_ENDPOINT_PREFIXES else vls
    return {
        "prefix": prefix,
        "max_vls": count,
        "vlarb_high": ",".join(f"{vl}:0" for vl in range(count)),
        "vlarb_low": ",".join(f"{vl}:{QOS_VLARB_WEIGHT}" for vl in range(count)),
    }


def _files(engine: str, subnet: IbSubnet, computes: bool) -> dict[str, str | None]:
    """The files an engine reads (opensm.conf options naming them), None where it reads none."""
    return {
        "root_guid_file": f"{SM_DIR}/root_guids.conf"
        if engine in ROOTED_ENGINES and subnet.roots
        else None,
        "cn_guid_file": f"{SM_DIR}/cn_guids.conf" if engine == "ftree" and computes else None,
        "torus_config": f"{SM_DIR}/torus-2QoS.conf" if engine == TORUS_ENGINE else None,
        "nue_max_num_vls": str(NUE_MAX_VLS) if engine == NUE_ENGINE else None,
        "partition_config_file": f"{SM_DIR}/partitions.conf",
        "config_file": f"{SM_DIR}/opensm.conf",
    }


def opensm_files(ctx: ConfigContext, subnet: IbSubnet) -> list[Artifact]:
    design = ctx.fabric.name
    partitions = _partitions(ctx, subnet)
    computes = [ca for ca in subnet.cas if ca.compute]
    files = _files(subnet.engine, subnet, bool(computes))
    values_sm_nodes = sm_nodes(subnet)
    values = {
        "upstream_limit": upstream_limit(ctx, subnet),
        "design": design,
        "subnet": subnet,
        "sm_nodes": values_sm_nodes,
        "qos": _qos(subnet.engine),
    }
    folder = f"configs/{subnet.folder}"
    nvidia = nvidia_sm(ctx, subnet)
    artifacts: list[Artifact] = [
        (
            f"{folder}/opensm.conf",
            render(
                "opensm/opensm.conf.j2",
                nvidia=None,
                has_nvidia=nvidia is not None,
                files=files,
                **values,
            ),
        )
    ]
    nvidia_files = _files(nvidia.engine, subnet, bool(computes)) if nvidia is not None else {}
    if nvidia is not None:
        artifacts.append(
            (
                f"{folder}/nvidia-sm.conf",
                render(
                    "opensm/opensm.conf.j2",
                    nvidia=nvidia,
                    has_nvidia=True,
                    files=nvidia_files,
                    **values,
                ),
            )
        )
    if nvidia is not None and nvidia.sharp == SHARP_ON:
        hosts = ", ".join(n.name for n in values_sm_nodes) or "the UFM hosts"
        artifacts.append(
            (
                f"{folder}/ufm-gv-sharp.cfg",
                f"# UFM gv.cfg section of subnet {subnet.folder} ({design}), generated by "
                "fabricc:\n# SHARP on end to end - the SM enables it on the switches "
                "(nvidia-sm.conf sharp_enabled 2),\n# the SHARP Aggregation Manager builds the "
                "trees (off by default in UFM), NCCL\n# uses them (nccl/*.env "
                f"NCCL_COLLNET_ENABLE=1). Merge into UFM's conf/gv.cfg on\n# {hosts}, then "
                f"restart UFM.\n{UFM_SHARP_SECTION}",
            )
        )
    # the root GUIDs, where opensm.conf or nvidia-sm.conf names them
    if files["root_guid_file"] is not None or nvidia_files.get("root_guid_file") is not None:
        artifacts.append(
            (f"{folder}/root_guids.conf", "".join(f"{guid_text(n.guid)}\n" for n in subnet.roots))
        )
    if files["torus_config"] is not None:
        dimensions = ctx.fabric.networks[subnet.network].dimensions
        artifacts.append(
            (
                f"{folder}/torus-2QoS.conf",
                torus_conf(subnet, dimensions, ctx.fabric.devices, design),
            )
        )
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
                mtu=ipoib_mtu(ctx.fabric.loaded.networks[subnet.network].fabric_speed),
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
