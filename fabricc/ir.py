"""The Fabric IR: the physical design that every emitter reads.

Produced by fabricc.synth from a LoadedSpec; consumed by fabricc.checks and fabricc.emit.
Racks, devices, links, cables and transceiver modules are slotted dataclasses keyed by stable
names; ports are not objects of their own (a link names its two device ports), which keeps a
100,000-GPU fabric to a few hundred thousand small objects.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar, cast, overload

from fabricc.errors import Diagnostic
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.yamlsource import DataPath

T = TypeVar("T")

U_HEIGHT_M = 0.04445  # one rack unit

# Link kinds, named after the tiers they join. endpoint-leaf counts every host or appliance cable
# to a leaf; peer is an MLAG peer link; uplink joins one network's top tier to another network.
ENDPOINT_LEAF = "endpoint-leaf"
LEAF_SPINE = "leaf-spine"
SPINE_CORE = "spine-core"
PEER = "peer"
UPLINK = "uplink"
MGMT = "mgmt"
GLOBAL = "global"  # dragonfly-plus: spine to spine of another group
TORUS = "torus"  # torus: switch to its neighbour in one dimension (wrap-around links included)
SITE = "site-uplink"  # a top-tier switch to the site's own network (an EXTERNAL device)
LINK_KINDS = (ENDPOINT_LEAF, LEAF_SPINE, SPINE_CORE, PEER, UPLINK, MGMT, GLOBAL, TORUS, SITE)
# Device kind of equipment outside the design (the site's data-centre network): no rack, no
# bill of materials line, no config; the cables to it and the modules at the near end are ours.
EXTERNAL = "external"


@dataclass(slots=True)
class Rack:
    name: str
    index: int  # position in layout order
    row: int  # 0-based
    position: int  # 0-based within the row
    role: str  # compute | network | central | system
    x_m: float
    y_m: float
    height_u: int
    power_budget_w: int
    part: str  # catalog part of the rack
    su: int | None = None
    devices: list[str] = field(default_factory=list)

    @property
    def top_m(self) -> float:
        return self.height_u * U_HEIGHT_M


def one_based(value: int | None) -> int | None:
    """Rail, plane and pod are 0-based in the IR and 1-based in every output, as people read
    them (rail 1 is GPU 0's rail; p2-leaf01 is plane 2). A scalable unit prints its own number,
    Fabric.su_label."""
    return value + 1 if value is not None else None


@dataclass(slots=True)
class Device:
    name: str
    kind: str  # node | tray | nvlink-switch | switch | pdu | power-shelf | external
    model: str  # catalog key: node model, switch model or part
    role: str  # node kind (gpu-node, appliance, ...) or switch tier (leaf, spine, core, access)
    index: int  # 0-based within its group, or within its switch series (see synth/switches.py)
    group: str | None = None  # node group
    network: str | None = None  # owning network (switches)
    system: str | None = None  # rack-system instance a tray belongs to
    su: int | None = None
    rail: int | None = None
    plane: int | None = None
    pod: int | None = None
    series: str | None = None  # a switch's leaf class, from its network's second class on
    coordinates: tuple[int, ...] | None = None  # a torus switch's (x, y[, z]), 0-based
    rack: str | None = None
    u: int | None = None  # bottom rack unit
    height_u: int = 0
    power_w: int = 0
    mgmt_ip: str | None = None
    inband_ip: str | None = None
    loopback: str | None = None
    loopback_v6: str | None = None
    asn: int | None = None
    spec_path: DataPath = ()


@dataclass(slots=True)
class Cable:
    """A physical cable; a twin-port DAC or a splitter carries several links."""

    id: str
    part: str  # part number
    family: str  # catalog cable key
    media: str  # copper | mmf | smf | cat6
    kind: str  # dac | acc | fiber | patch
    length_m: float
    links: int = 1
    quantity: int = 1  # identical cables ordered for this connection (2 fibers for unsplit 800G)


@dataclass(slots=True)
class Link:
    network: str
    kind: str
    a: str  # lower tier end (host, leaf, ...)
    a_port: str
    b: str  # upper tier end
    b_port: str
    speed: int  # Gb/s
    rail: int | None = None
    plane: int | None = None
    distance_m: float = 0.0
    cable: Cable | None = None
    leg: int = 0  # which leg of a multi-link cable
    fibers: int = 1  # fiber cables this link needs (an unsplit 800G over twin-port optics: 2)
    a_module: str | None = None  # transceiver part at each end, if optical
    b_module: str | None = None
    a_ip: str | None = None  # /31 addresses on routed links
    b_ip: str | None = None


@dataclass(slots=True)
class Module:
    """A transceiver plugged into one cage."""

    device: str
    cage: str
    part: str
    network: str


@dataclass(slots=True)
class NvlinkDomain:
    name: str
    scope: str  # node | rack
    gpus: int
    switch_chips: int
    links_per_gpu: int
    members: list[str]  # devices holding the GPUs (a node, or a rack's compute trays)
    switch_trays: list[str] = field(default_factory=list)


@dataclass(slots=True)
class LeafClass:
    """Leaves that share a port budget (endpoint ports, uplinks)."""

    name: str
    groups: list[str]
    down_ports: int
    up_ports: int
    down_speed: int
    up_speed: int
    rail_optimized: bool
    leaves: list[str] = field(default_factory=list)


@dataclass(slots=True)
class NetworkTopology:
    name: str
    role: str
    fabric: str
    tiers: int
    planes: int
    rail_optimized: bool
    dual_homed: bool
    oversubscription: tuple[int, int]
    switch_models: dict[str, str]
    sus: int = 0
    pods: int = 0
    spines_per_pod: int = 0
    core_groups: int = 0
    cores_per_group: int = 0
    leaf_classes: list[LeafClass] = field(default_factory=list)
    switches: dict[str, list[str]] = field(default_factory=dict)  # tier -> names
    spec_path: DataPath = ()
    topology: str = "fat-tree"  # fat-tree | rail-only | dragonfly-plus | torus
    global_links: int = 0  # dragonfly-plus: links between every pair of groups
    dimensions: tuple[int, ...] = ()  # torus: switches per dimension (x fastest in index order)

    @property
    def top_tier(self) -> str | None:
        """The highest tier that has switches (where other networks uplink), if any."""
        return next((t for t in ("core", "spine", "leaf") if self.switches.get(t)), None)


@dataclass(slots=True)
class Fabric:
    loaded: LoadedSpec
    racks: list[Rack] = field(default_factory=list)
    rack_by_name: dict[str, Rack] = field(default_factory=dict)
    devices: dict[str, Device] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    modules: list[Module] = field(default_factory=list)
    cables: list[Cable] = field(default_factory=list)
    networks: dict[str, NetworkTopology] = field(default_factory=dict)
    nvlink_domains: list[NvlinkDomain] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    duplicates: list[Device] = field(default_factory=list)  # devices whose name was taken
    memo: dict[str, object] = field(default_factory=dict)  # derived views, see derived()
    # the number each scalable unit is printed with, by its 0-based index (synth/nodes.py)
    su_labels: list[int] = field(default_factory=list)

    def derived(self, key: str, compute: Callable[[], T]) -> T:
        """A view derived from the finished design, computed once and shared by the emitters
        that need it (the summary, the BOM and the diagrams are each read by the report too)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return cast(T, self.memo[key])

    def add(self, device: Device) -> None:
        if device.name in self.devices:
            self.duplicates.append(device)
            return
        self.devices[device.name] = device

    @property
    def name(self) -> str:
        return self.loaded.spec.metadata.name

    @overload
    def su_label(self, su: int) -> int: ...
    @overload
    def su_label(self, su: int | None) -> int | None: ...
    def su_label(self, su: int | None) -> int | None:
        """The number a scalable unit is printed with. The IR's unit index is 0-based and
        contiguous per node group (the fat-tree arithmetic needs it so); the printed number is
        index + 1, except that a build keeping an earlier one (`build --keep`) keeps each
        unit's earlier number, so a later group's units keep theirs when an earlier one grows."""
        return self.su_labels[su] if su is not None else None

    def rack_of(self, device: str) -> Rack | None:
        rack = self.devices[device].rack
        return self.rack_by_name[rack] if rack is not None else None

    def links_of(self, network: str) -> Iterator[Link]:
        """The links of one network, in link order. For the passes after the last link is
        added (addressing, the derived views, the checks, the emitters): the index is built on
        first use."""
        return iter(self.links_by_network().get(network, []))

    def links_by_network(self) -> dict[str, list[Link]]:
        """Every network that has links (in order of its first link) -> its links, in link
        order; built once, like links_of's index (it is that index)."""
        return self.derived("links_by_network", self._links_by_network)

    def _links_by_network(self) -> dict[str, list[Link]]:
        index: dict[str, list[Link]] = {}
        for link in self.links:
            index.setdefault(link.network, []).append(link)
        return index

    def link_counts(self, network: str) -> Counter[str]:
        return Counter(link.kind for link in self.links_of(network))

    def gpus(self) -> int:
        catalog = self.loaded.catalog.catalog
        return sum(
            catalog.nodes[d.model].gpus for d in self.devices.values() if d.kind in ("node", "tray")
        )
