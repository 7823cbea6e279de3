"""Emit helper (configs): the runtime half of NVIDIA's Spectrum-X SuperNIC profile as a host script.

Consumes the SuperNICs of one node model (PCI address of function 0, split across planes or not)
and the number of planes; produces configs/supernic/<model>-runtime.sh, which applies the
profile's runtimeConfig the way the Network Operator's nic-configuration-daemon does: it starts
DOCA's DMS server for the NICs, writes each parameter through `dmsc set --update
PATH:::TYPE:::VALUE` (per port netdev for interface paths, per priority 0-7 for priority paths),
and starts DOCA's software Spectrum-X congestion-control algorithm per port. The firmware half
(mlxConfig) is supernic.py's.

Values and rules: github.com/Mellanox/nic-configuration-operator at commit 597a544 -
bindata/spectrum-x/RA2.2.yaml (runtimeConfig: adaptiveRouting, congestionControl with DCQCN off
and Spectrum-X CC on slot 0, interPacketGap pureL3 for a fabric without overlay;
useSoftwareCCAlgorithm, docaCCVersion 3.4.0), pkg/spectrumx/spectrumx.go (filterParameters: a
parameter's deviceId, breakout = number of planes and multiplane mode must match; the order
RoCE, adaptive routing, software CC, congestion control, inter-packet gap; doca_spcx_cc
--device <rdma device>), pkg/dms/client.go and dms.go (dmsd and dmsc paths and arguments, the
interface[name=...] and priority[id=...] filters). The profile's RoCE part (trust dscp, PFC on
priority 3) is left to the host scripts (configs/hosts), which set trust, PFC and ECN from the
network's QoS plan.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

DMS_DIR = "/opt/mellanox/doca/services/dms"
SPCX_CC = "/opt/mellanox/doca/tools/doca_spcx_cc"
DMS_PORT = 9339  # dmsd's bind address on the host (the operator's example port: "remotehost:9339")
DMS_TIMEOUT = "300s"  # dmsClientTimeout
DOCA_CC_VERSION = "3.4.0"
CONNECTX_8 = "1023"


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    path: str
    kind: str  # bool | int | string
    value: str
    device: str = ""  # deviceId filter
    breakout: int = 0  # number-of-planes filter
    multiplane: str = ""  # multiplane-mode filter (hwplb only here)


_CC = "/interfaces/interface/nvidia/cc/slot[id=0]"
_ROCE = "/interfaces/interface/nvidia/roce/config"
ADAPTIVE_ROUTING = (
    Param("Enable CC per plane", f"{_ROCE}/cc-per-plane", "bool", "true", multiplane="hwplb"),
    Param("Adaptive Retransmission", f"{_ROCE}/adaptive-retransmission", "bool", "true"),
    Param("Tx Window", f"{_ROCE}/tx-window", "bool", "true"),
    Param("Slow Restart", f"{_ROCE}/slow-restart", "bool", "false"),
    Param("Slow Restart Idle", f"{_ROCE}/slow-restart-idle", "bool", "false"),
    Param("Adaptive Routing Force", f"{_ROCE}/adaptive-routing-force", "bool", "true"),
)
_CC_PARAMS = (  # slot 0 param[id] -> (name, value)
    (1, "Responsiveness Alpha Factor", "6553"),
    (2, "Maximum Decrease Factor", "63570"),
    (3, "Maximum Increase Factor", "69468"),
    (4, "Additive Increase Step Size", "96"),
    (5, "High Additive Increase Step Size", "1700"),
    (6, "High Additive Increase Interval Period", "200000"),
    (7, "ZTR_CC_CONGESTION_DELAY_THRESHOLD", "13000"),
    (8, "Maximum Queuing Delay", "250000"),
    (9, "Rate on First Congestion", "524288"),
    (10, "Delay Only", "0"),
    (11, "CNP Validity", "1"),
    (12, "Transmit Rate Decrement Step", "1"),
    (13, "Fixed Transmission Rate", "0"),
    (14, "Fast Scheduling Factor", "2097152"),
    (15, "Topology Awareness", "1"),
    (16, "Advanced Features", "1"),
    (17, "Troubleshooting Capabilities", "0"),
    (18, "CC_FIXED_CWND", "0"),
)
_CC_PLANE = ((22, "Enable CC Plane Failure Detection", "1"), (23, "CC Plane Failure Threshold", "3"),
             (24, "CC Plane Recovery Threshold", "1"))  # fmt: skip
CONGESTION_CONTROL = (
    Param("Congestion Control on RP points",
          "/interfaces/interface/nvidia/cc/config/priority/rp_enabled", "bool", "true"),
    Param("Congestion Control on NP points",
          "/interfaces/interface/nvidia/cc/config/priority/np_enabled", "bool", "true"),
    Param("Congestion Control", f"{_CC}/config/enabled", "bool", "true"),
    Param("Congestion Control with Counters", f"{_CC}/config/counter_enable", "bool", "true"),
    Param("DCQCN", "/interfaces/interface/nvidia/cc/slot[id=15]/config/enabled", "bool", "false"),
    *(Param("Bandwidth", f"{_CC}/param[id=0]/config/value", "int", value, device, breakout)
      for device, breakout, value in (("1023", 2, "400"), ("1023", 4, "200"), ("1025", 2, "400"),
                                      ("1025", 4, "200"), ("a2dc", 2, "200"), ("a2dc", 4, "100"))),
    *(Param(name, f"{_CC}/param[id={i}]/config/value", "int", value) for i, name, value in _CC_PARAMS),
    *(Param(name, f"{_CC}/param[id={i}]/config/value", "int", value, multiplane="hwplb")
      for i, name, value in _CC_PLANE),
)  # fmt: skip
# interPacketGap.pureL3: fabricc's RoCE fabrics are routed eBGP without an EVPN overlay
INTER_PACKET_GAP = (
    Param("Inter Packet Gap for no overlay",
          "/interfaces/interface/ethernet/nvidia/config/inter-packet-gap", "int", "25"),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Nic:
    port: str
    pci: str  # function 0
    split: bool  # one PCI function per plane (NUM_OF_PF 2)

    @property
    def functions(self) -> tuple[str, ...]:
        """The PCI functions (the operator's device ports): 0, and 1 when split."""
        return (self.pci, self.pci[:-1] + "1") if self.split else (self.pci,)


def selected(params: tuple[Param, ...], planes: int, mode: str) -> list[Param]:
    """pkg/spectrumx filterParameters for a ConnectX-8 in `mode` over `planes` planes."""
    return [
        p
        for p in params
        if (not p.device or p.device == CONNECTX_8)
        and (not p.breakout or p.breakout == planes)
        and (not p.multiplane or p.multiplane == mode)
    ]


def _updates(params: list[Param], ports: int) -> list[str]:
    """The --update arguments of one NIC: interface paths once per port ($n0, $n1: the netdevs
    found at run time), priority paths once per priority 0-7 (pkg/dms collectSetUpdates)."""
    found = []
    for param in params:
        parts = param.path.split("/")
        if "interface" not in parts:
            found.append(f"{param.path}:::{param.kind}:::{param.value}")
            continue
        for port in range(ports):
            path = param.path.replace("/interface/", f"/interface[name=${{n{port}}}]/", 1)
            ids = range(8) if "priority" in parts else (None,)
            for pid in ids:
                full = path if pid is None else path.replace("/priority/", f"/priority[id={pid}]/")
                found.append(f"{full}:::{param.kind}:::{param.value}")
    return found


def runtime_script(model: str, design: str, nics: list[Nic], planes: int, source: str) -> str:
    mode = "swplb" if any(n.split for n in nics) else "none"
    planes = planes if mode == "swplb" else 1
    ordered = sorted(nics, key=lambda n: n.pci)
    targets = ",".join(n.pci for n in ordered)
    lines = [
        "#!/bin/sh",
        f"# Spectrum-X SuperNIC runtime settings of {model} nodes ({design}), generated by fabricc.",
        f"# NVIDIA Spectrum-X profile RA2.2 runtimeConfig, ConnectX-8, multiplane {mode}, {planes} "
        "plane(s), no overlay:",
        f"# {source};",
        "# applied as the Network Operator's nic-configuration-daemon does (pkg/spectrumx, pkg/dms",
        "# at the same commit): adaptive retransmission, tx window and adaptive-routing force;",
        "# Spectrum-X congestion control (slot 0, with DOCA's software CC algorithm) on and DCQCN",
        "# (slot 15) off; the inter-packet gap of a pure L3 fabric. Run at every boot, after the",
        "# firmware settings of",
        f"# {model}.sh are active (they take effect after a reboot); trust, PFC and ECN come",
        f"# from configs/hosts. Needs DOCA (DMS, doca_spcx_cc {DOCA_CC_VERSION}) and root.",
        "set -eu",
        "# DMS_DIR, DOCA_SPCX_CC and SYSFS point elsewhere for a dry run",
        f"DMS=${{DMS_DIR:-{DMS_DIR}}}",
        f"CC=${{DOCA_SPCX_CC:-{SPCX_CC}}}",
        "SYS=${SYSFS:-/sys}",
        f"ADDR=localhost:${{DMS_PORT:-{DMS_PORT}}}",
        f'"$DMS/dmsd" -bind_address "$ADDR" -target_pci {targets} -auth credentials -noauth '
        "-tls_enabled=false &",
        "DMSD=$!",
        "trap 'kill $DMSD' EXIT",
        'netdev() { ls "$SYS/bus/pci/devices/$1/net"; }',
        'rdma() { ls "$SYS/bus/pci/devices/$1/infiniband"; }',
        f'dms() {{ pci=$1; shift; "$DMS/dmsc" -a "$ADDR" --insecure --target "$pci" --timeout '
        f'{DMS_TIMEOUT} set "$@"; }}',
        "# wait for the DMS server (up to 30 s): read the first port's state",
        f"first={ordered[0].pci}",
        "n0=$(netdev $first)",
        "i=0",
        'until "$DMS/dmsc" -a "$ADDR" --insecure --target "$first" get \\',
        '  --path "/interfaces/interface[name=$n0]/config/enabled" >/dev/null 2>&1; do',
        '  i=$((i + 1)); [ "$i" -lt 30 ] || { echo "dmsd did not start" >&2; exit 1; }; sleep 1',
        "done",
    ]
    sections = (
        ("adaptive routing", selected(ADAPTIVE_ROUTING, planes, mode)),
        ("congestion control", selected(CONGESTION_CONTROL, planes, mode)),
        ("inter-packet gap", selected(INTER_PACKET_GAP, planes, mode)),
    )
    for nic in ordered:
        functions = nic.functions
        lines.append("")
        lines.append(f"# {nic.port}" + (" (split across planes)" if nic.split else ""))
        lines.extend(f"n{i}=$(netdev {pci})" for i, pci in enumerate(functions))
        for title, params in sections[:1]:
            lines.append(_set(nic.pci, title, params, len(functions)))
        # the software CC algorithm, one process per port (its RDMA device)
        lines.extend(
            f'setsid "$CC" --device "$(rdma {pci})" >/dev/null 2>&1 &' for pci in functions
        )
        for title, params in sections[1:]:
            lines.append(_set(nic.pci, title, params, len(functions)))
    return "\n".join(lines) + "\n"


def _set(pci: str, title: str, params: list[Param], ports: int) -> str:
    updates = " \\\n  ".join(f'--update "{u}"' for u in _updates(params, ports))
    names = ", ".join(dict.fromkeys(p.name for p in params))
    comment = "\n".join(f"# {line}" for line in textwrap.wrap(f"{title}: {names}", 94))
    return f"{comment}\ndms {pci} \\\n  {updates}"
