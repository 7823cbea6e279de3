"""Synthesis pass 6: management and in-band addresses, loopbacks, ASNs and routed-link subnets.

Consumes the wired design and spec.addressing; produces addresses on devices and links. Every
value derives from stable indices, so the same spec always gives the same addresses and growing
a design fills or appends instead of renumbering:
  * oob: every access switch a block of the pool (its own address, then one per port), in the
    order of its number; a managed device takes the address of its port (the pool's first host
    address is left for the gateway);
  * inband: one address per host attached to an in-band network (its bond); the pool is split
    in equal blocks, one per node group in spec order (as many blocks as the next power of two),
    and a host takes the address of its index in its group's block;
  * loopbacks and ASNs for switches of routed (ethernet compute/storage) fabrics, RFC 7938 style:
    leaves one ASN each, the spines of one pod and plane share one, the cores of a plane one;
  * /31s for host and switch-to-switch links of routed fabrics (switch links only when
    addressing.p2p is set; otherwise BGP unnumbered).
"""

from __future__ import annotations

import ipaddress
from collections import Counter
from collections.abc import Iterator

from fabricc.errors import Diagnostic, error
from fabricc.ir import ENDPOINT_LEAF, LEAF_SPINE, MGMT, SPINE_CORE, Fabric
from fabricc.spec.yamlsource import format_path
from fabricc.synth.oob import access_ports

ROUTED_ROLES = ("compute", "storage")


class PoolExhausted(Exception):
    pass


class _Pool:
    def __init__(self, cidr: str, *, skip_first: int = 0) -> None:
        self.network = ipaddress.ip_network(cidr)
        self.base = int(self.network.network_address)
        self.size = self.network.num_addresses
        self.next = skip_first
        self.cls = type(self.network.network_address)

    def take(self, block: int = 1) -> int:
        if self.next % block:
            self.next += block - self.next % block
        if self.next + block > self.size:
            raise PoolExhausted
        value = self.base + self.next
        self.next += block
        return value

    def text(self, value: int) -> str:
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


def _management(fabric: Fabric, problems: list[Diagnostic]) -> None:
    pool = _Pool(fabric.loaded.spec.addressing.oob, skip_first=2)  # network address and gateway
    catalog = fabric.loaded.catalog.catalog
    offsets: dict[str, int] = {}
    base = pool.next
    for name, network in fabric.loaded.networks.items():
        topology = fabric.networks.get(name)
        if network.spec.role != "oob" or topology is None:
            continue
        switches = [fabric.devices[s] for s in topology.switches.get("leaf", [])]
        if not switches:
            continue
        stride = 1 + max(access_ports(catalog.switches[s.model]) for s in switches)
        for switch in switches:
            offsets[switch.name] = base + switch.index * stride
        base += (1 + max(s.index for s in switches)) * stride
    addresses = dict(offsets)
    for link in fabric.links:
        if link.kind == MGMT and link.b in offsets:
            addresses.setdefault(link.a, offsets[link.b] + int(link.b_port))
    if addresses and max(addresses.values()) >= pool.size:
        _fail(fabric, problems, "oob", f"{len(addresses)} managed devices", "more addresses")
        return
    for name, offset in addresses.items():
        fabric.devices[name].mgmt_ip = pool.text(pool.base + offset)


def _inband(fabric: Fabric, problems: list[Diagnostic]) -> None:
    inband_nets = {n for n, net in fabric.loaded.networks.items() if net.spec.role == "inband"}
    if not inband_nets:
        return
    pool = _Pool(fabric.loaded.spec.addressing.inband, skip_first=2)
    groups = list(fabric.loaded.spec.nodes)
    block = pool.size >> max(0, len(groups) - 1).bit_length()
    hosts = dict.fromkeys(
        link.a
        for link in fabric.links
        if link.network in inband_nets and link.kind == ENDPOINT_LEAF
    )
    # a host's place in its group: nodes by index, trays system after system
    places: dict[str, int] = {}
    counts: Counter[str | None] = Counter()
    for device in fabric.devices.values():
        if device.name in hosts:
            places[device.name] = counts[device.group]
            counts[device.group] += 1
    offsets: dict[str, int] = {}
    for name in hosts:
        device = fabric.devices[name]
        group = groups.index(device.group) if device.group in groups else 0
        offsets[name] = group * block + pool.next + places[name]
        if places[name] + pool.next >= block:
            _fail(fabric, problems, "inband", f"{len(hosts)} in-band hosts", "more addresses")
            return
    for name, offset in offsets.items():
        fabric.devices[name].inband_ip = pool.text(pool.base + offset)


def assign_addresses(fabric: Fabric, problems: list[Diagnostic]) -> None:
    spec = fabric.loaded.spec.addressing
    devices = fabric.devices

    _management(fabric, problems)
    _inband(fabric, problems)

    routed = list(_routed_networks(fabric))
    if not routed:
        return
    # Skip the pool's network address: a /32 loopback on 10.0.0.0 works but confuses people.
    loopbacks = _Pool(spec.loopbacks, skip_first=1)
    loopbacks_v6 = _Pool(spec.loopbacks_v6, skip_first=1) if spec.loopbacks_v6 else None
    asn_next = spec.asn.first
    shared: dict[tuple[str, str, int | None, int | None], int] = {}
    try:
        for name in routed:
            topology = fabric.networks.get(name)
            if topology is None:
                continue
            for tier in ("core", "spine", "leaf"):
                for switch_name in topology.switches.get(tier, []):
                    device = devices[switch_name]
                    device.loopback = loopbacks.text(loopbacks.take())
                    if loopbacks_v6 is not None:
                        device.loopback_v6 = loopbacks_v6.text(loopbacks_v6.take())
                    key = (name, tier, device.plane, device.pod if tier == "spine" else None)
                    if tier == "leaf":
                        device.asn = asn_next
                        asn_next += 1
                    else:
                        if key not in shared:
                            shared[key] = asn_next
                            asn_next += 1
                        device.asn = shared[key]
    except PoolExhausted:
        _fail(fabric, problems, "loopbacks", "the switches of routed fabrics", "more loopbacks")
    if asn_next - 1 > spec.asn.last:
        path = ("addressing", "asn", "last")
        problems.append(
            error(
                f"ASN pool exhausted: {asn_next - spec.asn.first} ASNs needed, "
                f"{spec.asn.last - spec.asn.first + 1} available",
                path=format_path(path),
                location=fabric.loaded.source.value(path),
            )
        )

    host_pool = _Pool(spec.hosts)
    p2p_pool = _Pool(spec.p2p) if spec.p2p else None
    routed_set = set(routed)
    try:
        for link in fabric.links:
            if link.network not in routed_set:
                continue
            if link.kind == ENDPOINT_LEAF:
                base = host_pool.take(2)
                link.b_ip, link.a_ip = host_pool.text(base), host_pool.text(base + 1)
            elif p2p_pool is not None and link.kind in (LEAF_SPINE, SPINE_CORE):
                try:
                    base = p2p_pool.take(2)
                except PoolExhausted:
                    _fail(fabric, problems, "p2p", "switch-to-switch links", "more /31s")
                    p2p_pool = None
                    continue
                link.b_ip, link.a_ip = p2p_pool.text(base), p2p_pool.text(base + 1)
    except PoolExhausted:
        _fail(fabric, problems, "hosts", "RoCE host links", "more /31s")
