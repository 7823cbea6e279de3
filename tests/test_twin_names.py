"""The twin's interface names: every SONiC cable end of a build maps to the config_db port
whose description names the cable's far end, whatever alias style the platform uses (Mellanox
`etp1a` on roce-lab's SN5600, Arista `Ethernet1/5` on megascale-roce's Tomahawk-4 boxes)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.twin.folder import load
from fabricc.twin.names import Namer, os_of, sonic_ports
from tests.support import EXAMPLES


@pytest.mark.parametrize("example", ["roce-lab", "megascale-roce"])
def test_every_sonic_cable_end_is_the_port_its_description_names(
    example: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["build", str(EXAMPLES / f"{example}.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    folder = load(out)
    namer = Namer(folder)
    checked = 0
    for row in folder.cables:
        ends = [(row["a_device"], row["a_port"]), (row["b_device"], row["b_port"])]
        for (device, port), (far, far_port) in (ends, ends[::-1]):
            if os_of(folder, device) != "sonic" or port in ("eth0", "mgmt0"):
                continue
            name = namer.interface(device, port)
            db = folder.json(f"configs/{device}/config_db.json")
            assert isinstance(db, dict)
            entry = db["PORT"].get(name)
            assert entry is not None, (device, port, name)
            far_name = namer.interface(far, far_port) if os_of(folder, far) == "sonic" else far_port
            assert entry["description"] == f"{far}:{far_name}", (device, port, name)
            checked += 1
    assert checked > 0


def test_a_split_cage_numbers_its_ports_by_name_not_by_lane() -> None:
    # Arista's Tomahawk-4 lanes are not in front-panel order: the name's number is
    ports = {
        "Ethernet4": {"index": "1", "alias": "Ethernet1/5", "lanes": "21,22,23,24"},
        "Ethernet0": {"index": "1", "alias": "Ethernet1/1", "lanes": "17,18,19,20"},
        "Ethernet8": {"index": "2", "alias": "Ethernet2/1", "lanes": "9,10,11,12,13,14,15,16"},
    }
    assert sonic_ports(ports) == {
        "1/1": "Ethernet0",
        "1/2": "Ethernet4",
        "2": "Ethernet8",
        "2/1": "Ethernet8",
    }
    assert sonic_ports(None) == {}
