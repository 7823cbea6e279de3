"""Synthesis helper: add one switch of a network to the design, named from its hostname pattern.

Consumes the network (hostname patterns, spec path), the switch model and the switch's stable
fields (su, rail, plane, pod; 0-based); produces the Device in the fabric and its name at the end
of the topology's list for its tier. Every topology family (fat-tree, rail-only, dragonfly-plus,
torus) adds its switches here, so they are named and indexed alike.
"""

from __future__ import annotations

from fabricc.ir import Device, Fabric, NetworkTopology
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.synth.naming import format_name


def add_switch(
    fabric: Fabric,
    topology: NetworkTopology,
    network: ResolvedNetwork,
    role: str,
    model: str,
    **fields: int | None,
) -> str:
    pattern = getattr(network.spec.hostnames, role)
    index = len(topology.switches.setdefault(role, []))
    values = {k: (v + 1 if v is not None else 0) for k, v in fields.items()}
    name = format_name(pattern, network=network.name, role=role, n=index + 1, i=index, **values)
    switch = fabric.loaded.catalog.catalog.switches[model]
    fabric.add(
        Device(
            name=name,
            kind="switch",
            model=model,
            role=role,
            index=index,
            network=network.name,
            su=fields.get("su"),
            rail=fields.get("rail"),
            plane=fields.get("plane"),
            pod=fields.get("pod"),
            height_u=switch.height_u,
            power_w=switch.power_w,
            spec_path=(*network.path, "switches", role),
        )
    )
    topology.switches[role].append(name)
    return name
