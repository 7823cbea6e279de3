"""`fabricc verify --lldp` against real lldpd: the roce-lab fabric network wired as veth pairs
between network namespaces (interface names as SONiC and the hosts spell them), one lldpd per
device, `lldpctl -f json0` collected from each.

Faults injected into the wiring - two host cables swapped at the leaves, one leaf-spine cable
left out - must come back as exactly those cable IDs, the swap with the move that fixes it.
Speeds: a veth advertises 10GbaseT, so with the speed check every 400G cable is wrong-speed; the
fault test compares ends only (--ignore-speed). Needs root (network namespaces).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.emit.configs.context import ConfigContext
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, Fabric, Link
from fabricc.verify.model import MISSING, MISWIRED, OK, WRONG_SPEED
from fabricc.verify.plan import cable_id
from tests.frr_support import require_root
from tests.lldp_support import Wire, collect, lldp_lab
from tests.support import EXAMPLES, compiled, require_tool

SPEC = EXAMPLES / "roce-lab.yaml"


def _wires(fabric: Fabric, links: list[Link]) -> list[Wire]:
    ctx = ConfigContext(fabric)
    return [
        (link.a, ctx.port_name(link.a, link.a_port), link.b, ctx.port_name(link.b, link.b_port))
        for link in links
    ]


def _discover(wires: list[Wire], tmp_path: Path) -> Path:
    out = tmp_path / "lldp"
    with lldp_lab(wires) as sockets:
        collect(wires, sockets, out)
    return out


def _rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def _verify(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["verify", str(SPEC), *args])
    return result.exit_code, result.output


@pytest.mark.tool
def test_lldp_of_the_planned_wiring_is_ok(tmp_path: Path) -> None:
    require_tool("lldpd", "lldpcli", "ip")
    require_root()
    fabric, _ = compiled("roce-lab")
    links = [link for link in fabric.links if link.network == "fabric"]
    found = _discover(_wires(fabric, links), tmp_path)
    assert len(list(found.glob("*.json"))) == len({x.a for x in links} | {x.b for x in links})

    code, output = _verify("--lldp", str(found), "--ignore-speed")
    assert code == 0, output
    assert output == f"network fabric: {len(links)} planned cables: {len(links)} ok\n"
    code, output = _verify("--lldp", str(found), "--csv", str(tmp_path / "v.csv"))
    assert code == 1
    rows = {row["cable_id"]: row for row in _rows(tmp_path / "v.csv")}
    assert len(rows) == len(links)
    for link in links:
        row = rows[cable_id(link)]
        assert (row["status"], row["detail"]) == (WRONG_SPEED, f"planned {link.speed}G, found 10G")


@pytest.mark.tool
def test_lldp_pinpoints_swapped_and_missing_cables(tmp_path: Path) -> None:
    require_tool("lldpd", "lldpcli", "ip")
    require_root()
    fabric, _ = compiled("roce-lab")
    links = [link for link in fabric.links if link.network == "fabric"]
    hosts = [link for link in links if link.kind == ENDPOINT_LEAF]
    first = hosts[0]
    second = next(link for link in hosts if link.b != first.b)
    removed = next(link for link in links if link.kind == LEAF_SPINE)
    wires = _wires(fabric, links)
    i, j = links.index(first), links.index(second)
    (a1, p1, b1, q1), (a2, p2, b2, q2) = wires[i], wires[j]
    wires[i], wires[j] = (a1, p1, b2, q2), (a2, p2, b1, q1)
    del wires[links.index(removed)]
    found = _discover(wires, tmp_path)

    code, output = _verify("--lldp", str(found), "--ignore-speed", "--csv", str(tmp_path / "v.csv"))
    assert code == 1
    bad = {row["cable_id"]: row for row in _rows(tmp_path / "v.csv") if row["status"] != OK}
    assert set(bad) == {cable_id(first), cable_id(second), cable_id(removed)}
    assert bad[cable_id(first)]["status"] == bad[cable_id(second)]["status"] == MISWIRED
    assert bad[cable_id(removed)]["status"] == MISSING
    ends = sorted([f"{first.b}:{first.b_port}", f"{second.b}:{second.b_port}"])
    for cable in (first, second):
        detail = bad[cable_id(cable)]["detail"]
        assert detail.startswith("swap the connectors at ")
        assert (
            sorted(detail.split(" (")[0].removeprefix("swap the connectors at ").split(" and "))
            == ends
        )
    assert output.endswith(f"{len(links) - 3} ok, 2 miswired, 1 missing\n")
