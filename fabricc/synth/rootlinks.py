"""Synthesis pass 5c: a DHCP path for the management trees' roots (issue 41: no USB drive per
management tree).

Consumes the placed and uplinked design (the OOB access switches, their management trees from
synth/oob.py connect_tree, their uplinks into the in-band top tier) and the port book; produces
one management link per tree root: the root's own management port (RJ45, 1 GbE) on a free cage
of an in-band top-tier switch that one of the root's own uplinks already ends on (the first of
the tier's order within a patch cord), through a cage adapter holding a 1000BASE-T module (the
catalog's `cat6` modules: a QSA28 and an SFP; synth/cabling.py). Where every such switch is past
a patch cord and the in-band network routes at its leaves, the nearest in-band leaf with a free
cage takes it instead. The link is a routed point-to-point /31 (RFC 3021) from a block at the
OOB pool's end, below the site provisioning server's /30 (root_addresses: counting down by the
block of the root's own subnet, so growth moves no root's address); the in-band switch is the
link's router and DHCP relay (option 82 circuit-id: its port) to the provisioning server and
announces the /31 (emit/configs/mgmt.py), Kea reserves the root's address by that circuit-id.

Why the top tier, not another access switch: the roots exist because a management tree stops
(a region's first switch, no neighbour within a patch cord with a free port, the tree's depth);
the top tier is the one place every tree's uplinks already reach, it routes to the server as
soon as it is up, and it comes up among the first (synth/mgmtnet.py _top_seeds) - so the roots
come up in the first rounds of DHCP instead of one USB drive per tree, and chaining trees into
each other (a root on another tree's switch) would add a tree's depth of rounds per tree.

The port is the highest cage left after the uplinks and border links (free_port). It has no place
of its own, so a design that grows (a new floor region's uplinks, more border links) could take
it: with an earlier build kept (growth in place, `build --keep`), each root's installed cable
holds its cage (reserve_kept, before any uplink) and the uplink whose place it is takes the
highest free port instead.
A root keeps its USB seed (and seeds.txt says why, root_fallback) where no such switch has a
free cage within a patch cord, where the in-band network's OS has no relay fabricc emits
(management configs are NVUE only), where the catalog has no 1000BASE-T module for the cages,
where its /31 would fall into an access switch's subnet (a full pool), or where it holds the
site's provisioning server (the in-band network reaches that server through it).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from fabricc.catalog.media import base_t_parts
from fabricc.catalog.models import Catalog
from fabricc.ir import ENDPOINT_LEAF, MGMT, UPLINK, Fabric, Link, NetworkTopology
from fabricc.synth.addressing import oob_offsets, oob_stride
from fabricc.synth.cabling import run_length
from fabricc.synth.inbandleaves import routes_at_leaves
from fabricc.synth.oob import free_port, mgmt_ports, take_cage, tree_order
from fabricc.synth.portbook import PortBook

ROOT_LINK_SPEED = 1  # Gb/s: the root's management port (1000BASE-T)
RELAY_OSES = ("cumulus",)  # where emit/configs writes a relay on a routed port


def has_server_node(fabric: Fabric) -> bool:
    """Whether the design has its own provisioning server (synth/mgmtnet.py _server: a node of
    catalog kind server on an in-band network); else the site provides it, on the first
    management tree's root."""
    catalog = fabric.loaded.catalog.catalog
    networks = fabric.loaded.networks
    for link in fabric.links:
        if link.kind != ENDPOINT_LEAF:
            continue
        device = fabric.devices[link.a]
        network = networks.get(link.network)
        if (
            device.kind == "node"
            and network is not None
            and network.spec.role == "inband"
            and network.fabric == "ethernet"
            and catalog.nodes[device.model].kind == "server"
        ):
            return True
    return False


def tree_roots(fabric: Fabric) -> dict[str, list[str]]:
    """OOB network -> the roots of its management trees (access switches whose management port
    is on no other access switch), in tree order; only networks uplinked into an in-band
    network's top tier, the one place every tree reaches."""
    roots: dict[str, list[str]] = {}
    oob = {name for name, network in fabric.loaded.networks.items() if network.spec.role == "oob"}
    cabled: set[str] = set()
    for link in fabric.links:
        if link.kind == MGMT and fabric.devices[link.b].network in oob:
            cabled.add(link.a)
    for name, network in fabric.loaded.networks.items():
        topology = fabric.networks.get(name)
        if network.spec.role != "oob" or network.spec.uplink_to is None or topology is None:
            continue
        switches = topology.switches.get("leaf", [])
        if switches:
            roots[name] = [s for s in tree_order(fabric, switches) if s not in cabled]
    return roots


def root_addresses(fabric: Fabric) -> dict[str, ipaddress.IPv4Network]:
    """Each access switch's /31 for a root link, should it be a root: the pool's end, below the
    site provisioning server's /30, counting down by the block of the switch's own subnet (so a
    design's growth moves none); absent where that /31 falls into an access switch's subnet."""
    offsets, full = oob_offsets(fabric)
    if full or not offsets:
        return {}
    pool = ipaddress.IPv4Network(fabric.loaded.spec.addressing.oob)
    strides = {
        oob_stride(fabric, topology.switches["leaf"])
        for name, network in fabric.loaded.networks.items()
        if network.spec.role == "oob"
        and (topology := fabric.networks.get(name)) is not None
        and topology.switches.get("leaf")
    }
    step = min(strides)
    blocks = {offset - 1 for offset in offsets.values()}
    top = pool.num_addresses - 4  # the server's /30 is the pool's last
    out: dict[str, ipaddress.IPv4Network] = {}
    for switch, offset in offsets.items():
        low = top - 2 * ((offset - 1) // step + 1)
        if low < 0 or any(low - low % s in blocks for s in strides):
            continue
        out[switch] = ipaddress.IPv4Network((int(pool.network_address) + low, 31))
    return out


@dataclass(frozen=True, slots=True)
class _Context:
    """What every root's choice reads, found once (one pass over the links each)."""

    roots_of: dict[str, list[str]]  # OOB network -> its trees' roots (tree_roots)
    addresses: dict[str, ipaddress.IPv4Network]  # root_addresses
    site: str | None  # the root that holds the site's provisioning server (_site_root)
    reach: float  # the longest patch cord (patch_reach)
    ends: dict[str, set[str]]  # root -> the switches its uplinks end on


def _context(fabric: Fabric) -> _Context:
    roots_of = tree_roots(fabric)
    roots = {root for members in roots_of.values() for root in members}
    ends: dict[str, set[str]] = {}
    for link in fabric.links:
        if link.kind == UPLINK and link.a in roots:
            ends.setdefault(link.a, set()).add(link.b)
    return _Context(
        roots_of,
        root_addresses(fabric),
        _site_root(fabric, roots_of),
        patch_reach(fabric.loaded.catalog.catalog),
        ends,
    )


def reserve_kept(fabric: Fabric, book: PortBook) -> dict[str, set[str]]:
    """In-band switch -> the cages the earlier build's root links (fabric.loaded.kept) hold
    there, taken in `book` before any out-of-band uplink: growth re-terminates no installed
    root cable. A cage the grown design's in-band network now cables itself (built before) is
    not held, and that root takes a free cage again."""
    reserved: dict[str, set[str]] = {}
    networks = fabric.loaded.networks
    for place in fabric.loaded.kept.values():
        if place.root_link is None:  # (the roots, access switches, are made after this)
            continue
        _, switch, port = place.root_link
        device = fabric.devices.get(switch)
        network = networks.get(device.network or "") if device is not None else None
        if network is None or network.spec.role != "inband":
            continue
        if take_cage(book, switch, port):
            reserved.setdefault(switch, set()).add(port)
    return reserved


def connect_roots(
    fabric: Fabric, book: PortBook, reserved: dict[str, set[str]] | None = None
) -> None:
    """Cable each management tree's root to a top-tier switch its uplinks reach (the module
    docstring); a root for which root_fallback names a reason keeps no such link. A root whose
    earlier cable holds its cage (`reserved`, reserve_kept) keeps that cable's ends."""
    catalog = fabric.loaded.catalog.catalog
    context = _context(fabric)
    reach = context.reach
    held = reserved or {}
    for network, roots in context.roots_of.items():
        for root in roots:
            if _fallback(fabric, network, root, context) is not None:
                continue
            kept = fabric.loaded.kept.get(root)
            own = mgmt_ports(fabric, fabric.devices[root])
            if kept is not None and kept.root_link is not None:
                port, top, top_port = kept.root_link
                if top_port in held.get(top, ()) and port in own and book.take(root, port):
                    fabric.links.append(
                        Link(network, MGMT, root, port, top, top_port, ROOT_LINK_SPEED)
                    )
                    continue
            tops = [
                t for t in _candidates(fabric, root, context) if _in_reach(fabric, root, t, reach)
            ]
            for top in tops or _leaves(fabric, root, reach):
                model = catalog.switches[fabric.devices[top].model]
                groups = [g for g in model.port_groups if g.use == "any"]
                if not all(base_t_parts(catalog, g.form) for g in groups):
                    continue  # a cage free_port may give takes no 1000BASE-T module
                free = free_port(book, top, model, 1)
                if free is None:
                    continue
                book.take(root, own[0])
                fabric.links.append(Link(network, MGMT, root, own[0], top, free, ROOT_LINK_SPEED))
                break


def _in_reach(fabric: Fabric, root: str, top: str, reach: float) -> bool:
    """A patch cord reaches: the run synth/cabling.py will measure (drops, tray, slack) within
    the longest cord the catalog has (a 1000BASE-T channel is 100 m, IEEE 802.3 clause 40)."""
    return run_length(fabric, root, top) <= reach


def patch_reach(catalog: Catalog) -> float:
    """The longest RJ45 patch cord of the catalog (0 where it has none)."""
    return max(
        (
            max(family.lengths)
            for family in catalog.cables.values()
            if family.a_form == "rj45" and family.b_form == "rj45"
        ),
        default=0.0,
    )


def _candidates(fabric: Fabric, root: str, context: _Context) -> list[str]:
    """The top-tier switches a root's uplinks end on, each once, in the tier's order: the first
    of the tier is the one the seeds rule brings up first (synth/mgmtnet.py _top_seeds), so the
    roots on it come up in the first round and their trees bring up the rest of the tier."""
    ends = context.ends.get(root, set())
    topology = _inband(fabric, root)
    if topology is None or topology.top_tier is None:
        return []
    return [top for top in topology.switches[topology.top_tier] if top in ends]


def _leaves(fabric: Fabric, root: str, reach: float) -> list[str]:
    """Where the in-band network routes at its leaves (synth/inbandleaves.py): its leaves within
    a patch cord of the root, nearest first - each routes to the provisioning server over its
    own uplinks, for a root past a patch cord's reach of every top-tier switch it uplinks to."""
    topology = _inband(fabric, root)
    if topology is None or not routes_at_leaves(fabric, topology.name):
        return []
    runs = [
        (run_length(fabric, root, leaf), k, leaf)
        for k, leaf in enumerate(topology.switches.get("leaf", []))
    ]
    return [leaf for run, _, leaf in sorted(runs) if run <= reach]


def _inband(fabric: Fabric, root: str) -> NetworkTopology | None:
    device = fabric.devices[root]
    spec = fabric.loaded.networks[device.network or ""].spec
    return fabric.networks.get(spec.uplink_to or "")


def root_fallback(fabric: Fabric, network: str, root: str) -> str:
    """Why a tree's root has no root link (it stays a USB seed)."""
    # (asked per seed at emit time, when the design is final: the context found once)
    context = fabric.derived("rootlinks.context", lambda: _context(fabric))
    return _fallback(fabric, network, root, context) or (
        "no in-band top-tier switch its uplinks reach (nor, where the in-band network routes at"
        " its leaves, an in-band leaf) has a free cage within a patch cord's reach"
        f" ({patch_reach(fabric.loaded.catalog.catalog):g} m)"
    )


def _site_root(fabric: Fabric, roots_of: dict[str, list[str]]) -> str | None:
    """The root that holds the site's provisioning server (synth/mgmtnet.py _server_port: the
    first network's first root), where the design has no server of its own."""
    if has_server_node(fabric):
        return None
    first = next(iter(roots_of.values()), [])
    return first[0] if first else None


def _fallback(
    fabric: Fabric,
    network: str,
    root: str,
    context: _Context,
) -> str | None:
    spec = fabric.loaded.networks[network].spec
    target = fabric.loaded.networks.get(spec.uplink_to or "")
    topology = fabric.networks.get(spec.uplink_to or "")
    catalog = fabric.loaded.catalog.catalog
    if target is None or topology is None or topology.top_tier is None:
        return "its network uplinks into no top tier"
    if target.spec.role != "inband" or target.fabric != "ethernet":
        return f"{target.name} is not an in-band Ethernet network"
    if target.spec.os not in RELAY_OSES:
        return f"fabricc writes no DHCP relay on a routed port for {target.spec.os} ({target.name})"
    if root == context.site:
        return "it holds the site's provisioning server: the top tier reaches the server through it"
    if root not in context.addresses:
        return "its /31 at the OOB pool's end falls into an access switch's subnet (a full pool)"
    if not mgmt_ports(fabric, fabric.devices[root]):
        return "it has no management port"
    tops = _candidates(fabric, root, context)
    if not tops:
        return "it has no uplink into the in-band top tier"
    forms = {
        g.form
        for top in tops
        for g in catalog.switches[fabric.devices[top].model].port_groups
        if g.use == "any"
    }
    if not any(base_t_parts(catalog, form) for form in forms):
        return "the catalog has no 1000BASE-T module for the top tier's cages"
    return None
