"""Synthesis pass 5c: a DHCP path for the management trees' roots (issue 41: no USB drive per
management tree).

Consumes the placed and uplinked design (the OOB access switches, their management trees from
synth/oob.py connect_tree, their uplinks into the in-band top tier) and the port book; produces
one management link per tree root: the root's own management port (RJ45, 1 GbE) on a free cage of
an in-band top-tier switch that one of the root's own uplinks already ends on, through a QSFP to
SFP adapter holding a 1000BASE-T SFP module (the catalog's `cat6` modules, synth/cabling.py).
The link is a routed point-to-point /31 (RFC 3021) from a dedicated block at the OOB pool's end,
below the site provisioning server's /30 (root_addresses: the block of each root's own subnet,
so growth moves no root's address); the top-tier switch is the link's router and DHCP relay
(option 82 circuit-id: its port) to the provisioning server, and announces the /31.

Why there, and not on another access switch: the roots exist because a management tree stops
(a region's first switch, no neighbour in patch-cord reach with a free port, the tree's depth);
the top tier is the one place every tree already reaches, it routes to the server as soon as it
is up, and a tree's root coming up by DHCP from it turns the bring-up into rounds that start at
the few in-band seeds (synth/mgmtnet.py _seeds) instead of one USB drive per tree.

A root keeps its USB seed (and seeds.txt says why, root_fallback) where no top-tier switch its
uplinks reach has a free cage for it, where the in-band network's OS has no relay fabricc
emits on a routed port (Cumulus NVUE only), where the catalog has no 1000BASE-T module for the
top tier's cages, where its /31 would fall into an access switch's subnet (a full pool), or
where it holds the site's provisioning server (the top tier reaches that server through it).
"""

from __future__ import annotations

import ipaddress

from fabricc.catalog.models import FORM_ACCEPTS, Catalog
from fabricc.ir import ENDPOINT_LEAF, MGMT, UPLINK, Fabric, Link
from fabricc.synth.addressing import oob_offsets, oob_stride
from fabricc.synth.oob import TREE_SPAN_M, free_port, mgmt_ports, tree_order
from fabricc.synth.portbook import PortBook

ROOT_LINK_SPEED = 1  # Gb/s: the root's management port (1000BASE-T)
BASE_T_MEDIA = "cat6"  # the catalog's modules of a copper management link (optics.yaml)
RELAY_OSES = ("cumulus",)  # where emit/configs writes a relay on a routed port


def base_t_parts(catalog: Catalog, form: str) -> tuple[str, str] | None:
    """(adapter, module) for a 1000BASE-T link in a cage of `form`: an adapter the cage takes
    and a 1000BASE-T module that adapter takes; None where the catalog has none."""
    adapters = sorted(
        part
        for part, t in catalog.transceivers.items()
        if t.media == BASE_T_MEDIA
        and t.form in FORM_ACCEPTS.get(form, ())
        and t.adapter is not None
    )
    for adapter in adapters:
        holds = catalog.transceivers[adapter].adapter
        modules = sorted(
            part
            for part, t in catalog.transceivers.items()
            if t.media == BASE_T_MEDIA
            and t.adapter is None
            and t.form in FORM_ACCEPTS.get(holds or "", ())
        )
        if modules:
            return adapter, modules[0]
    return None


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


def connect_roots(fabric: Fabric, book: PortBook) -> None:
    """Cable each management tree's root to a top-tier switch its uplinks reach (the module
    docstring); a root for which root_fallback names a reason keeps no such link."""
    catalog = fabric.loaded.catalog.catalog
    roots_of = tree_roots(fabric)
    addresses = root_addresses(fabric)
    site = _site_root(fabric, roots_of)
    for network, roots in roots_of.items():
        for root in roots:
            if _fallback(fabric, network, root, addresses, site) is not None:
                continue
            for top in _candidates(fabric, root):
                if not _in_reach(fabric, root, top):
                    continue
                model = catalog.switches[fabric.devices[top].model]
                port = free_port(book, top, model, 1)
                if port is None:
                    continue
                own = mgmt_ports(fabric, fabric.devices[root])
                book.take(root, own[0])
                fabric.links.append(Link(network, MGMT, root, own[0], top, port, ROOT_LINK_SPEED))
                break


def _in_reach(fabric: Fabric, root: str, top: str) -> bool:
    """A Cat6 patch cord reaches: racks at most TREE_SPAN_M apart along the floor (the bound of
    a management tree's own cords, synth/oob.py: a 100 m channel with room for drops and slack)."""
    racks = fabric.rack_by_name
    here = racks.get(fabric.devices[root].rack or "")
    there = racks.get(fabric.devices[top].rack or "")
    if here is None or there is None:
        return False
    return abs(here.x_m - there.x_m) + abs(here.y_m - there.y_m) <= TREE_SPAN_M


def _candidates(fabric: Fabric, root: str) -> list[str]:
    """The top-tier switches a root's uplinks end on, each once, in the tier's order: the first
    of the tier is the one the seeds rule brings up first (synth/mgmtnet.py _top_seeds), so the
    roots on it come up in the first round and their trees bring up the rest of the tier."""
    ends = {link.b for link in fabric.links if link.kind == UPLINK and link.a == root}
    device = fabric.devices[root]
    spec = fabric.loaded.networks[device.network or ""].spec
    topology = fabric.networks.get(spec.uplink_to or "")
    if topology is None or topology.top_tier is None:
        return []
    return [top for top in topology.switches[topology.top_tier] if top in ends]


def root_fallback(fabric: Fabric, network: str, root: str) -> str:
    """Why a tree's root has no root link (it stays a USB seed)."""
    roots_of = tree_roots(fabric)
    why = _fallback(fabric, network, root, root_addresses(fabric), _site_root(fabric, roots_of))
    return why or (
        "no in-band top-tier switch its uplinks reach is within a patch cord's reach"
        f" ({TREE_SPAN_M:g} m) with a free cage"
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
    addresses: dict[str, ipaddress.IPv4Network],
    site: str | None,
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
    if root == site:
        return "it holds the site's provisioning server: the top tier reaches the server through it"
    if root not in addresses:
        return "its /31 at the OOB pool's end falls into an access switch's subnet (a full pool)"
    if not mgmt_ports(fabric, fabric.devices[root]):
        return "it has no management port"
    tops = _candidates(fabric, root)
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
