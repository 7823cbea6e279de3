"""Synthesis pass 4: the out-of-band management network.

Consumes the placed design (racks with their devices) and the oob network spec; produces access
switches, one copper link from every BMC, switch management port, NVLink tray, power shelf and
PDU to an access switch, and the access switches' uplinks into another network's top tier
(uplink_to). Access switches serve runs of neighbouring racks (at most max_racks_per_switch),
so that patch cords stay short, and sit at the top of one of the racks they serve.
"""

from __future__ import annotations

from fabricc.catalog.models import NodeModel, SwitchModel
from fabricc.errors import Diagnostic, error
from fabricc.ir import MGMT, UPLINK, Device, Fabric, Link, NetworkTopology
from fabricc.spec.resolve import ResolvedNetwork, switch_port_speeds
from fabricc.spec.yamlsource import format_path
from fabricc.synth.naming import PDU_PORT, POWER_SHELF_PORT, format_name, switch_port
from fabricc.synth.portbook import PortBook
from fabricc.synth.racks import RackPlan

UPLINK_PORTS = "uplink-ports"  # diagnostic code: a target tier ran out of ports for uplinks


def mgmt_port(fabric: Fabric, device: Device) -> str | None:
    """The port a device is managed through, or None if it has none."""
    catalog = fabric.loaded.catalog.catalog
    if device.kind == "pdu":
        return PDU_PORT
    if device.kind == "power-shelf":
        return POWER_SHELF_PORT
    if device.kind == "switch":
        switch: SwitchModel = catalog.switches[device.model]
        return switch.mgmt_ports[0].name if switch.mgmt_ports else None
    model: NodeModel = catalog.nodes[device.model]
    for port in model.ports:
        if port.role == "oob":
            return port.name
    return None


def build_oob(
    fabric: Fabric,
    network: ResolvedNetwork,
    racks: list[RackPlan],
    book: PortBook,
    problems: list[Diagnostic],
) -> None:
    spec = network.spec
    source = fabric.loaded.source
    model_name = network.switch_models["leaf"]
    switch = fabric.loaded.catalog.catalog.switches[model_name]
    access = [g for g in switch.port_groups if g.use == "any" and g.form == "rj45"]
    if not access:
        path = (*network.path, "switches", "leaf")
        problems.append(
            error(
                f"{model_name!r} has no RJ45 ports for management connections",
                path=format_path(path),
                location=source.value(path),
                hint="use an access switch such as sn2201",
            )
        )
        return
    capacity = sum(g.count for g in access)
    max_racks = spec.max_racks_per_switch or 1_000_000
    managed: list[tuple[RackPlan, list[tuple[Device, str]]]] = []
    for rack in racks:
        ports = [(d, p) for d in rack.devices if (p := mgmt_port(fabric, d)) is not None]
        managed.append((rack, ports))

    runs: list[tuple[list[RackPlan], list[tuple[Device, str]]]] = []
    current_racks: list[RackPlan] = []
    current_ports: list[tuple[Device, str]] = []
    for rack, ports in managed:
        if current_racks and (
            len(current_ports) + len(ports) > capacity
            or len(current_racks) >= max_racks
            or rack.oob_switches
        ):
            runs.append((current_racks, current_ports))
            current_racks, current_ports = [], []
        if rack.oob_switches:
            # a rack-scale system with management switches of its own: they serve it alone,
            # its ports split evenly over them (more only if they lack ports)
            count = max(rack.oob_switches, -(-len(ports) // capacity))
            share = -(-len(ports) // count)
            runs.extend(([rack], ports[i : i + share]) for i in range(0, len(ports), share))
            continue
        current_racks.append(rack)
        current_ports.extend(ports)
        while len(current_ports) > capacity:  # one rack alone needs several switches
            runs.append((list(current_racks), current_ports[:capacity]))
            current_ports = current_ports[capacity:]
    if current_racks:
        runs.append((current_racks, current_ports))

    topology = NetworkTopology(
        name=network.name,
        role=spec.role,
        fabric=network.fabric,
        tiers=1,
        planes=1,
        rail_optimized=False,
        dual_homed=False,
        oversubscription=network.oversubscription,
        switch_models={"leaf": model_name},
        spec_path=network.path,
    )
    fabric.networks[network.name] = topology
    names: list[str] = topology.switches.setdefault("leaf", [])
    budget = int(fabric.loaded.spec.site.rack.power_kw * 1000)
    for run_racks, ports in runs:
        index = len(names)
        name = format_name(
            spec.hostnames.leaf, network=network.name, role="leaf", n=index + 1, i=index
        )
        device = Device(
            name=name,
            kind="switch",
            model=model_name,
            role="leaf",
            index=index,
            network=network.name,
            height_u=switch.height_u,
            power_w=switch.power_w,
            spec_path=(*network.path, "switches", "leaf"),
        )
        home = _home_rack(run_racks, device, budget) or _nearest_with_room(
            racks, run_racks, device, budget
        )
        if home is None:
            problems.append(
                error(
                    f"no rack among {run_racks[0].name}..{run_racks[-1].name} has room for {name}",
                    path=format_path((*network.path, "max_racks_per_switch")),
                    location=source.value(network.path),
                    hint="leave rack units free (site.rack.reserved_u is not used for switches)",
                )
            )
            continue
        fabric.add(device)
        names.append(name)
        device.rack = home.name
        device.su = home.su
        fabric.rack_by_name[home.name].devices.append(name)
        for position, (managed_device, port) in enumerate(ports):
            if book.take(managed_device.name, port) and book.take(name, str(position + 1)):
                fabric.links.append(
                    Link(network.name, MGMT, managed_device.name, port, name, str(position + 1), 1)
                )
    if spec.uplink_to is not None:
        connect_uplinks(fabric, network, names, book, problems)


def _nearest_with_room(
    racks: list[RackPlan], run: list[RackPlan], device: Device, budget_w: int
) -> RackPlan | None:
    """Fallback when the racks served are full: the nearest rack (in layout order) with room."""
    centre = racks.index(run[len(run) // 2])
    order = sorted(range(len(racks)), key=lambda i: (abs(i - centre), i))
    # a rack-scale system's free units are its own: switches serving other racks stay out
    candidates = [racks[i] for i in order if not racks[i].oob_switches or racks[i] in run]
    return _home_rack(candidates, device, budget_w, keep_order=True)


def _home_rack(
    run: list[RackPlan], device: Device, budget_w: int, *, keep_order: bool = False
) -> RackPlan | None:
    order = (
        run
        if keep_order
        else sorted(run, key=lambda r: (r.role not in ("network", "central"), run.index(r)))
    )
    for rack in order:
        if rack.fixed:
            if rack.power_w + device.power_w <= budget_w and rack.place(device, top=True):
                return rack
            continue
        if rack.fits(device, budget_w) and rack.place(device, top=True):
            return rack
    return None


def connect_uplinks(
    fabric: Fabric,
    network: ResolvedNetwork,
    switches: list[str],
    book: PortBook,
    problems: list[Diagnostic],
) -> None:
    """Join `switches` (a network's top tier) to the top tier of network.spec.uplink_to,
    uplinks_per_switch each, round-robin over the target switches."""
    spec = network.spec
    assert spec.uplink_to is not None
    target_topology = fabric.networks.get(spec.uplink_to)
    source = fabric.loaded.source
    path = (*network.path, "uplink_to")

    def fail(
        message: str, at: tuple[str | int, ...] = path, hint: str | None = None, code: str = ""
    ) -> None:
        problems.append(
            error(message, path=format_path(at), location=source.value(at), hint=hint, code=code)
        )

    if target_topology is None or not any(target_topology.switches.values()):
        fail(f"network {spec.uplink_to!r} has no switches to uplink into")
        return
    top_tier = target_topology.top_tier
    assert top_tier is not None  # some tier has switches (checked above)
    targets = target_topology.switches[top_tier]
    catalog = fabric.loaded.catalog.catalog
    turn = 0
    for name in switches:
        model = catalog.switches[fabric.devices[name].model]
        up_groups = [g for g in model.port_groups if g.use == "uplink"]
        for k in range(spec.uplinks_per_switch):
            target = targets[turn % len(targets)]
            turn += 1
            target_model = catalog.switches[fabric.devices[target].model]
            target_speeds = switch_port_speeds(target_model)
            own_speeds = switch_port_speeds(model, uplink_group=bool(up_groups))
            speed = uplink_speed(model, target_model)
            if speed is None:
                fail(f"{name} and {target} share no port speed for an uplink")
                return
            if up_groups:
                first_cage = sum(
                    g.count for g in model.port_groups[: model.port_groups.index(up_groups[0])]
                )
                if k >= sum(g.count for g in up_groups):
                    fail(
                        f"{model.part_number} has only {sum(g.count for g in up_groups)} uplink ports",
                        (*network.path, "uplinks_per_switch"),
                    )
                    return
                local: str | None = switch_port(first_cage, k, 1)
                book.take(name, switch_port(first_cage, k, 1))
            else:
                local = _free_port(book, name, model, own_speeds[speed])
            remote = _free_port(book, target, target_model, target_speeds[speed])
            if local is None or remote is None:
                fail(
                    f"{target if remote is None else name} has no free port left for an uplink",
                    hint="lower uplinks_per_switch or give the target network more ports",
                    code=UPLINK_PORTS if remote is None else "",
                )
                return
            fabric.links.append(Link(network.name, UPLINK, name, local, target, remote, speed))


def uplink_speed(model: SwitchModel, target: SwitchModel) -> int | None:
    """The speed of an uplink from `model` (its uplink cages, if it has any) into `target`: the
    highest both can run."""
    up_groups = any(g.use == "uplink" for g in model.port_groups)
    own = switch_port_speeds(model, uplink_group=up_groups)
    common = set(own) & set(switch_port_speeds(target))
    return max(common) if common else None


def _free_port(book: PortBook, device: str, model: SwitchModel, breakout: int) -> str | None:
    """The highest-numbered free port, so uplinks stay clear of the fabric's own ports."""
    used = book.used.get(device, set())
    cages = sum(g.count for g in model.port_groups if g.use == "any")
    for cage in range(cages, 0, -1):
        names = [f"{cage}/{s}" for s in range(1, breakout + 1)] if breakout > 1 else [str(cage)]
        whole = {str(cage)} | {f"{cage}/{s}" for s in range(1, 9)}
        if breakout > 1 and str(cage) in used:
            continue
        if breakout == 1 and whole & used:
            continue
        for port in names:
            if port not in used:
                book.take(device, port)
                return port
    return None
