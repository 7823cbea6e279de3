"""`fabricc verify --ibnetdiscover` against the real ibnetdiscover run on ibsim.

The generated ibsim.net is mis-cabled on purpose - two host cables swapped at the leaves, one
leaf-spine cable removed, one link forced to 1x width - then ibsim runs it and the real
ibnetdiscover reads it back; verify must name exactly those cables, by cable ID, with the swap
that fixes the crossed pair.

Speeds: ibsim 0.10 simulates no NDR or XDR. Its links come up 4xSDR unless the net file says
otherwise, so the plan's 4xNDR links are all reported wrong-speed with the speed check on; the
fault tests compare ends and widths (--ignore-speed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricc.cli import cli
from fabricc.emit import Artifact
from fabricc.emit.configs.ports import ib_port
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, Fabric
from fabricc.verify.model import MISSING, MISWIRED, OK, WRONG_SPEED
from fabricc.verify.plan import cable_id
from fabricc.verify.run import verify_ibnetdiscover
from tests.ib_support import NetRecord, parse_net, simulator, write_net
from tests.support import compile_text, require_tool

SPEC = """\
metadata:
  name: ib-verify
nodes:
  dgx:
    model: dgx-h100
    count: 4
    hostname: "dgx{n:03d}"
networks:
  compute:
    role: compute
    fabric: infiniband
    endpoints:
      dgx: {}
"""


def _compile(tmp_path: Path) -> tuple[Path, Fabric, str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    fabric, artifacts = compile_text(SPEC, tmp_path)
    net = _artifact(artifacts, "configs/compute-sm/ibsim.net")
    return spec, fabric, net


def _artifact(artifacts: list[Artifact], path: str) -> str:
    content = dict(artifacts)[path]
    assert isinstance(content, str)
    return content


def _discover(net: str, workdir: Path) -> str:
    with simulator(net, workdir) as sim:
        result = sim.tool("ibnetdiscover")
    assert result.returncode == 0, result.stderr
    return result.stdout


def _relink(records: dict[str, NetRecord], node: str, port: int, far: str, far_port: int) -> None:
    records[node].links[port] = (far, far_port)
    records[far].links[far_port] = (node, port)


@pytest.mark.tool
def test_correct_cabling_is_ok_and_ibsim_speeds_are_flagged(tmp_path: Path) -> None:
    require_tool("ibsim", "ibnetdiscover")
    spec, fabric, net = _compile(tmp_path)
    discovered = _discover(net, tmp_path / "sim")
    assert re.search(r"4xSDR", discovered), "ibsim's default link rate changed"

    speeds = verify_ibnetdiscover(fabric, discovered, "ibnet.txt")
    planned = [link for link in fabric.links if link.network == "compute"]
    assert speeds.scope == "compute"  # inferred: the spec has one InfiniBand network
    assert len(speeds.findings) == len(planned)
    assert {(f.status, f.detail) for f in speeds.findings} == {
        (WRONG_SPEED, "planned 4xNDR, found 4xSDR")
    }

    (tmp_path / "ibnet.txt").write_text(discovered)
    args = ["verify", str(spec), "--ibnetdiscover", str(tmp_path / "ibnet.txt")]
    assert CliRunner().invoke(cli, args).exit_code == 1
    result = CliRunner().invoke(cli, [*args, "--ignore-speed"])
    assert result.exit_code == 0, result.output
    assert result.output == f"network compute: {len(planned)} planned cables: {len(planned)} ok\n"


@pytest.mark.tool
def test_swapped_removed_and_narrow_cables_are_pinpointed(tmp_path: Path) -> None:
    require_tool("ibsim", "ibnetdiscover")
    spec, fabric, net = _compile(tmp_path)
    preamble, records = parse_net(net)
    by_name = {record.name: record for record in records}
    links = [link for link in fabric.links if link.network == "compute"]
    model = fabric.loaded.catalog.catalog.switches[fabric.devices[links[0].b].model]
    hosts = [link for link in links if link.kind == ENDPOINT_LEAF]
    first = hosts[0]
    second = next(link for link in hosts if link.b != first.b)
    uplink = next(link for link in links if link.kind == LEAF_SPINE)
    narrow = next(link for link in links if link.kind == LEAF_SPINE and link.b != uplink.b)

    # swap the host cables at the leaves
    ca1, ca2 = f"{first.a}/{first.a_port}", f"{second.a}/{second.a_port}"
    leaf1, leaf2 = by_name[ca1].links[1], by_name[ca2].links[1]
    _relink(by_name, ca1, 1, *leaf2)
    _relink(by_name, ca2, 1, *leaf1)
    # remove one leaf-spine cable
    ports = [p for p, (far, _) in by_name[uplink.a].links.items() if far == uplink.b]
    leaf_port = ports[0]
    spine, spine_port = by_name[uplink.a].links.pop(leaf_port)
    del by_name[spine].links[spine_port]
    removed = next(
        link
        for link in links
        if link.kind == LEAF_SPINE
        and link.a == uplink.a
        and link.b == spine
        and ib_port(model, link.a_port) == leaf_port
    )
    # train one leaf-spine link at 1x (ibsim: w=1 on both ends of the port line)
    narrow_port = next(p for p, (far, _) in by_name[narrow.a].links.items() if far == narrow.b)
    text = write_net(preamble, records)
    far, far_port = by_name[narrow.a].links[narrow_port]
    text = text.replace(
        f'[{narrow_port}]\t"{far}"[{far_port}]\n', f'[{narrow_port}]\t"{far}"[{far_port}]\tw=1\n', 1
    ).replace(
        f'[{far_port}]\t"{narrow.a}"[{narrow_port}]\n',
        f'[{far_port}]\t"{narrow.a}"[{narrow_port}]\tw=1\n',
        1,
    )
    narrowed = next(
        link
        for link in links
        if link.a == narrow.a and link.b == far and ib_port(model, link.a_port) == narrow_port
    )
    discovered = _discover(text, tmp_path / "sim")

    verdict = verify_ibnetdiscover(fabric, discovered, "ibnet.txt", check_speed=False)
    bad = {f.cable: f for f in verdict.findings if f.status != OK}
    swap = f"swap the connectors at {first.b}:{first.b_port} and {second.b}:{second.b_port}"
    swap_reverse = f"swap the connectors at {second.b}:{second.b_port} and {first.b}:{first.b_port}"
    assert set(bad) == {cable_id(first), cable_id(second), cable_id(removed), cable_id(narrowed)}
    assert bad[cable_id(first)].status == MISWIRED
    assert bad[cable_id(second)].status == MISWIRED
    assert bad[cable_id(first)].detail.startswith((swap, swap_reverse))
    assert bad[cable_id(second)].detail.startswith((swap, swap_reverse))
    assert bad[cable_id(removed)].status == MISSING
    assert bad[cable_id(narrowed)].status == WRONG_SPEED
    assert bad[cable_id(narrowed)].detail == "planned 4xNDR, found 1xSDR"
    assert len(verdict.findings) == len(links)  # nothing unexpected: the swap explains itself

    (tmp_path / "ibnet.txt").write_text(discovered)
    result = CliRunner().invoke(
        cli,
        ["verify", str(spec), "--ibnetdiscover", str(tmp_path / "ibnet.txt"), "--ignore-speed",
         "--network", "compute"],
    )  # fmt: skip
    assert result.exit_code == 1
    assert f"{cable_id(removed)}: missing" in result.output
    assert f"{cable_id(first)}: miswired" in result.output
    assert result.output.endswith("1 missing, 1 wrong-speed\n")


def test_unknown_network_is_an_error(tmp_path: Path) -> None:
    spec, _, _ = _compile(tmp_path)
    discovered = tmp_path / "ibnet.txt"
    discovered.write_text('Switch\t64 "S-0000000000000001"\t\t# "x"\n')
    result = CliRunner().invoke(
        cli, ["verify", str(spec), "--ibnetdiscover", str(discovered), "--network", "storage"]
    )
    assert result.exit_code == 1
    assert "no infiniband network 'storage'" in result.output


@pytest.mark.tool
def test_unwritable_csv_is_an_error(tmp_path: Path) -> None:
    require_tool("ibsim", "ibnetdiscover")
    spec, _, net = _compile(tmp_path)
    (tmp_path / "ibnet.txt").write_text(_discover(net, tmp_path / "sim"))
    target = tmp_path / "missing" / "v.csv"
    args = [
        "verify",
        str(spec),
        "--ibnetdiscover",
        str(tmp_path / "ibnet.txt"),
        "--csv",
        str(target),
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1
    assert f"{target.as_posix()}: error: cannot write file" in result.output
    assert "Traceback" not in result.output
