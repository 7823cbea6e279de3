"""Emitter `nccl`: NCCL topology XML and matching NCCL settings for every GPU node type.

Consumes the Fabric IR, the catalog's host topologies and `outputs.nccl.profile`; produces
nccl/<node-type>.xml (the NCCL_TOPO_FILE), nccl/<node-type>.env (NCCL_TOPO_FILE, NCCL_IB_HCA,
NCCL_IB_TC/SL, NCCL_COLLNET_ENABLE where the network runs SHARP, NCCL_NET_PLUGIN where it runs
adaptive routing (Spectrum-X), NCCL_SOCKET_IFNAME) and nccl/README.md (where the files go and how
to verify them).
A node type is a GPU node model, or the compute tray of a rack-scale system (NCCL wants one tray
per file). Groups of one model that the design treats differently get one pair of files each.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricc.emit import Artifact
from fabricc.emit.configs import features
from fabricc.emit.provisioning.k8s import rail_stems
from fabricc.ir import Fabric
from fabricc.nccl.document import render
from fabricc.nccl.environment import INSTALL_DIR, Setting, render_env, settings, topology_path
from fabricc.nccl.plan import GroupPlan, plan_groups
from fabricc.nccl.topology import Profile, build_topology

FOLDER = "nccl"


@dataclass(frozen=True, slots=True)
class _Files:
    stem: str
    model: str
    groups: tuple[str, ...]
    xml: str | None
    settings: tuple[Setting, ...]


def emit(fabric: Fabric) -> list[Artifact]:
    profile: Profile = fabric.loaded.spec.outputs.nccl.profile
    by_model: dict[str, list[GroupPlan]] = {}
    for plan in plan_groups(fabric):
        by_model.setdefault(plan.model, []).append(plan)
    files: list[_Files] = []
    for model, plans in by_model.items():
        shared = [_files(fabric, plan, model, profile) for plan in plans]
        if all((f.xml, f.settings) == (shared[0].xml, shared[0].settings) for f in shared):
            groups = tuple(g for f in shared for g in f.groups)
            files.append(_Files(model, model, groups, shared[0].xml, shared[0].settings))
        else:
            files.extend(_files(fabric, plan, f"{model}-{plan.group}", profile) for plan in plans)
    artifacts: list[Artifact] = []
    for entry in files:
        if entry.xml is not None:
            artifacts.append((f"{FOLDER}/{entry.stem}.xml", entry.xml))
        header = [
            f"NCCL settings for {entry.model} nodes of {fabric.name} (node groups: "
            f"{', '.join(entry.groups)}).",
            "Written by fabricc. Load it as an environment file (systemd EnvironmentFile,",
            "a Slurm prolog, or set -a; . FILE), or append the lines to /etc/nccl.conf,",
            "where variables already set in the environment win.",
        ]
        artifacts.append((f"{FOLDER}/{entry.stem}.env", render_env(header, list(entry.settings))))
    if files:
        artifacts.append((f"{FOLDER}/README.md", _readme(fabric, files, profile)))
    return artifacts


def _files(fabric: Fabric, plan: GroupPlan, stem: str, profile: Profile) -> _Files:
    catalog = fabric.loaded.catalog.catalog
    topology = catalog.host_topologies.get(plan.model)
    xml = None
    if topology is not None:
        nics = {nic.name: nic for nic in plan.nics}
        xml = render(build_topology(plan.model, topology, plan.node, profile, nics))
    entries = tuple(
        settings(
            plan,
            stem,
            xml is not None,
            sharp=_sharp(fabric, plan),
            sharp_off=_sharp_off(fabric, plan),
            spectrum_x=_spectrum_x(fabric, plan),
            rail_stems=tuple(rail_stems(fabric)),
        )
    )
    return _Files(stem, plan.model, (plan.group,), xml, entries)


def _sharp(fabric: Fabric, plan: GroupPlan) -> bool:
    """SHARP on the group's InfiniBand compute network: subnet_manager.sharp, and every switch of
    the network does SHARP (what nvidia-sm.conf's sharp_enabled follows)."""
    network = plan.compute
    if network is None or network.fabric != "infiniband" or network.name not in fabric.networks:
        return False
    return features.sharp(fabric, network.name)


def _sharp_off(fabric: Fabric, plan: GroupPlan) -> str | None:
    """Why the group's InfiniBand compute network has SHARP off though the spec wants it and its
    switches have it (no SHARP tree under its routing engine: features.sharp_blocker)."""
    network = plan.compute
    if network is None or network.fabric != "infiniband" or network.name not in fabric.networks:
        return None
    return features.sharp_blocker(fabric, network.name)


def _spectrum_x(fabric: Fabric, plan: GroupPlan) -> bool:
    """The group's compute network is Ethernet and its switches run adaptive routing as the
    NVUE files turn it on (features.adaptive_routing: the spec, the os, every switch model and
    the speeds of its switch-to-switch links)."""
    network = plan.compute
    if network is None or network.fabric != "ethernet":
        return False
    return features.adaptive_routing(fabric, network.name)


def _readme(fabric: Fabric, files: list[_Files], profile: Profile) -> str:
    described = (
        "like NCCL_TOPO_DUMP_FILE output: CPUs, the PCIe tree, GPUs with their NVLink (and C2C) "
        "links, NICs with their net devices"
        if profile == "complete"
        else "CPUs and the PCIe tree only; NCCL adds GPUs, NVLinks and NICs when it starts"
    )
    lines = [
        f"# NCCL files for {fabric.name}",
        "",
        f"Profile `{profile}` ({described}). Bus ids, PCI ids and CPU data come from the "
        "catalog's `host_topologies`; check them against the real nodes before use.",
        "",
        "| node type | node groups | topology file | settings |",
        "|---|---|---|---|",
    ]
    missing: list[str] = []
    for entry in files:
        xml = f"`{entry.stem}.xml`" if entry.xml is not None else "none"
        if entry.xml is None:
            missing.append(entry.model)
        lines.append(f"| {entry.model} | {', '.join(entry.groups)} | {xml} | `{entry.stem}.env` |")
    lines += [
        "",
        "## Install",
        "",
        f"On every node of a type, put both files into `{INSTALL_DIR}/`:",
        "",
        "```sh",
        f"install -D -m 0644 TYPE.xml {topology_path('TYPE')}",
        f"install -D -m 0644 TYPE.env {INSTALL_DIR}/TYPE.env",
        "```",
        "",
        "Then load the settings into every NCCL job (Slurm prolog or task prolog, container "
        f"environment, `set -a; . {INSTALL_DIR}/TYPE.env; set +a`), or append the .env file "
        "to `/etc/nccl.conf`.",
        "",
        "## Verify",
        "",
        "```sh",
        "fabricc check-nccl *.xml            # before copying: NCCL's parser rules",
        "# on a node, any NCCL job, e.g. nccl-tests, with the settings loaded:",
        "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH NCCL_TOPO_DUMP_FILE=/tmp/topo-dump.xml \\",
        "  all_reduce_perf -b 8M -e 1G -f 2 -g 1 > job.log 2>&1",
        "grep -E 'Loading topology|Could not open XML|Ignoring element|KV Convert to int|"
        "Attribute .* not found|XML Parse' job.log",
        "```",
        "",
        "`Loading topology TYPE` must appear and nothing else may match. Then compare "
        "/tmp/topo-dump.xml with the installed file: only what the file leaves to NCCL (host_hash, "
        "mlopart, net guid and gdr) may differ. See docs/nccl.md for the full procedure.",
    ]
    if missing:
        lines += [
            "",
            "No host topology in the catalog for: " + ", ".join(missing) + ". Add one under "
            "`host_topologies:` in a catalog file to get its topology XML.",
        ]
    return "\n".join(lines) + "\n"
