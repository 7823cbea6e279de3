"""Spectrum-X SuperNIC settings (configs/supernic): the NVIDIA Spectrum-X profile of the
Network Operator's nic-configuration-operator (bindata/spectrum-x/RA2.2.yaml) on every compute
NIC of a network with adaptive routing - RoCE adaptive routing and programmable congestion
control on the NIC, two PCI functions where a port is split across planes."""

from __future__ import annotations

import re
import shlex
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.configs_support import by_path
from tests.support import EXAMPLES, compile_text, compiled


def mlxconfig(script: str) -> dict[str, dict[str, str]]:
    """PCI address -> the settings of its `mlxconfig -d <pci> set ...` line."""
    found = {}
    for line in script.splitlines():
        if line.startswith("mlxconfig "):
            words = shlex.split(line)
            assert words[:2] == ["mlxconfig", "-y"] and words[2] == "-d" and words[4] == "set"
            found[words[3]] = dict(w.split("=", 1) for w in words[5:])
    return found


@pytest.mark.parametrize(
    ("example", "model"),
    [("spectrum-x-2plane", "hgx-b300"), ("gb300-nvl72-spectrum-x", "gb300-compute-tray")],
)
def test_every_compute_supernic_gets_the_spectrum_x_profile(example: str, model: str) -> None:
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    settings = mlxconfig(files[f"configs/supernic/{model}.sh"])
    node = fabric.loaded.catalog.catalog.nodes[model]
    topology = fabric.loaded.catalog.catalog.host_topologies[model]
    busid = {name: n.busid for name, n in topology.nic_nodes().items()}
    compute = [p for p in node.ports if p.role == "compute"]
    assert set(settings) == {busid[p.rdma_device] for p in compute if p.rdma_device}
    cnp = fabric.loaded.networks["compute"].spec.qos.cnp_dscp
    for values in settings.values():
        # RA2.2 mlxConfig swplb / ConnectX-8 ("1023"): breakout 2 and postBreakout
        assert values["ROCE_ADAPTIVE_ROUTING_EN"] == "1"
        assert values["USER_PROGRAMMABLE_CC"] == "1"
        assert values["LINK_TYPE_P1"] == "2"
        assert values["NUM_OF_PF"] == "2"  # each 400G leg its own PCI function
        assert values["ROCE_RTT_RESP_DSCP_P1"] == str(cnp)


def test_the_operator_template_asks_for_the_same_profile() -> None:
    files = by_path(compiled("gb300-nvl72-spectrum-x")[1])
    template = yaml.safe_load(files["configs/supernic/gb300-compute-tray.yaml"])
    assert template["kind"] == "NicConfigurationTemplate"
    assert template["spec"]["nicSelector"] == {"nicType": "1023"}  # ConnectX-8
    spec = template["spec"]["template"]
    assert (spec["numVfs"], spec["linkType"]) == (1, "Ethernet")  # the CRD's Spectrum-X rule
    assert spec["spectrumXOptimized"] == {
        "enabled": True,
        "version": "RA2.2",
        "platformType": "gb300",
        "overlay": "none",
        "multiplaneMode": "swplb",
        "numberOfPlanes": 2,
    }


def test_no_supernic_settings_without_adaptive_routing(tmp_path: Path) -> None:
    text = (EXAMPLES / "spectrum-x-2plane.yaml").read_text()
    off = text.replace("    os: cumulus\n", "    os: cumulus\n    adaptive_routing: false\n")
    files = by_path(compile_text(off, tmp_path)[1])
    assert not [p for p in files if p.startswith("configs/supernic/")]
    roce = by_path(compiled("roce-lab")[1])  # SONiC: no adaptive routing configured
    assert not [p for p in roce if re.match(r"configs/supernic/", p)]


def _stub(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def test_runtime_script_applies_the_profiles_runtime_config(tmp_path: Path) -> None:
    """configs/supernic/<model>-runtime.sh, run against stub DOCA tools and a fake sysfs: every
    port of every SuperNIC gets DCQCN off and Spectrum-X CC on with the profile's parameters
    (400 Gb/s per plane: swplb, 2 planes), adaptive retransmission, tx window, adaptive-routing
    force and the pure-L3 inter-packet gap, one software CC process per port - and no hwplb-only
    parameter (RA2.2 runtimeConfig, filtered as pkg/spectrumx filterParameters does)."""
    files = by_path(compiled("gb300-nvl72-spectrum-x")[1])
    script = files["configs/supernic/gb300-compute-tray-runtime.sh"]
    assert "SRIOV_EN=1" in files["configs/supernic/gb300-compute-tray.sh"]
    assert "NUM_OF_VFS=1" in files["configs/supernic/gb300-compute-tray.sh"]
    functions = sorted(set(re.findall(r"netdev (\S+:\S+\.\d)\)", script)))
    assert len(functions) == 8  # 4 ConnectX-8, each split in two PCI functions
    sysfs = tmp_path / "sys"
    for i, pci in enumerate(functions):
        (sysfs / "bus/pci/devices" / pci / "net" / f"eth{i}").mkdir(parents=True)
        (sysfs / "bus/pci/devices" / pci / "infiniband" / f"mlx5_{i}").mkdir(parents=True)
    dms = tmp_path / "dms"
    dms.mkdir()
    log = tmp_path / "log"
    _stub(dms / "dmsd", "exec sleep 30\n")
    _stub(dms / "dmsc", f'echo "dmsc $*" >> {log}\n')
    _stub(tmp_path / "cc", f'echo "cc $*" >> {log}\n')
    (tmp_path / "run.sh").write_text(script)
    env = {"PATH": "/usr/bin:/bin", "DMS_DIR": str(dms), "SYSFS": str(sysfs),
           "DOCA_SPCX_CC": str(tmp_path / "cc")}  # fmt: skip
    done = subprocess.run(["sh", str(tmp_path / "run.sh")], env=env, timeout=60, check=False)
    assert done.returncode == 0
    for _ in range(50):  # the CC processes start in the background
        if log.read_text().count("cc --device") == 8:
            break
        time.sleep(0.1)
    calls = log.read_text().splitlines()
    updates = [u for line in calls if " set " in line for u in line.split("--update ")[1:]]
    ports = [f"eth{i}" for i in range(8)]

    def has(path: str, value: str) -> set[str]:
        return {
            port
            for port in ports
            if f"/interfaces/interface[name={port}]{path}:::{value}".strip() in
            {u.strip() for u in updates}
        }  # fmt: skip

    assert has("/nvidia/cc/slot[id=15]/config/enabled", "bool:::false") == set(ports)  # DCQCN
    assert has("/nvidia/cc/slot[id=0]/config/enabled", "bool:::true") == set(ports)
    assert has("/nvidia/cc/slot[id=0]/param[id=0]/config/value", "int:::400") == set(ports)
    assert has("/nvidia/cc/slot[id=0]/param[id=2]/config/value", "int:::63570") == set(ports)
    assert has("/nvidia/roce/config/adaptive-retransmission", "bool:::true") == set(ports)
    assert has("/nvidia/roce/config/tx-window", "bool:::true") == set(ports)
    assert has("/nvidia/roce/config/adaptive-routing-force", "bool:::true") == set(ports)
    assert has("/ethernet/nvidia/config/inter-packet-gap", "int:::25") == set(ports)
    assert has("/nvidia/cc/config/priority[id=3]/rp_enabled", "bool:::true") == set(ports)
    assert not [u for u in updates if "cc-per-plane" in u or "param[id=22]" in u]  # hwplb only
    assert sorted(c for c in calls if c.startswith("cc ")) == [
        f"cc --device mlx5_{i}" for i in range(8)
    ]
