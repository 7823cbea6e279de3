"""A host boots into the fabric: the addressing and policy routing of a generated host script,
run in a network namespace cabled to its leaves in the FRR boot of the fabric, reach the spines
of every plane from every NIC.

The host's interfaces are what the catalog says the hardware shows (one device per leg of a split
port); the expectation - every cabled NIC leg reaches its plane - comes from the cabling plan.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.frr_support import booted, components, host_cables, lab_switches, require_root, run
from tests.hosts_support import Function, run_script
from tests.support import compiled, require_tool

NETNS_TOOLS = ("vtysh", "/usr/lib/frr/zebra", "/usr/lib/frr/bgpd", "ip", "ping")
CONVERGE_S = 90


def ping(ns: str, source: str, target: str) -> bool:
    result = run("ip", "netns", "exec", ns, "ping", "-c1", "-W1", "-I", source, target, check=False)
    return result.returncode == 0


@pytest.mark.tool
@pytest.mark.slow
def test_spectrum_x_host_reaches_both_planes(tmp_path: Path) -> None:
    require_tool(*NETNS_TOOLS)
    require_root()
    fabric, artifacts = compiled("spectrum-x-2plane")
    files = dict(artifacts)
    host = "b300-01"
    model_name = fabric.devices[host].model
    model = fabric.loaded.catalog.catalog.nodes[model_name]
    cabled = host_cables(files, "compute", host)
    ports = {port: model.port_devices(port)[0] or "" for port, _, _ in cabled}
    assert len(cabled) == 16 and len(set(ports.values())) == 16  # one device per plane leg
    _, cables = lab_switches(files, "compute")
    plane_of = components(cables)
    assert len(set(plane_of.values())) == 2
    script = files[f"configs/hosts/{host}.sh"]
    assert isinstance(script, str)
    with booted(files, "compute", {host: ports}) as lab:
        # the whole script, as written, with the NIC's QoS tools standing in (they need the
        # NIC driver); interfaces, addresses, MTU and policy routing are the real ones
        topology = fabric.loaded.catalog.catalog.host_topologies[model_name]
        busid = {rdma: node.busid for rdma, node in topology.nic_nodes().items()}
        functions = [Function(rdma, rdma, busid[rdma]) for rdma in ports.values()]
        ran = run_script(
            script,
            tmp_path,
            functions,
            stubs=("mlnx_qos", "cma_roce_tos"),
            prefix=("ip", "netns", "exec", lab.hosts[host]),
        )
        assert ran.returncode == 0, ran.stderr
        addresses = run("ip", "-n", lab.hosts[host], "-4", "-o", "address", "show").stdout
        pending = []
        for port, leaf, _ in cabled:
            ifname = ports[port]
            found = [
                line.split()[3] for line in addresses.splitlines() if line.split()[1] == ifname
            ]
            assert len(found) == 1, f"{ifname} ({port}, cabled to {leaf}) has addresses {found}"
            source = found[0].split("/")[0]
            spines = [s for s in lab.switches if "spine" in s and plane_of[s] == plane_of[leaf]]
            pending += [(port, source, lab.switches[s].loopback) for s in spines]
        deadline = time.monotonic() + CONVERGE_S
        while pending and time.monotonic() < deadline:
            pending = [p for p in pending if not ping(lab.hosts[host], p[1], p[2])]
            if pending:
                time.sleep(0.5)
        assert not pending, f"unreachable from {host} (port, source, spine loopback): {pending}"
