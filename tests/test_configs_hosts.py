"""Host NIC settings match the switches: the same DSCPs, priorities and PFC, the CNP DSCP, the
NCCL traffic class DSCP << 2 (NCCL user guide: NCCL_IB_TC), and each NIC's /31 facing its leaf's."""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

from tests.configs_support import by_path, config_dbs, nvue, with_custom_qos
from tests.support import compiled


def host_files(files: dict[str, str]) -> dict[str, str]:
    return {
        path.removeprefix("configs/hosts/").removesuffix(".sh"): text
        for path, text in files.items()
        if path.startswith("configs/hosts/")
    }


def nic_blocks(script: str) -> list[str]:
    return re.split(r"\n(?=# \S+ on network )", script)[1:]


def check_host(script: str, roce: tuple[int, int], cnp: tuple[int, int], pfc: int) -> int:
    blocks = nic_blocks(script)
    assert blocks
    for block in blocks:
        assert 'mlnx_qos -i "$IF" --trust dscp' in block
        assert f"--dscp2prio set,{roce[0]},{roce[1]}" in block
        assert f"--dscp2prio set,{cnp[0]},{cnp[1]}" in block
        vector = re.search(r"--pfc (\S+)", block)
        assert vector and [i for i, v in enumerate(vector.group(1).split(",")) if v == "1"] == [pfc]
        assert f'echo {cnp[0]} > "/sys/class/net/$IF/ecn/roce_np/cnp_dscp"' in block
        assert f'echo {cnp[1]} > "/sys/class/net/$IF/ecn/roce_np/cnp_802p_prio"' in block
        assert f'/ecn/roce_rp/enable/{roce[1]}"' in block
        tos = re.search(r"cma_roce_tos -d \S+ -t (\d+)", block)
        assert tos and int(tos.group(1)) == roce[0] << 2
    assert f"NCCL_IB_TC={roce[0] << 2}\n" in script
    return len(blocks)


def test_roce_lab_hosts_match_the_sonic_switches() -> None:
    files = by_path(compiled("roce-lab")[1])
    hosts = host_files(files)
    dbs = config_dbs(files)
    assert sorted(hosts) == ["gpu01", "gpu02", "gpu03", "gpu04"]
    leaf_addresses = {
        key.split("|")[1] for db in dbs.values() for key in db["INTERFACE"] if "|" in key
    }
    for db in dbs.values():
        dscp = db["DSCP_TO_TC_MAP"]["ROCE"]
        assert (dscp["26"], dscp["48"]) == ("3", "6")
    for script in hosts.values():
        assert check_host(script, (26, 3), (48, 6), 3) == 2
        assert "NCCL_IB_HCA==mlx5_0,mlx5_1\n" in script
        for address, gateway in re.findall(
            r"ip address replace (\S+) dev .*\nip link.*\n.*\nip route replace default via (\S+) ",
            script,
        ):
            host = ipaddress.ip_interface(address)
            leaf = ipaddress.ip_interface(f"{gateway}/31")
            assert host.network == leaf.network and str(leaf) in leaf_addresses


def test_spectrum_x_hosts_have_a_nic_per_plane_and_rail() -> None:
    files = by_path(compiled("spectrum-x-2plane")[1])
    hosts = host_files(files)
    assert len(hosts) == 16
    tables = set()
    for script in hosts.values():
        assert check_host(script, (26, 3), (48, 6), 3) == 8 * 2
        # each plane leg of a split NIC is a device of its own, so both planes get a netdev
        assert len(set(re.findall(r"^IF=\$\(netdev_of (\S+)\)$", script, re.M))) == 8 * 2
        tables |= set(re.findall(r"table (\d+) priority", script))
    assert tables == {str(100 + i) for i in range(16)}


def test_custom_qos_reaches_hosts_and_switches(tmp_path: Path) -> None:
    files = with_custom_qos("spectrum-x-2plane", "    os: cumulus\n", tmp_path)
    for tree in nvue(files).values():
        if "qos" in tree:
            dscp = tree["qos"]["mapping"]["default-global"]["dscp"]
            assert (dscp["24"]["switch-priority"], dscp["4"]["switch-priority"]) == (5, 7)
    for script in host_files(files).values():
        check_host(script, (24, 5), (4, 7), 5)
