"""A host boots into the fabric: the addressing and policy routing of a generated host script,
run in a network namespace cabled to its leaves in the FRR boot of the fabric, reach the spines
of every plane from every NIC.

The host's interfaces are what the catalog says the hardware shows (one device per leg of a split
port); the expectation - every cabled NIC leg reaches its plane - comes from the cabling plan.
"""

from __future__ import annotations

import time

import pytest

from tests.frr_support import booted, components, host_cables, lab_switches, require_root, run
from tests.support import compiled, require_tool

NETNS_TOOLS = ("vtysh", "/usr/lib/frr/zebra", "/usr/lib/frr/bgpd", "ip", "ping")
CONVERGE_S = 90


def addressing(script: str) -> str:
    """The script's interface, address and routing commands (QoS needs the NIC driver), with
    netdev_of naming the interface after its RDMA device as the test host does."""
    keep = [
        line
        for line in script.splitlines()
        if line.startswith(("IF=", "ip address ", "ip link ", "ip route ", "ip rule "))
    ]
    return 'netdev_of() { echo "$1"; }\n' + "\n".join(keep) + "\n"


def ping(ns: str, source: str, target: str) -> bool:
    result = run("ip", "netns", "exec", ns, "ping", "-c1", "-W1", "-I", source, target, check=False)
    return result.returncode == 0


@pytest.mark.tool
@pytest.mark.slow
def test_spectrum_x_host_reaches_both_planes() -> None:
    require_tool(*NETNS_TOOLS)
    require_root()
    fabric, artifacts = compiled("spectrum-x-2plane")
    files = dict(artifacts)
    host = "b300-01"
    model = fabric.loaded.catalog.catalog.nodes[fabric.devices[host].model]
    cabled = host_cables(files, "compute", host)
    ports = {port: model.port_devices(port)[0] or "" for port, _, _ in cabled}
    assert len(cabled) == 16 and len(set(ports.values())) == 16  # one device per plane leg
    _, cables = lab_switches(files, "compute")
    plane_of = components(cables)
    assert len(set(plane_of.values())) == 2
    script = files[f"configs/hosts/{host}.sh"]
    assert isinstance(script, str)
    with booted(files, "compute", {host: ports}) as lab:
        run("ip", "netns", "exec", lab.hosts[host], "sh", "-euc", addressing(script))
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
