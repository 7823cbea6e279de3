"""Emit stage, provisioning: a complete NetBox import set, in NetBox's bulk-import CSV columns.

Consumes the Fabric IR and the catalog; produces provisioning/netbox/, one file per object type,
in the order they must be imported (each names only objects of the files before it):
01-sites.csv (the design), 02-racks.csv, 03-manufacturers.csv, 04-device-roles.csv,
05-device-types.csv (by catalog model name, with part number and height), 06-devices.csv (every
device: nodes, trays, switches, NVLink switch trays, power shelves and zero-U PDUs, which have a
rack but no position), 07-interfaces.csv (every cabled port, an in-band bond over a dual-homed
host's ports, loopbacks, the management SVI of OOB access switches), 08-ip-addresses.csv
(management, in-band, loopback and routed /31 addresses on their interfaces) and 09-cables.csv
(every cable leg between two interfaces). All objects are `planned` where NetBox has that status.
"""

from __future__ import annotations

import ipaddress
import re

from fabricc.emit import Artifact
from fabricc.emit.cabling import rail_color
from fabricc.emit.configs.mgmt import network_vlan
from fabricc.emit.inventory import ordering
from fabricc.emit.tables import Cell, cell, csv_text, plain_lines
from fabricc.ir import ENDPOINT_LEAF, MGMT, Device, Fabric, Link
from fabricc.synth.mgmtnet import management_net, mgmt_subnet

# NetBox interface types (dcim.choices.InterfaceTypeChoices) by link layer and speed in Gb/s.
INFINIBAND_TYPES = {
    100: "infiniband-edr",
    200: "infiniband-hdr",
    400: "infiniband-ndr",
    800: "infiniband-xdr",
}
ETHERNET_TYPES = {
    1: "1000base-t",
    10: "10gbase-x-sfpp",
    25: "25gbase-x-sfp28",
    100: "100gbase-x-qsfp28",
    200: "200gbase-x-qsfp56",
    400: "400gbase-x-osfp",
    800: "800gbase-x-osfp",
}
# NetBox cable types (dcim.choices.CableTypeChoices: TYPE_AOC is "aoc") by medium and cable kind.
CABLE_TYPES = {
    ("copper", "dac"): "dac-passive",
    ("copper", "acc"): "dac-active",
    ("mmf", "aoc"): "aoc",
    ("smf", "aoc"): "aoc",
    ("mmf", "fiber"): "mmf-om4",
    ("smf", "fiber"): "smf-os2",
    ("cat6", "patch"): "cat6",
}
ROLE_COLORS = {"switch": "2196f3", "node": "4caf50", "tray": "4caf50", "pdu": "ff9800"}
DEFAULT_COLOR = "9e9e9e"
BOND = "bond0"
LOOPBACK = "lo"
STATUS = "planned"
IP_STATUS = "reserved"  # NetBox IP addresses have no `planned` status

FILES = (
    "01-sites.csv",
    "02-racks.csv",
    "03-manufacturers.csv",
    "04-device-roles.csv",
    "05-device-types.csv",
    "06-devices.csv",
    "07-interfaces.csv",
    "08-ip-addresses.csv",
    "09-cables.csv",
)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def device_role(device: Device) -> str:
    return f"{device.network}-{device.role}" if device.kind == "switch" else device.role


def interface_type(fabric: Fabric, link: Link) -> str:
    network = fabric.loaded.networks[link.network]
    table = INFINIBAND_TYPES if network.fabric == "infiniband" else ETHERNET_TYPES
    return table.get(link.speed, "other")


def inband_ports(fabric: Fabric) -> dict[str, list[str]]:
    """Host -> its ports on in-band networks (one scan of the links per build)."""
    return fabric.derived("netbox.inband_ports", lambda: _inband_ports(fabric))


def _inband_ports(fabric: Fabric) -> dict[str, list[str]]:
    roles = {name: n.spec.role for name, n in fabric.loaded.networks.items()}
    ports: dict[str, list[str]] = {}
    for link in fabric.links:
        if link.kind == ENDPOINT_LEAF and roles[link.network] == "inband":
            ports.setdefault(link.a, []).append(link.a_port)
    return ports


def mgmt_ports(fabric: Fabric) -> dict[str, str]:
    """Managed device -> its out-of-band port (one scan of the links per build)."""
    return fabric.derived(
        "netbox.mgmt_ports",
        lambda: {link.a: link.a_port for link in fabric.links if link.kind == MGMT},
    )


def sites(fabric: Fabric) -> list[tuple[Cell, ...]]:
    return [(fabric.name, slug(fabric.name), STATUS)]


def racks(fabric: Fabric) -> list[tuple[Cell, ...]]:
    """NetBox's rack import needs a width and a height unless the row names a rack type ("Width
    must be set if not specifying a rack type", dcim/forms/bulk_import.py RackImportForm.clean,
    since NetBox v4.1.8): the width is the rack part's, the height the design's."""
    parts = fabric.loaded.catalog.catalog.parts
    return [(fabric.name, r.name, STATUS, parts[r.part].width_in, r.height_u) for r in fabric.racks]


def manufacturers(fabric: Fabric) -> list[tuple[Cell, ...]]:
    names = sorted({ordering(fabric, d)[1] for d in fabric.devices.values()})
    return [(name, slug(name)) for name in names]


def roles(fabric: Fabric) -> list[tuple[Cell, ...]]:
    found = {device_role(d): d.kind for d in fabric.devices.values()}
    return [
        (name, slug(name), ROLE_COLORS.get(kind, DEFAULT_COLOR))
        for name, kind in sorted(found.items())
    ]


def device_types(fabric: Fabric) -> list[tuple[Cell, ...]]:
    found: dict[str, tuple[Cell, ...]] = {}
    for device in fabric.devices.values():
        if device.model not in found:
            part, vendor = ordering(fabric, device)
            found[device.model] = (
                vendor,
                device.model,
                slug(device.model),
                part,
                device.height_u,
                "true" if device.height_u else "false",
            )
    return [found[model] for model in sorted(found)]


def devices(fabric: Fabric) -> list[tuple[Cell, ...]]:
    return [
        (
            d.name,
            device_role(d),
            ordering(fabric, d)[1],
            d.model,
            fabric.name,
            d.rack,
            d.u if d.height_u else None,
            "front" if d.height_u and d.u is not None else None,
            STATUS,
        )
        for d in fabric.devices.values()
    ]


def _svi(fabric: Fabric) -> str:
    oob = [n for n, net in fabric.loaded.networks.items() if net.spec.role == "oob"]
    return f"vlan{network_vlan(fabric, oob[0])}" if oob else "mgmt"


def interfaces(fabric: Fabric) -> list[tuple[Cell, ...]]:
    """Per device (in device order) its bond, its cabled ports in link order, its loopback and
    management SVI."""
    rows: dict[str, dict[str, tuple[Cell, ...]]] = {name: {} for name in fabric.devices}
    bonded = {host: set(ports) for host, ports in inband_ports(fabric).items() if len(ports) > 1}
    for host in bonded:
        rows[host][BOND] = (host, BOND, "lag", "false", "", "in-band bond")
    types: dict[str, dict[int, str]] = {}  # per network and speed, not per link end
    for link in fabric.links:
        by_speed = types.get(link.network)
        if by_speed is None:
            by_speed = types[link.network] = {}
        kind = by_speed.get(link.speed)
        if kind is None:
            kind = by_speed[link.speed] = interface_type(fabric, link)
        a, a_port, b, b_port = link.a, link.a_port, link.b, link.b_port
        mgmt = link.kind == MGMT
        own = rows[a]
        if a_port not in own:
            bond = bonded.get(a)
            lag = BOND if bond is not None and a_port in bond else ""
            own[a_port] = (a, a_port, kind, "true" if mgmt else "false", lag, f"{b}:{b_port}")
        own = rows[b]
        if b_port not in own:
            bond = bonded.get(b)
            lag = BOND if bond is not None and b_port in bond else ""
            flag = "true" if mgmt and b == a else "false"
            own[b_port] = (b, b_port, kind, flag, lag, f"{a}:{a_port}")
    cabled_mgmt = mgmt_ports(fabric)
    svi = _svi(fabric)
    for d in fabric.devices.values():
        if d.loopback is not None:
            rows[d.name][LOOPBACK] = (d.name, LOOPBACK, "virtual", "false", "", "loopback")
        if d.mgmt_ip is not None and d.name not in cabled_mgmt:
            rows[d.name][svi] = (d.name, svi, "virtual", "true", "", "management SVI")
    return [row for own in rows.values() for row in own.values()]


def _interface_lines(fabric: Fabric) -> list[str]:
    """interfaces' rows as the lines of plain text (their cells joined by commas), each line
    spelled once instead of made a row and then joined, its middle cells (type, mgmt_only)
    shared per network, speed and kind of link. The same rules as interfaces (a test compares
    the two); interfaces_text uses these lines only where every cell is plain."""
    lines: dict[str, dict[str, str]] = {name: {} for name in fabric.devices}
    bonded = {host: set(ports) for host, ports in inband_ports(fabric).items() if len(ports) > 1}
    for host in bonded:
        lines[host][BOND] = f"{host},{BOND},lag,false,,in-band bond"
    # per network, speed and management link: the frame of its a end and of its b end
    frames: dict[tuple[str, int, bool], tuple[str, str]] = {}
    for link in fabric.links:
        key = (link.network, link.speed, link.kind == MGMT)
        frame = frames.get(key)
        if frame is None:
            kind = interface_type(fabric, link)
            flag = "true" if key[2] else "false"
            frame = frames[key] = (f",{kind},{flag},", f",{kind},false,")
        a, a_port, b, b_port = link.a, link.a_port, link.b, link.b_port
        own = lines[a]
        if a_port not in own:
            bond = bonded.get(a)
            lag = BOND if bond is not None and a_port in bond else ""
            own[a_port] = f"{a},{a_port}{frame[0]}{lag},{b}:{b_port}"
        own = lines[b]
        if b_port not in own:
            bond = bonded.get(b)
            lag = BOND if bond is not None and b_port in bond else ""
            middle = frame[0] if b == a else frame[1]
            own[b_port] = f"{b},{b_port}{middle}{lag},{a}:{a_port}"
    cabled_mgmt = mgmt_ports(fabric)
    svi = _svi(fabric)
    for d in fabric.devices.values():
        if d.loopback is not None:
            lines[d.name][LOOPBACK] = f"{d.name},{LOOPBACK},virtual,false,,loopback"
        if d.mgmt_ip is not None and d.name not in cabled_mgmt:
            lines[d.name][svi] = f"{d.name},{svi},virtual,true,,management SVI"
    return [line for own in lines.values() for line in own.values()]


def interfaces_text(fabric: Fabric) -> str:
    """07-interfaces.csv as csv_text writes interfaces(): its lines joined once where every cell
    is plain text (plain_lines: no comma, quote or line break in a cell, none like a formula),
    else through csv_text."""
    lines = _interface_lines(fabric)
    header = HEADERS["07-interfaces.csv"]
    if lines:
        text = "\n".join((",".join(header), *lines, ""))
        if plain_lines(text, len(lines) + 1, len(header)):
            return text
    return csv_text(header, interfaces(fabric))


def ip_addresses(fabric: Fabric) -> list[tuple[Cell, ...]]:
    spec = fabric.loaded.spec.addressing
    inband = ipaddress.ip_network(spec.inband).prefixlen
    cabled_mgmt = mgmt_ports(fabric)
    in_ports = inband_ports(fabric)
    svi = _svi(fabric)
    plan = management_net(fabric)  # where in-band leaves route, a host's subnet is its pair's
    rows: list[tuple[Cell, ...]] = []
    for d in fabric.devices.values():
        host = d.kind in ("node", "tray")
        if d.mgmt_ip is not None:
            port = cabled_mgmt.get(d.name, svi)
            primary = "false" if host and d.inband_ip is not None else "true"
            oob = mgmt_subnet(fabric, d.name)[0]  # its access switch's subnet
            rows.append((f"{d.mgmt_ip}/{oob}", IP_STATUS, d.name, port, primary, d.name))
        if d.inband_ip is not None and d.name in in_ports:
            ports = in_ports[d.name]
            port = BOND if len(ports) > 1 else ports[0]
            length = inband if plan.inband is None else plan.inband.host_gateway(d.inband_ip)[0]
            rows.append((f"{d.inband_ip}/{length}", IP_STATUS, d.name, port, "true", d.name))
        if d.loopback is not None:
            primary = "false" if d.mgmt_ip is not None else "true"
            rows.append((f"{d.loopback}/32", IP_STATUS, d.name, LOOPBACK, primary, None))
    append = rows.append
    for link in fabric.links:  # each end's address, a end first (one test per end)
        # (a management tree's root's eth0 on its /31, synth/rootlinks.py: its mgmt_ip above)
        if link.a_ip is not None and link.kind != MGMT:
            append((f"{link.a_ip}/31", IP_STATUS, link.a, link.a_port, "false", None))
        if link.b_ip is not None:
            append((f"{link.b_ip}/31", IP_STATUS, link.b, link.b_port, "false", None))
    return rows


def cables(fabric: Fabric) -> list[tuple[Cell, ...]]:
    out: list[tuple[Cell, ...]] = []
    colors: dict[int | None, str] = {}  # per rail, not per cable
    lengths: dict[float, str] = {}  # cell()'s spelling, per length (all text: csv_text's fast path)
    for link in fabric.links:
        cable = link.cable
        if cable is None:
            continue
        rail = link.rail
        color = colors.get(rail)
        if color is None:
            color = colors[rail] = rail_color(rail)
        out.append(
            (
                link.a,
                "dcim.interface",
                link.a_port,
                link.b,
                "dcim.interface",
                link.b_port,
                CABLE_TYPES.get((cable.media, cable.kind), ""),
                STATUS,
                f"{cable.id}-{link.leg}" if link.leg else cable.id,
                color,
                lengths.get(cable.length_m)
                or lengths.setdefault(cable.length_m, cell(cable.length_m)),
                "m",
            )
        )
    return out


HEADERS = {
    "01-sites.csv": ("name", "slug", "status"),
    "02-racks.csv": ("site", "name", "status", "width", "u_height"),
    "03-manufacturers.csv": ("name", "slug"),
    "04-device-roles.csv": ("name", "slug", "color"),
    "05-device-types.csv": (
        "manufacturer",
        "model",
        "slug",
        "part_number",
        "u_height",
        "is_full_depth",
    ),
    "06-devices.csv": (
        "name",
        "role",
        "manufacturer",
        "device_type",
        "site",
        "rack",
        "position",
        "face",
        "status",
    ),
    "07-interfaces.csv": ("device", "name", "type", "mgmt_only", "lag", "description"),
    "08-ip-addresses.csv": ("address", "status", "device", "interface", "is_primary", "dns_name"),
    "09-cables.csv": (
        "side_a_device",
        "side_a_type",
        "side_a_name",
        "side_b_device",
        "side_b_type",
        "side_b_name",
        "type",
        "status",
        "label",
        "color",
        "length",
        "length_unit",
    ),
}
ROWS = {
    "01-sites.csv": sites,
    "02-racks.csv": racks,
    "03-manufacturers.csv": manufacturers,
    "04-device-roles.csv": roles,
    "05-device-types.csv": device_types,
    "06-devices.csv": devices,
    "07-interfaces.csv": interfaces,
    "08-ip-addresses.csv": ip_addresses,
    "09-cables.csv": cables,
}


# The one file that reads the cable selection (its IDs, kinds and lengths): emitted apart, so that
# a large build can make the others before cable selection (fabricc.build.BEFORE_CABLES)
CABLES = "09-cables.csv"


def emit(fabric: Fabric) -> list[Artifact]:
    """Every file but CABLES."""
    return [_file(fabric, name) for name in FILES if name != CABLES]


def emit_cables(fabric: Fabric) -> list[Artifact]:
    return [_file(fabric, CABLES)]


def _file(fabric: Fabric, name: str) -> Artifact:
    text = (
        interfaces_text(fabric)
        if name == "07-interfaces.csv"
        else csv_text(HEADERS[name], ROWS[name](fabric))
    )
    return f"provisioning/netbox/{name}", text
