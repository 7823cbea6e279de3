"""Host NIC settings match the switches: the same DSCPs, priorities and PFC, the CNP DSCP, the
NCCL traffic class DSCP << 2 (NCCL user guide: NCCL_IB_TC), the network's MTU, and each NIC's /31
facing its leaf's. The scripts run on a fake host (tests/hosts_support.py): with no environment
they configure every NIC the host shows, found by PCI address, and skip only those the catalog
cannot name."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

from fabricc.ir import Fabric
from tests.configs_support import by_path, config_dbs, nvue, with_custom_qos
from tests.hosts_support import Function, Run, run_script
from tests.support import compiled


def host_files(files: dict[str, str]) -> dict[str, str]:
    return {
        path.removeprefix("configs/hosts/").removesuffix(".sh"): text
        for path, text in files.items()
        if path.startswith("configs/hosts/")
    }


def rows(script: str) -> list[list[str]]:
    """The script's NIC table."""
    table = script.split("3<<'NICS'\n", 1)[1].split("\nNICS\n", 1)[0]
    return [line.split() for line in table.splitlines()]


def functions_of(fabric: Fabric, host: str) -> list[Function]:
    """The NIC functions the host topology of the host's model gives (bus id, RDMA name), with
    netdevs named like no catalog entry, so that only sysfs can find them."""
    model = fabric.devices[host].model
    topology = fabric.loaded.catalog.catalog.host_topologies[model]
    return [
        Function(f"eth{i}", rdma, node.busid)
        for i, (rdma, node) in enumerate(sorted(topology.nic_nodes().items()))
    ]


def check_host(run: Run, roce: tuple[int, int], cnp: tuple[int, int], pfc: int) -> int:
    """The QoS the script set on every NIC it configured; the number of NICs."""
    trust = run.calls("mlnx_qos")
    nics = sorted({c[1] for c in trust})
    assert nics
    for nic in nics:
        calls = [c[2:] for c in trust if c[1] == nic]
        assert ["--trust", "dscp"] in calls
        assert ["--dscp2prio", f"set,{roce[0]},{roce[1]}"] in calls
        assert ["--dscp2prio", f"set,{cnp[0]},{cnp[1]}"] in calls
        vector = next(c[1] for c in calls if c[0] == "--pfc")
        assert [i for i, v in enumerate(vector.split(",")) if v == "1"] == [pfc]
        ecn = run.root / "sys/class/net" / nic / "ecn"
        assert (ecn / "roce_np/cnp_dscp").read_text() == f"{cnp[0]}\n"
        assert (ecn / "roce_np/cnp_802p_prio").read_text() == f"{cnp[1]}\n"
        assert (ecn / f"roce_rp/enable/{roce[1]}").read_text() == "1\n"
    assert {c[3] for c in run.calls("cma_roce_tos")} == {str(roce[0] << 2)}
    assert f"NCCL_IB_TC={roce[0] << 2}\n" in run.nccl_conf()
    return len(nics)


def test_roce_lab_hosts_match_the_sonic_switches(tmp_path: Path) -> None:
    fabric, artifacts = compiled("roce-lab")
    files = by_path(artifacts)
    hosts = host_files(files)
    dbs = config_dbs(files)
    assert sorted(hosts) == ["gpu01", "gpu02", "gpu03", "gpu04"]
    leaf_addresses = {
        key.split("|")[1] for db in dbs.values() for key in db["INTERFACE"] if "|" in key
    }
    for db in dbs.values():
        dscp = db["DSCP_TO_TC_MAP"]["ROCE"]
        assert (dscp["26"], dscp["48"]) == ("3", "6")
    for host, script in hosts.items():
        run = run_script(script, tmp_path / host, functions_of(fabric, host))
        assert run.returncode == 0, run.stderr
        assert check_host(run, (26, 3), (48, 6), 3) == 2
        assert "NCCL_IB_HCA==mlx5_0,mlx5_1\n" in run.nccl_conf()
        for row in rows(script):
            host_ip = ipaddress.ip_interface(row[5])
            leaf = ipaddress.ip_interface(f"{row[7]}/31")
            assert host_ip.network == leaf.network and str(leaf) in leaf_addresses


def test_spectrum_x_hosts_have_a_nic_per_plane_and_rail(tmp_path: Path) -> None:
    fabric, artifacts = compiled("spectrum-x-2plane")
    hosts = host_files(by_path(artifacts))
    assert len(hosts) == 16
    host, script = sorted(hosts.items())[0]
    table = rows(script)
    # each plane leg of a split NIC is a PCI function of its own, so both planes get a netdev
    assert len({row[2] for row in table}) == len(table) == 8 * 2
    assert {row[8] for row in table} == {str(100 + i) for i in range(16)}
    run = run_script(script, tmp_path, functions_of(fabric, host))
    assert run.returncode == 0, run.stderr
    assert check_host(run, (26, 3), (48, 6), 3) == 8 * 2


def test_plane_two_legs_are_found_by_pci_address_whatever_their_rdma_names(
    tmp_path: Path,
) -> None:
    """The two 400G legs of a ConnectX-8 split across planes are PCI functions 0 and 1 of the NIC
    (NUM_OF_PF=2 in the nic-configuration-operator's Spectrum-X profiles,
    bindata/spectrum-x/RA2.1.yaml); the kernel numbers the RDMA devices in probe order, so the
    names the catalog assumes for plane 2 (mlx5_10..17 on HGX B300) need not hold. Here the
    kernel interleaves them (mlx5_0, mlx5_1 on NIC0...): every leg is still configured on the
    function at its bus id, and NCCL gets the names the host shows."""
    fabric, artifacts = compiled("spectrum-x-2plane")
    host = "b300-01"
    script = host_files(by_path(artifacts))[host]
    topology = fabric.loaded.catalog.catalog.host_topologies["hgx-b300"]
    busids = sorted(node.busid for node in topology.nic_nodes().values())
    functions = [Function(f"ens{i}", f"mlx5_{i}", pci) for i, pci in enumerate(busids)]
    run = run_script(script, tmp_path, functions)
    assert run.returncode == 0, run.stderr
    netdev_of = {f.pci: f.netdev for f in functions}
    rdma_of = {f.pci: f.rdma for f in functions}
    table = rows(script)
    assert run.addresses() == {netdev_of[row[2]]: row[5] for row in table}
    hca = run.nccl_conf().split("NCCL_IB_HCA==")[1].split()[0].split(",")
    assert hca == [rdma_of[row[2]] for row in table]


def test_gb300_script_configures_every_compute_leg_with_no_environment(tmp_path: Path) -> None:
    """The BlueField-3 storage ports have no device names in the catalog: the script says so
    and skips them (status 1), after configuring all eight compute legs with the MTU of the
    network on every NIC."""
    fabric, artifacts = compiled("gb300-nvl72-spectrum-x")
    hosts = host_files(by_path(artifacts))
    host, script = sorted(hosts.items())[0]
    run = run_script(script, tmp_path, functions_of(fabric, host))
    assert run.returncode == 1
    assert "BF3-1/P1" in run.stderr and "set IF_BF3_1_P1" in run.stderr
    compute = [row for row in rows(script) if row[11] == "yes"]
    assert len(compute) == 8
    assert sorted(run.addresses().values()) == sorted(row[5] for row in compute)
    mtu = str(fabric.loaded.networks["compute"].spec.mtu)
    assert set(run.mtu().values()) == {mtu} and len(run.mtu()) == 8
    # an operator names the BlueField ports and the same script configures them too
    named = run_script(
        script.replace("set -eu\n", "set -eu\nIF_BF3_1_P1=eth8 IF_BF3_2_P1=eth9\n", 1),
        tmp_path / "named",
        [
            *functions_of(fabric, host),
            Function("eth8", "mlx5_8", "0000:f0:00.0"),
            Function("eth9", "mlx5_9", "0000:f1:00.0"),
        ],
    )
    assert named.returncode == 0, named.stderr
    assert len(named.addresses()) == 10


def test_custom_qos_reaches_hosts_and_switches(tmp_path: Path) -> None:
    fabric, _ = compiled("spectrum-x-2plane")
    files = with_custom_qos("spectrum-x-2plane", "    os: cumulus\n", tmp_path)
    for tree in nvue(files).values():
        if "qos" in tree:
            dscp = tree["qos"]["mapping"]["default-global"]["dscp"]
            assert (dscp["24"]["switch-priority"], dscp["4"]["switch-priority"]) == (5, 7)
    host, script = sorted(host_files(files).items())[0]
    run = run_script(script, tmp_path / "host", functions_of(fabric, host))
    assert run.returncode == 0, run.stderr
    check_host(run, (24, 5), (4, 7), 5)


def test_every_nic_gets_the_mtu_of_its_network() -> None:
    """With no MTU the netdev keeps 1500 and RoCE runs at a path MTU of 1024 (the largest of
    1024..4096 below the netdev MTU: IBM "Setting the MTU size", RoCE Express)."""
    for example in ("roce-lab", "spectrum-x-2plane", "gb300-nvl72-spectrum-x"):
        fabric, artifacts = compiled(example)
        for script in host_files(by_path(artifacts)).values():
            assert 'ip link set dev "$IF" mtu "$mtu"' in script
            mtus = {str(n.spec.mtu) for n in fabric.loaded.networks.values()}
            assert all(row[9] in mtus for row in rows(script))
        assert not re.search(r"\$\{IF_\w+:\?", "".join(host_files(by_path(artifacts)).values()))
