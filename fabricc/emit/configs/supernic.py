"""Emit stage, configs: Spectrum-X SuperNIC firmware settings of the GPU nodes.

Consumes the GPU node models attached to a compute network that runs adaptive routing
(features.adaptive_routing: Cumulus switches that route adaptively on some link), the ports of
those nodes that the network cables (split 2x400G across planes or not), the CNP DSCP of the
network's QoS plan and the node model's host topology (PCI bus id of each compute NIC, device id);
produces configs/supernic/<model>.sh: one `mlxconfig set` per compute NIC with the non-volatile
settings of NVIDIA's Spectrum-X profile - RoCE adaptive routing on the NIC (with switch adaptive
routing packets arrive out of order, which a plain RoCE NIC does not accept), programmable
congestion control, SR-IOV with one VF, and for a port split across planes its two PCI
functions -, configs/supernic/<model>-runtime.sh: the profile's runtimeConfig (adaptive
retransmission, tx window, adaptive-routing force, Spectrum-X congestion control on and DCQCN
off, the pure-L3 inter-packet gap; spectrumx_runtime.py) and configs/supernic/<model>.yaml: the
Network Operator's NicConfigurationTemplate asking for the same profile where the platform is
known to it.

Values: github.com/Mellanox/nic-configuration-operator, bindata/spectrum-x/RA2.2.yaml
(commit 597a544), mlxConfig for ConnectX-8 (device id 1023): `swplb` (software packet load
balancing over planes, breakout 2) or `none`; the NicConfigurationTemplate fields from its
api/v1alpha1/nicconfigurationtemplate_types.go and docs/examples/spectrum-x. The host scripts
(configs/hosts) keep setting trust, PFC and ECN.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.configs.context import ConfigContext
from fabricc.emit.configs.features import adaptive_routing
from fabricc.emit.configs.hosts import pci_addresses
from fabricc.emit.configs.spectrumx_runtime import Nic, runtime_script
from fabricc.ir import ENDPOINT_LEAF

PROFILE = "RA2.2"
SOURCE = (
    "github.com/Mellanox/nic-configuration-operator bindata/spectrum-x/RA2.2.yaml (commit 597a544)"
)
# mlxConfig of the profile for ConnectX-8 (PCI device id 1023): split across two planes
# (swplb, breakout 2) and unsplit (none), postBreakout with its one virtual function (SRIOV_EN 1,
# NUM_OF_VFS 1: the profile's, which the operator's CRD also requires with Spectrum-X: numVfs 1).
SPLIT_2 = (
    ("NUM_OF_PF", "2"),
    ("NUM_OF_PLANES_P1", "0"),
    ("LAG_RESOURCE_ALLOCATION", "0"),
    *((f"MODULE_SPLIT_M0[{lane}]", "0x1") for lane in range(4)),
    *((f"MODULE_SPLIT_M0[{lane}]", "0x2") for lane in range(4, 8)),
    *((f"MODULE_SPLIT_M0[{lane}]", "0xff") for lane in range(8, 16)),
)
POST_BREAKOUT = (
    ("LINK_TYPE_P1", "2"),  # Ethernet
    ("SRIOV_EN", "1"),
    ("NUM_OF_VFS", "1"),
    ("ROCE_ADAPTIVE_ROUTING_EN", "1"),
    ("USER_PROGRAMMABLE_CC", "1"),
    ("TX_SCHEDULER_LOCALITY_MODE", "2"),
    ("ROCE_CC_STEERING_EXT", "2"),
)
# swplb answers RTT probes on the CNP DSCP (48 in the profile, the network's CNP DSCP here);
# unsplit ports keep the probe DSCP off, as the profile's `none` mode
RTT = ("ROCE_RTT_RESP_DSCP_P1", "ROCE_RTT_RESP_DSCP_MODE_P1")
CONNECTX_8 = "1023"
# NicConfigurationTemplate platformType of the operator's examples, per compute tray model
PLATFORMS = {"gb200-compute-tray": "gb200", "gb300-compute-tray": "gb300"}


@dataclass(frozen=True, slots=True)
class SuperNic:
    port: str
    pci: str  # function 0 of the NIC (the plane-1 leg when split)
    split: bool


def supernic_files(ctx: ConfigContext) -> list[Artifact]:
    fabric = ctx.fabric
    catalog = ctx.catalog
    by_model: dict[str, tuple[str, dict[str, SuperNic], int]] = {}
    for device in fabric.devices.values():
        if device.kind not in ("node", "tray") or catalog.nodes[device.model].gpus == 0:
            continue
        model = catalog.nodes[device.model]
        busids = pci_addresses(fabric, device.model)  # none without a host topology
        if not busids:
            continue
        for end in ctx.ends(device.name):
            network = end.link.network
            if end.kind != ENDPOINT_LEAF or not end.upward:
                continue
            spec = fabric.loaded.networks[network].spec
            if spec.role != "compute" or not adaptive_routing(ctx.fabric, network):
                continue
            base, _, leg = end.port.partition("/")
            port = next((p for p in model.ports if p.name in (end.port, base)), None)
            if port is None or port.rdma_device is None or port.rdma_device not in busids:
                continue
            entry = by_model.setdefault(device.model, (network, {}, ctx.qos(network).cnp_dscp))
            nics = entry[1]
            split = bool(leg) and port.name == base
            nics[port.name] = SuperNic(port.name, busids[port.rdma_device], split)
    files: list[Artifact] = []
    for model_name, (network, nics, cnp_dscp) in sorted(by_model.items()):
        topology = catalog.host_topologies[model_name]
        nic_device = topology.devices.get("nic")
        device_id = nic_device.device if nic_device is not None else None
        if device_id != "0x" + CONNECTX_8:
            continue  # the profile's values are the ConnectX-8 ones
        planes = fabric.networks[network].planes
        files.append(_script(ctx, model_name, network, list(nics.values()), cnp_dscp))
        files.append(
            (
                f"configs/supernic/{model_name}-runtime.sh",
                runtime_script(
                    model_name,
                    fabric.name,
                    [Nic(n.port, n.pci, n.split) for n in nics.values()],
                    planes,
                    SOURCE,
                ),
            )
        )
        platform = PLATFORMS.get(model_name)
        if platform is not None:
            split = any(n.split for n in nics.values())
            files.append(_template(model_name, platform, planes if split else 1))
    return files


def _settings(nic: SuperNic, cnp_dscp: int) -> str:
    rtt = (str(cnp_dscp), "1") if nic.split else ("0", "0")
    pairs = [*(SPLIT_2 if nic.split else ()), *POST_BREAKOUT, *zip(RTT, rtt, strict=True)]
    pairs.append(("MULTIPATH_DSCP", "0"))
    return " ".join(f"'{key}={value}'" for key, value in pairs)  # quoted: [n] is a glob


def _script(
    ctx: ConfigContext, model: str, network: str, nics: list[SuperNic], cnp_dscp: int
) -> Artifact:
    lines = [
        "#!/bin/sh",
        f"# Spectrum-X SuperNIC firmware settings of {model} nodes on network {network} "
        f"({ctx.fabric.name}), generated by fabricc.",
        f"# NVIDIA Spectrum-X profile {PROFILE}, ConnectX-8: {SOURCE}.",
        "# RoCE adaptive routing on the NIC (the switches spray packets adaptively), programmable",
        "# congestion control, and two PCI functions per NIC where a port is split across planes.",
        "# Needs mlxconfig (NVIDIA MFT) and root; takes effect after mlxfwreset or a reboot.",
        f"# Then run {model}-runtime.sh at every boot (the profile's runtime settings).",
        "set -eu",
        "",
    ]
    for nic in sorted(nics, key=lambda n: n.pci):
        lines.append(f"# {nic.port}" + (" (split across planes)" if nic.split else ""))
        lines.append(f"mlxconfig -y -d {nic.pci} set {_settings(nic, cnp_dscp)}")
    return f"configs/supernic/{model}.sh", "\n".join(lines) + "\n"


def _template(model: str, platform: str, planes: int) -> Artifact:
    spectrum_x = (
        f"    spectrumXOptimized:\n"
        f"      enabled: true\n"
        f"      version: {PROFILE}\n"
        f"      platformType: {platform}\n"
        f"      overlay: none\n"
        f"      multiplaneMode: {'swplb' if planes > 1 else 'none'}\n"
        f"      numberOfPlanes: {planes}\n"
    )
    text = (
        f"# NicConfigurationTemplate of {model}, generated by fabricc: the Network Operator's\n"
        f"# Spectrum-X profile {PROFILE} on the ConnectX-8 SuperNICs: {SOURCE};\n"
        "# fields: api/v1alpha1/nicconfigurationtemplate_types.go of the same repository.\n"
        "apiVersion: configuration.net.nvidia.com/v1alpha1\n"
        "kind: NicConfigurationTemplate\n"
        "metadata:\n"
        f"  name: spectrum-x-{model}\n"
        "  namespace: nvidia-network-operator\n"
        "spec:\n"
        "  nodeSelector:\n"
        '    feature.node.kubernetes.io/network-sriov.capable: "true"\n'
        "  nicSelector:\n"
        f'    nicType: "{CONNECTX_8}"\n'
        "  template:\n"
        "    numVfs: 1\n"
        "    linkType: Ethernet\n" + spectrum_x
    )
    return f"configs/supernic/{model}.yaml", text
