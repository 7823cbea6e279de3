"""Synthesis pass 6: management and in-band addresses, loopbacks, ASNs and routed-link subnets.

Consumes the wired design and spec.addressing; produces addresses on devices and links. Every
value derives from stable indices, so the same spec always gives the same addresses and growing
a design fills or appends instead of renumbering:
  * oob: every access switch a subnet of the pool (oob_block_size: a power of two holding the
    network address, its own address - the subnet's first host, the gateway of the devices it
    serves -, one per port and the broadcast address), by its number in its floor region's part
    of the pool (halving parts, so a region's growth or a new region moves no other's); a
    managed device takes the address of its port (the switch's address + port number);
  * inband: one address per host attached to an in-band network (its bond); the pool is cut in
    halving parts, one per node group in spec order (the first half, the next quarter, ...), so
    a new group never moves another's, and a host takes the address of its index in its group's
    part (equal blocks, as many as the next power of two, where a group outgrows its part);
  * loopbacks and ASNs for switches of routed (ethernet compute/storage) fabrics, RFC 7938 style:
    leaves one ASN each, the spines of one pod and plane share one, the cores of a plane one.
    Each routed network takes an equal share of the pools. Leaves count up from the start of
    the share - a network's later leaf classes each from a halving part of their own, a leaf's
    planes side by side - and cores, then spines down from its end (3 tiers: the cores first,
    then the spines by class - halving parts, mirrored -, pod and plane; 2 tiers: in order), so
    adding leaves never moves a spine's values, a class's leaves never move another's, adding
    spines (a growth that doubles them) or a core tier never moves a leaf's, and a new
    spine-leaf group of a 3-tier fabric moves nobody's;
  * /31s for host links of routed fabrics, from each network's equal share of the hosts pool:
    a halving part per attached node group, a host's place in its group times its links plus
    the link's ordinal (_host_links); and, when addressing.p2p is set (otherwise BGP
    unnumbered), for switch-to-switch links from each network's share of that pool, a leaf's
    uplinks at its leaf slot, a spine's core links down from the end at its slot (_switch_links).
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Callable, Collection, Iterator

from fabricc.errors import Diagnostic, error
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, MGMT, SPINE_CORE, Device, Fabric, Link
from fabricc.spec.yamlsource import format_path
from fabricc.synth.inbandleaves import leaf_groups, loopback_switches, routes_at_leaves
from fabricc.synth.oob import access_ports, region_order

ROUTED_ROLES = ("compute", "storage")


class PoolExhausted(Exception):
    pass


class _Pool:
    def __init__(self, cidr: str, *, skip_first: int = 0, skip_last: int = 0) -> None:
        self.network = ipaddress.ip_network(cidr)
        self.base = int(self.network.network_address)
        self.size = self.network.num_addresses
        self.next = skip_first
        self.end = self.size - skip_last  # take_last() hands out addresses below this offset
        self.cls = type(self.network.network_address)

    def take(self, block: int = 1) -> int:
        if self.next % block:
            self.next += block - self.next % block
        if self.next + block > self.end:
            raise PoolExhausted
        value = self.base + self.next
        self.next += block
        return value

    def take_last(self) -> int:
        """One address from the top of the pool, below those taken from the top before."""
        if self.end <= self.next:
            raise PoolExhausted
        self.end -= 1
        return self.base + self.end

    def text(self, value: int) -> str:
        if self.network.version == 4:  # ipaddress's dotted quad, without an object per address
            return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"
        return str(self.cls(value))


def _fail(fabric: Fabric, problems: list[Diagnostic], pool: str, what: str, needed: str) -> None:
    path = ("addressing", pool)
    problems.append(
        error(
            f"address pool exhausted: {what} need {needed}",
            path=format_path(path),
            location=fabric.loaded.source.value(path),
            hint="give the pool a shorter prefix",
        )
    )


def _routed_networks(fabric: Fabric) -> Iterator[str]:
    for name, net in fabric.loaded.networks.items():
        if net.fabric == "ethernet" and net.spec.role in ROUTED_ROLES:
            yield name


def oob_gateways(fabric: Fabric) -> dict[str, str]:
    """Each access switch's own address on its subnet (the subnet's first host: the gateway and
    DHCP relay address of its devices); empty where the pool is too small."""

    def compute() -> dict[str, str]:
        offsets, full = oob_offsets(fabric)
        if full:
            return {}
        pool = _Pool(fabric.loaded.spec.addressing.oob)
        return {name: pool.text(pool.base + offset) for name, offset in offsets.items()}

    return fabric.derived("oob-gateways", compute)


def oob_offsets(fabric: Fabric) -> tuple[dict[str, int], bool]:
    """Access switch -> its subnet's first host (an offset in the pool); and whether the pool
    is too small."""
    oob = ipaddress.ip_network(fabric.loaded.spec.addressing.oob)
    networks = [
        switches
        for name, network in fabric.loaded.networks.items()
        if network.spec.role == "oob"
        and name in fabric.networks
        and (switches := fabric.networks[name].switches.get("leaf", []))
    ]
    share = oob.num_addresses >> max(0, len(networks) - 1).bit_length()
    offsets: dict[str, int] = {}
    full = False
    for number, switches in enumerate(networks):
        stride = oob_stride(fabric, switches)
        blocks = _switch_blocks(fabric, switches, share, stride)
        full = full or blocks is None
        for name, block in (blocks or dict.fromkeys(switches, 0)).items():
            offsets[name] = number * share + block + 1  # the subnet's first host
    return offsets, full


def _management(fabric: Fabric, problems: list[Diagnostic]) -> None:
    """Management addresses: each out-of-band network an equal share of the pool (as many as
    the next power of two), in it each floor region a part (_switch_blocks), in it each access
    switch a subnet (oob_block_size) by its number: its own address first, then one per port.
    A device's management address is its port's on the access switch it is cabled to - an
    access switch's too, where its management port is cabled to its parent in the management
    tree (synth/oob.py connect_tree); an access switch cabled to none (the tree's root) is
    managed at its own subnet's first host."""
    offsets, full = oob_offsets(fabric)
    addresses: dict[str, int] = {}
    for link in fabric.links:
        if link.kind == MGMT and link.b in offsets:
            addresses.setdefault(link.a, offsets[link.b] + int(link.b_port))
    for name, offset in offsets.items():
        addresses.setdefault(name, offset)
    if full:
        _fail(fabric, problems, "oob", f"{len(addresses)} managed devices", "more addresses")
        return
    pool = _Pool(fabric.loaded.spec.addressing.oob)
    for name, offset in addresses.items():
        fabric.devices[name].mgmt_ip = pool.text(pool.base + offset)
    _root_links(fabric)


def _root_links(fabric: Fabric) -> None:
    """A management tree's root cabled to an in-band top-tier switch (synth/rootlinks.py) is
    managed on its link's /31: the top-tier end the first address (the router and DHCP relay),
    the root's management port the second."""
    from fabricc.synth.rootlinks import root_addresses  # imports this module

    networks: dict[str, ipaddress.IPv4Network] | None = None
    oob = {name for name, network in fabric.loaded.networks.items() if network.spec.role == "oob"}
    for link in (link for name in sorted(oob) for link in fabric.links_of(name)):
        if link.kind != MGMT or fabric.devices[link.b].network in oob:
            continue
        if networks is None:
            networks = root_addresses(fabric)
        net = networks[link.a]
        link.b_ip, link.a_ip = str(net.network_address), str(net.broadcast_address)
        fabric.devices[link.a].mgmt_ip = link.a_ip


def oob_stride(fabric: Fabric, switches: list[str]) -> int:
    """Addresses of each access switch's subnet in an out-of-band network: the next power of
    two that holds the network address, the switch's own, one per port of its largest model and
    the broadcast address (64 for 48 ports)."""
    catalog = fabric.loaded.catalog.catalog
    ports = max(access_ports(catalog.switches[fabric.devices[s].model]) for s in switches)
    return 1 << (ports + 2).bit_length()


def _switch_blocks(
    fabric: Fabric, switches: list[str], size: int, stride: int
) -> dict[str, int] | None:
    """Each access switch's block (its first address's offset) in a share of `size` addresses:
    its floor region's halving part by the region's rank (region_order: the first node group
    with racks of its own the first half, the central racks the next quarter, ...), in it the
    switch's number times `stride` - so no region's growth and no region added at the end moves
    another's addresses. Where a region outgrows its part: equal parts (as many as the next
    power of two), else the switches counted region after region (a tight pool: growth then
    moves addresses, and `diff` says so); None where even that does not fit."""
    devices = fabric.devices
    order = region_order(fabric, switches)
    regions = {name: order[devices[name].series] for name in switches}
    need: dict[int, int] = {}
    for name, region in regions.items():
        need[region] = max(need.get(region, 0), (devices[name].index + 1) * stride)
    halves = {region: halving_part(size, region) for region in need}
    block = size >> max(order.values()).bit_length()
    equal = {region: range(region * block, (region + 1) * block) for region in need}
    for parts in (halves, equal):
        if all(need[region] <= len(part) for region, part in parts.items()):
            return {
                name: parts[region].start + devices[name].index * stride
                for name, region in regions.items()
            }
    ordered = sorted(switches, key=lambda name: (regions[name], devices[name].index))
    if len(ordered) * stride > size:
        return None
    return {name: k * stride for k, name in enumerate(ordered)}


def _group_places(fabric: Fabric, hosts: Collection[str]) -> dict[str, int]:
    """Each host's place in its node group: nodes by index, trays system after system (device
    order), so more hosts in a group only append."""
    places: dict[str, int] = {}
    counts: Counter[str | None] = Counter()
    for device in fabric.devices.values():
        if device.name in hosts:
            places[device.name] = counts[device.group]
            counts[device.group] += 1
    return places


def _shares(
    fabric: Fabric, problems: list[Diagnostic], pool: str, cidr: str, routed: list[str], shares: int
) -> list[str] | None:
    """The pool cut into 2**shares equal shares, one per routed network in spec order (an error
    where it is too small to cut)."""
    try:
        return [str(block) for block in ipaddress.ip_network(cidr).subnets(shares)]
    except ValueError:
        _fail(fabric, problems, pool, f"{len(routed)} routed networks", "a share each")
        return None


def _inband(fabric: Fabric, problems: list[Diagnostic]) -> None:
    inband_nets = {n for n, net in fabric.loaded.networks.items() if net.spec.role == "inband"}
    if not inband_nets:
        return
    pool = _Pool(fabric.loaded.spec.addressing.inband, skip_first=2)
    groups = list(fabric.loaded.spec.nodes)
    routed = {n for n in inband_nets if routes_at_leaves(fabric, n)}
    if routed and not _inband_routed(fabric, problems, routed):
        return
    bridged = inband_nets - routed
    hosts = dict.fromkeys(
        link.a for link in fabric.links if link.network in bridged and link.kind == ENDPOINT_LEAF
    )
    if not hosts:
        return
    places = _group_places(fabric, hosts)
    number = {group: k for k, group in enumerate(groups)}
    needed = Counter(number.get(fabric.devices[name].group or "", 0) for name in hosts)
    # halving parts where every group fits its part, else equal blocks (as many as the next
    # power of two): a new group then moves the others (diff says so)
    parts = {k: halving_part(pool.size, k) for k in needed}
    if any(pool.next + needed[k] > len(part) for k, part in parts.items()):
        block = pool.size >> max(0, len(groups) - 1).bit_length()
        parts = {k: range(k * block, (k + 1) * block) for k in needed}
    # the pool's last addresses are the in-band top tier's own (synth/mgmtnet.py: its gateway
    # SVIs), one per switch below the broadcast address
    top = sum(
        len(topology.switches.get(topology.top_tier or "", []))
        for name, topology in fabric.networks.items()
        if name in inband_nets
    )
    offsets: dict[str, int] = {}
    for name in hosts:
        part = parts[number.get(fabric.devices[name].group or "", 0)]
        offset = pool.next + places[name]
        if offset >= len(part) or part[offset] >= pool.size - 1 - top:
            _fail(fabric, problems, "inband", f"{len(hosts)} in-band hosts", "more addresses")
            return
        offsets[name] = part[offset]
    for name, offset in offsets.items():
        fabric.devices[name].inband_ip = pool.text(pool.base + offset)


def _inband_routed(fabric: Fabric, problems: list[Diagnostic], routed: set[str]) -> bool:
    """Hosts of in-band networks routed at their leaves: each in its leaf group's subnet
    (synth/inbandleaves.py), below the spines' and cores' own addresses at the pool's end."""
    pool = ipaddress.ip_network(fabric.loaded.spec.addressing.inband)
    top = sum(len(loopback_switches(fabric, n)) for n in routed)
    for network in sorted(routed):
        groups = leaf_groups(fabric, network)
        if groups is None or (
            groups and int(groups[-1].subnet.broadcast_address) >= int(pool.broadcast_address) - top
        ):
            hosts = {
                link.a
                for link in fabric.links
                if link.network == network and link.kind == ENDPOINT_LEAF
            }
            what = f"{len(hosts)} in-band hosts on {len(fabric.networks[network].switches['leaf'])} leaves"
            _fail(fabric, problems, "inband", what, "a subnet per leaf pair")
            return False
        for group in groups:
            for index, host in enumerate(group.hosts):
                fabric.devices[host].inband_ip = group.host_address(index)
    return True


class _AsnsExhausted(Exception):
    def __init__(self, needed: int) -> None:
        super().__init__(needed)
        self.needed = needed


def halving_part(size: int, k: int) -> range:
    """The k-th part of `size` values cut in halves: the first half, the next quarter, the next
    eighth and so on. Part k starts where it starts whatever the number of parts, so a new part
    (a node group, a leaf class) never moves an existing one."""
    start = size - (size >> k) if k else 0
    return range(start, start + (size >> (k + 1)))


def _leaf_slots(
    fabric: Fabric, leaves: list[str], size: int, number: Callable[[str], int] | None = None
) -> dict[str, int]:
    """Each switch's place in a share of `size` values: the network's first class counts up
    from the start, its k-th later class from the start of the share's last 1/2**k (halves,
    quarters, ...), so that each class grows without moving another; a switch's planes sit side
    by side (number * planes + plane; the number is its index in its series unless `number`
    gives another, e.g. a spine's pod, which its pod's spines share). Where a class outgrows its
    part, the places count up class after class instead (a tight pool: growing then renumbers,
    and `diff` says so)."""
    devices = fabric.devices
    planes = 1 + max((devices[n].plane or 0 for n in leaves), default=0)
    classes = {devices[n].series: 0 for n in leaves}
    at = number or (lambda n: devices[n].index)
    slots = {n: at(n) * planes + (devices[n].plane or 0) for n in leaves}
    if len(classes) == 1:
        return slots
    parts = {series: halving_part(size, k) for k, series in enumerate(classes)}
    for name, slot in slots.items():
        part = parts[devices[name].series]
        if slot >= len(part):
            firsts: dict[tuple[str | None, int], int] = {}
            for n in leaves:  # in order, switches of one number and plane sharing a place
                firsts.setdefault((devices[n].series, slots[n]), len(firsts))
            return {n: firsts[(devices[n].series, slots[n])] for n in leaves}
        slots[name] = part.start + slot
    return slots


def _top_slots(
    fabric: Fabric,
    cores: list[str],
    spines: list[str],
    size: int,
    taken: Collection[int],
    number: Callable[[str], int],
) -> dict[str, int] | None:
    """Places counted down from the top of a share of `size` values for the upper tiers, by
    _leaf_slots mirrored (`number` gives a switch's place in its series: its index, or for ASNs
    its pod, which a pod's spines share, and 0 for the cores, which a plane's share): the cores
    first (their number is fixed while the design grows within them), then the spines by class
    (halving parts: the first class's down from there, the k-th later class's from the top of
    the share's k-th part from the top), pod and plane, so that a class's new pods take places
    of their own and move nobody's. None where a place is one of the leaves' (`taken`) or below
    the share: the caller then counts down in tier order."""
    high = _leaf_slots(fabric, cores, size, number)
    places = {n: size - 1 - slot for n, slot in high.items()}
    top = size - 1 - max(high.values(), default=-1)
    below = _leaf_slots(fabric, spines, top, number)
    places.update((n, top - 1 - slot) for n, slot in below.items())
    values = set(places.values())
    if places and (min(values) < 0 or not values.isdisjoint(taken)):
        return None
    return places


def _routed_identities(
    fabric: Fabric, name: str, loopbacks: _Pool, loopbacks_v6: _Pool | None, asns: range
) -> None:
    """Loopbacks and ASNs of one routed network from its share of the pools: leaves from the
    start of each share (_leaf_slots), cores and then spines down from its end (_top_slots)."""
    devices = fabric.devices
    topology = fabric.networks[name]
    leaves = topology.switches.get("leaf", [])
    cores = topology.switches.get("core", [])
    spines = topology.switches.get("spine", [])
    pools = [loopbacks] if loopbacks_v6 is None else [loopbacks, loopbacks_v6]
    for pool in pools:
        size = pool.end - pool.next
        slots = _leaf_slots(fabric, leaves, size)
        start = pool.base + pool.next
        low = 1 + max(slots.values(), default=-1)
        if low > size:
            raise PoolExhausted
        places = (
            _top_slots(fabric, cores, spines, size, set(slots.values()), lambda n: devices[n].index)
            if cores
            else None
        )
        if places is None:  # 2 tiers (a spine tier that grows only as a whole), or a tight pool
            if low + len(cores) + len(spines) > size:
                raise PoolExhausted
            places = {n: size - 1 - k for k, n in enumerate([*cores, *spines])}
        v4 = pool is loopbacks
        for switch, slot in [*slots.items(), *places.items()]:
            if v4:
                devices[switch].loopback = pool.text(start + slot)
            else:
                devices[switch].loopback_v6 = pool.text(start + slot)
    # ASNs: a leaf one each; the spines of one pod and plane share one, the cores of a plane one
    asn_slots = _leaf_slots(fabric, leaves, len(asns))
    up = 1 + max(asn_slots.values(), default=-1)  # leaf ASNs below this index
    if up > len(asns):  # fewer ASNs than the leaves' slots (a pool of one number)
        raise _AsnsExhausted(up + len({_asn_key(devices[n]) for n in [*cores, *spines]}))
    for leaf, slot in asn_slots.items():
        devices[leaf].asn = asns[slot]
    shared = (
        _top_slots(fabric, cores, spines, len(asns), set(asn_slots.values()), _pod_of(fabric))
        if cores
        else None
    )
    if shared is None:  # down from the end in tier order, one per pod (or tier) and plane
        keys: dict[tuple[str | None, int | None, int | None, str | None], int] = {}
        for switch in [*cores, *spines]:
            keys.setdefault(_asn_key(devices[switch]), len(keys))
        if up + len(keys) > len(asns):
            raise _AsnsExhausted(up + len(keys))
        shared = {n: len(asns) - 1 - keys[_asn_key(devices[n])] for n in [*cores, *spines]}
    for switch in [*cores, *spines]:
        devices[switch].asn = asns[shared[switch]]


def _pod_of(fabric: Fabric) -> Callable[[str], int]:
    """A switch's ASN place in its series: its pod (a core has none: 0, one per plane)."""
    devices = fabric.devices
    return lambda n: devices[n].pod or 0


def _asn_key(device: Device) -> tuple[str | None, int | None, int | None, str | None]:
    """The switches that share an ASN: a tier's in a plane, and for spines of one pod."""
    spine = device.role == "spine"
    return (
        device.role,
        device.plane,
        device.pod if spine else None,
        device.series if spine else None,
    )


def assign_addresses(fabric: Fabric, problems: list[Diagnostic]) -> None:
    spec = fabric.loaded.spec.addressing

    _management(fabric, problems)
    _inband(fabric, problems)

    routed = list(_routed_networks(fabric))
    if not routed:
        return
    # Each routed network gets an equal share of the loopback and ASN pools (as many shares as
    # the next power of two), so growing one network never moves another's values.
    shares = max(0, len(routed) - 1).bit_length()
    loopback_blocks = _shares(fabric, problems, "loopbacks", spec.loopbacks, routed, shares)
    if loopback_blocks is None:
        return
    loopback_v6_blocks = (
        _shares(fabric, problems, "loopbacks", spec.loopbacks_v6, routed, shares)
        if spec.loopbacks_v6
        else []
    )
    if loopback_v6_blocks is None:
        return
    asn_share = (spec.asn.last - spec.asn.first + 1) >> shares
    for number, name in enumerate(routed):
        topology = fabric.networks.get(name)
        if topology is None:
            continue
        first_asn = spec.asn.first + number * asn_share
        try:
            _routed_identities(
                fabric,
                name,
                # skip each block's first and last addresses: a /32 loopback on 10.0.0.0 or on
                # a broadcast address works but confuses people
                _Pool(loopback_blocks[number], skip_first=1, skip_last=1),
                _Pool(loopback_v6_blocks[number], skip_first=1, skip_last=1)
                if loopback_v6_blocks
                else None,
                range(first_asn, first_asn + asn_share),
            )
        except PoolExhausted:
            _fail(fabric, problems, "loopbacks", f"the switches of {name}", "more loopbacks")
        except _AsnsExhausted as exc:
            path = ("addressing", "asn", "last")
            problems.append(
                error(
                    f"ASN pool exhausted: the switches of {name} need {exc.needed} ASNs, its "
                    f"share of the pool has {asn_share}",
                    path=format_path(path),
                    location=fabric.loaded.source.value(path),
                    hint="widen addressing.asn (first..last)",
                )
            )

    _host_links(fabric, routed, shares, problems)
    if spec.p2p:
        _switch_links(fabric, routed, shares, problems)


def _switch_links(
    fabric: Fabric, routed: list[str], shares: int, problems: list[Diagnostic]
) -> None:
    """A /31 per switch-to-switch link of each routed network (addressing.p2p), from the
    network's equal share of the pool: a leaf's uplinks at its slot (_leaf_slots: by leaf class,
    index and plane) times the most uplinks a leaf has, plus the uplink's ordinal on the leaf;
    a spine's core links down from the share's end, at its slot the same way. So more leaves,
    another class or another network never move a leaf's uplink addresses, and a new spine-leaf
    group never moves a spine's. Links are counted in order where that does not fit the
    share."""
    blocks = _shares(
        fabric, problems, "p2p", fabric.loaded.spec.addressing.p2p or "", routed, shares
    )
    if blocks is None:
        return
    for number, name in enumerate(routed):
        pool = _Pool(blocks[number])
        pairs = pool.size // 2
        uplinks = [link for link in fabric.links if link.network == name]
        core = [link for link in uplinks if link.kind == SPINE_CORE]
        uplinks = [link for link in uplinks if link.kind == LEAF_SPINE]
        leaves = fabric.networks[name].switches.get("leaf", [])
        places = _uplink_places(fabric, uplinks, leaves, pairs)
        # a spine's core links down from the end, at its slot the same way
        spines = list(dict.fromkeys(link.a for link in core))
        tops = [pairs - 1 - place for place in _uplink_places(fabric, core, spines, pairs)]
        if min(tops, default=pairs) <= max(places, default=-1):
            tops = [pairs - 1 - k for k in range(len(core))]
        if max(places, default=-1) >= min(tops, default=pairs):
            places = list(range(len(uplinks)))
        if len(uplinks) + len(core) > pairs:
            _fail(fabric, problems, "p2p", f"the switch-to-switch links of {name}", "more /31s")
            continue
        ordered = [*zip(uplinks, places, strict=True), *zip(core, tops, strict=True)]
        for link, place in ordered:
            base = pool.base + 2 * place
            link.b_ip, link.a_ip = pool.text(base), pool.text(base + 1)


def _uplink_places(fabric: Fabric, links: list[Link], switches: list[str], pairs: int) -> list[int]:
    """Each link's place among `pairs` /31s: its lower switch's slot (_leaf_slots over
    `switches`) times the most links a switch has, plus the link's ordinal on its switch."""
    ordinals: Counter[str] = Counter()
    keys: list[tuple[str, int]] = []
    for link in links:
        keys.append((link.a, ordinals[link.a]))
        ordinals[link.a] += 1
    per_switch = max(ordinals.values(), default=1)
    slots = _leaf_slots(fabric, switches, pairs // per_switch)
    return [slots[switch] * per_switch + k for switch, k in keys]


def _host_links(fabric: Fabric, routed: list[str], shares: int, problems: list[Diagnostic]) -> None:
    """A /31 per host link of each routed network (the switch the even address, the NIC the
    odd), from the network's equal share of the hosts pool: a halving part per node group in
    the order the network attaches them, and in it the host's place in its group times its
    links, plus the link's ordinal on the host - so more hosts, another group or another
    network never move a link's addresses (links counted in order where a group outgrows its
    part)."""
    blocks = _shares(fabric, problems, "hosts", fabric.loaded.spec.addressing.hosts, routed, shares)
    if blocks is None:
        return
    devices = fabric.devices
    for number, name in enumerate(routed):
        links = [
            link for link in fabric.links if link.network == name and link.kind == ENDPOINT_LEAF
        ]
        pool = _Pool(blocks[number])
        pairs = pool.size // 2
        order = {a.group: k for k, a in enumerate(fabric.loaded.networks[name].attachments)}
        places = _group_places(fabric, {link.a for link in links})
        ordinals: Counter[str] = Counter()
        keys: list[tuple[str | None, int, int]] = []
        for link in links:
            keys.append((devices[link.a].group, places[link.a], ordinals[link.a]))
            ordinals[link.a] += 1
        per_host: dict[str | None, int] = {}
        for group, _, ordinal in keys:
            per_host[group] = max(per_host.get(group, 0), ordinal + 1)
        parts = {group: halving_part(pairs, order.get(group or "", 0)) for group in per_host}
        slots = [
            parts[group].start + place * per_host[group] + ordinal for group, place, ordinal in keys
        ]
        if any(slot >= parts[group].stop for slot, (group, _, _) in zip(slots, keys, strict=True)):
            slots = list(range(len(links)))
        if len(links) > pairs:
            _fail(fabric, problems, "hosts", f"the RoCE host links of {name}", "more /31s")
            continue
        for link, slot in zip(links, slots, strict=True):
            base = pool.base + 2 * slot
            link.b_ip, link.a_ip = pool.text(base), pool.text(base + 1)
