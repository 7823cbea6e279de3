"""Test helper: run a generated host script (configs/hosts/<node>.sh) on a fake host.

The fake host is a folder with the sysfs entries the script reads - /sys/bus/pci/devices/<PCI
address>/net/<netdev>, /sys/class/infiniband/<RDMA device>/device/net/<netdev> and
/sys/class/net/<netdev>/device/infiniband/<RDMA device> - and stand-ins for the commands it runs
(mlnx_qos, cma_roce_tos, ip, sysctl), which log their arguments. The script runs with no
environment but PATH and FABRICC_ROOT (the fake host's root).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

COMMANDS = ("mlnx_qos", "cma_roce_tos", "ip", "sysctl")


@dataclass(frozen=True)
class Function:
    """One NIC function of the fake host."""

    netdev: str
    rdma: str
    pci: str


@dataclass
class Run:
    returncode: int
    stderr: str
    log: list[list[str]]  # each command the script ran, with its arguments
    root: Path

    def calls(self, command: str) -> list[list[str]]:
        return [line[1:] for line in self.log if line[0] == command]

    def mtu(self) -> dict[str, str]:
        """netdev -> the MTU the script set on it."""
        return {c[3]: c[5] for c in self.calls("ip") if c[:2] == ["link", "set"] and "mtu" in c}

    def addresses(self) -> dict[str, str]:
        return {c[4]: c[2] for c in self.calls("ip") if c[:2] == ["address", "replace"]}

    def nccl_conf(self) -> str:
        return (self.root / "etc" / "nccl.conf").read_text()


def fake_host(root: Path, functions: list[Function]) -> None:
    for f in functions:
        (root / "sys/bus/pci/devices" / f.pci / "net" / f.netdev).mkdir(parents=True)
        (root / "sys/class/infiniband" / f.rdma / "device/net" / f.netdev).mkdir(parents=True)
        (root / "sys/class/net" / f.netdev / "device/infiniband" / f.rdma).mkdir(parents=True)
        for side in ("roce_np", "roce_rp"):
            (root / "sys/class/net" / f.netdev / "ecn" / side / "enable").mkdir(parents=True)
    (root / "etc").mkdir()


def run_script(
    script: str,
    tmp: Path,
    functions: list[Function],
    stubs: tuple[str, ...] = COMMANDS,
    prefix: tuple[str, ...] = (),
) -> Run:
    """Run the script on a fake host of `functions`, with `stubs` standing in for those
    commands (the others are the real ones), under `prefix` (e.g. ip netns exec NS)."""
    root = tmp / "host"
    fake_host(root, functions)
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    log = tmp / "log"
    for command in stubs:
        stub = bin_dir / command
        stub.write_text(f'#!/bin/sh\necho "{command} $*" >> "{log}"\n')
        stub.chmod(0o755)
    path = tmp / "host.sh"
    path.write_text(script)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FABRICC_ROOT": str(root)}
    result = subprocess.run(
        [*prefix, "sh", str(path)], env=env, capture_output=True, text=True, check=False, timeout=60
    )
    lines = log.read_text().splitlines() if log.exists() else []
    return Run(result.returncode, result.stderr, [line.split() for line in lines], root)
