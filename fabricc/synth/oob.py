"""Synthesis pass 4: the out-of-band management network.

Consumes the placed design (racks with their devices) and the oob network spec; produces access
switches, one copper link from every BMC, switch management port, NVLink tray, power shelf and
PDU to an access switch, the access switches' management trees (connect_tree: each one's own
management port on a neighbouring access switch's relayed port; where the network uplinks
nowhere, a tree of their uplink cages too) and their uplinks into another network's top tier
(uplink_to). Access switches serve runs of neighbouring racks (at most max_racks_per_switch),
so that patch cords stay short, and sit at the top of a network rack or the first rack they
serve. Runs and ports count the ports racks reserve for nodes to come, so growing a design keeps
every existing port.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping

from fabricc.catalog.models import NodeModel, SwitchModel
from fabricc.errors import Diagnostic, error, warning
from fabricc.ir import MGMT, UPLINK, Device, Fabric, Link, NetworkTopology
from fabricc.spec.resolve import ResolvedNetwork, best_speed, switch_port_speeds
from fabricc.spec.yamlsource import format_path
from fabricc.synth.naming import (
    PDU_PORT,
    POWER_SHELF_PORT,
    format_name,
    port_cage,
    switch_port,
)
from fabricc.synth.portbook import PortBook
from fabricc.synth.racks import RackPlan, most_pdus
from fabricc.synth.switches import default_pattern

UPLINK_PORTS = "uplink-ports"  # diagnostic code: a target tier ran out of ports for uplinks
CENTRAL = "central"  # what a written hostname pattern's {group} gives for central racks


def mgmt_ports(fabric: Fabric, device: Device) -> list[str]:
    """The ports a device is managed through (each cabled to an access switch): its management
    port - or, for a node model, every port of role oob (an NVLink switch tray has three)."""
    catalog = fabric.loaded.catalog.catalog
    if device.kind == "pdu":
        return [PDU_PORT]
    if device.kind == "power-shelf":
        return [POWER_SHELF_PORT]
    if device.kind == "switch":
        switch: SwitchModel = catalog.switches[device.model]
        return [switch.mgmt_ports[0].name] if switch.mgmt_ports else []
    model: NodeModel = catalog.nodes[device.model]
    return [port.name for port in model.ports if port.role == "oob"]


def access_ports(switch: SwitchModel) -> int:
    """Ports an access switch has for managed devices (its RJ45 ports of any use)."""
    return sum(g.count for g in switch.port_groups if g.use == "any" and g.form == "rj45")


def build_oob(
    fabric: Fabric,
    network: ResolvedNetwork,
    racks: list[RackPlan],
    book: PortBook,
    problems: list[Diagnostic],
    reserved: Mapping[str, set[str]] | None = None,
) -> None:
    """`reserved`: in-band switch -> the cages an earlier build's root links hold there
    (synth/rootlinks.py reserve_kept), which this network's uplinks leave to them."""
    spec = network.spec
    source = fabric.loaded.source
    model_name = network.switch_models["leaf"]
    switch = fabric.loaded.catalog.catalog.switches[model_name]

    def fail(at: tuple[str, ...], message: str, hint: str) -> None:
        path = (*network.path, *at)
        problems.append(
            error(message, path=format_path(path), location=source.value(path), hint=hint)
        )

    access = [g for g in switch.port_groups if g.use == "any" and g.form == "rj45"]
    if not access:
        fail(
            ("switches", "leaf"),
            f"{model_name!r} has no RJ45 ports for management connections",
            "use an access switch such as sn2201",
        )
        return
    capacity = access_ports(switch)
    runs = _runs(fabric, racks, capacity, spec.max_racks_per_switch or 1_000_000)
    free: dict[str, list[str]] = {}  # access switch -> its ports no run keeps, from the top

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
    written = "leaf" in spec.hostnames.model_fields_set
    collided = False
    floor = Floor(racks)
    for owner, index, run_racks, ports, spare in runs:
        pattern = spec.hostnames.leaf if written else default_pattern("leaf", owner, None)
        name = format_name(
            pattern, network=network.name, role="leaf", group=owner or CENTRAL, n=index + 1, i=index
        )
        twin = fabric.devices.get(name)
        if twin is not None and twin.network == network.name:
            # a written pattern without {group}: two regions' switches of one number meet
            if not collided:
                fail(
                    ("hostnames", "leaf"),
                    f"hostname {name!r} is generated twice",
                    "access switches count {n} within each floor region (the central racks, "
                    "each node group's racks): add {group} (the node group, "
                    f"'{CENTRAL}' for the central racks), e.g. '{{network}}-{{group}}-leaf{{n:03d}}'",
                )
            collided = True
            continue
        device = Device(
            name=name,
            kind="switch",
            model=model_name,
            role="leaf",
            index=index,
            network=network.name,
            series=owner,
            height_u=switch.height_u,
            power_w=switch.power_w,
            spec_path=(*network.path, "switches", "leaf"),
        )
        home = _home_rack(run_racks, device, budget) or _nearest_with_room(
            floor, run_racks, device, budget
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
        free[name] = [str(port + 1) for port in spare]
        device.rack = home.name
        device.su = home.su
        fabric.rack_by_name[home.name].devices.append(name)
        for position, managed_device, port in ports:
            if book.take(managed_device.name, port) and book.take(name, str(position + 1)):
                fabric.links.append(
                    Link(network.name, MGMT, managed_device.name, port, name, str(position + 1), 1)
                )
    connect_tree(fabric, network, names, book, free)
    if spec.uplink_to is not None:
        connect_uplinks(
            fabric, network, names, book, problems, region_order(fabric, names), reserved
        )


# Access switches between a management tree's root and its deepest member: each level is one
# more round of ZTP before the last switches of the tree are up (and what the twin boots in
# its rounds of DHCP: fabricc/twin/provisioning.py)
MAX_TREE_DEPTH = 3
# A parent is one of the access switches just before it in its region (their racks neighbour),
# at most this far along the floor: the cable is a Cat6 patch cord (100 m channel, TIA-568),
# with room for the drops to the tray and the slack
TREE_WINDOW = 8
# Ports a central rack's access switch keeps (at its top) for the management ports of the access
# switches after it, one per switch of the window: without them the central racks' access
# switches, keeping every port for the devices to come, were each a root (594 of the 831 seeds
# of a 100k-GPU design)
TREE_PORTS = TREE_WINDOW
TREE_SPAN_M = 60.0
# Uplink cages of an access switch in its network's routing tree, where the network uplinks
# nowhere (an SN2201's four QSFP28): towards its parent (on a region's first switch: the
# previous region's first switch; on the network's first switch: the provisioning server), to
# two children of its region, and to the next region's first switch
UP_CAGE, CHILD_CAGES, NEXT_REGION_CAGE = 0, (1, 2), 3


def uplink_cage(switch: SwitchModel, k: int) -> str | None:
    """The name of the k-th cage of the switch's uplink group; None where it has no such cage."""
    groups = [g for g in switch.port_groups if g.use == "uplink"]
    if not groups or k >= sum(g.count for g in groups):
        return None
    first = sum(g.count for g in switch.port_groups[: switch.port_groups.index(groups[0])])
    return switch_port(first, k, 1)


def server_cage(network: ResolvedNetwork) -> int:
    """Which uplink cage of a management tree's root is kept for a provisioning server the site
    provides: the first one its own uplinks into another network leave free."""
    spec = network.spec
    return UP_CAGE if spec.uplink_to is None else spec.uplinks_per_switch


def tree_regions(fabric: Fabric, switches: list[str]) -> list[list[str]]:
    """A network's access switches by floor region (region_order), each region's by number:
    a region's switches only ever grow at its end, and a new region comes last."""
    regions = region_order(fabric, switches)
    devices = fabric.devices
    by_region: dict[int, list[str]] = {}
    for name in switches:
        by_region.setdefault(regions[devices[name].series], []).append(name)
    return [
        sorted(members, key=lambda name: devices[name].index)
        for _, members in sorted(by_region.items())
    ]


def tree_order(fabric: Fabric, switches: list[str]) -> list[str]:
    """A network's access switches region after region: the first is the network's root."""
    return [name for region in tree_regions(fabric, switches) for name in region]


def connect_tree(
    fabric: Fabric,
    network: ResolvedNetwork,
    switches: list[str],
    book: PortBook,
    free: dict[str, list[str]],
) -> None:
    """The management tree of a network's access switches (issue 41: no USB drive per access
    switch), one per floor region, so that a region's growth moves nothing of another's.

    Management ports: an access switch's own management port is cabled to a free access port
    (one no run keeps for devices or racks to come, from the top; a central rack's switch keeps
    TREE_PORTS for this) of a neighbouring access switch before it in its region
    (_cable_management_ports), in that switch's relayed VLAN, so that it provisions itself by
    DHCP through that switch's relay once that one is up. A switch that finds no parent is a
    root: the first of each region, and one whose neighbours have no port for it or are deep
    or far; where the network uplinks into an in-band network its management port goes to an
    in-band switch that relays for it (synth/rootlinks.py, after the uplinks), else it is a
    seed, bootstrapped from USB.

    Routing, where the network uplinks nowhere (no uplink_to): the uplink cages join every
    region's switches in a binary tree (UP_CAGE to a parent's CHILD_CAGES, by number) and the
    regions' first switches in a chain (UP_CAGE to the previous one's NEXT_REGION_CAGE), BGP
    unnumbered (synth/mgmtnet.py). The network's first switch keeps an uplink cage
    (server_cage) for a provisioning server the site provides."""
    if not switches:
        return
    catalog = fabric.loaded.catalog.catalog
    devices = fabric.devices
    regions = tree_regions(fabric, switches)
    model = catalog.switches[devices[regions[0][0]].model]
    server_port = uplink_cage(model, server_cage(network))
    if server_port is not None:
        book.take(regions[0][0], server_port)  # the provisioning server's port (synth/mgmtnet.py)
    for region in regions:
        _cable_management_ports(fabric, network, region, book, free)
    if network.spec.uplink_to is not None:
        return
    speed = next((g.cage_speed for g in model.port_groups if g.use == "uplink"), 0)

    def cable(child: str, parent: str, cage: int) -> bool:
        up, down = uplink_cage(model, UP_CAGE), uplink_cage(model, cage)
        if not (up and down) or down in book.used.get(parent, set()):
            return False
        if book.take(child, up) and book.take(parent, down):
            fabric.links.append(Link(network.name, UPLINK, child, up, parent, down, speed))
        return True

    for before, region in itertools.pairwise(regions):
        cable(region[0], before[0], NEXT_REGION_CAGE)
    for region in regions:
        by_number = {devices[name].index: name for name in region}
        for child in region[1:]:
            for parent, cage in _tree_parents(devices[child].index, by_number, region):
                if cable(child, parent, cage):
                    break


def _tree_parents(
    number: int, by_number: dict[int, str], region: list[str]
) -> Iterator[tuple[str, int]]:
    """Where the uplink of the access switch numbered `number` may go in its region's binary
    tree (connect_tree), best first: its parent by number (number n under (n - 1) // 2, a
    CHILD_CAGE each), so a switch whose number was kept free takes its own place when it comes;
    where that number is kept free, the next ancestor up, in the cage of the branch it leads
    down; last, any switch before it with a child cage free (the region stays connected)."""
    below = number
    while below > 0:
        above = (below - 1) // len(CHILD_CAGES)
        if above in by_number:
            yield by_number[above], CHILD_CAGES[(below - 1) % len(CHILD_CAGES)]
        below = above
    for name in region:
        if name == by_number[number]:
            return
        for cage in CHILD_CAGES:
            yield name, cage


def _cable_management_ports(
    fabric: Fabric,
    network: ResolvedNetwork,
    region: list[str],
    book: PortBook,
    free: dict[str, list[str]],
) -> None:
    """The management-port trees of one region's access switches (connect_tree): each switch's
    parent is, of the access switches numbered at most TREE_WINDOW before it in the region, one
    with a free port kept for it, fewer than MAX_TREE_DEPTH levels below its root and racks at
    most TREE_SPAN_M apart (a patch cord, not a fiber) - the shallowest, the nearest of those.

    Every choice is keyed by switch numbers, not by the switches there are: a parent's k-th free
    port (from the top) is kept for the switch numbered k + 1 after it (_tree_port), so a switch
    whose number a run of racks to come kept free takes, when it comes, the port kept for it and
    moves no other switch's cable or address; and only switches before it count, so a region
    that grows at its end keeps every existing cable. None found: a root."""
    devices = fabric.devices
    racks = fabric.rack_by_name
    depth: dict[str, int] = {}
    number = {name: devices[name].index for name in region}
    for position, child in enumerate(region):
        own = mgmt_ports(fabric, devices[child])
        here = racks.get(devices[child].rack or "")
        best: tuple[int, int, str, str] | None = None
        for candidate in reversed(region[max(0, position - TREE_WINDOW) : position]):
            back = number[child] - number[candidate]
            if back > TREE_WINDOW:
                break
            there = racks.get(devices[candidate].rack or "")
            if depth[candidate] >= MAX_TREE_DEPTH or here is None or there is None:
                continue
            if abs(here.x_m - there.x_m) + abs(here.y_m - there.y_m) > TREE_SPAN_M:
                continue
            port = _tree_port(free[candidate], back, book.used.get(candidate, set()))
            if port is not None and (best is None or (depth[candidate], back) < best[:2]):
                best = (depth[candidate], back, candidate, port)
        if best is None or not own or not book.take(child, own[0]):
            depth[child] = 0  # a root of its own
            continue
        _, _, parent, port = best
        book.take(parent, port)
        depth[child] = depth[parent] + 1
        fabric.links.append(Link(network.name, MGMT, child, own[0], parent, port, 1))


def _tree_port(free: list[str], back: int, used: set[str]) -> str | None:
    """The port of an access switch kept for the management port of the switch numbered `back`
    after it in its region: the back-th of its free ports from the top; None where it has not
    that many, or the port is taken."""
    if back > len(free) or free[back - 1] in used:
        return None
    return free[back - 1]


def region_order(fabric: Fabric, switches: list[str]) -> dict[str | None, int]:
    """The floor regions of access switches numbered for the parts they take (uplink places on
    their targets, blocks of the management pool; part 0 the largest): the first node group
    with racks of its own (in spec order: the GPU nodes, as a rule the most racks) 0, the
    central racks 1, the other groups 2, 3, ... in spec order - so a group added at the end of
    the spec numbers after every existing region and moves none."""
    owners = {fabric.devices[name].series for name in switches}
    groups = [group for group in fabric.loaded.spec.nodes if group in owners]
    order: dict[str | None, int] = {group: k + (k > 0) for k, group in enumerate(groups)}
    return order | {None: 1}


# an access switch's region (its node group, None for central racks), its number there, the
# racks it serves, the ports: (port offset, managed device, its management port), and the
# ports it keeps (for devices and racks to come): its ports above these are free
Run = tuple[str | None, int, list[RackPlan], list[tuple[int, Device, str]], list[int]]


def _managed(
    fabric: Fabric, rack: RackPlan, capacity: int
) -> tuple[list[tuple[int, Device, str]], int]:
    """A rack's managed ports, each at its offset in the rack's share of an access switch, and
    the size of that share.

    A central rack takes a whole switch: PDUs and nodes count up from its first port, switches
    down from its last, so what either side adds later keeps the ports of what is there now.
    Other racks number PDUs and switches first, then nodes, and reserve a port for every node
    still to come into their free places. The PDUs' ports come first, as many kept as the rack
    may get (racks.most_pdus)."""
    ports = [(d, p) for d in rack.devices for p in mgmt_ports(fabric, d)]
    ports.sort(key=lambda port: (port[0].kind == "switch", port[0].kind == "node"))
    # the PDUs first, at ports kept for as many as the rack may get, so a switch rack that
    # gains one as it fills (synth/racks.pdus_for) moves no other device's port
    pdus = [(d, p) for d, p in ports if d.kind == "pdu"]
    keep = max(len(pdus), most_pdus(fabric, rack))
    others = [(d, p) for d, p in ports if d.kind != "pdu"]
    placed = [(k, d, p) for k, (d, p) in enumerate(pdus)]
    if rack.role == "central" and keep + len(others) <= capacity - TREE_PORTS:
        up = [port for port in others if port[0].kind != "switch"]
        down = [port for port in others if port[0].kind == "switch"]
        top = capacity - 1 - TREE_PORTS  # the ports above are the management tree's (_spare)
        placed += [(keep + k, d, p) for k, (d, p) in enumerate(up)]
        placed += [(top - k, d, p) for k, (d, p) in enumerate(down)]
        return sorted(placed, key=lambda port: port[0]), capacity
    others.sort(key=lambda port: port[0].kind == "node")
    placed += [(keep + k, d, p) for k, (d, p) in enumerate(others)]
    nodes = [d for d in rack.devices if d.kind == "node"]
    per_node = len(mgmt_ports(fabric, nodes[0])) if nodes else 0
    return placed, keep + len(others) + max(0, rack.capacity - len(nodes)) * per_node


def _spare(
    racks: list[RackPlan], ports: list[tuple[int, Device, str]], used: int, capacity: int
) -> list[int]:
    """The port offsets of a run that nothing keeps, in the order other access switches'
    management ports take them: above the ports it keeps for devices and racks to come, from
    the top. A central rack keeps every port (_managed: its devices and its switches count
    towards each other, and a design that grows may fill the gap from either side) but the
    TREE_PORTS at the top, for the management ports of the access switches after its own
    (where its devices leave them: else none)."""
    if racks and racks[0].role == "central" and used >= capacity:
        if max((offset for offset, _, _ in ports), default=0) >= capacity - TREE_PORTS:
            return []
        return list(range(capacity - 1, capacity - 1 - TREE_PORTS, -1))
    kept = max(used, *(offset + 1 for offset, _, _ in ports), 0)
    return list(range(capacity - 1, kept - 1, -1))


def _runs(fabric: Fabric, racks: list[RackPlan], capacity: int, max_racks: int) -> list[Run]:
    """Access switches and the ports they serve, numbered along the floor.

    A switch serves a run of neighbouring places of one floor region: at most max_racks places
    and `capacity` ports, counting for every rack the ports it reserves (a partial rack its
    nodes to come, a compute rack still to come in a partial unit those of a full one). A
    device's port is its place in its run, so growth only fills reserved ports or appends runs;
    a run of places still empty keeps its switch number free."""
    runs: list[Run] = []
    # switches so far per region: each region numbers its own, so that no region's growth and
    # no new region renumbers another's
    numbers: Counter[str | None] = Counter()

    def number(owner: str | None) -> int:
        numbers[owner] += 1
        return numbers[owner] - 1

    run_racks: list[RackPlan] = []
    run_ports: list[tuple[int, Device, str]] = []
    places, used = 0, 0
    owner: str | None = None  # the region of the run so far (checked only once it has places)
    full_rack: dict[int | None, int] = {}  # per unit: the ports a full compute rack reserves

    def close() -> None:
        nonlocal run_racks, run_ports, places, used
        if places:
            index = number(owner)
            if run_racks:
                runs.append(
                    (
                        owner,
                        index,
                        run_racks,
                        run_ports,
                        _spare(run_racks, run_ports, used, capacity),
                    )
                )
        run_racks, run_ports, places, used = [], [], 0, 0

    for rack in racks:
        ports, reserve = _managed(fabric, rack, capacity)
        if rack.oob_switches:
            # a rack-scale system with management switches of its own: they serve it alone,
            # its ports split evenly over them (more only if they lack ports)
            close()
            count = max(rack.oob_switches, -(-len(ports) // capacity))
            share = -(-len(ports) // count)
            for i in range(0, len(ports), share):
                chunk = ports[i : i + share]
                chunk_ports = [(k, d, p) for k, (_, d, p) in enumerate(chunk)]
                spare = list(range(capacity - 1, len(chunk) - 1, -1))
                runs.append((rack.owner, number(rack.owner), [rack], chunk_ports, spare))
            owner = rack.owner
            continue
        if rack.role == "compute":
            full_rack.setdefault(rack.su, reserve)
        places_to_come = [full_rack.get(rack.su, reserve)] * rack.gap_before
        for share, real in [*((r, False) for r in places_to_come), (reserve, True)]:
            if places and (used + share > capacity or places >= max_racks or rack.owner != owner):
                close()
            owner = rack.owner
            places += 1
            if not real:
                used += share
                continue
            run_racks.append(rack)
            start = used
            for offset, device, port in ports:
                while start + offset >= capacity:  # one rack alone needs several switches
                    close()
                    places, start = 1, start - capacity
                    run_racks.append(rack)
                run_ports.append((start + offset, device, port))
            used = start + reserve
    close()
    return runs


class Floor:
    """The racks in layout order, indexed for the fallback below: each rack's place, and the
    network (and central) racks of each unit."""

    def __init__(self, racks: list[RackPlan]) -> None:
        self.racks = racks
        self.place = {rack.name: i for i, rack in enumerate(racks)}
        self.network: dict[int | None, list[RackPlan]] = {}
        for rack in racks:
            if rack.role in ("network", "central"):
                self.network.setdefault(rack.su, []).append(rack)


def _nearest_with_room(
    floor: Floor, run: list[RackPlan], device: Device, budget_w: int
) -> RackPlan | None:
    """Fallback when the racks served are full: the nearest rack (in layout order, the lower of
    two at one distance first) with room, the network racks of the nearest rack's unit before
    the others (as _home_rack orders a run).

    Walks outward from the run's middle and stops at the first rack with room, so a design
    whose racks are full to their power budget costs the distance walked, not the floor."""
    racks, place = floor.racks, floor.place
    centre = place[run[len(run) // 2].name]
    served = {rack.name for rack in run}

    def outward() -> Iterator[RackPlan]:
        for distance in range(len(racks)):
            for i in (centre - distance, centre + distance) if distance else (centre,):
                # a rack-scale system's free units are its own: switches serving other racks
                # stay out
                if 0 <= i < len(racks) and (not racks[i].oob_switches or racks[i].name in served):
                    yield racks[i]

    first = next(outward(), None)
    if first is None:
        return None
    network = sorted(
        (
            rack
            for rack in floor.network.get(first.su, [])
            if not rack.oob_switches or rack.name in served
        ),
        key=lambda rack: (abs(place[rack.name] - centre), place[rack.name]),
    )
    names = {rack.name for rack in network}
    others = (rack for rack in outward() if rack.name not in names)
    return _first_with_room(itertools.chain(network, others), device, budget_w)


def _network_rack(rack: RackPlan, su: int | None) -> bool:
    """A network (or central) rack of unit `su`: where a run's access switch goes first."""
    return rack.role in ("network", "central") and rack.su == su


def _home_rack(run: list[RackPlan], device: Device, budget_w: int) -> RackPlan | None:
    """A network rack of the run's first unit (central rack, with central racks) if the run has
    one, else the first rack with room: racks a run keeps as it grows (a run grows only at its
    end, and its first unit's network rack exists from the start)."""
    network = [r for r in run if _network_rack(r, run[0].su)]
    names = {rack.name for rack in network}
    return _first_with_room(
        itertools.chain(network, (r for r in run if r.name not in names)), device, budget_w
    )


def _first_with_room(racks: Iterable[RackPlan], device: Device, budget_w: int) -> RackPlan | None:
    """The first of `racks` that takes the device at its top (placed there), releasing on the
    way the units each rack held for an access switch."""
    for rack in racks:
        if rack.held >= device.height_u:
            rack.release()
        if rack.fixed:
            if rack.power_w + device.power_w <= rack.room_w(budget_w) and rack.place(
                device, top=True
            ):
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
    regions: dict[str | None, int] | None = None,
    reserved: Mapping[str, set[str]] | None = None,
) -> None:
    """Join `switches` (a network's top tier) to the top tier of network.spec.uplink_to,
    uplinks_per_switch each, round-robin over the target switches. Access switches go by
    their floor region (`regions`, see region_order) and number there, not by their order.
    `reserved`: per target, cages an installed cable holds (taken in `book`): their places
    count as free, so that no other uplink's place moves, but the uplinks placed there take
    the highest free port instead."""
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
    # Access switches keep their targets and target ports when a region grows or a new one
    # comes: uplink k of the j-th switch of floor region r is the (j * uplinks + k)-th of its
    # region, round-robin from target r, and the q-th of its region on that target takes
    # place (2q + 1) * 2**r - 1 there, counted from the top (region 0 every other place, region
    # 1 every fourth, ...: no two regions meet, whatever their number), claimed for all of them
    # before any other uplink is made.
    oob = spec.role == "oob"
    width = len(targets)
    order = regions or {}
    held = reserved or {}

    def turn_of(name: str, k: int) -> tuple[int, int]:
        """(target, place on it) of uplink k of access switch `name`."""
        device = fabric.devices[name]
        r = order.get(device.series, 0)
        turn = device.index * spec.uplinks_per_switch + k
        return (turn + r) % width, ((2 * (turn // width) + 1) << r) - 1

    pairs: dict[tuple[str, str], int | None] = {}  # (model, target model) -> uplink speed

    def speed_between(model: str, target_model: str) -> int | None:
        found = pairs.get((model, target_model), -1)
        if found == -1:
            found = pairs[(model, target_model)] = uplink_speed(
                catalog.switches[model], catalog.switches[target_model]
            )
        return found

    claimed: dict[tuple[str, int], str] = {}
    # per (target, lanes per cage): its ports free before any uplink, from the top - where the
    # places count
    places: dict[tuple[str, int], tuple[list[str], Iterator[str]]] = {}
    for name in switches if oob else []:
        model_name = fabric.devices[name].model
        for k in range(spec.uplinks_per_switch):
            at, nth = turn_of(name, k)
            target = targets[at]
            target_model = catalog.switches[fabric.devices[target].model]
            speed = speed_between(model_name, fabric.devices[target].model)
            if speed is not None:
                breakout = switch_port_speeds(target_model)[speed]
                place = places.get((target, breakout))
                if place is None:
                    # the ports free before any uplink (a copy: claims through another
                    # breakout's list must not change this one), listed lazily: only as far
                    # down as the uplinks reach
                    used = set(book.used.get(target, ())) - held.get(target, set())
                    cages = range(_cages(target_model), 0, -1)
                    place = places[(target, breakout)] = (
                        [],
                        (port for cage in cages for port in _cage_free(used, cage, breakout)),
                    )
                free, more = place
                while len(free) <= nth and (port := next(more, None)) is not None:
                    free.append(port)
                port = free[nth] if nth < len(free) else None
                # (a reserved cage, held whole: its uplink takes the highest free port)
                if (
                    port is not None
                    and port_cage(port) not in held.get(target, ())
                    and book.take(target, port)
                ):
                    claimed[(name, k)] = port
    unplaced = 0  # access-switch uplinks whose place on their target was not free
    for position, name in enumerate(switches):
        turn = position * spec.uplinks_per_switch
        model_name = fabric.devices[name].model
        model = catalog.switches[model_name]
        up_groups = [g for g in model.port_groups if g.use == "uplink"]
        own_speeds = switch_port_speeds(model, uplink_group=bool(up_groups))
        up_ports = sum(g.count for g in up_groups)
        first_cage = (
            sum(g.count for g in model.port_groups[: model.port_groups.index(up_groups[0])])
            if up_groups
            else 0
        )
        for k in range(spec.uplinks_per_switch):
            at = turn_of(name, k)[0] if oob else turn % width
            target = targets[at]
            turn += 1
            speed = speed_between(model_name, fabric.devices[target].model)
            if speed is None:
                fail(f"{name} and {target} share no port speed for an uplink")
                return
            if up_groups:
                if k >= up_ports:
                    fail(
                        f"{model_name} has only {up_ports} uplink ports",
                        (*network.path, "uplinks_per_switch"),
                    )
                    return
                own = switch_port(first_cage, k, 1)
                book.take(name, own)
                local: str | None = own
            else:
                local = free_port(book, name, model, own_speeds[speed])
            remote = claimed.get((name, k))
            if oob and remote is None:
                unplaced += 1
            # the round-robin target, else (it is full: the regions' turns need not spread the
            # uplinks evenly) the next one with a free port at that speed
            for step in range(width if remote is None else 0):
                candidate = targets[(at + step) % width]
                candidate_model = fabric.devices[candidate].model
                if speed_between(model_name, candidate_model) != speed:
                    continue
                chosen = catalog.switches[candidate_model]
                remote = free_port(book, candidate, chosen, switch_port_speeds(chosen)[speed])
                if remote is not None:
                    target = candidate
                    break
            if local is None or remote is None:
                fail(
                    f"{target if remote is None else name} has no free port left for an uplink",
                    hint="lower uplinks_per_switch or give the target network more ports",
                    code=UPLINK_PORTS if remote is None else "",
                )
                return
            fabric.links.append(Link(network.name, UPLINK, name, local, target, remote, speed))
    if unplaced:
        fabric.warnings.append(
            warning(
                f"{unplaced} uplinks of {network.name} found no free port at their places on "
                f"{spec.uplink_to}'s {top_tier} switches and take the highest free ones: they may "
                "move when the design grows",
                path=format_path(path),
                location=source.value(path),
                hint="give the target network free ports to spare (a larger switch, "
                "spines_for_sus) or lower uplinks_per_switch",
            )
        )


def uplink_speed(model: SwitchModel, target: SwitchModel) -> int | None:
    """The speed of an uplink from `model` (its uplink cages, if it has any) into `target`: the
    highest both can run."""
    up_groups = any(g.use == "uplink" for g in model.port_groups)
    own = switch_port_speeds(model, uplink_group=up_groups)
    return best_speed(list(own), switch_port_speeds(target))


def free_port(book: PortBook, device: str, model: SwitchModel, breakout: int) -> str | None:
    """The highest-numbered free port (taken in `book`), so uplinks stay clear of the fabric's
    own ports; None if there is none."""
    used = book.used.get(device, set())
    cages = _cages(model)
    key = (device, breakout)
    for cage in range(min(cages, book.scan_from.get(key, cages)), 0, -1):
        free = _cage_free(used, cage, breakout)
        if free:
            book.take(device, free[0])
            return free[0]
        book.scan_from[key] = cage - 1  # this cage and every one above it are full
    return None


def take_cage(book: PortBook, device: str, port: str) -> bool:
    """Take `port` of `device`, a whole cage ("12"), where no port of that cage is taken."""
    if not port.isdigit() or not _cage_free(book.used.get(device, set()), int(port), 1):
        return False
    return book.take(device, port)


def _cages(model: SwitchModel) -> int:
    """The cages of a switch any link may use."""
    return sum(g.count for g in model.port_groups if g.use == "any")


def _cage_free(used: set[str], cage: int, breakout: int) -> list[str]:
    """The free ports of a cage split `breakout` ways (the cage itself when not split; a cage
    with any port in use, split or not, is not free whole)."""
    whole = str(cage)
    if whole in used:
        return []
    if breakout > 1:
        return [port for s in range(1, breakout + 1) if (port := f"{whole}/{s}") not in used]
    return [] if any(f"{whole}/{s}" in used for s in range(1, 9)) else [whole]
