"""The NCCL files and the switch files tell the same story: NCCL's Spectrum-X plugin
(NCCL_NET_PLUGIN=spcx) is set for a node group exactly when the NVUE startup.yaml files of its
compute network turn `router adaptive-routing` on, for every example and for variations that
take adaptive routing away (SONiC, a switch model without it, a speed it cannot route
adaptively at, one leaf tier, adaptive_routing: false). Both sides are read from the emitted
files; the IR only says which node group and switch belong to which network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabricc.emit import Artifact
from fabricc.ir import ENDPOINT_LEAF, Fabric
from tests.configs_support import by_path, nvue
from tests.support import EXAMPLE_NAMES, EXAMPLES, compile_text, compiled

SPECTRUM_X = "spectrum-x-2plane"
COMPUTE_OS = "    os: cumulus\n"  # the first os line of the example: its compute network's


def env_settings(text: str) -> dict[str, str]:
    """KEY=VALUE lines, split at the first '=' (as NCCL reads /etc/nccl.conf)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key] = value
    return values


def env_groups(text: str) -> list[str]:
    """The node groups an .env file is for, from its header line "(node groups: a, b)."."""
    header = " ".join(line.lstrip("# ") for line in text.splitlines() if line.startswith("#"))
    groups = header.split("(node groups: ", 1)[1].split(")", 1)[0]
    return groups.split(", ")


def compute_network(fabric: Fabric, group: str) -> str:
    """The compute network the group's GPU ports are cabled to."""
    nodes = {d.name for d in fabric.devices.values() if d.group == group}
    networks = {
        link.network
        for link in fabric.links
        if link.kind == ENDPOINT_LEAF and link.a in nodes
        if fabric.loaded.networks[link.network].spec.role == "compute"
    }
    assert len(networks) == 1, (group, networks)
    return networks.pop()


def router_adaptive(tree: dict[str, Any]) -> bool:
    return "adaptive-routing" in tree.get("router", {})


def ports_adaptive(tree: dict[str, Any]) -> bool:
    return any("adaptive-routing" in e.get("router", {}) for e in tree["interface"].values())


def assert_agreement(fabric: Fabric, artifacts: tuple[Artifact, ...] | list[Artifact]) -> bool:
    """NCCL claims Spectrum-X adaptive routing exactly where some switch of the compute network
    turns it on; every switch turns it on globally exactly where some port of it routes
    adaptively. Returns whether any .env file claims it."""
    files = by_path(artifacts)
    trees = nvue(files)
    for name, tree in trees.items():
        assert router_adaptive(tree) == ports_adaptive(tree), name
    claimed = False
    envs = {p: t for p, t in files.items() if p.startswith("nccl/") and p.endswith(".env")}
    assert envs
    for path, text in envs.items():
        spcx = env_settings(text).get("NCCL_NET_PLUGIN") == "spcx"
        for group in env_groups(text):
            network = compute_network(fabric, group)
            switches = [n for n, d in fabric.devices.items() if d.network == network]
            adaptive = [n for n in switches if n in trees and router_adaptive(trees[n])]
            assert spcx == bool(adaptive), (path, group, network, adaptive[:3])
        claimed |= spcx
    return claimed


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_nccl_claims_adaptive_routing_where_the_switches_run_it(example: str) -> None:
    assert_agreement(*compiled(example))


def test_the_spectrum_x_examples_do_claim_it() -> None:
    """The agreement is not vacuous: the Spectrum-X examples run adaptive routing."""
    assert assert_agreement(*compiled(SPECTRUM_X))
    assert assert_agreement(*compiled("gb300-nvl72-spectrum-x"))


# a model like sn5600 (64 OSFP cages at 800G, split 2x400G at most), with or without adaptive
# routing
SITE_SWITCH = """\
  {name}:
    description: test switch, 64x 800GbE
    part_number: {part}
    source: test
    fabric: ethernet
    asic: Spectrum-4
{adaptive}    height_u: 2
    power_w: 2300
    port_groups:
      - {{count: 64, form: osfp, cage_speed: 800, breakouts: [1, 2]}}
    mgmt_ports:
      - {{name: eth0, cage: eth0, form: rj45, speeds: [1], role: oob, protocols: [ethernet]}}
"""
SITE_CATALOG = "switches:\n" + "".join(
    SITE_SWITCH.format(name=name, part=name.upper(), adaptive=adaptive)
    for name, adaptive in (
        ("no-ar", "    adaptive_routing: false\n"),
        ("ar-200g", "    adaptive_routing: true\n    adaptive_routing_speeds: [200]\n"),
    )
)


def spectrum_x_with(tmp_path: Path, compute: str, *, catalog: bool = False) -> str:
    """The Spectrum-X example with `compute` added under its compute network."""
    text = (EXAMPLES / f"{SPECTRUM_X}.yaml").read_text()
    assert COMPUTE_OS in text
    if catalog:
        (tmp_path / "site.yaml").write_text(SITE_CATALOG)
        text = text.replace("\nsite:\n", "\ncatalog: [site.yaml]\n\nsite:\n", 1)
    return text.replace(COMPUTE_OS, compute, 1)


VARIANTS = {
    "sonic": ("    os: sonic\n", False),
    "adaptive-routing-false": (COMPUTE_OS + "    adaptive_routing: false\n", False),
    "model-without-ar": (COMPUTE_OS + "    switches: {leaf: no-ar, spine: no-ar}\n", True),
    # no 200G link between two such switches (cages split 2x400G at most): plain ECMP
    "ar-at-200g-only": (COMPUTE_OS + "    switches: {leaf: ar-200g, spine: ar-200g}\n", True),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_no_claim_where_a_variation_takes_adaptive_routing_away(
    variant: str, tmp_path: Path
) -> None:
    compute, catalog = VARIANTS[variant]
    fabric, artifacts = compile_text(spectrum_x_with(tmp_path, compute, catalog=catalog), tmp_path)
    assert not assert_agreement(fabric, artifacts)


def test_one_leaf_tier_has_no_link_to_route_adaptively(tmp_path: Path) -> None:
    """Leaves alone: no switch-to-switch link, so no switch turns adaptive routing on, and NCCL
    must not load the Spectrum-X plugin either."""
    fabric, artifacts = compile_text(
        "metadata: {name: lab}\nnodes:\n  gpu: {model: hgx-b300, count: 2}\n"
        "networks:\n  compute:\n    role: compute\n    fabric: ethernet\n    tiers: 1\n"
        "    rail_optimized: false\n"
        "    os: cumulus\n",
        tmp_path,
    )
    assert not assert_agreement(fabric, artifacts)


# SHARP: NCCL's CollNet (NCCL_COLLNET_ENABLE=1) where the compute network's subnet manager turns
# SHARP on (nvidia-sm.conf sharp_enabled 2) and UFM's Aggregation Manager runs (ufm-gv-sharp.cfg)


def sm_folders(files: dict[str, str], network: str) -> set[str]:
    """The subnet-manager folders of a network: <network>-sm, or one per plane or rail."""
    folders = {p.split("/")[1] for p in files if p.startswith("configs/") and p.count("/") == 2}
    return {f for f in folders if f.endswith("-sm") and f.startswith(f"{network}-")}


def sharp_on(files: dict[str, str], folder: str) -> bool:
    """The subnet manager of this folder enables SHARP, and then UFM runs its Aggregation
    Manager: the two files say the same."""
    conf = files.get(f"configs/{folder}/nvidia-sm.conf", "")
    enabled = "\nsharp_enabled 2\n" in conf
    assert enabled == (f"configs/{folder}/ufm-gv-sharp.cfg" in files), folder
    return enabled


def sharp_by_network(fabric: Fabric, files: dict[str, str]) -> dict[str, bool]:
    """Every InfiniBand network -> its subnet managers enable SHARP (all of them, or none)."""
    result = {}
    for name, network in fabric.loaded.networks.items():
        if network.fabric != "infiniband":
            continue
        folders = sm_folders(files, name)
        assert folders, name
        states = {sharp_on(files, folder) for folder in folders}
        assert len(states) == 1, (name, folders)
        result[name] = states.pop()
    return result


def assert_sharp_agreement(fabric: Fabric, files: dict[str, str]) -> dict[str, bool]:
    """NCCL uses CollNet exactly where its compute network's SMs run SHARP."""
    sharp = sharp_by_network(fabric, files)
    for path, text in files.items():
        if not (path.startswith("nccl/") and path.endswith(".env")):
            continue
        collnet = env_settings(text).get("NCCL_COLLNET_ENABLE") == "1"
        for group in env_groups(text):
            assert collnet == sharp.get(compute_network(fabric, group), False), (path, group)
    return sharp


@pytest.mark.parametrize("example", EXAMPLE_NAMES)
def test_nccl_uses_sharp_where_the_subnet_manager_runs_it(example: str) -> None:
    fabric, artifacts = compiled(example)
    files = by_path(artifacts)
    sharp = assert_sharp_agreement(fabric, files)
    for name, on in sharp.items():
        network = fabric.loaded.networks[name].spec
        # the examples keep the defaults: SHARP on compute networks, where a tree can be built
        # under NVIDIA's routing engine (not a torus: Nue)
        tree = network.topology != "torus"
        assert on == (network.role == "compute" and tree), (name, network.role)
        if network.role == "compute" and not tree:
            for path, text in files.items():
                if path.startswith("nccl/") and path.endswith(".env"):
                    assert env_settings(text).get("NCCL_COLLNET_ENABLE") == "0", path
                    assert "Setting up NVIDIA SHARP Environment" in text


def test_a_storage_fabric_runs_sharp_only_when_asked(tmp_path: Path) -> None:
    """Storage subnets default to SHARP off (SHARP offloads collectives, which run on the compute
    fabric); `subnet_manager: {sharp: true}` turns it and UFM's Aggregation Manager on."""
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    line = "    role: storage\n"
    assert line in text
    asked = text.replace(line, line + "    subnet_manager: {sharp: true}\n")
    fabric, artifacts = compile_text(asked, tmp_path)
    sharp = assert_sharp_agreement(fabric, by_path(artifacts))
    assert sharp == {"compute": True, "storage": True}
    sm_nodes = "      sm_nodes: [ufm]\n"
    assert text.count(sm_nodes) == 1  # the compute network's subnet_manager
    off = text.replace(sm_nodes, sm_nodes + "      sharp: false\n")
    fabric, artifacts = compile_text(off, tmp_path)
    assert assert_sharp_agreement(fabric, by_path(artifacts)) == {
        "compute": False,
        "storage": False,
    }
