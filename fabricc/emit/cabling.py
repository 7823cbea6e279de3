"""Emitter `cabling`: the cabling plan and IBDM topology files.

Consumes the Fabric IR; produces cabling/cables.csv (one row per connection; the legs of a
twin-port DAC or splitter share one cable id) and, per InfiniBand network, cabling/<network>.topo
(IBDM / ibdiagnet / UFM format), with cabling/<system-type>.ibnl beside it for every system type
the .topo files name. The NetBox cable import is part of provisioning/netbox/.
"""

from __future__ import annotations

import functools

from fabricc.catalog.models import SwitchModel, ordering_numbers
from fabricc.emit import Artifact
from fabricc.emit.configs.ibfabric import ib_networks
from fabricc.emit.configs.ports import ib_port_count, ib_ports_per_cage
from fabricc.emit.tables import Cell, cell, csv_text, plain_lines
from fabricc.ir import EXTERNAL, Cable, Device, Fabric, Link

HEADER = (
    "cable_id",
    "label",
    "network",
    "kind",
    "a_device",
    "a_port",
    "a_rack",
    "a_u",
    "b_device",
    "b_port",
    "b_rack",
    "b_u",
    "speed_gbps",
    "medium",
    "length_m",
    "cable_part",
    "cable_quantity",
    "leg",
    "a_transceiver",
    "b_transceiver",
    "rail",
    "plane",
    "cable_legacy_part",
    "a_transceiver_legacy",
    "b_transceiver_legacy",
)
# Rail colors, the same in every artifact (diagrams use them too).
RAIL_COLORS = ("e6194b", "3cb44b", "ffe119", "4363d8", "f58231", "911eb4", "42d4f4", "f032e6")
NEUTRAL_COLOR = "9e9e9e"
# IBNL device name of an HCA port's node: any name but the grammar's reserved words (HCA, SW and
# CA are node types there); InfiniBand HCAs of the catalog's systems are ConnectX parts.
CA_DEVICE = "ConnectX"


def rail_color(rail: int | None) -> str:
    return RAIL_COLORS[rail % len(RAIL_COLORS)] if rail is not None else NEUTRAL_COLOR


def label(link: Link) -> str:
    return f"{link.a}:{link.a_port} > {link.b}:{link.b_port}"


def _u(device: Device) -> str:
    return f"U{device.u}" if device.u is not None else ""


def location(fabric: Fabric, device: Device) -> str | None:
    """A device's rack; for the site network (EXTERNAL) the hand-off its links end at."""
    if device.kind == EXTERNAL and device.network in fabric.loaded.networks:
        return fabric.loaded.networks[device.network].spec.site_uplinks.handoff
    return device.rack


class _Numbers:
    """(part number, legacy OPN) of the build's cables and modules, looked up once per part:
    NVIDIA's ordering number where the catalog gives it, with the legacy OPN beside it (as the
    BOM orders them)."""

    def __init__(self, fabric: Fabric) -> None:
        catalog = fabric.loaded.catalog.catalog
        self.modules = {
            key: ordering_numbers(key, module.part_number)
            for key, module in catalog.transceivers.items()
        }
        self.cables = catalog.cables
        self.known: dict[tuple[str, str, float], tuple[str, str]] = {}

    def cable(self, cable: Cable) -> tuple[str, str]:
        key = (cable.family, cable.part, cable.length_m)
        found = self.known.get(key)
        if found is None:
            family = self.cables.get(cable.family)
            number = family.ordering.get(cable.length_m) if family is not None else None
            found = self.known[key] = ordering_numbers(cable.part, number)
        return found

    def module(self, key: str | None) -> tuple[str, str]:
        if not key:
            return "", ""
        return self.modules.get(key) or (key, "")


def rows(fabric: Fabric) -> list[tuple[Cell, ...]]:
    # Rack and unit of each device, once per device rather than per link end.
    place = {name: (location(fabric, d), _u(d)) for name, d in fabric.devices.items()}
    numbers = _Numbers(fabric)
    out: list[tuple[Cell, ...]] = []
    append = out.append
    for link in fabric.links:
        a, b = link.a, link.b
        a_port, b_port = link.a_port, link.b_port
        a_rack, a_u = place[a]
        b_rack, b_u = place[b]
        cable = link.cable
        rail, plane = link.rail, link.plane
        part, legacy = numbers.cable(cable) if cable else ("", "")
        a_module, a_legacy = numbers.module(link.a_module)
        b_module, b_legacy = numbers.module(link.b_module)
        append(
            (
                cable.id if cable else "",
                f"{a}:{a_port} > {b}:{b_port}",  # label(link)
                link.network,
                link.kind,
                a,
                a_port,
                a_rack,
                a_u,
                b,
                b_port,
                b_rack,
                b_u,
                link.speed,
                cable.media if cable else "",
                cable.length_m if cable else None,
                part,
                cable.quantity if cable else None,
                link.leg or "",
                a_module,
                b_module,
                None if rail is None else rail + 1,  # one_based
                None if plane is None else plane + 1,
                legacy,
                a_legacy,
                b_legacy,
            )
        )
    return out


def cables_csv(fabric: Fabric) -> str:
    """cabling/cables.csv: the bytes csv_text writes for rows(fabric), each row formatted as one
    line in one step (one cell at a time was most of this emitter at 100k GPUs). Where a cell
    would need csv quotes or a formula guard (no name synthesis makes does), the table goes
    through csv_text."""
    # "rack,unit" of each device, once per device rather than per link end
    place = {
        name: f"{location(fabric, device) or ''},{_u(device)}"
        for name, device in fabric.devices.items()
    }
    # cell()'s spelling of the speeds, and per cable part and length the cells from media to
    # quantity (they repeat)
    speeds: dict[int, str] = {}
    cables: dict[tuple[str, str, float, int], tuple[str, str]] = {}
    numbers = _Numbers(fabric)
    # per module key: its ordering number cell and its legacy cell
    modules = {key: numbers.module(key) for key in numbers.modules}

    lines = [",".join(HEADER) + "\n"]  # the file's one string is joined once, header and all
    append = lines.append
    for link in fabric.links:
        a, b = link.a, link.b
        a_port, b_port = link.a_port, link.b_port
        cable = link.cable
        if cable is not None:
            cable_id = cable.id
            key = (cable.family, cable.part, cable.length_m, cable.quantity)
            found = cables.get(key)
            if found is None:
                part, legacy = numbers.cable(cable)
                found = cables[key] = (
                    f"{cable.media},{cell(cable.length_m)},{part},{cell(cable.quantity)}",
                    legacy,
                )
            middle, cable_legacy = found
        else:
            cable_id, middle, cable_legacy = "", ",,,", ""
        a_module, a_legacy = modules.get(link.a_module or "") or numbers.module(link.a_module)
        b_module, b_legacy = modules.get(link.b_module or "") or numbers.module(link.b_module)
        speed = link.speed
        rail, plane = link.rail, link.plane
        append(
            f"{cable_id},{a}:{a_port} > {b}:{b_port},{link.network},{link.kind},{a},{a_port},"
            f"{place[a]},{b},{b_port},{place[b]},"
            f"{speeds.get(speed) or speeds.setdefault(speed, cell(speed))},{middle},"
            f"{link.leg or ''},{a_module},{b_module},"
            f"{'' if rail is None else rail + 1},{'' if plane is None else plane + 1},"
            f"{cable_legacy},{a_legacy},{b_legacy}\n"
        )
    text = "".join(lines)
    if plain_lines(text, len(lines), len(HEADER)):
        return text
    return csv_text(HEADER, rows(fabric))


def _asic_name(switch: SwitchModel) -> str:
    return switch.asic.upper().replace(" ", "-")


def _shared_models(fabric: Fabric) -> set[str]:
    """Node models whose ports are cabled into more than one InfiniBand network (a DGX's
    compute and storage HCAs), once per build."""

    def compute() -> set[str]:
        networks: dict[str, set[str]] = {}
        for name in ib_networks(fabric):
            for link in fabric.links_of(name):
                for device_name in (link.a, link.b):
                    device = fabric.devices[device_name]
                    if device.kind != "switch":
                        networks.setdefault(device.model, set()).add(name)
        return {model for model, names in networks.items() if len(names) > 1}

    return fabric.derived("ibdm.shared_models", compute)


def ibdm_system_type(fabric: Fabric, device: Device, network: str) -> str:
    """The IBDM system type of a device on a network: ASIC and model for switches
    (QUANTUM-2-QM9700), the model for nodes (DGX-H100) - with the network's name where the
    model's ports are cabled into several InfiniBand networks (DGX-H100-COMPUTE), because each
    network is its own subnet and a type must define only the HCAs that subnet discovers
    (ibtopodiff reports every other one missing). cabling/<type>.ibnl defines each. Asked per
    link end, so the answer is kept per (kind, model, network) for the build."""
    types: dict[tuple[str, str, str], str] = fabric.derived("ibdm.system_types", dict)
    key = (device.kind, device.model, network)
    found = types.get(key)
    if found is None:
        if device.kind == "switch":
            switch = fabric.loaded.catalog.catalog.switches[device.model]
            found = _asic_name(switch) + "-" + device.model.upper()
        elif device.model in _shared_models(fabric):
            found = f"{device.model.upper()}-{network.upper()}"
        else:
            found = device.model.upper()
        types[key] = found
    return found


def topo(fabric: Fabric, network: str) -> str:
    """IBDM topology: per system its type and name, then `LOCAL-PORT -> TYPE NAME REMOTE-PORT`."""
    devices = fabric.devices
    # Each end with its port's sort key in front (one lookup per end, then a plain tuple sort;
    # a device's ports are distinct, so the key decides the order).
    keys: dict[str, tuple[int, ...] | tuple[str]] = {}
    peers: dict[str, list[tuple[tuple[int, ...] | tuple[str], str, str, str]]] = {}
    for link in fabric.links_of(network):
        a, b, a_port, b_port = link.a, link.b, link.a_port, link.b_port
        a_key = keys.get(a_port) or keys.setdefault(a_port, _port_key(a_port))
        b_key = keys.get(b_port) or keys.setdefault(b_port, _port_key(b_port))
        found = peers.get(a)
        if found is None:
            found = peers[a] = []
        found.append((a_key, a_port, b, b_port))
        found = peers.get(b)
        if found is None:
            found = peers[b] = []
        found.append((b_key, b_port, a, a_port))

    # "TYPE NAME" of every system, once per device rather than per link end
    system = {name: f"{ibdm_system_type(fabric, devices[name], network)} {name}" for name in peers}
    blocks = [f"# IBDM topology of network {network} ({fabric.name}), generated by fabricc\n"]
    for name in sorted(peers, key=lambda n: (devices[n].kind != "switch", n)):
        ends = peers[name]
        ends.sort()
        lines = [system[name]]
        lines += [
            f"   {ibdm_port(local)} -> {system[remote]} {ibdm_port(remote_port)}"
            for _, local, remote, remote_port in ends
        ]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


@functools.lru_cache(maxsize=1 << 14)  # per port name; asked per link end
def ibdm_port(port: str) -> str:
    """A port name as IBDM reads it: the IBNL grammar's names start with a letter, so a
    front-panel label that starts with a digit ("1/1") gets a P ("P1/1")."""
    return port if port[:1].isalpha() else f"P{port}"


@functools.lru_cache(maxsize=1 << 14)  # per port name; asked per link end
def _port_key(port: str) -> tuple[int, ...] | tuple[str]:
    parts = port.replace("/", " ").split()
    if all(p.isdigit() for p in parts):
        return tuple(int(p) for p in parts)
    return (port,)


def ibnl_files(fabric: Fabric) -> list[Artifact]:
    """IBNL system definitions for every system type the .topo files name: a switch is one
    NODE SW with its IB ports (QM9700 port 2*(c-1)+s is front-panel "c/s"); a node is one
    single-port NODE CA per HCA port the design cables into InfiniBand."""
    switches: dict[str, Device] = {}
    hca_ports: dict[str, set[str]] = {}
    seen_models: set[str] = set()
    devices = fabric.devices
    for name in ib_networks(fabric):
        node_ports: dict[str, set[str]] = {}  # node model -> its ports on this network
        for link in fabric.links_of(name):
            for device_name, port in ((link.a, link.a_port), (link.b, link.b_port)):
                device = devices[device_name]
                if device.kind == "switch":
                    if device.model not in seen_models:  # a type per model, not per port
                        seen_models.add(device.model)
                        switches.setdefault(ibdm_system_type(fabric, device, name), device)
                else:
                    found = node_ports.get(device.model)
                    if found is None:
                        kind = ibdm_system_type(fabric, device, name)
                        found = hca_ports.setdefault(kind, set())
                        node_ports[device.model] = found
                    found.add(port)
    catalog = fabric.loaded.catalog.catalog
    out: list[Artifact] = []
    for kind, device in sorted(switches.items()):
        model = catalog.switches[device.model]
        per = ib_ports_per_cage(model)
        lines = [f"NODE SW {ib_port_count(model)} {_asic_name(model)} U1"]
        for number in range(1, ib_port_count(model) + 1):
            cage, sub = divmod(number - 1, per)
            label = f"{cage + 1}/{sub + 1}" if per > 1 else str(cage + 1)
            lines.append(f"   {number} -> {ibdm_port(label)}")
        out.append(_ibnl(kind, [lines]))
    for kind, ports in sorted(hca_ports.items()):
        nodes = [
            [f"NODE CA 1 {CA_DEVICE} U{index}", f"   1 -> {ibdm_port(port)}"]
            for index, port in enumerate(sorted(ports, key=_port_key), start=1)
        ]
        out.append(_ibnl(kind, nodes))
    return out


def _ibnl(kind: str, nodes: list[list[str]]) -> Artifact:
    """The IBNL grammar has no comments: the file starts with its TOPSYSTEM line."""
    body = "\n".join("\n".join(node) for node in nodes)
    return (f"cabling/{kind}.ibnl", f"TOPSYSTEM {kind}\n\n{body}\n")


def emit(fabric: Fabric) -> list[Artifact]:
    artifacts: list[Artifact] = [("cabling/cables.csv", cables_csv(fabric))]
    for name in ib_networks(fabric):
        artifacts.append((f"cabling/{name}.topo", topo(fabric, name)))
    artifacts.extend(ibnl_files(fabric))
    return artifacts
