"""Synthesis stage: LoadedSpec -> Fabric IR, as one ordered list of passes.

Each pass is a function over the Fabric; problems are collected per phase and raised together at
the phase boundary, so the user sees every error of a phase at once. The order matters and is
explained beside each call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fabricc.collector import fewer_collections
from fabricc.errors import DesignError, Diagnostic, error, raise_if_errors
from fabricc.ir import EXTERNAL, Device, Fabric, Link, NetworkTopology, NvlinkDomain
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.resolve import ResolvedNetwork
from fabricc.spec.yamlsource import format_path
from fabricc.synth.addressing import assign_addresses
from fabricc.synth.appliances import reserve_for_sm_hosts
from fabricc.synth.cabling import cable_design
from fabricc.synth.nodes import GroupPlan, expand_nodes, plan_groups
from fabricc.synth.oob import UPLINK_PORTS, build_oob, connect_uplinks, uplink_speed
from fabricc.synth.portbook import PortBook
from fabricc.synth.racks import layout
from fabricc.synth.rootlinks import connect_roots, reserve_kept
from fabricc.synth.sitelinks import connect_site_uplinks, site_guests
from fabricc.synth.sizing import Guests
from fabricc.synth.topology import build_network


def _raise(problems: list[Diagnostic]) -> None:
    raise_if_errors(problems, DesignError)


Stage = Callable[[str], None]


def quiet(_: str) -> None:
    pass


# Told the Fabric once its devices, places, links and addresses are final, before cable
# selection (the build hands the analysis' worker its graphs there, which read the topology
# alone, and may fork the emitters that read no cable, fabricc.build).
Linked = Callable[[Fabric], None]


def unlinked(_: Fabric) -> None:
    pass


# Told, as soon as they are built, the networks that no later stage or pass changes (their
# devices and links final; their places and addresses may still come): the build sends their
# graphs to the analysis' worker then, while synthesis goes on.
Settled = Callable[[Fabric, list[str]], None]


def unsettled(_: Fabric, __: list[str]) -> None:
    pass


# Guests can grow their target's top tier, whose switches then need more out-of-band ports and
# so more uplinks: the demand is monotone and settles in a pass or two.
MAX_PASSES = 4


@dataclass(slots=True)
class _Prefix:
    """What a pass built before the first network that others uplink into (the nodes and the
    networks before it in spec order), taken as that network starts: none of it depends on
    the guests, so the next pass starts from here instead of from nothing. The later stages
    add devices, links and ports and place every device (its rack and unit), so this keeps
    copies of the containers and each device's place, and marks the port book."""

    plans: dict[str, GroupPlan]
    devices: dict[str, Device]
    places: list[tuple[Device, str | None, int | None]]
    links: list[Link]  # the pass's own list, which grows after the prefix: cut on restore
    link_count: int
    networks: dict[str, NetworkTopology]
    nvlink_domains: list[NvlinkDomain]
    su_labels: list[int]
    duplicates: list[Device]
    warnings: list[Diagnostic]
    memo: dict[str, object]
    book: PortBook  # the pass's own, marked here: rewound on restore
    problems: list[Diagnostic]
    built: int  # networks of the pass already built (spec order, out-of-band left out)

    @staticmethod
    def take(
        fabric: Fabric,
        plans: dict[str, GroupPlan],
        book: PortBook,
        problems: list[Diagnostic],
        built: int,
    ) -> _Prefix | None:
        if fabric.racks or fabric.modules or fabric.cables:  # not made before the racks stage
            return None
        devices = fabric.devices
        book.mark()
        return _Prefix(
            plans,
            dict(devices),
            [(d, d.rack, d.u) for d in devices.values()],
            fabric.links,
            len(fabric.links),
            dict(fabric.networks),
            list(fabric.nvlink_domains),
            list(fabric.su_labels),
            list(fabric.duplicates),
            list(fabric.warnings),
            dict(fabric.memo),
            book,
            list(problems),
            built,
        )

    def restore(self, fabric: Fabric, book: PortBook, problems: list[Diagnostic]) -> None:
        """Set the empty `fabric`, `book` and `problems` of a new pass to this prefix (once:
        the prefix's objects become the new pass's). The links before the prefix's end are
        the previous pass's own objects: nothing changes a link before cable selection."""
        for device, rack, u in self.places:
            device.rack, device.u = rack, u
        fabric.devices = self.devices
        fabric.links = self.links[: self.link_count]
        fabric.networks = self.networks
        fabric.nvlink_domains = self.nvlink_domains
        fabric.su_labels = self.su_labels
        fabric.duplicates = self.duplicates
        fabric.warnings = self.warnings
        fabric.memo = self.memo
        self.book.rewind()
        book.used, book.scan_from = self.book.used, self.book.scan_from
        problems.extend(self.problems)


class _MoreGuests(Exception):
    def __init__(self, guests: dict[str, Guests], prefix: _Prefix | None) -> None:
        super().__init__("more uplinks than reserved")
        self.guests = guests
        self.prefix = prefix


def synthesize(
    loaded: LoadedSpec,
    stage: Stage = quiet,
    linked: Linked = unlinked,
    settled: Settled = unsettled,
) -> Fabric:
    """Run every pass; `stage` is told the name of each phase as it starts (for progress),
    `linked` the Fabric of the last pass once its topology and addresses are final (before its
    cables), `settled` the networks of the first pass that no later stage or pass changes.

    Uplinks from other networks (uplink_to) need ports in their target's top tier, which is
    sized before the uplinking switches exist (out-of-band switches follow the racks). When a
    first design leaves too few free ports, the design is made again with the demand it showed
    reserved in the target before that tier is sized, so the tier grows (more switches, or a
    tier) instead of failing. The pass again starts where the first target network does: the
    nodes and the networks before it are the same in every pass (_Prefix).
    """
    # border links to the site network take ports of the in-band top tier from the first pass
    guests: dict[str, Guests] = site_guests(loaded)
    # SM appliances onto the first unit's reserved leaf ports (RA-11333) before units are
    # planned: the reservation changes how many nodes the first unit holds
    loaded = reserve_for_sm_hosts(loaded)
    prefix: _Prefix | None = None
    with fewer_collections():
        for _ in range(MAX_PASSES):
            try:
                return _synthesize(loaded, stage, guests, prefix, linked=linked, settled=settled)
            except _MoreGuests as more:
                guests, prefix = more.guests, more.prefix
        return _synthesize(loaded, stage, guests, prefix, last=True, linked=linked)


def _closed(network: ResolvedNetwork) -> bool:
    """No later stage links the network to another: no uplinks of its own, no border links."""
    return network.spec.uplink_to is None and not network.spec.site_uplinks.count


def _guest_demand(fabric: Fabric) -> dict[str, Guests]:
    """Links each network's top tier receives from the networks that uplink into it."""
    catalog = fabric.loaded.catalog.catalog
    demand: dict[str, Guests] = site_guests(fabric.loaded)
    for network in fabric.loaded.networks.values():
        target = network.spec.uplink_to
        topology = fabric.networks.get(network.name)
        if target is None or topology is None or target not in fabric.loaded.networks:
            continue
        top = topology.top_tier
        if top is None:
            continue
        switches = topology.switches[top]
        resolved = fabric.loaded.networks[target]
        target_model = catalog.switches[
            resolved.switch_models.get("core")
            or resolved.switch_models.get("spine")
            or resolved.switch_models["leaf"]
        ]
        speed = uplink_speed(catalog.switches[fabric.devices[switches[0]].model], target_model)
        if speed is None:
            continue
        links = len(switches) * network.spec.uplinks_per_switch
        before = demand.get(target)
        if before is not None:  # several networks uplink into one: reserved at the first's speed
            links, speed = links + before.links, before.speed
        demand[target] = Guests(links, speed)
    return demand


def _again(
    fabric: Fabric, problems: list[Diagnostic], guests: dict[str, Guests], prefix: _Prefix | None
) -> None:
    """Raise _MoreGuests where a top tier ran out of ports for the uplinks into it and the
    demand the pass showed is more than it reserved (the demand counts the uplinking
    switches, not their links: it is the same at any point after they exist)."""
    if not any(p.code == UPLINK_PORTS for p in problems):
        return
    demand = _guest_demand(fabric)
    grown = {
        name: Guests(max(g.links, guests[name].links if name in guests else 0), g.speed)
        for name, g in demand.items()
    }
    if grown != guests:
        raise _MoreGuests(grown, prefix)


def _duplicate_names(fabric: Fabric) -> list[Diagnostic]:
    """An error per device whose name another took, at the pattern that named it."""
    loaded = fabric.loaded
    problems: list[Diagnostic] = []
    for device in fabric.duplicates:
        path = device.spec_path
        hint = "make the hostname patterns of different groups and networks distinct"
        if device.kind == EXTERNAL:
            hint = "give the site network (site_uplinks.to) a name no device of the design has"
        elif device.kind == "switch" and device.network is not None:
            # a written pattern that names the switches of two series alike (synth/switches.py)
            network = loaded.networks[device.network]
            if device.role in network.spec.hostnames.model_fields_set:
                path = (*network.path, "hostnames", device.role)
                hint = (
                    "a pattern must tell every switch of its tier apart, and {n} counts within "
                    "each leaf class and plane: use {n} (or {su} with {rail}), and {group} (the "
                    "leaf class's first node group) or {plane} where there are several"
                )
        problems.append(
            error(
                f"hostname {device.name!r} is generated twice",
                path=format_path(path),
                location=loaded.source.value(path),
                hint=hint,
            )
        )
    return problems


def _synthesize(
    loaded: LoadedSpec,
    stage: Stage,
    guests: dict[str, Guests],
    prefix: _Prefix | None = None,
    *,
    last: bool = False,
    linked: Linked = unlinked,
    settled: Settled = unsettled,
) -> Fabric:
    fabric = Fabric(loaded)
    problems: list[Diagnostic] = []
    book = PortBook()
    networks = loaded.networks
    # the data and in-band networks in build order; those before the first that others uplink
    # into are the same in every pass (the prefix a later pass starts from)
    order = [network for network in networks.values() if network.spec.role != "oob"]
    targets = {network.spec.uplink_to for network in networks.values()}
    boundary = next((i for i, n in enumerate(order) if n.name in targets), len(order))

    if prefix is None:
        stage("nodes")
        # 1. Scalable units and nodes first: every network wires node ports by unit and slot.
        plans = plan_groups(fabric, problems)
        expand_nodes(fabric, plans)
        _raise(problems + _duplicate_names(fabric))
        start = 0
    else:
        prefix.restore(fabric, book, problems)
        plans, start = prefix.plans, prefix.built
    kept: _Prefix | None = None

    stage("networks")
    # 2. Data and in-band networks. Out-of-band waits: it manages every switch built here.
    for index in range(start, len(order)):
        network = order[index]
        if index == boundary and prefix is None and not problems:
            # built before the first target, and neither uplinking nor bordering the site:
            # no later stage adds to them, and every later pass starts after them (_Prefix)
            settled(fabric, [n.name for n in order[:index] if _closed(n)])
        if index == boundary and not last:
            kept = _Prefix.take(fabric, plans, book, problems, index)
        build_network(fabric, network, plans, book, problems, guests.get(network.name))
    # a name generated twice wires two switches' links to one: report the cause, not the ports
    _raise(_duplicate_names(fabric) or problems)

    stage("racks")
    # 3. Racks and U positions: needs every node and switch; OOB switches later take free space.
    racks = [plan for block in layout(fabric, plans, problems) for plan in block]
    _raise(problems)

    stage("out-of-band")
    # 4. Out-of-band: one access port per managed device in every placed rack. An earlier
    # build's root links hold their in-band cages first: no uplink's place moves for them.
    reserved = reserve_kept(fabric, book)
    for network in networks.values():
        if network.spec.role == "oob":
            build_oob(fabric, network, racks, book, problems, reserved)
    resume = kept if kept is not None else prefix  # where a next pass starts
    if not last:  # out of ports for the out-of-band uplinks: the rest of this pass is moot
        _again(fabric, problems, guests, resume)
    # 5. Uplinks between the other networks (OOB did its own): every switch now exists.
    for network in networks.values():
        if network.spec.role != "oob" and network.spec.uplink_to is not None:
            topology = fabric.networks[network.name]
            top = topology.top_tier
            if top is not None:
                connect_uplinks(fabric, network, topology.switches[top], book, problems)
    # 5b. Border links to the site network: after the uplinks, whose places on the top tier
    # are fixed by the access switches' regions; the border takes the highest ports left.
    for network in networks.values():
        built = fabric.networks.get(network.name)
        if network.spec.site_uplinks.count and built is not None:
            top = built.top_tier
            if top is not None:
                connect_site_uplinks(fabric, network, built.switches[top], book, problems)
    # 5c. The management trees' roots onto the in-band top tier (a DHCP path, not a USB drive):
    # after the uplinks (a root goes to a switch its uplinks reach) and the border links.
    connect_roots(fabric, book, reserved)
    problems.extend(_duplicate_names(fabric))
    if not last:
        _again(fabric, problems, guests, resume)
    _raise(problems)

    # 6. Addresses: derive from the final, ordered device and link lists (they read no cable).
    addressed: list[Diagnostic] = []
    assign_addresses(fabric, addressed)
    if not addressed:
        linked(fabric)
    stage("cables")
    # 7. Cables and optics: needs final positions of both ends of every link.
    cable_design(fabric, problems)
    _raise(problems + addressed)  # the cables' problems first, as they always came
    # The design rules (fabricc/checks) then judge the finished IR; the build driver runs them.
    return fabric
