"""Emit-stage helper: the NCCL environment settings that match the design, as a KEY=VALUE file.

Consumes a GroupPlan (rail NICs, compute and in-band networks); produces the settings with a
comment saying where each value comes from, and the text of the .env file. The file is valid at
once as a systemd EnvironmentFile, a shell file for `set -a; . FILE`, and /etc/nccl.conf: NCCL's
reader splits each line at its first '=' and skips lines without one, so comments never contain
an equals sign and values are never quoted.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from fabricc.nccl.plan import GroupPlan
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.spec.routing import NUE_ENGINE, NUE_MAX_VLS, spec_engine
from fabricc.spec.topology import RAIL_ONLY

INSTALL_DIR = "/etc/nccl"  # where README.md tells operators to put the files
# Interfaces NCCL must not pick for its socket bootstrap when no in-band interface is known:
# loopback, container bridges, libvirt bridges and IPoIB interfaces (ib*, ibp*) of the compute rails.
SOCKET_EXCLUDE = ("lo", "docker", "virbr")


@dataclass(frozen=True, slots=True)
class Setting:
    name: str
    value: str
    comment: tuple[str, ...]


def topology_path(file_stem: str) -> str:
    return f"{INSTALL_DIR}/{file_stem}.xml"


def settings(
    plan: GroupPlan,
    file_stem: str,
    has_topology: bool,
    *,
    sharp: bool = False,
    sharp_off: str | None = None,
    spectrum_x: bool = False,
    rail_stems: tuple[str, ...] = (),
) -> list[Setting]:
    """`sharp`: the InfiniBand compute network runs SHARP (nvidia-sm.conf sharp_enabled 2);
    `sharp_off`: why it does not although the spec wants it (no SHARP tree under its routing);
    `spectrum_x`: the compute network is Ethernet with adaptive routing on its switches;
    `rail_stems`: the stems of the names the udev rules give the rail netdevs (rail1, ...)."""
    result: list[Setting] = []
    if has_topology:
        result.append(
            Setting(
                "NCCL_TOPO_FILE",
                topology_path(file_stem),
                (f"Topology of this node type: install {file_stem}.xml here (see README.md).",),
            )
        )
    result.extend(_hca(plan))
    result.extend(_cross_nic(plan))
    result.extend(_qos(plan))
    if sharp and plan.compute is not None:
        result.append(_collnet(plan.compute))
    elif sharp_off is not None and plan.compute is not None:
        result.append(_collnet_off(plan.compute, sharp_off))
    if spectrum_x:
        result.append(SPECTRUM_X_PLUGIN)
    socket = _socket(plan, rail_stems)
    if socket is not None:
        result.append(socket)
    return result


# HPC-X "Spectrum-X NCCL Plugin" (HPC-X 2.26): "With HPCX, the plugin can also be loaded by NCCL's
# environment variable NCCL_NET_PLUGIN=spcx"; it balances traffic over the NICs (ports) of each
# GPU and recovers from link failures. It needs HPC-X's plugin library on the library path.
SPECTRUM_X_PLUGIN = Setting(
    "NCCL_NET_PLUGIN",
    "spcx",
    (
        "Spectrum-X NCCL plugin of HPC-X (HPC-X, Spectrum-X NCCL Plugin): load balancing",
        "over the planes of each GPU and link-failure recovery, for adaptive routing.",
    ),
)


def _hca(plan: GroupPlan) -> list[Setting]:
    if not plan.nics:
        return []
    network = f"network {plan.compute.name}" if plan.compute is not None else "the compute ports"
    gpus = ", ".join(str(g) for g in plan.rail_gpus)
    return [
        Setting(
            "NCCL_IB_HCA",
            "=" + ",".join(nic.name for nic in plan.nics),
            (
                f"Rail NICs of {network} in rail order (GPUs {gpus}).",
                "The leading equals sign asks for exact names: without it a name also",
                "selects every device it is a prefix of (mlx5_1 takes mlx5_10 and mlx5_11).",
            ),
        )
    ]


def _cross_nic(plan: GroupPlan) -> list[Setting]:
    """Rail-only: no switch joins two rails (every rail is a subnet of its own), so a ring or
    tree must stay on one NIC. NCCL user guide, Environment Variables, NCCL_CROSS_NIC: 0 "Always
    use the same NIC for the same ring/tree, to avoid crossing network rails. Suited for networks
    with per NIC switches (rails), with a slow inter-rail connection"; the default, 2, may still
    cross NICs where it seems faster."""
    network = plan.compute
    if network is None or network.spec.topology != RAIL_ONLY:
        return []
    return [
        Setting(
            "NCCL_CROSS_NIC",
            "0",
            (
                f"Network {network.name} is rail-only: no switch joins two rails, so NIC k of",
                "one node reaches only NIC k of the others. Keep every ring and tree on one NIC",
                "(NCCL user guide, Environment Variables: NCCL_CROSS_NIC; the default, 2, may",
                "connect different NICs).",
            ),
        )
    ]


def _qos(plan: GroupPlan) -> list[Setting]:
    network = plan.compute
    if network is None:
        return []
    if network.fabric == "ethernet":
        qos = network.spec.qos
        # No NCCL_IB_SL: the host ports are untagged routed /31s, where a service level (the PCP
        # of VLAN-tagged frames) is never sent; switch and NIC classify by DSCP (trust dscp).
        return [
            Setting(
                "NCCL_IB_TC",
                str(qos.roce_dscp << 2),
                (
                    f"RoCE traffic class of network {network.name}: the IP TOS byte,",
                    f"DSCP {qos.roce_dscp} shifted left by two (NCCL user guide, environment variables: NCCL_IB_TC).",
                    "No NCCL_IB_SL: the host ports are untagged, so the priority comes from",
                    "the DSCP (trusted by switch and NIC), never from a PCP.",
                ),
            ),
        ]
    return [Setting("NCCL_IB_SL", "0", ib_sl_comment(network))]


def _collnet(network: ResolvedNetwork) -> Setting:
    """SHARP for NCCL (HPC-X, "NCCL-RDMA-SHARP Plugins"): NCCL_COLLNET_ENABLE=1 with the plugin's
    libnccl-net.so on the library path; the SM enables SHARP on the switches and the SHARP
    Aggregation Manager (UFM gv.cfg [Sharp]) builds the trees."""
    return Setting(
        "NCCL_COLLNET_ENABLE",
        "1",
        (
            f"SHARP in-network reductions on network {network.name} (CollNet). Needs the",
            "NCCL-RDMA-SHARP plugin (HPC-X nccl_rdma_sharp_plugin, libnccl-net.so) on the",
            "library path, SHARP on in the SM (nvidia-sm.conf sharp_enabled 2) and the SHARP",
            "Aggregation Manager running (configs/<subnet>/ufm-gv-sharp.cfg).",
        ),
    )


def _collnet_off(network: ResolvedNetwork, reason: str) -> Setting:
    """CollNet off, said with the reason where the spec wants SHARP but no tree can be built
    (NCCL's default is off too; the line keeps a later edit from turning it on blindly)."""
    return Setting(
        "NCCL_COLLNET_ENABLE",
        "0",
        (
            f"No SHARP in-network reductions (CollNet) on network {network.name}:",
            *_wrap(reason + "."),
        ),
    )


def _wrap(text: str, width: int = 88) -> tuple[str, ...]:
    """A long sentence as comment lines (textwrap, no '=' inside)."""
    return tuple(textwrap.wrap(text, width))


FAT_TREE_ENGINES = "ftree or updn (its opensm.conf names which)"  # auto on a fat-tree


def ib_engine(network: ResolvedNetwork) -> str:
    """The OpenSM routing engine of an InfiniBand network: the spec's, or its family's; on a
    fat-tree under 'auto' the OpenSM emitter picks ftree or updn per subnet by its symmetry
    (emit/configs/ibfabric.py), so this names both rather than guess."""
    engine = spec_engine(network.spec)
    return engine if engine is not None else FAT_TREE_ENGINES


def ib_sl_comment(network: ResolvedNetwork) -> tuple[str, ...]:
    """Why SL 0: NCCL sets one SL (NCCL_IB_SL) on every QP and asks the SA for no path record,
    so it holds only where the routing engine needs no per-path SL."""
    head = f"InfiniBand service level on network {network.name}: SL 0, the default."
    engine = ib_engine(network)
    if engine == NUE_ENGINE:
        return (
            head,
            "nue routes every path deadlock-free within the VLs it is given: opensm.conf gives",
            f"it one (nue_max_num_vls {NUE_MAX_VLS}, max_op_vls 1), so every path is on SL 0, the",
            "one SL NCCL uses (man opensm, Nue).",
        )
    if engine == "dfsssp":
        return (
            head,
            f"{engine} breaks credit loops by giving paths different SLs (VLs), which NCCL",
            "does not ask for; opensm.conf limits the subnet to VL 0 (max_op_vls 1), so the",
            "engine routes every path deadlock-free on SL 0 or refuses (OpenSM ERR AD25: the",
            "design needs more VLs than NCCL can use).",
        )
    return (
        head,
        f"{engine} routes credit-loop free on one SL; the spec defines no QoS levels.",
    )


def _socket(plan: GroupPlan, rail_stems: tuple[str, ...]) -> Setting | None:
    """Where NCCL bootstraps; None for an Ethernet compute network without an in-band one: the
    host script (configs/hosts) writes NCCL_SOCKET_IFNAME into /etc/nccl.conf with the exact
    RoCE netdevs it found excluded, which no prefix here can name (a setting in this file would
    win over it). An exclusion list names the stems the udev rules rename the rail netdevs to
    (`rail` matches rail1..rail8: NCCL matches each entry as a prefix)."""
    inband = plan.inband
    netdevs = [p.netdev for p in plan.inband_ports if p.netdev]
    if inband is not None and inband.spec.dual_homed:
        return Setting(
            "NCCL_SOCKET_IFNAME",
            "bond",
            (
                f"Bootstrap over the in-band network {inband.name}. It is dual-homed, so each host",
                "bonds its in-band ports; the prefix bond matches bond0.",
            ),
        )
    if inband is not None and netdevs and len(netdevs) == len(plan.inband_ports):
        return Setting(
            "NCCL_SOCKET_IFNAME",
            "=" + ",".join(netdevs),
            (f"Bootstrap over the in-band network {inband.name} (exact interface names).",),
        )
    if inband is None and plan.compute is not None and plan.compute.fabric == "ethernet":
        return None
    exclude = list(SOCKET_EXCLUDE)
    if plan.compute is not None and plan.compute.fabric == "infiniband":
        exclude.append("ib")
    exclude.extend(stem for stem in rail_stems if stem not in exclude)
    where = (
        f"the in-band network {inband.name} (interface names unknown to the catalog)"
        if inband is not None
        else "any interface (the spec has no in-band network for this group)"
    )
    return Setting(
        "NCCL_SOCKET_IFNAME",
        "^" + ",".join(exclude),
        (
            f"Bootstrap over {where}:",
            *_wrap(
                "exclude loopback, container and VM bridges"
                + (", IPoIB on the compute rails (ib*)" if "ib" in exclude else "")
                + (
                    " and the rail netdevs the udev rules name ("
                    + ", ".join(f"{stem}*" for stem in rail_stems)
                    + ")."
                    if rail_stems
                    else "."
                )
            ),
            "Replace with the in-band interface name once it is known.",
        ),
    )


def render_env(header: list[str], entries: list[Setting]) -> str:
    lines = [f"# {line}" for line in header]
    for entry in entries:
        lines.append("")
        lines.extend(f"# {line}" for line in entry.comment)
        lines.append(f"{entry.name}={entry.value}")
    for line in lines:
        if line.startswith("#") and "=" in line:
            raise ValueError(f"comment with '=' would be read as a setting by NCCL: {line!r}")
    return "\n".join(lines) + "\n"
