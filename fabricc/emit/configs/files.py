"""Emitter `configs`, its body: every switch's, subnet manager's and host's files (the layout is
in the package docstring, fabricc/emit/configs/__init__.py).

Consumes the Fabric IR; produces the artifacts under configs/. Kept out of the package's
__init__ so that importing one of its modules (validate checks the GUID files through
ibfabric) does not load every config writer and their dependencies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from fabricc.emit import Artifact
from fabricc.emit.configs.context import MANAGEMENT_ROLES, ConfigContext
from fabricc.emit.configs.cumulus import nvue_text, roce_tree
from fabricc.emit.configs.eos_files import eos_files
from fabricc.emit.configs.frr import frr_config, frr_text
from fabricc.emit.configs.hosts import host_file, host_nics
from fabricc.emit.configs.ibfabric import build_subnets
from fabricc.emit.configs.ibsim import ibsim_file
from fabricc.emit.configs.mgmt import ManagementPlan, check_vlans, management_tree
from fabricc.emit.configs.opensm import opensm_files
from fabricc.emit.configs.sonic import config_db
from fabricc.emit.configs.supernic import supernic_files
from fabricc.errors import DesignError, error
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path
from fabricc.synth.switchos import has_config

# The configs are made in parts - the switches' files in SWITCH_PARTS shares (every
# SWITCH_PARTS-th switch each), then the subnet managers' and hosts' - so that a large build's
# two processes can take them apart (fabricc.build.FORK_UNITS) and end together: a switch's files
# depend on no other switch's, and parts this small leave the process that finishes first little
# to wait for (nvl72-512: two parts of 0.8 and 1.0 s left it 0.4 s).
SWITCH_PARTS = 3


def emit_switches(fabric: Fabric, part: int) -> Iterator[Artifact]:
    """Part `part` of SWITCH_PARTS of the switches' files."""
    yield from _switches(_context(fabric), part)


def emit_sm_hosts(fabric: Fabric) -> Iterator[Artifact]:
    """The subnet managers', hosts' and SuperNICs' files."""
    yield from _sm_hosts(_context(fabric))


def _context(fabric: Fabric) -> ConfigContext:
    """The fabric's ConfigContext, made once for the parts that one process makes."""
    return fabric.derived("configs.context", lambda: ConfigContext(fabric))


def _sm_hosts(ctx: ConfigContext) -> Iterator[Artifact]:
    fabric = ctx.fabric
    for subnet in build_subnets(ctx):
        yield from opensm_files(ctx, subnet)
        yield ibsim_file(fabric.name, subnet)
    for device in fabric.devices.values():
        if device.kind in ("node", "tray"):
            nics = host_nics(ctx, device)
            if nics:
                yield host_file(ctx, device, nics)
    yield from supernic_files(ctx)


def _switches(ctx: ConfigContext, part: int) -> Iterator[Artifact]:
    """The files of the switches at places `part`, `part` + SWITCH_PARTS, ... in network and
    tier order."""
    fabric = ctx.fabric
    check_vlans(fabric)
    plan = fabric.derived("configs.management_plan", lambda: ManagementPlan(ctx))
    place = -1
    for name, topology in fabric.networks.items():
        network = fabric.loaded.networks[name]
        if network.fabric != "ethernet":
            continue
        management = network.spec.role in MANAGEMENT_ROLES
        if management and network.spec.os != "cumulus":
            path = (*network.path, "os")
            raise DesignError(
                [
                    error(
                        "management switch configs are generated for Cumulus Linux (NVUE) only",
                        path=format_path(path),
                        location=fabric.loaded.source.value(path),
                        hint="use os: cumulus for in-band and out-of-band networks",
                    )
                ]
            )
        for tier in ("leaf", "spine", "core"):
            for switch in topology.switches.get(tier, []):
                place += 1
                if place % SWITCH_PARTS != part:
                    continue
                device = fabric.devices[switch]
                if not has_config(fabric, device):
                    continue  # its model names no OS (a warning of the design check)
                folder = f"configs/{switch}"
                if management:
                    tree = management_tree(ctx, plan, device)
                    text = nvue_text(
                        device, fabric.name, tree, ctx.shared, network.spec.nvue_release
                    )
                    yield f"{folder}/startup.yaml", text
                    continue
                if network.spec.os == "eos":
                    yield from eos_files(ctx, device)
                    continue
                if network.spec.os == "sonic":
                    text = json.dumps(config_db(ctx, device), indent=2) + "\n"
                    yield f"{folder}/config_db.json", text
                else:
                    tree = roce_tree(ctx, device)
                    text = nvue_text(
                        device, fabric.name, tree, ctx.shared, network.spec.nvue_release
                    )
                    yield f"{folder}/startup.yaml", text
                yield f"{folder}/frr.conf", frr_text(frr_config(ctx, device))
