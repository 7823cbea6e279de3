"""`fabricc twin`: the generated host scripts applied in the host namespaces of a booted fabric.

The folder is a real build of roce-lab (4 GPU hosts, one NIC per rail on each of two leaves);
the fault is a hand edit of one host script. Needs root and the tools (tests.support).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from fabricc.twin import hosts, routing
from fabricc.twin.folder import load
from fabricc.twin.lab import lab, leftovers
from fabricc.twin.names import Namer
from tests.frr_support import require_root
from tests.support import require_tool
from tests.test_twin import _built

# gpu02's NIC1 row: its gateway (the leaf's end of the /31) moved to an address off the link
GATEWAY = (" 10.192.0.7 10.192.0.6 101 ", " 10.192.0.7 10.192.0.9 101 ")


@pytest.mark.tool
@pytest.mark.slow
@pytest.mark.parametrize("fault", [False, True])
def test_host_scripts_route_every_nic_through_its_leaf(
    fault: bool, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    require_tool("vtysh", "ping")
    require_root()
    root = tmp_path / "out"
    shutil.copytree(_built("roce-lab", tmp_path_factory), root)
    script = root / "configs/hosts/gpu02.sh"
    if fault:
        text = script.read_text()
        assert GATEWAY[0] in text
        script.write_text(text.replace(*GATEWAY))
    folder = load(root)
    with lab(180) as the_lab:
        tag = the_lab.tag
        booted = routing.boot(the_lab, folder, Namer(folder), "fabric")
        routing.wait_sessions(the_lab, folder, booted)
        routing.ecmp(the_lab, booted)  # waits for the routes
        result = hosts.check(the_lab, folder, booted)
    assert (result["hosts"], result["nics"]) == (4, 8)
    # each NIC: its gateway and a NIC of another host on the other leaf
    assert result["checked"] == 16
    failures = result["failures"]
    assert isinstance(failures, list)
    if not fault:
        assert failures == []
    else:
        # named on the NIC itself, or as the far end other hosts cannot reach
        assert failures and all(
            (f["host"], f["nic"]) == ("gpu02", "NIC1") or str(f.get("to")).startswith("gpu02 NIC1")
            for f in failures
        ), failures
        assert any("no default via 10.192.0.9" in str(f["problem"]) for f in failures), failures
        assert "gateway 10.192.0.9" in json.dumps(failures)
    assert not leftovers(f"ftw{tag}")
