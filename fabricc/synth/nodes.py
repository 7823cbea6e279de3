"""Synthesis pass 1: node groups -> node devices, scalable units and NVLink domains.

Consumes the LoadedSpec (groups, their catalog models, the networks they attach to); produces
node devices (for rack-scale systems: compute trays, NVLink switch trays and power shelves), each
with its scalable unit and slot, the number each unit is printed with (Fabric.su_labels), and one
NvlinkDomain per NVLink domain. Slots are derived from the node index alone, so adding nodes never
renumbers existing ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from fabricc.catalog.models import NodeModel
from fabricc.errors import Diagnostic, error
from fabricc.ir import Device, Fabric, NvlinkDomain
from fabricc.spec.resolve import leaf_budget
from fabricc.synth.naming import format_name

ROLE_SHORT = {
    "compute-tray": "c",
    "nvlink-switch-tray": "nvsw",
    "power-shelf": "ps",
    "mgmt-switch": "mgmt",
    "other": "x",
}


@dataclass(slots=True)
class Endpoint:
    """A device whose ports attach to networks: a node, or a compute tray of a rack system."""

    device: str
    su: int | None  # 0-based design-wide scalable unit; None outside units (appliances)
    slot: int  # 0-based slot within the unit (rack systems: rack-in-unit * trays + tray)
    index: int  # 0-based index within the group


@dataclass(slots=True)
class GroupPlan:
    name: str
    model: NodeModel  # the model whose ports attach (a rack system's compute tray)
    system_model: NodeModel
    rack_scale: bool
    units_per_node: int  # endpoints per node (trays per rack system)
    su_size: int  # nodes (rack systems: racks) per unit
    reserved: int  # slots held in unit 0
    endpoints: list[Endpoint] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)  # rack-system instance names
    sus: int = 0
    su_offset: int = 0  # first design-wide scalable unit of this group
    in_units: bool = False  # GPU groups are built in scalable units; appliances are not

    @property
    def slots_per_su(self) -> int:
        return self.su_size * self.units_per_node


def default_su_size(fabric: Fabric, group: str, units: int) -> tuple[int, int]:
    """SU size = endpoints one rail leaf serves; reserved = most slots any network holds."""
    loaded = fabric.loaded
    catalog = loaded.catalog.catalog
    reserved = 0
    size: int | None = None
    for network in loaded.networks.values():
        if not network.rail_optimized:
            continue
        for attachment in network.attachments:
            if attachment.group != group or attachment.reserved:
                continue
            reserved = max(reserved, network.spec.reserved_slots)
            if size is None:
                leaf = catalog.switches[network.switch_models["leaf"]]
                budget = leaf_budget(
                    leaf,
                    attachment.speed,
                    network.fabric_speed,
                    attachment.oversubscription,
                    downlinks=attachment.leaf_downlinks,
                    dual_homed=network.spec.dual_homed,
                    has_uplinks=network.spec.tiers != 1,
                )
                size = max(1, budget.down_ports // units)
    return (size if size is not None else 0), reserved


def plan_groups(fabric: Fabric, problems: list[Diagnostic]) -> dict[str, GroupPlan]:
    loaded = fabric.loaded
    catalog = loaded.catalog.catalog
    plans: dict[str, GroupPlan] = {}
    for name, group in loaded.spec.nodes.items():
        system = catalog.nodes[group.model]
        rack_scale = system.rack_scale is not None
        model = system
        units = 1
        if system.rack_scale is not None:
            tray = catalog.compute_tray(system)
            assert tray is not None, f"{group.model}: a rack system without a compute tray"
            model = tray[1]
            units = system.rack_scale.tray_count
        default_size, reserved = default_su_size(fabric, name, units)
        su_size = group.su_size or default_size or group.count
        if rack_scale:
            reserved = 0  # whole racks: appliances use spare leaf ports instead
        if reserved >= su_size * units:
            problems.append(
                error(
                    f"{reserved} reserved slots leave no room for nodes in a unit of {su_size}",
                    path=f"nodes.{name}.su_size",
                    location=loaded.source.key(("nodes", name)),
                )
            )
            reserved = 0
        plans[name] = GroupPlan(name, model, system, rack_scale, units, su_size, reserved)
        plans[name].in_units = model.kind in ("gpu-node", "compute-tray")
    return plans


def expand_nodes(fabric: Fabric, plans: dict[str, GroupPlan]) -> None:
    """Create node devices; scalable units are numbered design-wide, group after group."""
    loaded = fabric.loaded
    catalog = loaded.catalog.catalog
    next_unit = 0
    for name, group in loaded.spec.nodes.items():
        plan = plans[name]
        path = ("nodes", name)
        plan.su_offset = next_unit
        base = next_unit if plan.in_units else None
        if not plan.rack_scale:
            first_unit = plan.su_size - plan.reserved
            for i in range(group.count):
                if i < first_unit:
                    su, slot = 0, i
                else:
                    su, slot = 1 + (i - first_unit) // plan.su_size, (i - first_unit) % plan.su_size
                hostname = format_name(group.hostname, group=name, n=i + 1, i=i, su=su + 1)
                fabric.add(
                    Device(
                        name=hostname,
                        kind="node",
                        model=group.model,
                        role=plan.model.kind,
                        index=i,
                        group=name,
                        su=base + su if base is not None else None,
                        height_u=plan.model.height_u,
                        power_w=plan.model.power_w,
                        spec_path=path,
                    )
                )
                plan.endpoints.append(
                    Endpoint(hostname, base + su if base is not None else None, slot, i)
                )
                plan.sus = su + 1
                _node_domain(fabric, plan.model, hostname)
            next_unit += plan.sus if plan.in_units else 0
            continue
        scale = plan.system_model.rack_scale
        assert scale is not None
        tray_index = 0
        for r in range(group.count):
            su, rack_in_su = divmod(r, plan.su_size)
            system_name = format_name(group.hostname, group=name, n=r + 1, i=r, su=su + 1)
            plan.systems.append(system_name)
            plan.sus = su + 1
            counters: dict[str, int] = {}
            trays: list[str] = []
            switch_trays: list[str] = []
            for member in scale.members:
                for u in member.u:
                    counters[member.role] = counters.get(member.role, 0) + 1
                    n = counters[member.role]
                    suffix = member.hostname_suffix.format(role_short=ROLE_SHORT[member.role], n=n)
                    device_name = system_name + suffix
                    if member.role == "power-shelf":
                        part = catalog.parts[member.model]
                        kind, role, height, power = "power-shelf", "power-shelf", part.height_u, 0
                    else:
                        member_model = catalog.nodes[member.model]
                        kind = "tray" if member.role == "compute-tray" else "nvlink-switch"
                        role, height, power = (
                            member_model.kind,
                            member_model.height_u,
                            member_model.power_w,
                        )
                    fabric.add(
                        Device(
                            name=device_name,
                            kind=kind,
                            model=member.model,
                            role=role,
                            index=n - 1,
                            group=name,
                            system=system_name,
                            su=plan.su_offset + su,
                            u=u,
                            height_u=height,
                            power_w=power,
                            spec_path=path,
                        )
                    )
                    if member.role == "compute-tray":
                        slot = rack_in_su * plan.units_per_node + (n - 1)
                        plan.endpoints.append(
                            Endpoint(device_name, plan.su_offset + su, slot, tray_index)
                        )
                        tray_index += 1
                        trays.append(device_name)
                    elif member.role == "nvlink-switch-tray":
                        switch_trays.append(device_name)
            nvlink = plan.system_model.nvlink
            if nvlink is not None:
                fabric.nvlink_domains.append(
                    NvlinkDomain(
                        name=system_name,
                        scope=nvlink.scope,
                        gpus=nvlink.gpus,
                        switch_chips=nvlink.switch_chips,
                        links_per_gpu=plan.model.gpu.nvlink_links if plan.model.gpu else 0,
                        members=trays,
                        switch_trays=switch_trays,
                    )
                )
        next_unit += plan.sus
    fabric.su_labels = su_labels(fabric, plans, next_unit)


def su_labels(fabric: Fabric, plans: dict[str, GroupPlan], units: int) -> list[int]:
    """The number each of the design's `units` scalable units is printed with, by index:
    index + 1, or with an earlier build kept (`build --keep`) the number its endpoints (nodes,
    compute trays) had there: the one most of them had (the lower on a tie) that no earlier
    unit took. Units without one number on from the highest number the earlier build printed,
    in index order, so a number never names two units across the two builds."""
    kept = fabric.loaded.kept
    if not kept:
        return list(range(1, units + 1))
    votes: list[Counter[int]] = [Counter() for _ in range(units)]
    for plan in plans.values():
        for endpoint in plan.endpoints:
            place = kept.get(endpoint.device)
            if endpoint.su is not None and place is not None and place.su is not None:
                votes[endpoint.su][place.su] += 1
    labels: list[int] = []
    taken: set[int] = set()
    fresh = max((p.su for p in kept.values() if p.su is not None), default=0)
    for counts in votes:
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        label = next((label for label, _ in ranked if label not in taken), None)
        if label is None:
            fresh += 1
            label = fresh
        taken.add(label)
        labels.append(label)
    return labels


def _node_domain(fabric: Fabric, model: NodeModel, hostname: str) -> None:
    if model.nvlink is None or model.gpu is None:
        return
    fabric.nvlink_domains.append(
        NvlinkDomain(
            name=hostname,
            scope=model.nvlink.scope,
            gpus=model.nvlink.gpus,
            switch_chips=model.nvlink.switch_chips,
            links_per_gpu=model.gpu.nvlink_links,
            members=[hostname],
        )
    )
