"""Catalog stage: typed hardware data (nodes, switches, optics, cables, rack parts).

Consumes the YAML files under fabricc/catalog/data plus any user catalog files named in the spec;
produces a Catalog that synthesis reads: port layouts, GPU-to-port maps, speeds, cages, reach,
part numbers, power and height. Every entry names its source so that a reviewer can tell a
published fact from an assumption.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from fabricc import patterns
from fabricc.catalog.host_topology import BusId, HostTopology

Fabric = Literal["infiniband", "ethernet"]
Role = Literal["compute", "storage", "inband", "oob"]
Media = Literal["copper", "mmf", "smf", "cat6"]
# Plug/cage forms. Switches take finned-top OSFP ("osfp"); ConnectX HCAs and DGX CPU trays take
# flat-top OSFP ("osfp-rhs", riding heat sink). The QSFP family shares one mechanical outline, so
# a cage takes the plugs of the older, narrower members its lanes can run:
#   * QSFP112 (4 x 100G lanes) takes QSFP56 and QSFP28 plugs;
#   * QSFP-DD (8 lanes, 400G at 50G PAM4) takes QSFP56 and QSFP28 plugs ("backwards compatible
#     with QSFP28 and QSFP56 modules", QSFP-DD MSA hardware specification, qsfp-dd.com);
#   * QSFP-DD800 (8 x 100G lanes) takes QSFP-DD, QSFP112, QSFP56 and QSFP28 plugs, and
#     QSFP-DD1600 (8 x 200G) takes those and QSFP-DD800 (QSFP-DD MSA hardware specification
#     rev. 7: QSFP-DD800/1600 keep backward compatibility with QSFP-DD and QSFP modules);
#   * OSFP-XD (16 lanes, OSFP MSA) is a wider cage of its own: it takes only OSFP-XD plugs;
#   * SFP56 takes SFP28 plugs and SFP112 takes SFP56 and SFP28 (SFF-8402 / SFP-DD MSA family).
Form = Literal[
    "osfp",
    "osfp-rhs",
    "osfp-xd",
    "qsfp-dd1600",
    "qsfp-dd800",
    "qsfp-dd",
    "qsfp112",
    "qsfp56",
    "qsfp28",
    "sfp112",
    "sfp56",
    "sfp28",
    "rj45",
]

BOTH_FABRICS: tuple[Fabric, ...] = ("infiniband", "ethernet")

FORM_ACCEPTS: dict[str, frozenset[str]] = {
    "osfp": frozenset({"osfp"}),
    "osfp-rhs": frozenset({"osfp-rhs"}),
    "osfp-xd": frozenset({"osfp-xd"}),
    "qsfp-dd1600": frozenset(
        {"qsfp-dd1600", "qsfp-dd800", "qsfp-dd", "qsfp112", "qsfp56", "qsfp28"}
    ),
    "qsfp-dd800": frozenset({"qsfp-dd800", "qsfp-dd", "qsfp112", "qsfp56", "qsfp28"}),
    "qsfp-dd": frozenset({"qsfp-dd", "qsfp56", "qsfp28"}),
    "qsfp112": frozenset({"qsfp112", "qsfp56", "qsfp28"}),
    "qsfp56": frozenset({"qsfp56", "qsfp28"}),
    "qsfp28": frozenset({"qsfp28"}),
    "sfp112": frozenset({"sfp112", "sfp56", "sfp28"}),
    "sfp56": frozenset({"sfp56", "sfp28"}),
    "sfp28": frozenset({"sfp28"}),
    "rj45": frozenset({"rj45"}),
}

# Forms of one plug outline, which differ only in their lane rate: a newer plug of the outline
# fits an older cage of it mechanically, and runs there where the cable runs the cage's lane
# rate (CableModel.also_runs). QSFP28, QSFP56 and QSFP112 share the QSFP outline (SFF-8661),
# SFP28, SFP56 and SFP112 the SFP outline (SFF-8402), the QSFP-DD generations the QSFP-DD
# outline (QSFP-DD MSA hardware specification); a double-density plug never fits a QSFP cage.
OUTLINE: dict[str, str] = {
    "qsfp28": "qsfp",
    "qsfp56": "qsfp",
    "qsfp112": "qsfp",
    "qsfp-dd": "qsfp-dd",
    "qsfp-dd800": "qsfp-dd",
    "qsfp-dd1600": "qsfp-dd",
    "sfp28": "sfp",
    "sfp56": "sfp",
    "sfp112": "sfp",
}

Key = Annotated[str, Field(pattern=patterns.KEY)]
PartNumber = Annotated[
    str, Field(pattern=patterns.PART_NUMBER, description="orderable part number")
]
PortName = Annotated[str, Field(pattern=patterns.PORT_NAME)]
Token = Annotated[str, Field(pattern=patterns.TOKEN)]
Text = Annotated[str, Field(pattern=patterns.TEXT)]

# Every number of the catalog is bounded, as the spec's are: a site catalog is input like a spec,
# and an unbounded value ends in a division by zero or an overflow far from its line. The bounds
# are wide (several times today's largest part) but finite.
Speed = Annotated[int, Field(ge=1, le=6400, description="Gb/s")]
LaneSpeed = Annotated[int, Field(ge=1, le=800, description="electrical lane rate in Gb/s")]
Breakout = Annotated[int, Field(ge=1, le=8, description="ports one cage or port splits into")]
Watts = Annotated[int, Field(ge=0, le=500_000, description="W")]
Length = Annotated[float, Field(gt=0, le=100_000, description="m")]

Source = Annotated[
    str,
    Field(
        min_length=1,
        pattern=patterns.TEXT,
        description="where the data comes from (document and table), or 'assumed: ...'",
    ),
]


class CatalogModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class LegDevice(CatalogModel):
    """The host-side names of one leg of a port split across planes."""

    rdma_device: str = Field(pattern=patterns.RDMA_DEVICE, description="ibverbs device of the leg")
    netdev: str | None = Field(
        None, pattern=patterns.NETDEV, description="Linux interface name (at most 15 characters)"
    )
    pci: BusId | None = Field(None, description="PCI address of the leg's function (lspci -D)")


class PortCable(CatalogModel):
    """The cable a vendor's reference design orders for a node port (RA-11333 Table 8: the
    200 Gb/s QSFP56 AOC for the DGX H100 in-band ports). The cabling pass takes it for a link
    from this port where it joins both cages at the link's speed and an orderable length
    reaches the run, in a media the network allows; elsewhere media by reach as for any port."""

    family: Key = Field(description="catalog cable key, e.g. mfs1s00-h")
    source: Source


class PortSpec(CatalogModel):
    name: PortName = Field(description="port label as printed on the chassis")
    cage: PortName = Field(description="cage the port sits in; one module per cage")
    form: Form
    speeds: list[Speed] = Field(min_length=1, description="supported speeds in Gb/s, highest first")
    role: Role
    protocols: list[Fabric] = Field(default_factory=lambda: list(BOTH_FABRICS))
    breakouts: list[Breakout] = Field(
        default_factory=lambda: [1],
        description="ways the port may be split (2: one 800G port as 2x400G across two planes)",
    )
    gpu: int | None = Field(None, ge=0, le=1023, description="GPU (rail) this NIC port serves")
    rdma_device: str | None = Field(
        None, pattern=patterns.RDMA_DEVICE, description="ibverbs device name, e.g. mlx5_0"
    )
    netdev: str | None = Field(
        None, pattern=patterns.NETDEV, description="Linux interface name (at most 15 characters)"
    )
    pci: BusId | None = Field(
        None,
        description="PCI address of the port's function (lspci -D), where the vendor's table "
        "gives it: host scripts and udev rules find the port by it",
    )
    leg_devices: list[LegDevice] = Field(
        default_factory=list,
        description="ibverbs device and netdev of each leg when the port is split across planes "
        "(a ConnectX-8 run as 2x400G shows one device per plane); empty: the legs share the "
        "port's own names",
    )
    cable: PortCable | None = Field(
        None,
        description="the cable the vendor's reference design orders for this port, taken where "
        "it fits the link (form, speed, reach, the network's medium); unset: media by reach",
    )

    @model_validator(mode="after")
    def _speeds_descending(self) -> PortSpec:
        if sorted(self.speeds, reverse=True) != self.speeds:
            raise ValueError("speeds must be listed highest first")
        if self.leg_devices and len(self.leg_devices) != max(self.breakouts):
            raise ValueError("give one entry in 'leg_devices' per leg of the widest breakout")
        return self

    def leg(self, port: str) -> LegDevice | None:
        """The device of one leg of this port (`NIC0/2`), if the catalog names it."""
        leg = port.removeprefix(self.name + "/")
        if leg == port or not leg.isdigit() or not 1 <= int(leg) <= len(self.leg_devices):
            return None
        return self.leg_devices[int(leg) - 1]


Inlet = Literal["c14", "c20", "busbar"]


class Physical(CatalogModel):
    """Power supplies and weight of one device: what the power BOM and the floor check read."""

    psus: int = Field(ge=0, le=16, description="power supplies, each with its own cord")
    inlet: Inlet = Field(
        description="PSU inlet: c14 (C13-C14 cord to a C13 outlet), c20 (C19-C20 cord to a C19 "
        "outlet), busbar (fed by the rack busbar, no cord)"
    )
    weight_kg: float = Field(ge=0, le=5000)
    redundant_psus: int | None = Field(
        None,
        ge=1,
        le=8,
        description="supplies that may fail while the system keeps running (DGX H100: 2 of 6); "
        "sets how many PDUs a rack spreads them over; unset: not modelled",
    )
    liquid_share: float = Field(
        0,
        ge=0,
        le=1,
        description="share of the device's heat its cold plates carry to liquid (the rest goes "
        "to the room's air); 0: air-cooled",
    )
    source: Source


OUTLET_OF = {"c14": "c13", "c20": "c19"}  # PSU inlet -> the PDU outlet its cord plugs into
FEEDS = ("A", "B", "C")  # a rack's power feeds (site.rack.feeds of them): pdu1 on A, pdu2 on B, ...


def assumed_physical(power_w: int) -> Physical:
    """What a catalog entry without `physical` is taken to have: 2 PSUs (1+1), C20 inlets above
    2 kW (a C14 inlet carries 10 A, 2.3 kW at 230 V), no known weight."""
    return Physical(
        psus=2,
        inlet="c20" if power_w > 2000 else "c14",
        weight_kg=0,
        source="assumed: 2 PSUs, inlet by power; weight unknown",
    )


class GpuSpec(CatalogModel):
    model: Token
    sm: int = Field(ge=10, le=200, description="compute capability major*10+minor")
    memory_gb: int = Field(ge=1, le=100_000)
    nvlink_links: int = Field(ge=0, le=1000, description="NVLink links per GPU")
    nvlink_generation: int = Field(ge=1, le=10)
    nvlink_gbs: float | None = Field(
        None,
        ge=0,
        le=1_000_000,
        description="NVLink bandwidth per GPU in GB/s, both directions together; unset on a GPU "
        "with NVLink links: unknown (a named warning, and no all-reduce estimate)",
    )
    fp16_dense_tflops: float | None = Field(
        None, ge=0, le=1_000_000, description="FP16/BF16 tensor TFLOPS per GPU without sparsity"
    )
    fp8_dense_tflops: float | None = Field(
        None, ge=0, le=1_000_000, description="FP8 tensor TFLOPS per GPU without sparsity"
    )
    figures_source: str | None = Field(
        None,
        pattern=patterns.TEXT,
        description="where the bandwidth and TFLOPS figures come from, or 'assumed: ...'",
    )

    def missing_figures(self) -> list[str]:
        """The analysis figures this entry lacks (never taken as 0): NVLink bandwidth on a GPU
        with NVLink links, dense FP16 and FP8 TFLOPS."""
        missing = []
        if self.nvlink_links and self.nvlink_gbs is None:
            missing.append("nvlink_gbs")
        if self.fp16_dense_tflops is None:
            missing.append("fp16_dense_tflops")
        if self.fp8_dense_tflops is None:
            missing.append("fp8_dense_tflops")
        return missing


class NvlinkSpec(CatalogModel):
    scope: Literal["node", "rack"] = Field(description="NVLink domain: one node or a whole rack")
    switch_chips: int = Field(ge=0, le=1024, description="NVSwitch chips in the domain")
    switch_trays: int = Field(0, ge=0, le=1024, description="NVLink switch trays (rack scope)")
    gpus: int = Field(ge=1, le=100_000, description="GPUs in one domain")


class RackMember(CatalogModel):
    role: Literal["compute-tray", "nvlink-switch-tray", "power-shelf", "mgmt-switch", "other"]
    model: Key = Field(description="catalog node model (trays) or part (power shelves)")
    u: list[Annotated[int, Field(ge=1, le=60)]] = Field(
        min_length=1, description="bottom rack unit of each member"
    )
    hostname_suffix: str = Field(
        "-{role_short}{n:02d}",
        pattern=patterns.RACK_MEMBER_SUFFIX,
        max_length=32,
        description="appended to the rack name; fields {role_short} and {n} (e.g. {n:02d})",
    )


class RackScaleSpec(CatalogModel):
    rack_part: Key = Field(description="catalog part of the rack itself")
    height_u: int = Field(ge=10, le=60)
    members: list[RackMember] = Field(min_length=1)
    oob_switches: int = Field(
        0,
        ge=0,
        le=8,
        description="management ToR switches in the system's own rack, serving that rack only "
        "(GB200 NVL72: 2); 0: the rack shares access switches like any other",
    )

    @property
    def compute_trays(self) -> list[RackMember]:
        """The members that are compute trays, in catalog order (GB200 NVL72: one, 18 units)."""
        return [m for m in self.members if m.role == "compute-tray"]

    @property
    def tray_count(self) -> int:
        """Compute trays in one system: the rack units its compute-tray members fill."""
        return sum(len(m.u) for m in self.compute_trays)


class NodeModel(CatalogModel):
    kind: Literal[
        "gpu-node", "compute-tray", "rack-system", "nvlink-switch", "appliance", "server", "storage"
    ]
    description: Text
    vendor: Token = "NVIDIA"
    part_number: PartNumber
    source: Source
    height_u: int = Field(ge=0, le=60)
    power_w: Watts = Field(description="maximum power draw")
    gpus: int = Field(0, ge=0, le=1024)
    gpu: GpuSpec | None = None
    nvlink: NvlinkSpec | None = None
    ports: list[PortSpec] = Field(default_factory=list)
    rack_scale: RackScaleSpec | None = None
    physical: Physical | None = Field(None, description="PSUs, inlet and weight")

    @property
    def power_feeds(self) -> int:
        """PDUs the supplies must be spread over so that losing one PDU loses no more supplies
        than are redundant (4+2 supplies: 3 PDUs); 1 when redundancy is not modelled."""
        physical = self.physical
        if physical is None or physical.redundant_psus is None or physical.psus == 0:
            return 1
        return -(-physical.psus // physical.redundant_psus)

    @model_validator(mode="after")
    def _consistent(self) -> NodeModel:
        names = [p.name for p in self.ports]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"duplicate port names: {', '.join(dupes)}")
        if self.gpus and self.gpu is None and self.rack_scale is None:
            raise ValueError("a model with gpus needs a 'gpu' entry")
        if self.kind == "rack-system" and self.rack_scale is None:
            raise ValueError("a rack-system needs 'rack_scale'")
        devices = [
            device
            for p in self.ports
            for device in (
                [leg.rdma_device for leg in p.leg_devices] if p.leg_devices else [p.rdma_device]
            )
            if device is not None
        ]
        taken = sorted({d for d in devices if devices.count(d) > 1})
        if taken:
            raise ValueError(f"RDMA devices named twice: {', '.join(taken)}")
        addresses = [
            a for p in self.ports for a in (p.pci, *(leg.pci for leg in p.leg_devices)) if a
        ]
        taken = sorted({a for a in addresses if addresses.count(a) > 1})
        if taken:
            raise ValueError(f"ports share the PCI addresses {', '.join(taken)}")
        for port in self.ports:
            if port.gpu is not None and port.gpu >= self.gpus:
                raise ValueError(
                    f"port {port.name} serves GPU {port.gpu}; the model has {self.gpus} GPUs "
                    f"(0 to {self.gpus - 1})"
                )
        if self.kind != "rack-system" and (self.height_u == 0 or self.power_w == 0):
            raise ValueError(
                "height_u and power_w must be at least 1 (only a rack-system, whose members "
                "carry them, has 0)"
            )
        return self

    def port_pci(self, port: str) -> str | None:
        """PCI address of a cabled port's function (a leg's own where the catalog gives it),
        None where the catalog does not give one."""
        for spec in self.ports:
            if spec.name == port:
                return spec.pci
            if port.startswith(spec.name + "/"):
                if not spec.leg_devices:  # the legs share the port's function
                    return spec.pci
                leg = spec.leg(port)
                return leg.pci if leg is not None else None
        return None

    def port_devices(self, port: str) -> tuple[str | None, str | None]:
        """(RDMA device, netdev) of a cabled port: a port of the catalog, or one leg of a split
        port (`NIC0/2`), which is its own device where the catalog names leg devices."""
        for spec in self.ports:
            if spec.name == port:
                return spec.rdma_device, spec.netdev
            if port.startswith(spec.name + "/"):
                leg = spec.leg(port)
                if leg is not None:
                    return leg.rdma_device, leg.netdev
                return spec.rdma_device, spec.netdev
        return None, None


class PortGroup(CatalogModel):
    count: int = Field(ge=1, le=512, description="number of cages in the group")
    form: Form
    cage_speed: Speed = Field(description="speed of one cage in Gb/s")
    lane_speed: LaneSpeed = Field(
        100, description="electrical lane rate in Gb/s (NDR and 800GbE: 100, XDR: 200)"
    )
    breakouts: list[Breakout] = Field(
        default_factory=lambda: [1],
        description="allowed ports per cage (a cage of 800G with 2 ports gives 2x400G)",
    )
    use: Literal["any", "uplink"] = "any"


class OsSupport(CatalogModel):
    """One network operating system a switch model runs, with its platform identifier."""

    os: Literal["cumulus", "sonic", "eos"]
    platform: Token = Field(
        description="the OS's name for the hardware: Cumulus Linux HCL platform, SONiC "
        "sonic-buildimage device/<vendor>/<platform> folder, Arista EOS model"
    )
    skus: list[Token] = Field(
        default_factory=list,
        description="os: sonic: the platform's SKUs (HWSKU folders) this switch may run; empty: "
        "every SKU fabricc knows for the platform, chosen by the port plan",
    )
    source: Source


class SwitchModel(CatalogModel):
    description: Text
    vendor: Token = "NVIDIA"
    part_number: PartNumber
    source: Source
    fabric: Fabric
    asic: Token
    height_u: int = Field(ge=1, le=20)
    power_w: Watts = Field(description="maximum power without optical modules")
    port_groups: list[PortGroup] = Field(min_length=1)
    mgmt_ports: list[PortSpec] = Field(default_factory=list)
    adaptive_routing: bool = Field(
        False,
        description="the ASIC does adaptive routing (Spectrum-X RoCE; InfiniBand AR set by the SM)",
    )
    adaptive_routing_speeds: list[Speed] = Field(
        default_factory=list,
        description="port speeds in Gb/s at which the switch routes adaptively (Spectrum-4: 400 "
        "and 200, not 800); empty: every speed of its ports",
    )
    sharp: bool = Field(False, description="SHARP in-network aggregation (InfiniBand)")
    physical: Physical | None = Field(None, description="PSUs, inlet and weight")
    operating_systems: list[OsSupport] = Field(
        default_factory=list,
        description="network operating systems the model runs (Ethernet switches); a network's "
        "os must be one of them",
    )

    @property
    def cages(self) -> int:
        return sum(g.count for g in self.port_groups)

    def os_support(self, os: str) -> OsSupport | None:
        """The model's entry for network operating system `os`, if it runs it."""
        return next((entry for entry in self.operating_systems if entry.os == os), None)

    def runs(self) -> tuple[str, ...]:
        """The network operating systems fabricc may write configs of for this model: its
        operating_systems; for an NVIDIA Spectrum switch of a site catalog written before the
        field (none listed), Cumulus Linux, which NVIDIA's hardware compatibility list gives for
        its Spectrum switches (SONiC needs the platform named)."""
        if self.operating_systems:
            return tuple(dict.fromkeys(entry.os for entry in self.operating_systems))
        if (
            self.fabric == "ethernet"
            and self.vendor == "NVIDIA"
            and self.asic.startswith("Spectrum")
        ):
            return ("cumulus",)
        return ()

    def routes_adaptively_at(self, speed: int) -> bool:
        """Adaptive routing works on a port of this speed."""
        return self.adaptive_routing and (
            not self.adaptive_routing_speeds or speed in self.adaptive_routing_speeds
        )

    def group_of_cage(self, cage: int) -> PortGroup | None:
        """The port group holding front-panel cage `cage` (numbered from 1 across groups)."""
        first = 0
        for group in self.port_groups:
            if first < cage <= first + group.count:
                return group
            first += group.count
        return None


class TransceiverModel(CatalogModel):
    description: Text
    vendor: Token | None = Field(
        None,
        description="the module's maker; built-in entries without one are NVIDIA LinkX parts "
        "(optics.yaml: each names its LinkX product specification); a switch prefers its own "
        "vendor's modules",
    )
    source: Source
    form: Form
    ports: int = Field(ge=1, le=2, description="links carried (2 = twin-port module)")
    speed: Speed = Field(description="Gb/s per port")
    connectors: int | None = Field(
        None, ge=1, le=4, description="fiber connectors on the module; default: one per port"
    )
    lane_speed: LaneSpeed = Field(
        100, description="electrical lane rate in Gb/s; must match the switch"
    )
    # cat6: a 1000BASE-T module (RJ45) and the cage adapter it sits in, for a management port
    # cabled to a switch cage (synth/rootlinks.py); never chosen for a fabric link
    media: Literal["mmf", "smf", "cat6"]
    reach_m: Length
    connector: Token = Field(description="fiber connector per port, e.g. mpo-12-apc, lc-duplex")
    adapter: Form | None = Field(
        None, description="a cage adapter: the form of the module it holds (e.g. a QSA: sfp28)"
    )
    power_w: float = Field(ge=0, le=1000)
    protocols: list[Fabric] = Field(default_factory=lambda: list(BOTH_FABRICS))
    part_number: PartNumber | None = Field(
        None,
        description="NVIDIA ordering number (980-...) from the product specification's ordering "
        "information; the BOM orders by it, the catalog key (the legacy OPN) in its own column",
    )


def ordering_numbers(key: str, part_number: str | None) -> tuple[str, str]:
    """(part number, legacy OPN) of a catalog part: the vendor's ordering number where the
    catalog gives one, with the key (the legacy OPN) beside it; else the key alone."""
    if part_number is None or part_number == key:
        return key, ""
    return part_number, key


CableKind = Literal["dac", "acc", "aoc", "fiber", "patch"]
# Cables with their plugs on (no transceiver bought for them), in the order a run prefers them
# when several reach: passive copper, active copper, active optical (fiber with its optics built
# into the plugs, so its reach is its longest length; NVIDIA LinkX DAC, ACC and AOC product
# specifications: reach 2-3 m, 5 m, up to 100 m). catalog/media.py ranks cables by it.
DIRECT_KINDS: dict[str, int] = {"patch": 0, "dac": 0, "acc": 1, "aoc": 2}
KIND_MEDIA: dict[str, frozenset[str]] = {
    "dac": frozenset({"copper"}),
    "acc": frozenset({"copper"}),
    "aoc": frozenset({"mmf", "smf"}),
    "fiber": frozenset({"mmf", "smf"}),
    "patch": frozenset({"cat6", "copper"}),
}


class CableRate(CatalogModel):
    """A lower rate a cable also runs at, as a public source says (RA-11333 Table 8 orders the
    200 Gb/s QSFP56 AOC for DGX H100 ports cabled to the SN4600C's 100GbE QSFP28 ports). At such
    a rate a plug also fits the older, slower cages of its own outline (OUTLINE: a QSFP56 plug in a
    QSFP28 cage: one mechanical form, the plug's electronics at the cage's lane rate)."""

    speed: Speed = Field(description="Gb/s per leg at this rate")
    lane_speed: LaneSpeed = Field(description="electrical lane rate in Gb/s at this rate")
    source: Source


class CableModel(CatalogModel):
    description: Text
    source: Source
    media: Media
    kind: CableKind = Field(
        description="dac (passive copper), acc (active copper), aoc (active optical: fiber with "
        "its optics in the plugs), fiber (needs a transceiver at each end), patch (RJ45)"
    )
    a_form: Token = Field(description="plug form at the A end (for fiber: the fiber connector)")
    b_form: Token = Field(description="plug form of each B leg")
    legs: int = Field(1, ge=1, le=8, description="B ends (2 = 1:2 splitter)")
    a_ports: int = Field(1, ge=1, le=8, description="links carried at the A end")
    speed: Speed | None = Field(None, description="Gb/s per leg (copper only)")
    lane_speed: LaneSpeed = Field(100, description="electrical lane rate in Gb/s (copper only)")
    lengths: dict[Length, PartNumber] = Field(
        min_length=1, description="orderable length in m -> part number (legacy OPN)"
    )
    ordering: dict[Length, PartNumber] = Field(
        default_factory=dict,
        description="orderable length in m -> NVIDIA ordering number (980-...), where the "
        "product specification's ordering information gives it; the BOM orders by it",
    )
    also_runs: list[CableRate] = Field(
        default_factory=list,
        description="lower rates the cable also runs at, each with the public source that says "
        "so; at them its plugs also fit the slower cages of their outline (a QSFP56 AOC "
        "at 100GbE in a QSFP28 cage); empty: only its own speed",
    )

    @model_validator(mode="after")
    def _ordering_lengths(self) -> CableModel:
        extra = sorted(set(self.ordering) - set(self.lengths))
        if extra:
            raise ValueError(f"ordering numbers for lengths not in 'lengths': {extra}")
        return self

    @model_validator(mode="after")
    def _media_of_kind(self) -> CableModel:
        if self.media not in KIND_MEDIA[self.kind]:
            allowed = " or ".join(sorted(KIND_MEDIA[self.kind]))
            raise ValueError(f"a {self.kind} cable has media {allowed}, not {self.media}")
        return self

    @model_validator(mode="after")
    def _lower_rates(self) -> CableModel:
        for rate in self.also_runs:
            if self.speed is None or rate.speed >= self.speed:
                raise ValueError(
                    f"also_runs lists {rate.speed}G: a lower rate than the cable's speed "
                    f"({self.speed}G)"
                )
            if rate.lane_speed > self.lane_speed:
                raise ValueError(
                    f"also_runs lists {rate.lane_speed}G lanes, faster than the cable's "
                    f"{self.lane_speed}G"
                )
        return self

    @property
    def rates(self) -> list[tuple[int, int, bool]]:
        """(Gb/s per leg, lane rate, native) of every rate the cable runs at: its own first
        (native), then the lower ones the catalog lists (also_runs)."""
        own = [(self.speed or 0, self.lane_speed, True)]
        return own + [(r.speed, r.lane_speed, False) for r in self.also_runs]

    @property
    def reach_m(self) -> float:
        return max(self.lengths)

    @property
    def direct(self) -> bool:
        """Plugs on both ends (copper, AOC, patch cord): no transceiver is bought for it."""
        return self.kind in DIRECT_KINDS


class ShelfInput(CatalogModel):
    """The facility circuit that feeds one power shelf: a whip from the busway or floor PDU
    ending in the shelf's plug, behind a breaker of its own."""

    plug: Text = Field(description="plug type of the whip, e.g. IEC 60309 3P+N+E 63 A")
    phases: Literal[1, 3]
    voltage_v: int = Field(ge=100, le=600, description="line-to-line voltage of the circuit")
    breaker_a: int = Field(ge=1, le=400, description="rating of the circuit breaker (A)")
    continuous: float = Field(
        0.8, gt=0, le=1, description="share of the breaker rating a continuous load may draw"
    )
    source: Source

    @property
    def capacity_w(self) -> float:
        """What the circuit carries continuously (unity power factor)."""
        volts = self.voltage_v * (3**0.5 if self.phases == 3 else 1)
        return volts * self.breaker_a * self.continuous


class PartModel(CatalogModel):
    category: Literal["rack", "pdu", "power-shelf", "power-cord", "cdu", "cooling", "other"]
    description: Text
    part_number: PartNumber
    source: Source
    height_u: int = Field(0, ge=0, le=60)
    power_w: Watts = 0
    weight_kg: float = Field(0, ge=0, le=5000, description="empty weight (racks, PDUs)")
    width_in: Annotated[Literal[10, 19, 21, 23], BeforeValidator(patterns.exact_literal)] = Field(
        19,
        description="racks: width between the mounting rails in inches (EIA-310 19-inch unless "
        "the part says otherwise; 21 is OCP Open Rack); NetBox's rack width choices",
    )
    outlets_c13: int = Field(0, ge=0, le=96, description="PDU: C13 outlets")
    outlets_c19: int = Field(0, ge=0, le=96, description="PDU: C19 outlets")
    rating_w: Watts = Field(0, description="PDU: power it can deliver")
    cooling_w: int = Field(
        0,
        ge=0,
        le=20_000_000,
        description="CDU: heat it moves from the rack loop to facility water (W)",
    )
    psus: int = Field(0, ge=0, le=16, description="power shelf: power supplies it holds")
    psu_w: Watts = Field(0, description="power shelf: rating of each power supply (W)")
    input: ShelfInput | None = Field(
        None, description="power shelf: the facility circuit each shelf is wired to"
    )
    per: Literal["liquid-rack", "liquid-tray", "cdu"] | None = Field(
        None,
        description="cooling parts: what each is ordered for - every liquid-cooled rack, every "
        "liquid-cooled tray (a device with a liquid_share) or every CDU",
    )
    per_quantity: int = Field(
        1, ge=0, le=100, description="cooling parts: how many for each rack, tray or CDU"
    )

    @property
    def shelf_w(self) -> int:
        """A power shelf's DC output: its supplies times their rating."""
        return self.psus * self.psu_w

    @model_validator(mode="after")
    def _sized(self) -> PartModel:
        if self.category == "cdu" and not self.cooling_w:
            raise ValueError("a cdu part needs cooling_w (its capacity in W, from its datasheet)")
        if (self.category == "cooling") != (self.per is not None):
            raise ValueError(
                "a cooling part needs `per` (liquid-rack, liquid-tray or cdu), and only it"
            )
        return self


class SwitchDefaults(CatalogModel):
    infiniband: Key
    ethernet: dict[Role, Key]


class Catalog(CatalogModel):
    nodes: dict[Key, NodeModel] = Field(default_factory=dict)
    switches: dict[Key, SwitchModel] = Field(default_factory=dict)
    transceivers: dict[Key, TransceiverModel] = Field(default_factory=dict)
    cables: dict[Key, CableModel] = Field(default_factory=dict)
    parts: dict[Key, PartModel] = Field(default_factory=dict)
    host_topologies: dict[Key, HostTopology] = Field(default_factory=dict)
    default_switches: SwitchDefaults | None = None

    def compute_tray(self, node: NodeModel) -> tuple[str, NodeModel] | None:
        """A rack-scale system's compute tray, the model its GPUs and network ports are on (its
        first compute-tray member): the tray's key and model; None for a node that is not a rack
        system, or a system whose tray the catalog lacks."""
        if node.rack_scale is None:
            return None
        trays = node.rack_scale.compute_trays
        if not trays or trays[0].model not in self.nodes:
            return None
        return trays[0].model, self.nodes[trays[0].model]


def physical_of(catalog: Catalog, kind: str, model: str) -> Physical | None:
    """PSUs, inlet and weight of a device of `kind` (switch, node, tray, ...) and catalog model:
    the entry's own, or what one without is taken to have; None for PDUs and power shelves
    (wired to the feed)."""
    if kind in ("pdu", "power-shelf"):
        return None
    if kind == "switch":
        switch = catalog.switches[model]
        return switch.physical or assumed_physical(switch.power_w)
    node = catalog.nodes[model]
    return node.physical or assumed_physical(node.power_w)


def switch_key(catalog: Catalog, switch: SwitchModel) -> str:
    """The catalog key of a switch model: what a message names (the spec's word for it, not a
    part number the user never wrote)."""
    return next(key for key, entry in catalog.switches.items() if entry is switch)


def rack_system_power_w(catalog: Catalog, node: NodeModel) -> int:
    """What a rack-scale system draws: its members (trays, switch trays, shelves) together."""
    if node.rack_scale is None:
        return node.power_w
    total = 0
    for member in node.rack_scale.members:
        entry = catalog.nodes.get(member.model) or catalog.parts.get(member.model)
        total += len(member.u) * (entry.power_w if entry is not None else 0)
    return total
