"""Synthesis pass 3: racks, rows and rack-unit positions.

Consumes the node and switch devices; produces Racks (with floor coordinates) and a rack and U
for every device. The floor is laid out in regions, each starting on a row of its own, so that a
region grows along its rows without moving the racks of another:
  1. central racks: spines, cores, switches that serve no single scalable unit, appliances and
     storage, packed first-fit by height, power and PDU outlets;
  2. per node group with racks of its own, in spec order (so that one group's growth, or a
     group added at the end of the spec, never moves another's racks), a region: the group's
     racks if it is not built in units, else one block per scalable unit, its compute racks with
     (site.network_racks = per-su) a network rack in the middle for the unit's leaves - the
     SuperPOD layout, which keeps node cables short.
Every unit block takes the width of a full unit, also while its unit is partial: the network
rack sits at the middle of the full unit and compute racks to come keep their places, so adding
nodes or units only fills reserved places and appends. A block starts a new row when the rest of
the current row cannot hold a full unit. Nodes fill racks from the bottom, switches from the top;
rack-scale systems keep their catalog positions. Every rack gets its PDUs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from fabricc.catalog.models import FEEDS, OUTLET_OF, PartModel, physical_of
from fabricc.errors import Diagnostic, error
from fabricc.ir import ENDPOINT_LEAF, PEER, Device, Fabric, Rack
from fabricc.spec.yamlsource import DataPath, format_path
from fabricc.synth.nodes import GroupPlan
from fabricc.synth.power import cord_feeds, feed_count, pdus_for_load

TOP_OF_RACK_U = 2  # kept free in node racks by default (OOB access switch, patch panel)
# held at the top of a switch rack (central or a unit's network rack) for its out-of-band
# access switch: switches that join later (growth) go below it, so it never moves
CENTRAL_HELD_U = 1


def row_name(row: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA (spreadsheet style)."""
    name = ""
    row += 1
    while row:
        row, rem = divmod(row - 1, 26)
        name = chr(ord("A") + rem) + name
    return name


def rack_name(place: int, per_row: int) -> str:
    """The name of the rack at a floor place (row * per_row + position): "B03"."""
    row, position = divmod(place, per_row)
    return f"{row_name(row)}{position + 1:02d}"


def rack_place(name: str, per_row: int) -> int | None:
    """The floor place (row * per_row + position) of a rack named as assign() names them
    ("B03" -> per_row + 2), or None for a name it would not give."""
    letters = name.rstrip("0123456789")
    digits = name[len(letters) :]
    if not letters.isalpha() or not letters.isupper() or not digits.isdigit():
        return None
    row = 0
    for letter in letters:
        row = row * 26 + ord(letter) - ord("A") + 1
    position = int(digits) - 1
    place = (row - 1) * per_row + position
    if not 0 <= position < per_row or rack_name(place, per_row) != name:
        return None
    return place


@dataclass(slots=True)
class _Tally:
    """What pdu_count and outlets_hold read of a switch rack's devices, kept as they are
    placed (the first `counted` of them), so that each placement tried costs the same however
    full the rack is: the most power feeds of a node in it, the power of those not on a
    busbar, the supplies dealt and, for each feed count it may get (1 up to the site's), the
    cords of each outlet kind on each feed."""

    used: list[list[dict[str, int]]]  # [feeds - 1][feed] -> outlet kind -> cords
    counted: int = 0
    node_feeds: int = 0
    load_w: int = 0
    dealt: int = 0


@dataclass(slots=True)
class RackPlan:
    role: str
    name: str = ""
    su: int | None = None
    height_u: int = 0
    part: str = ""
    devices: list[Device] = field(default_factory=list)
    used: list[bool] = field(default_factory=list)
    power_w: int = 0
    fixed: bool = False  # rack-scale system: positions come from the catalog
    oob_switches: int = 0  # access switches of its own (rack-scale systems that ship them)
    # its floor region (see the docstring): the node group whose region it is, None for the
    # central racks
    owner: str | None = None
    capacity: int = 0  # nodes a compute rack holds when full (its places to come)
    gap_before: int = 0  # reserved places of compute racks to come just before this rack
    held: int = 0  # units held free at the top for an out-of-band access switch
    held_w: int = 0  # and its power, so that switches joining later leave it room
    air_limit_w: int = (
        0  # switch racks: the most air-cooled power they take (site.rack.air_cooled_kw)
    )
    # switch racks: whether the rack's PDU outlets hold its devices and the given ones (the
    # power plan's count: synth/power.rack_outlets), and whether a C13 per feed is held for the
    # access switch; None: outlets not counted
    outlets_fit: Callable[[RackPlan, list[Device]], bool] | None = None
    held_outlets: bool = False
    tally: _Tally | None = None  # the running count outlets_fit keeps of `devices`

    def release(self) -> None:
        """Free the units (and outlets) held at the top for the access switch about to be placed."""
        if self.held:
            self.used[-self.held :] = [False] * self.held
            self.held = 0
        self.held_w = 0
        self.held_outlets = False

    def room_w(self, budget_w: int) -> int:
        """The rack's power budget: the site's, or less in a switch rack of air-cooled gear."""
        return min(budget_w, self.air_limit_w) if self.air_limit_w else budget_w

    def fits(self, device: Device, budget_w: int) -> bool:
        return (
            self.power_w + self.held_w + device.power_w <= self.room_w(budget_w)
            and self.used.count(False) >= device.height_u  # a full rack is passed over at once
            and self._slot(device.height_u, top=True) is not None
            and self._outlets_free(device)
        )

    def fits_both(self, device: Device, mate: Device | None, budget_w: int) -> bool:
        """Room for a device and, when given, its MLAG partner after it: power, free units and
        outlets for both (the partner's slot is checked when it is placed)."""
        if mate is None:
            return self.fits(device, budget_w)
        if not self.fits(device, budget_w):
            return False
        if self.power_w + self.held_w + device.power_w + mate.power_w > self.room_w(budget_w):
            return False
        if self.used.count(False) < device.height_u + mate.height_u:
            return False
        return self.outlets_fit is None or self.outlets_fit(self, [device, mate])

    def _outlets_free(self, device: Device) -> bool:
        return self.outlets_fit is None or self.outlets_fit(self, [device])

    def _slot(self, height: int, *, top: bool) -> int | None:
        """The lowest unit of the highest (`top`) or lowest run of `height` free units; None
        where the rack has none. A window that holds a used unit moves past it at once (the
        racks fill from the top: most of a scan from there was used units)."""
        used = self.used
        if top:
            start = len(used) - height
            while start >= 0:
                window = used[start : start + height]
                if True not in window:
                    return start
                # the lowest used unit of the window: no run above it reaches below it
                start += window.index(True) - height
            return None
        start = 0
        while start + height <= len(used):
            window = used[start : start + height]
            if True not in window:
                return start
            # past the highest used unit of the window
            start += height - window[::-1].index(True)
        return None

    def place_at(self, device: Device, start: int, budget_w: int) -> bool:
        """Place a device with its lowest unit at `start` (0-based) if those units are free and
        the rack's power and outlets allow it."""
        end = start + device.height_u
        if (
            start < 0
            or end > len(self.used)
            or any(self.used[start:end])
            or self.power_w + self.held_w + device.power_w > self.room_w(budget_w)
            or not self._outlets_free(device)
        ):
            return False
        self._take(device, start)
        return True

    def place(self, device: Device, *, top: bool) -> bool:
        if device.height_u == 0:
            self.devices.append(device)
            return True
        start = self._slot(device.height_u, top=top)
        if start is None:
            return False
        self._take(device, start)
        return True

    def _take(self, device: Device, start: int) -> None:
        for u in range(start, start + device.height_u):
            self.used[u] = True
        device.u = start + 1
        self.devices.append(device)
        self.power_w += device.power_w


class _Layout:
    def __init__(
        self, fabric: Fabric, plans: dict[str, GroupPlan], problems: list[Diagnostic]
    ) -> None:
        self.fabric = fabric
        self.plans = plans
        self.problems = problems
        self.spec = fabric.loaded.spec
        self.source = fabric.loaded.source
        rack = self.spec.site.rack
        self.usable_u = rack.height_u - rack.reserved_u
        self.budget_w = int(rack.power_kw * 1000)
        self.switch_room_w = switch_room_w(fabric)
        self.access_w = access_switch_w(fabric)
        self.physical: dict[tuple[str, str], tuple[int, str] | None] = {}

    def fail(self, message: str, path: DataPath, hint: str | None = None) -> None:
        self.problems.append(
            error(message, path=format_path(path), location=self.source.value(path), hint=hint)
        )

    def new_rack(self, role: str, su: int | None = None) -> RackPlan:
        site = self.spec.site
        rack = RackPlan(
            role,
            su=su,
            height_u=site.rack.height_u,
            part=site.rack.model,
            used=[False] * self.usable_u,
        )
        if role in ("central", "network"):
            # switch racks are packed by their PDUs' outlets too (checks/power.py counts them),
            # within the room's air cooling per rack, and keep units for cable managers
            rack.outlets_fit = self.outlets_fit
            rack.air_limit_w = self.switch_room_w
            keep = min(site.rack.cable_u, max(0, self.usable_u - CENTRAL_HELD_U - 1))
            rack.used = [False] * (self.usable_u - keep)
        if role in ("central", "network") and self.usable_u > CENTRAL_HELD_U:
            # the top unit waits for the access switch, so more switches go below it (a unit's
            # network rack gains in-band leaves as the nodes they serve grow); a C13 outlet per
            # feed waits with it
            rack.held = CENTRAL_HELD_U
            rack.held_w = self.access_w
            rack.used[-CENTRAL_HELD_U:] = [True] * CENTRAL_HELD_U
            rack.held_outlets = True
        return rack

    def cords_of(self, device: Device) -> tuple[int, str] | None:
        """A device's supplies and the outlet kind their cords take; None for busbar-fed and
        PDU-less devices."""
        key = (device.kind, device.model)
        if key not in self.physical:
            facts = physical_of(self.fabric.loaded.catalog.catalog, device.kind, device.model)
            ok = facts is not None and facts.psus and facts.inlet in OUTLET_OF
            self.physical[key] = (facts.psus, OUTLET_OF[facts.inlet]) if ok and facts else None
        return self.physical[key]

    def outlets_fit(self, rack: RackPlan, extra: list[Device]) -> bool:
        """Whether a switch rack's PDUs, as many as the power plan gives it with `extra` placed
        (pdu_count), have an outlet of its kind for every cord on every feed, the cords dealt
        as the plan deals them (synth/power.rack_outlets) and a C13 per feed held while the
        access switch waits: one model of the outlets for the layout and the power plan. The
        same answer as pdu_count and outlets_hold over the rack's devices and `extra`, from the
        rack's running count (_Tally) updated with the devices placed since the last call."""
        site = self.spec.site.rack
        if rack.role not in ("central", "network") or not site.pdus:
            devices = [*rack.devices, *extra]
            count = pdu_count(self.fabric, devices, rack.role, rack.capacity)
            cords = [c for c in map(self.cords_of, devices) if c is not None]
            return outlets_hold(self.fabric, count, cords, 1 if rack.held_outlets else 0)
        tally = rack.tally
        if tally is None or tally.counted != len(rack.devices):
            tally = self._tally(rack)
        nodes = self.fabric.loaded.catalog.catalog.nodes
        node_feeds, load, dealt = tally.node_feeds, tally.load_w, tally.dealt
        for device in extra:
            if device.kind == "node":
                node_feeds = max(node_feeds, nodes[device.model].power_feeds)
            if not _on_busbar(self.fabric, device):
                load += device.power_w
        part = self.fabric.loaded.catalog.catalog.parts.get(site.pdu_model)
        pdus = _pdus(self.fabric, node_feeds, load)
        feeds = feed_count(pdus, site.feeds)
        if part is None or not feeds:
            return True
        used = [dict(counts) for counts in tally.used[feeds - 1]]
        for device in extra:
            supplies = self.cords_of(device)
            if supplies is not None:
                psus, outlet = supplies
                for k in cord_feeds(dealt, psus, feeds):
                    used[k][outlet] += 1
                dealt += psus
        return _feeds_hold(part, pdus, used, 1 if rack.held_outlets else 0)

    def _tally(self, rack: RackPlan) -> _Tally:
        """The rack's running count, brought up to the devices it holds now (devices are only
        appended to a rack as it is laid out; a shorter list starts the count again)."""
        tally = rack.tally
        if tally is None or tally.counted > len(rack.devices):
            most = min(self.spec.site.rack.feeds, len(FEEDS))
            tally = rack.tally = _Tally(
                [[{"c13": 0, "c19": 0} for _ in range(f)] for f in range(1, most + 1)]
            )
        nodes = self.fabric.loaded.catalog.catalog.nodes
        for device in rack.devices[tally.counted :]:
            if device.kind == "node":
                tally.node_feeds = max(tally.node_feeds, nodes[device.model].power_feeds)
            if not _on_busbar(self.fabric, device):
                tally.load_w += device.power_w
            cords = self.cords_of(device)
            if cords is not None:
                psus, outlet = cords
                for f, used in enumerate(tally.used, start=1):
                    for k in cord_feeds(tally.dealt, psus, f):
                        used[k][outlet] += 1
                tally.dealt += psus
        tally.counted = len(rack.devices)
        return tally

    def nodes_per_rack(self, group: str, plan: GroupPlan) -> int:
        spec = self.spec.nodes[group]
        model = plan.system_model
        if spec.nodes_per_rack is not None:
            return spec.nodes_per_rack
        # Leave room at the top for the top-of-rack management switch of the out-of-band network.
        by_space = (self.usable_u - TOP_OF_RACK_U) // max(1, model.height_u)
        by_power = self.budget_w // max(1, model.power_w)
        per_rack = min(by_space, by_power)
        if per_rack == 0:
            self.fail(
                f"one {spec.model} ({model.power_w / 1000:g} kW, {model.height_u}U) does not fit a "
                f"rack of {self.spec.site.rack.power_kw:g} kW and {self.usable_u}U",
                ("site", "rack", "power_kw") if by_power == 0 else ("site", "rack", "height_u"),
            )
            return 1
        return per_rack

    # -- blocks -------------------------------------------------------------------------------

    def node_racks(
        self, group: str, nodes: list[Device], per_rack: int, su: int | None
    ) -> list[RackPlan]:
        racks: list[RackPlan] = []
        for start in range(0, len(nodes), per_rack):
            rack = self.new_rack("compute", su)
            rack.capacity = per_rack
            for node in nodes[start : start + per_rack]:
                if not rack.place(node, top=False):
                    self.fail(
                        f"{per_rack} x {node.model} ({node.height_u}U each) need "
                        f"{per_rack * node.height_u}U; a rack has {self.usable_u}U",
                        ("nodes", group, "nodes_per_rack"),
                        f"at most {self.usable_u // max(1, node.height_u)} per rack",
                    )
                    break
            racks.append(rack)
        return racks

    def system_rack(
        self, plan: GroupPlan, system: str, members: list[Device], su: int | None
    ) -> RackPlan:
        scale = plan.system_model.rack_scale
        assert scale is not None
        rack = RackPlan(
            "system",
            su=su,
            height_u=scale.height_u,
            part=scale.rack_part,
            used=[False] * scale.height_u,
            fixed=True,
            oob_switches=scale.oob_switches,
        )
        for device in members:
            assert device.u is not None
            for u in range(device.u - 1, device.u - 1 + device.height_u):
                rack.used[u] = True
            rack.devices.append(device)
            rack.power_w += device.power_w
        return rack

    def unit_blocks(self) -> tuple[list[UnitBlock], dict[str, list[RackPlan]]]:
        """Blocks of racks per scalable unit, and per non-unit group placed in racks of its own,
        its racks."""
        units: dict[int, UnitBlock] = {}
        own: dict[str, list[RackPlan]] = {}
        by_system: dict[str, list[Device]] = {}
        for device in self.fabric.devices.values():
            if device.system is not None:
                by_system.setdefault(device.system, []).append(device)

        def unit(group: str, su: int, full: int) -> UnitBlock:
            return units.setdefault(su, UnitBlock(group, su, full))

        for group, plan in self.plans.items():
            spec = self.spec.nodes[group]
            placement = spec.placement
            if placement == "auto":
                placement = "own-racks" if plan.in_units else "central"
            if placement != "own-racks":
                continue
            if plan.rack_scale:
                for system in plan.systems:
                    members = by_system[system]
                    su = members[0].su
                    rack = self.system_rack(plan, system, members, su)
                    if su is None:
                        own.setdefault(group, []).append(rack)
                    else:
                        unit(group, su, plan.su_size).compute.append(rack)
                continue
            per_rack = self.nodes_per_rack(group, plan)
            nodes = [
                d for d in self.fabric.devices.values() if d.group == group and d.kind == "node"
            ]
            if not plan.in_units:
                own.setdefault(group, []).extend(self.node_racks(group, nodes, per_rack, None))
                continue
            by_unit: dict[int, list[Device]] = {}
            for node in nodes:
                assert node.su is not None
                by_unit.setdefault(node.su, []).append(node)
            for su, members in by_unit.items():
                # the first unit of a group gives up its reserved slots (nodes.py)
                full_nodes = plan.su_size - (plan.reserved if su == plan.su_offset else 0)
                block = unit(group, su, -(-full_nodes // per_rack))
                block.compute.extend(self.node_racks(group, members, per_rack, su))
        return [units[su] for su in sorted(units)], own

    def place_switches(self, blocks: list[UnitBlock], central: list[RackPlan]) -> None:
        per_su = self.spec.site.network_racks == "per-su"
        by_unit = {block.su: block for block in blocks}
        if per_su:
            for block in blocks:
                block.network.append(self.new_rack("network", block.su))
        central_devices: list[Device] = []
        homes = self.leaf_homes(set(by_unit)) if per_su else {}
        mates = self.mates()
        for leaf, partner in mates.items():  # a partner without endpoints of its own: beside
            if leaf not in homes and partner in homes and self.fabric.devices[leaf].su is None:
                homes[leaf] = homes[partner]
        placed_in: dict[str, RackPlan] = {}
        earlier = self.fabric.loaded.kept
        # with an earlier build kept, its switches first, back at their units where free
        switches = sorted(
            (d for d in self.fabric.devices.values() if d.kind == "switch" and d.rack is None),
            key=lambda d: d.name not in earlier,
        )
        for device in switches:
            home = device.su if device.su is not None else homes.get(device.name)
            if per_su and home is not None and home in by_unit and device.role != "access":
                racks = by_unit[home].network
                was = earlier.get(device.name)
                if was is not None and was.model == device.model:
                    back = next(
                        (r for r in racks if r.place_at(device, was.u - 1, self.budget_w)), None
                    )
                    if back is not None:
                        placed_in[device.name] = back
                        continue
                mate = self.fabric.devices.get(mates.get(device.name, ""))
                beside = placed_in.get(mate.name) if mate is not None else None
                if beside is not None and beside in racks and beside.fits(device, self.budget_w):
                    beside.place(device, top=True)
                    placed_in[device.name] = beside
                    continue
                pending = mate if mate is not None and mate.name not in placed_in else None
                rack = next((r for r in racks if r.fits_both(device, pending, self.budget_w)), None)
                if rack is None or not rack.place(device, top=True):
                    # The unit's network rack is full: add another right beside the last one.
                    rack = self.new_rack("network", home)
                    racks.append(rack)
                    rack.place(device, top=True)
                placed_in[device.name] = rack
            else:
                central_devices.append(device)
        # Every unit of a group reserves as many network racks as its fullest unit needs.
        reserve: dict[str, int] = {}
        for block in blocks:
            reserve[block.group] = max(reserve.get(block.group, 0), len(block.network))
        for block in blocks:
            block.network_places = reserve[block.group]
        for group, plan in self.plans.items():
            placement = self.spec.nodes[group].placement
            if placement == "central" or (placement == "auto" and not plan.in_units):
                central_devices.extend(
                    d for d in self.fabric.devices.values() if d.group == group and d.kind == "node"
                )
        # Upper tiers first, leaves after them: leaves (and nodes, from the bottom) are what grows
        # without a change of shape, and first-fit keeps whatever was placed before them.
        central_devices.sort(
            key=lambda d: 2 if d.kind != "switch" else d.role not in ("spine", "core")
        )
        kept = self.keep_places(central_devices, central)
        # First-fit, each model's search starting at the rack its last device went to: racks
        # only fill, so none before it can take another (the same racks as a search from the
        # first, without rescanning thousands of full racks at scale).
        start: dict[tuple[str, str], int] = {}
        for device in central_devices:
            if device.name in kept:
                continue
            if device.power_w > self.budget_w:
                self.fail(
                    f"{device.name} draws {device.power_w / 1000:g} kW, more than a rack's budget",
                    ("site", "rack", "power_kw"),
                )
                continue
            top = device.kind == "switch"
            mate = self.fabric.devices.get(mates.get(device.name, ""))
            beside = placed_in.get(mate.name) if mate is not None else None
            if beside is not None and beside.fits(device, self.budget_w):
                beside.place(device, top=top)
                placed_in[device.name] = beside
                continue
            # the first of an MLAG pair goes where its partner fits beside it
            pending = mate if mate is not None and mate.name not in kept else None
            key = (device.kind, device.model)
            first = start.get(key, 0)
            for index in range(first, len(central)):
                rack = central[index]
                if rack.fits_both(device, pending, self.budget_w) and rack.place(device, top=top):
                    start[key] = index
                    break
            else:
                rack = self.new_rack("central")
                central.append(rack)
                start[key] = len(central) - 1
                if not rack.place(device, top=top):
                    self.fail(
                        f"{device.name} ({device.height_u}U) does not fit an empty rack",
                        ("site", "rack", "height_u"),
                    )
            placed_in[device.name] = rack

    def mates(self) -> dict[str, str]:
        """Each leaf of an MLAG pair (joined by peer links) -> its partner: a pair stands in one
        rack where it fits, so its peer links stay inside it."""
        mates: dict[str, str] = {}
        for link in self.fabric.links:
            if link.kind == PEER:
                mates[link.a] = link.b
                mates[link.b] = link.a
        return mates

    def leaf_homes(self, units: set[int]) -> dict[str, int]:
        """The unit whose network racks a leaf of no unit stands in: a top-of-rack leaf (in-band,
        a storage or compute leaf class packed by nodes) stands where the nodes it serves stand,
        at their middle - the unit of the median of its endpoints in floor order, central racks
        (appliances, nodes of no unit) first. A leaf whose median endpoint stands in a central
        rack stays there, beside it. A leaf pair serves the same nodes, so it stands together.
        With an earlier build kept, a leaf it placed stays in its region (kept_homes). The leaves
        of a network with `leaf_placement: central` stay in the central racks (RA-11333 keeps
        its in-band leaves in its management racks)."""
        devices = self.fabric.devices
        networks = self.spec.networks
        served: dict[str, Counter[int]] = {}
        central = -1
        for link in self.fabric.links:
            if link.kind != ENDPOINT_LEAF:
                continue
            switch = devices[link.b]
            if switch.su is not None or switch.kind != "switch" or switch.role != "leaf":
                continue
            network = networks.get(switch.network or "")
            if network is not None and network.leaf_placement == "central":
                continue
            su = devices[link.a].su
            place = su if su is not None and su in units else central
            served.setdefault(link.b, Counter())[place] += 1
        homes: dict[str, int] = {}
        kept = self.kept_homes(set(served), units)
        for leaf, places in served.items():
            if leaf in kept:
                if kept[leaf] != central:
                    homes[leaf] = kept[leaf]
                continue
            half = (sum(places.values()) + 1) // 2
            seen = 0
            for place in sorted(places):
                seen += places[place]
                if seen >= half:
                    if place != central:
                        homes[leaf] = place
                    break
        return homes

    def kept_homes(self, leaves: set[str], units: set[int]) -> dict[str, int]:
        """With an earlier build kept (`build --keep`): leaves of no unit that it placed, and
        where - -1 for a central rack (the floor's first places, before anything placed by unit
        or group), else the unit whose devices (nodes, trays, its own leaves) stood nearest that
        rack (a unit's network racks stand among its compute racks). What a leaf serves shifts
        as groups grow; its rack must not."""
        kept = self.fabric.loaded.kept
        if not kept:
            return {}
        per_row = self.spec.site.racks_per_row
        devices = self.fabric.devices
        spans: dict[int, tuple[int, int]] = {}
        firsts: list[int] = []
        for name, place in kept.items():
            device = devices.get(name)
            number = rack_place(place.rack, per_row)
            if device is None or number is None:
                continue
            if device.su is not None:
                firsts.append(number)
            if device.su is not None and device.su in units:
                lo, hi = spans.get(device.su, (number, number))
                spans[device.su] = (min(lo, number), max(hi, number))
        end = min(firsts, default=None)
        homes: dict[str, int] = {}
        for leaf in leaves:
            was = kept.get(leaf)
            at = rack_place(was.rack, per_row) if was is not None else None
            if was is None or at is None or was.model != devices[leaf].model:
                continue
            if end is None or at < end or not spans:
                homes[leaf] = -1
                continue
            homes[leaf] = min(
                spans, key=lambda su: (max(spans[su][0] - at, at - spans[su][1], 0), su)
            )
        return homes

    def keep_places(self, devices: list[Device], central: list[RackPlan]) -> set[str]:
        """Central devices of an earlier build (`build --keep`) back at their rack and unit,
        before anything else is placed: what grows then takes free room or new racks after
        them. Central racks are the first places of the floor, so a kept rack name is a
        central rack's number; they end where the earlier build placed anything else. A device
        whose model changed, or whose place is taken or out of the rack, is placed anew.
        Returns the names of the devices kept."""
        kept = self.fabric.loaded.kept
        if not kept:
            return set()
        per_row = self.spec.site.racks_per_row
        central_names = {device.name for device in devices}
        others = (
            rack_place(place.rack, per_row)
            for name, place in kept.items()
            if name in self.fabric.devices and name not in central_names
        )
        end = min((number for number in others if number is not None), default=None)
        done: set[str] = set()
        for device in devices:
            place = kept.get(device.name)
            if place is None or place.model != device.model:
                continue
            number = rack_place(place.rack, per_row)
            if number is None or (end is not None and number >= end):
                continue
            while len(central) <= number:
                central.append(self.new_rack("central"))
            rack = central[number]
            if device.height_u == 0:
                rack.devices.append(device)
                done.add(device.name)
            elif rack.place_at(device, place.u - 1, self.budget_w):
                done.add(device.name)
        return done

    def place_in(self, racks: Iterable[RackPlan], device: Device, *, top: bool) -> bool:
        return any(
            rack.fits(device, self.budget_w) and rack.place(device, top=top) for rack in racks
        )

    # -- rows ---------------------------------------------------------------------------------

    def assign(self, regions: list[list[tuple[int, list[tuple[int, RackPlan]]]]]) -> None:
        """Give racks their places. A region is a list of blocks (width in places, racks at
        their offsets); every region starts on a new row, a block on a new row when the rest of
        the row cannot hold its width. With an earlier build's places (`build --keep`), racks
        keep the names they had (keep_racks)."""
        site = self.spec.site
        per_row = site.racks_per_row
        places = self.floor_places(regions)
        if self.fabric.loaded.kept:
            places = self.keep_racks(places)
        for index, (plan, place) in enumerate(places):
            at_row, at = divmod(place, per_row)
            name = rack_name(place, per_row)
            plan.name = name
            rack = Rack(
                name=name,
                index=index,
                row=at_row,
                position=at,
                role=plan.role,
                x_m=at * site.rack_width_m,
                y_m=at_row * site.row_pitch_m,
                height_u=plan.height_u,
                power_budget_w=self.budget_w,
                part=plan.part,
                su=plan.su,
            )
            for device in plan.devices:
                device.rack = name
                rack.devices.append(device.name)
            self.fabric.racks.append(rack)
            self.fabric.rack_by_name[name] = rack
        rows = max((place for _, place in places), default=-1) // per_row + 1
        if site.rows is not None and rows > site.rows:
            self.fail(
                f"the design needs {len(self.fabric.racks)} racks in {rows} rows of {per_row}, "
                f"but the site has {site.rows} rows",
                ("site", "rows"),
                "add rows, or more racks per row",
            )

    def floor_places(
        self, regions: list[list[tuple[int, list[tuple[int, RackPlan]]]]]
    ) -> list[tuple[RackPlan, int]]:
        """Every rack's place on the floor (row * racks_per_row + position), region by region."""
        per_row = self.spec.site.racks_per_row
        row, position = 0, 0
        places: list[tuple[RackPlan, int]] = []
        for blocks in regions:
            if not any(block for _, block in blocks):
                continue
            if position:
                row, position = row + 1, 0
            for width, block in blocks:
                if position and position + width > per_row and width <= per_row:
                    row, position = row + 1, 0
                first = row * per_row + position
                gap_from = 0
                for offset, plan in block:
                    plan.gap_before = offset - gap_from
                    gap_from = offset + 1
                    places.append((plan, first + offset))
                row, position = divmod(first + width, per_row)
        return places

    def keep_racks(self, places: list[tuple[RackPlan, int]]) -> list[tuple[RackPlan, int]]:
        """Racks where an earlier build had them: a rack whose devices stood in one rack of it
        takes that rack's place. A rack new to the design takes its own place moved as its
        region's kept racks moved, if that place is free (a partial unit's reserved places),
        and otherwise a place from a new row after the last one used - so that one region
        outgrowing its rows moves no rack of another."""
        per_row = self.spec.site.racks_per_row
        kept = self.fabric.loaded.kept
        wanted: dict[int, int] = {}  # id(plan) -> kept place
        # per region (its owner) the kept places minus own places, counted
        shifts: dict[str | None, Counter[int]] = {}
        taken: set[int] = set()
        for plan, place in places:
            racks = Counter(kept[d.name].rack for d in plan.devices if d.name in kept)
            if not racks:
                continue
            before = rack_place(racks.most_common(1)[0][0], per_row)
            if before is not None and before not in taken:
                wanted[id(plan)] = before
                taken.add(before)
                shifts.setdefault(plan.owner, Counter())[before - place] += 1
        shift = {region: counts.most_common(1)[0][0] for region, counts in shifts.items()}
        result: list[tuple[RackPlan, int]] = []
        homeless: list[int] = []  # indices into result of racks still without a place
        for plan, place in places:
            if id(plan) in wanted:
                result.append((plan, wanted[id(plan)]))
                continue
            moved = place + shift.get(plan.owner, 0)
            if moved >= 0 and moved not in taken:
                taken.add(moved)
            else:
                homeless.append(len(result))
            result.append((plan, moved))
        if homeless:
            first = (max(taken, default=-1) // per_row + 1) * per_row
            for k, at in enumerate(homeless):
                result[at] = (result[at][0], first + k)
        return result


@dataclass(slots=True)
class UnitBlock:
    """The racks of one scalable unit, in places reserved for the full unit: compute racks in
    order, the network racks at the middle of the full unit's compute racks."""

    group: str
    su: int
    full: int  # compute racks of the full unit
    compute: list[RackPlan] = field(default_factory=list)
    network: list[RackPlan] = field(default_factory=list)
    network_places: int = 0  # network racks reserved (the group's fullest unit)

    @property
    def width(self) -> int:
        return max(self.full, len(self.compute)) + max(self.network_places, len(self.network))

    def places(self) -> list[tuple[int, RackPlan]]:
        middle = self.full // 2
        shift = max(self.network_places, len(self.network))
        placed = [(j if j < middle else j + shift, r) for j, r in enumerate(self.compute)]
        placed += [(middle + k, r) for k, r in enumerate(self.network)]
        return sorted(placed, key=lambda place: place[0])


def layout(
    fabric: Fabric, plans: dict[str, GroupPlan], problems: list[Diagnostic]
) -> list[list[RackPlan]]:
    """Place every rack; returns the racks per floor region, in floor order."""
    planner = _Layout(fabric, plans, problems)
    blocks, own = planner.unit_blocks()
    central: list[RackPlan] = []
    planner.place_switches(blocks, central)
    # central racks, then each group's racks in spec order: a group added at the end of the
    # spec adds a region after every existing one
    owned: list[tuple[str | None, list[tuple[int, list[tuple[int, RackPlan]]]]]] = [
        (None, [(1, [(0, rack)]) for rack in central])
    ]
    for group in plans:
        if group in own:
            owned.append((group, [(1, [(0, rack)]) for rack in own[group]]))
        elif any(block.group == group for block in blocks):
            owned.append((group, [(b.width, b.places()) for b in blocks if b.group == group]))
    for owner, region in owned:
        for _, places in region:
            for _, plan in places:
                plan.owner = owner
    regions = [region for _, region in owned]
    planner.assign(regions)
    ordered = [[plan for _, places in region for _, plan in places] for region in regions]
    add_pdus(fabric, [plan for region in ordered for plan in region])
    return ordered


def pdus_for(fabric: Fabric, plan: RackPlan) -> int:
    """PDUs of a rack (pdu_count of its devices); none in a rack-scale system's rack whose
    power shelves feed all it holds."""
    if any(d.kind == "power-shelf" for d in plan.devices) and all(
        _on_busbar(fabric, d) for d in plan.devices
    ):
        return 0  # a rack-scale system's rack: its shelves feed everything in it, SN2201s too
    return pdu_count(fabric, plan.devices, plan.role, plan.capacity)


def pdu_count(fabric: Fabric, devices: list[Device], role: str, capacity: int) -> int:
    """PDUs of a rack holding `devices`: site.rack.pdus, or more where a node's power supplies
    must be spread wider to survive the loss of one PDU (DGX H100, 4 + 2 supplies: 3), or where
    the PDUs left after losing one would not carry the rack (synth/power.pdus_for_load: 1 +
    ceil(power / rating)). A compute rack counts its nodes when full (`capacity`, within
    site.rack.power_kw), so it keeps its PDUs as it fills; a switch rack counts what it holds
    (a switch rack of 44.8 kW on 34.6 kW PDUs: 3), and its PDUs' management ports are kept for
    the most it may get (most_pdus), so one added as it fills moves no other device's port. The
    layout packs switch racks by the same count (outlets_hold)."""
    rack = fabric.loaded.spec.site.rack
    if not rack.pdus:
        return 0
    catalog = fabric.loaded.catalog.catalog
    nodes = [d for d in devices if d.kind == "node"]
    node_feeds = max((catalog.nodes[d.model].power_feeds for d in nodes), default=0)
    load = 0  # what the PDUs left after losing one must carry, where the site has feeds
    if rack.feeds > 1 and catalog.parts.get(rack.pdu_model) is not None:
        fed = [d for d in devices if not _on_busbar(fabric, d)]
        load = sum(d.power_w for d in fed)
        if role not in ("central", "network"):
            full = max((d.power_w for d in nodes if d in fed), default=0)
            load += full * max(0, capacity - len(nodes))
            load = min(load, int(rack.power_kw * 1000))
    return _pdus(fabric, node_feeds, load)


def _pdus(fabric: Fabric, node_feeds: int, load_w: int) -> int:
    """site.rack.pdus, or the most power feeds of a node in the rack, or (with feeds) enough
    that the PDUs left after losing one carry `load_w`: pdu_count's rule, which the layout's
    running count (_Layout.outlets_fit) asks with its own figures."""
    rack = fabric.loaded.spec.site.rack
    part = fabric.loaded.catalog.catalog.parts.get(rack.pdu_model)
    pdus = max(rack.pdus, node_feeds)
    if part is not None and rack.feeds > 1:
        pdus = max(pdus, pdus_for_load(load_w, part.rating_w))
    return pdus


def outlets_hold(fabric: Fabric, pdus: int, cords: list[tuple[int, str]], held: int) -> bool:
    """Whether `pdus` of the site's PDU model, each on a feed of its own while the site has
    feeds, hold the cords (a device's supplies and outlet kind, in the order they are dealt:
    synth/power.cord_feeds) with `held` C13 outlets kept free on every feed."""
    rack = fabric.loaded.spec.site.rack
    part = fabric.loaded.catalog.catalog.parts.get(rack.pdu_model)
    feeds = feed_count(pdus, rack.feeds)
    if part is None or not feeds:
        return True
    used = [{"c13": 0, "c19": 0} for _ in range(feeds)]
    dealt = 0
    for psus, outlet in cords:
        for k in cord_feeds(dealt, psus, feeds):
            used[k][outlet] += 1
        dealt += psus
    return _feeds_hold(part, pdus, used, held)


def _feeds_hold(part: PartModel, pdus: int, used: list[dict[str, int]], held: int) -> bool:
    """Whether the PDUs on each feed (PDU k on feed k mod feeds) have an outlet of its kind
    for the cords `used` deals to that feed, with `held` C13 outlets kept free on every feed."""
    feeds = len(used)
    per_kind = {"c13": part.outlets_c13, "c19": part.outlets_c19}
    return all(
        used[k][kind] + (held if kind == "c13" else 0)
        <= len(range(k, pdus, feeds)) * per_kind[kind]
        for k in range(feeds)
        for kind in ("c13", "c19")
    )


def most_pdus(fabric: Fabric, plan: RackPlan) -> int:
    """The PDU management ports a central rack keeps: as many as it may get as it fills (for
    its room, switch_room_w), so one added moves no node's port (a central rack takes an access
    switch of its own, so the ports it keeps move no other rack's). 0 for other racks: a compute
    rack's count does not grow with what it holds (pdus_for), and a unit's network rack shares
    its access switch, whose runs the kept ports would reshape."""
    rack = fabric.loaded.spec.site.rack
    part = fabric.loaded.catalog.catalog.parts.get(rack.pdu_model)
    if plan.role != "central" or not rack.pdus or part is None:
        return 0
    if rack.feeds < 2:
        return rack.pdus
    return max(rack.pdus, pdus_for_load(switch_room_w(fabric), part.rating_w))


def access_switch_w(fabric: Fabric) -> int:
    """The power (W) a switch rack holds for its out-of-band access switch: the most that an
    oob network's access switch model draws (catalog power_w), 0 without an oob network."""
    switches = fabric.loaded.catalog.catalog.switches
    return max(
        (
            switches[network.switch_models["leaf"]].power_w
            for network in fabric.loaded.networks.values()
            if network.spec.role == "oob" and network.switch_models.get("leaf") in switches
        ),
        default=0,
    )


def switch_room_w(fabric: Fabric) -> int:
    """The most a switch rack takes (W): the room's air cooling per rack (air_cooled_kw)."""
    return int(fabric.loaded.spec.site.rack.air_cooled_kw * 1000)


def _on_busbar(fabric: Fabric, device: Device) -> bool:
    """A rack-scale system's trays and switch trays draw from its power shelves, not a PDU."""
    if device.kind == "power-shelf":
        return True
    known: dict[tuple[str, str], bool] = fabric.derived("racks.on_busbar", dict)
    key = (device.kind, device.model)
    if key not in known:
        facts = physical_of(fabric.loaded.catalog.catalog, device.kind, device.model)
        known[key] = facts is None or facts.inlet == "busbar"
    return known[key]


def add_pdus(fabric: Fabric, plans: list[RackPlan]) -> None:
    site = fabric.loaded.spec.site
    for plan in plans:
        rack = fabric.rack_by_name[plan.name]
        for n in range(pdus_for(fabric, plan)):
            device = Device(
                name=f"{rack.name.lower()}-pdu{n + 1}",
                kind="pdu",
                model=site.rack.pdu_model,
                role="pdu",
                index=n,
                rack=rack.name,
                spec_path=("site", "rack", "pdus"),
            )
            fabric.add(device)
            rack.devices.append(device.name)
            plan.devices.append(device)
