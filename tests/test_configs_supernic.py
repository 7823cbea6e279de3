"""Spectrum-X SuperNIC settings (configs/supernic): the NVIDIA Spectrum-X profile of the
Network Operator's nic-configuration-operator (bindata/spectrum-x/RA2.2.yaml) on every compute
NIC of a network with adaptive routing - RoCE adaptive routing and programmable congestion
control on the NIC, two PCI functions where a port is split across planes."""

from __future__ import annotations

import re
import shlex
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
