"""Slurm feed: Debian's slurmctld loads the generated nodes and topology/tree, and
`scontrol show topology` reports the switch hierarchy the design implies; the block topology
and topology.yaml (newer Slurm than Debian ships) follow their documented grammar.

Expectations come from the design, not from the files: every GPU host of the compute network
under exactly one lowest-level switch, the hosts of a lowest-level switch being those that share
leaves (a rail-optimized unit), NVL72 racks as blocks.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from fabricc.emit.provisioning.common import groups, host_leaves, hostlist
from tests.provisioning_support import provisioning, schema_errors, scontrol, slurmctld_lab
from tests.support import EXAMPLE_NAMES, compiled, require_tool

SLURM_TOOLS = ("slurmctld", "scontrol")


@pytest.fixture(scope="module")
def expand(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], list[str]]:
    """Slurm's own hostlist expansion (scontrol needs a slurm.conf, not a daemon)."""
    conf = tmp_path_factory.mktemp("slurm") / "slurm.conf"
    conf.write_text("ClusterName=fabricc\nSlurmctldHost=localhost\n")

    def run(expression: str) -> list[str]:
        result = scontrol(conf, "show", "hostnames", expression)
        assert result.returncode == 0, result.stderr
        return result.stdout.split()

    return run


def parse_topology(text: str) -> dict[str, dict[str, str]]:
    """`scontrol show topology` -> switch name -> its fields."""
    switches = {}
    for line in text.splitlines():
        fields = dict(item.split("=", 1) for item in line.split())
        switches[fields["SwitchName"]] = fields
    return switches


@pytest.mark.tool
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_slurmctld_loads_the_tree(
    example: str, tmp_path: Path, expand: Callable[[str], list[str]]
) -> None:
    require_tool(*SLURM_TOOLS)
    fabric, _ = compiled(example)
    files = provisioning(example)
    network = next(iter(n for n in fabric.networks if host_leaves(fabric, n)))
    attached = host_leaves(fabric, network)
    with slurmctld_lab(tmp_path, files["slurm/nodes.conf"], files["slurm/topology.conf"]) as (
        run,
        log,
    ):
        shown = parse_topology(run("show", "topology"))
        nodes = run("--future", "--oneliner", "show", "nodes")
    # e.g. "error: WARNING: Multiple leaf switches contain nodes" (a leaf per rail)
    complaints = [
        line
        for line in log.read_text().splitlines()
        if re.search(r"(?i)warning|switch|topolog", line) and re.search(r"(?i)error|warn", line)
    ]
    assert not complaints, complaints
    # every node Slurm knows is a GPU host of the design, each under exactly one lowest switch
    known = sorted(re.findall(r"NodeName=(\S+)", nodes))
    assert known == sorted(attached)
    lowest = {name: f for name, f in shown.items() if f["Level"] == "0"}
    placed = [n for f in lowest.values() for n in expand(f["Nodes"])]
    assert sorted(placed) == known
    # a lowest switch holds exactly the hosts that share leaves with each other
    for f in lowest.values():
        members = expand(f["Nodes"])
        leaves = {leaf for host in members for leaf in attached[host]}
        outside = [h for h in attached if h not in members and leaves & set(attached[h])]
        assert not outside, (f["SwitchName"], outside)
    # one switch reaches every node, so jobs may span the whole network
    assert any(sorted(expand(f["Nodes"])) == known for f in shown.values())


def test_rail_optimized_units_are_the_lowest_level() -> None:
    """superpod-h100-4su: 4 SUs of 8 rail leaves; the unit, not the leaf, is a Slurm switch."""
    fabric, _ = compiled("superpod-h100-4su")
    found = groups(fabric, "compute")
    assert [g.name for g in found] == [f"compute-su{i}" for i in range(1, 5)]
    assert all(len(g.leaves) == 8 for g in found)
    assert sum(len(g.hosts) for g in found) == 127
    conf = provisioning("superpod-h100-4su")["slurm/topology.conf"]
    assert "SwitchName=compute Switches=compute-su[1-4]\n" in conf


BLOCK_LINE = re.compile(r"^BlockName=(\S+) Nodes=(\S+)$")
SIZES_LINE = re.compile(r"^BlockSizes=(\d+(?:,\d+)*)$")


@pytest.mark.tool
@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_block_topology_follows_the_grammar(
    example: str, expand: Callable[[str], list[str]]
) -> None:
    """topology.conf(5), topology/block: BlockName=<name> Nodes=<hostlist> lines, one
    BlockSizes=<base>[,<size>...] line whose successive sizes are power-of-two multiples."""
    require_tool("scontrol")
    fabric, _ = compiled(example)
    text = provisioning(example)["slurm/topology-block.conf"]
    blocks: dict[str, list[str]] = {}
    sizes: list[int] = []
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if match := BLOCK_LINE.match(line):
            assert match.group(1) not in blocks
            blocks[match.group(1)] = expand(match.group(2))
        elif match := SIZES_LINE.match(line):
            assert not sizes, "BlockSizes given twice"
            sizes = [int(s) for s in match.group(1).split(",")]
        else:
            raise AssertionError(f"not topology/block grammar: {line!r}")
    assert sizes and sizes[0] <= min(len(b) for b in blocks.values())
    for lower, upper in itertools.pairwise(sizes):
        ratio = upper // lower
        assert upper % lower == 0 and ratio > 1 and ratio & (ratio - 1) == 0
    placed = [n for b in blocks.values() for n in b]
    network = next(iter(n for n in fabric.networks if host_leaves(fabric, n)))
    assert sorted(placed) == sorted(host_leaves(fabric, network))
    rack_domains = {d.name: d.members for d in fabric.nvlink_domains if d.scope == "rack"}
    if rack_domains:  # NVL72: one block per rack-scale NVLink domain
        assert blocks == {name: sorted(m) for name, m in rack_domains.items()}


def test_nvl72_blocks() -> None:
    text = provisioning("gb200-nvl72-su")["slurm/topology-block.conf"]
    assert "BlockName=nvl72-01 Nodes=nvl72-01-c[01-18]\n" in text
    assert text.endswith("BlockSizes=18,36,72,144\n")


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_topology_yaml_follows_the_grammar(example: str) -> None:
    files = provisioning(example)
    document = yaml.safe_load(files["slurm/topology.yaml"])
    assert schema_errors("slurm-topology.schema.json", document) == []
    defaults = [t for t in document if t.get("cluster_default")]
    assert len(defaults) == 1
    # NVL72: a partition naming no topology gets the rack blocks, never the tree, whose lowest
    # switch (a scheduling group of leaves) may cut a rack's NVLink domain in two
    fabric, _ = compiled(example)
    nvl_racks = any(d.scope == "rack" for d in fabric.nvlink_domains)
    assert ("block" in defaults[0]) == nvl_racks, defaults[0]["topology"]
    # the yaml carries the same tree and blocks as the .conf files
    tree = next(t for t in document if "tree" in t)
    conf = {
        m.group(1): m.group(2)
        for m in re.finditer(
            r"^SwitchName=(\S+) (?:Nodes|Switches)=(\S+)$", files["slurm/topology.conf"], re.M
        )
    }
    assert {
        s["switch"]: s.get("nodes", s.get("children")) for s in tree["tree"]["switches"]
    } == conf


def test_hostlist_ranges() -> None:
    assert hostlist(["dgx003", "dgx001", "dgx002", "dgx007", "head"]) == "head,dgx[001-003,007]"
    assert hostlist(["a-01-c01", "a-01-c02", "a-02-c01"]) == "a-01-c[01-02],a-02-c01"
    assert hostlist(["gpu9", "gpu10"]) == "gpu9,gpu10"
