"""Load stage, part 2: the spec language as pydantic v2 models.

Consumes the plain data from yamlsource; produces a validated, immutable Spec. Only shape, types
and ranges are checked here; everything that needs the hardware catalog (models exist, ports fit,
speeds match) is checked in fabricc.spec.semantics, still before synthesis.
YAML keys equal the field names; every field carries a description that feeds the JSON Schema
(editor completion) and the spec reference in docs/reference/spec.md.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

from fabricc import patterns

Name = Annotated[
    str,
    Field(
        pattern=patterns.NAME,
        description="lower-case name: letters, digits and '-', starting with a letter",
    ),
]
Ratio = Annotated[
    str,
    Field(
        pattern=patterns.RATIO,
        description="down:up bandwidth ratio at the leaf, e.g. '1:1' (non-blocking) or '2:1'",
    ),
]
YamlFile = Annotated[
    str, Field(pattern=patterns.YAML_FILE, description="path of a .yaml file, relative to the spec")
]
HostnamePattern = Annotated[
    str,
    Field(
        min_length=1,
        max_length=63,
        description="hostname with fields: {group}, {network}, {role}, {n} (1-based index), "
        "{i} (0-based), {su}, {rail}, {plane}, {pod} (1-based where they apply); index fields "
        "take a zero-padded width, e.g. {n:03d}; other text: letters, digits and '-'",
    ),
]

EOS_MAX_MTU = 9214  # EOS User Manual, "mtu (Interfaces)": a routed port's range 68-9214
CUMULUS_RELEASE = "5.18"  # the newest Cumulus Linux release qualified for Spectrum-X (5.19's
# What's New page: "currently only qualified for non-Spectrum-X")
RELAY_AGENT_RELEASE = (5, 7)  # the first release with the DHCP relay's option 82 agent in NVUE


class SpecModel(BaseModel):
    # strict: no lax coercion ("yes" is not a boolean, "4" is not an integer) - YAML already typed it.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


# Address blocks a pool must not touch: they are not host addresses anywhere (RFC 6890, the IANA
# IPv4 and IPv6 Special-Purpose Address Registries: "this network", loopback, link-local,
# multicast, the reserved 240/4 and the limited broadcast).
_IPV4_SPECIAL = {
    "0.0.0.0/8": "'this network' (RFC 6890)",
    "127.0.0.0/8": "loopback (RFC 6890)",
    "169.254.0.0/16": "link-local (RFC 3927)",
    "224.0.0.0/4": "multicast (RFC 5771)",
    "240.0.0.0/4": "reserved (RFC 1112)",
}
_IPV6_SPECIAL = {
    "::/128": "the unspecified address (RFC 4291)",
    "::1/128": "loopback (RFC 4291)",
    "fe80::/10": "link-local (RFC 4291)",
    "ff00::/8": "multicast (RFC 4291)",
}
MIN_PREFIX_V4 = 8  # a pool wider than a /8 is a typo, not a design
MIN_PREFIX_V6 = 32


def _usable_pool(
    network: ipaddress.IPv4Network | ipaddress.IPv6Network, special: dict[str, str], widest: int
) -> None:
    if network.prefixlen < widest:
        raise ValueError(f"pool {network} is wider than a /{widest}; give a smaller pool")
    for block, what in special.items():
        if network.overlaps(ipaddress.ip_network(block)):
            raise ValueError(f"pool {network} overlaps {block}, {what}")


class Metadata(SpecModel):
    name: Name = Field(description="design name; used in file names and hostnames")
    description: str = Field(
        "", pattern=patterns.TEXT, description="free text shown in the report (one line)"
    )


class RackSpec(SpecModel):
    model: str = Field("rack-48u", description="catalog rack model (sets the part number)")
    height_u: int = Field(48, ge=10, le=60, description="usable height in rack units")
    reserved_u: int = Field(
        0, ge=0, le=20, description="units kept free at the top of every rack (patch panels)"
    )
    power_kw: float = Field(
        40.0, gt=0, le=500, description="power budget per rack in kW (checked per rack)"
    )
    pdus: int = Field(
        2,
        ge=0,
        le=8,
        description="PDUs per rack, each on a feed of its own while the site has feeds; more "
        "where a node's power supplies need more to survive losing one PDU (DGX H100: 3) or "
        "where those left after losing one would not carry the rack's load",
    )
    pdu_model: str = Field("pdu-3ph-vertical", description="catalog PDU model")
    air_cooled_kw: float = Field(
        45.0,
        gt=0,
        le=500,
        description="most power of air-cooled gear one rack may hold (kW): switch racks are "
        "packed within it and a rack above it is warned about. Default assumed: just above the "
        "densest air-cooled rack of NVIDIA's DGX SuperPOD H100 reference design (RA-11333: 4 DGX "
        "H100 at 10.2 kW, 40.8 kW); set to the room's air cooling per rack",
    )
    cable_u: int = Field(
        2,
        ge=0,
        le=20,
        description="units kept free in every switch rack (central and network racks) for "
        "horizontal cable managers, on top of reserved_u. Default assumed: two 1U managers",
    )
    feeds: int = Field(
        3,
        ge=1,
        le=3,
        description="independent power feeds the room brings to a rack: a rack's PDUs take them "
        "in turn (pdu1 A, pdu2 B, pdu3 C), so a rack of two PDUs uses two. Default 3: a DGX "
        "H100's six supplies, 4 + 2 redundant (DGX H100 user guide), keep four only when its "
        "three PDUs (RA-11333 Table 7: 3 per DGX rack) are on three feeds; set 2 for an A/B "
        "room (the failover check then says which devices a lost feed leaves short)",
    )


class CoolingSpec(SpecModel):
    cdu_model: str = Field(
        "cdu-inrow-1350kw", description="catalog CDU (category cdu) serving each row's racks"
    )
    water_delta_t_c: float = Field(
        10.0,
        gt=0,
        le=30,
        description="facility water temperature rise across the CDUs (K): sets the water flow. "
        "Default assumed: 10 K, a common design rise for warm-water cooling (searched: NVIDIA's "
        "NVL72 RA, DGX GB200 user guide and DSX Exchange rack metadata name supply and return "
        "temperature signals, not a design rise); set per site",
    )


class SiteSpec(SpecModel):
    rows: int | None = Field(
        None, ge=1, le=1000, description="rows of racks; default: as many as the design needs"
    )
    racks_per_row: int = Field(16, ge=1, le=200, description="rack positions per row")
    rack: RackSpec = Field(default_factory=RackSpec, description="rack type used everywhere")
    cooling: CoolingSpec = Field(
        default_factory=CoolingSpec,
        description="liquid cooling: the CDUs of each row of liquid-cooled racks (N+1) and the "
        "facility water",
    )
    rack_width_m: float = Field(0.6, gt=0, le=2, description="rack width (pitch along a row)")
    row_pitch_m: float = Field(
        3.0, gt=0, le=50, description="distance between neighbouring rows, centre to centre"
    )
    tray_height_m: float = Field(
        0.5, ge=0, le=5, description="height of the overhead cable tray above the rack tops"
    )
    slack_m: float = Field(
        1.0, ge=0, le=20, description="service loop added to every cable that leaves its rack"
    )
    rack_depth_m: float = Field(
        1.2,
        gt=0,
        le=3,
        description="rack depth; with rack_width_m the footprint of the floor check",
    )
    floor_load_kg_per_m2: float | None = Field(
        None,
        gt=0,
        le=50_000,
        description="floor loading limit; every rack's weight over its footprint is checked "
        "against it (default: no check)",
    )
    network_racks: Literal["per-su", "central"] = Field(
        "per-su",
        description="'per-su': each scalable unit gets a network rack in the middle of its "
        "compute racks for the switches that serve it; 'central': all switches in central racks",
    )


class NodeGroupSpec(SpecModel):
    model: str = Field(description="catalog node model, e.g. dgx-h100, gb200-nvl72, ufm-3.1")
    count: int = Field(
        ge=1,
        le=1_000_000,
        description="number of nodes (for rack-scale models such as gb200-nvl72: racks)",
    )
    nodes_per_rack: int | None = Field(
        None,
        ge=1,
        le=64,
        description="nodes in one rack; default: as many as power and space allow",
    )
    su_size: int | None = Field(
        None,
        ge=1,
        le=100_000,
        description="nodes (rack-scale: racks) per scalable unit; default: what one rail leaf serves",
    )
    hostname: HostnamePattern = Field("{group}{n:03d}", description="hostname pattern")
    placement: Literal["auto", "own-racks", "central"] = Field(
        "auto",
        description="'own-racks': racks of this group alone (default for GPU nodes); 'central': "
        "management racks (default for appliances and storage)",
    )


class EndpointSpec(SpecModel):
    ports: list[str] | None = Field(
        None,
        min_length=1,
        description="node ports to connect, by name; default: every port whose role is the "
        "network's role",
    )
    reserved: bool = Field(
        False,
        description="connect to the ports the network reserves for appliances (reserved_slots)",
    )
    leaf_downlinks: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="give this group leaves of its own with this many endpoint ports each",
    )
    oversubscription: Ratio | None = Field(
        None, description="leaf oversubscription for this group's own leaves"
    )


class SwitchModels(SpecModel):
    leaf: str | None = Field(None, description="catalog switch model of the leaf tier")
    spine: str | None = Field(None, description="catalog switch model of the spine tier")
    core: str | None = Field(None, description="catalog switch model of the core tier")


class Hostnames(SpecModel):
    """Switch hostname patterns; {n} counts per series: tier, plane and leaf class (docs: Diff and verify)."""

    leaf: HostnamePattern = Field(
        "{network}-leaf{n:03d}",
        description="leaf hostname pattern ({group}: the leaf class's first node group; for "
        "out-of-band access switches the node group of their floor region, 'central' for "
        "central racks)",
    )
    spine: HostnamePattern = Field("{network}-spine{n:03d}", description="spine hostname pattern")
    core: HostnamePattern = Field("{network}-core{n:03d}", description="core hostname pattern")


class RoceQos(SpecModel):
    """Lossless RoCE settings; defaults are `nv set qos roce` (Cumulus Linux user guide: RoCE)."""

    roce_dscp: int = Field(26, ge=0, le=63, description="DSCP of RoCE data traffic")
    roce_priority: int = Field(3, ge=0, le=7, description="switch priority / PCP of RoCE traffic")
    cnp_dscp: int = Field(48, ge=0, le=63, description="DSCP of congestion notification packets")
    cnp_priority: int = Field(6, ge=0, le=7, description="priority of CNPs (strict queue)")
    pfc_priority: int = Field(3, ge=0, le=7, description="priority with PFC enabled (lossless)")
    ecn_min_kb: int = Field(150, ge=1, le=100_000, description="ECN marking minimum threshold")
    ecn_max_kb: int = Field(1500, ge=1, le=100_000, description="ECN marking maximum threshold")
    ecn_probability: int = Field(100, ge=1, le=100, description="ECN marking probability in %")
    roce_bandwidth_percent: int = Field(
        50, ge=1, le=99, description="DWRR share of the RoCE queue; the default queue gets the rest"
    )


class Partition(SpecModel):
    pkey: int = Field(ge=1, le=0x7FFE, description="partition key (15 bits, 0x7fff is default)")
    members: list[str] = Field(min_length=1, description="node groups in this partition")
    membership: Literal["full", "limited"] = Field("full", description="membership type")
    ipoib: bool = Field(False, description="enable IPoIB on this partition")


class SubnetManager(SpecModel):
    routing_engine: Literal[
        "auto", "ftree", "updn", "ar_updn", "minhop", "dor", "dfsssp", "nue", "torus-2QoS"
    ] = Field(
        "auto",
        description="OpenSM routing engine; 'auto' picks ftree for a symmetric fat-tree, updn "
        "for another tree, dfsssp for dragonfly-plus (dfp in NVIDIA's SM), nue on one VL for a torus "
        "(torus-2QoS is refused where NCCL runs: it needs per-path SLs) and updn for "
        "rail-only",
    )
    partitions: dict[Name, Partition] = Field(
        default_factory=dict, description="tenant partitions besides the default one"
    )
    guids: YamlFile | None = Field(
        None,
        description="YAML file (relative to the spec) mapping device names to node GUIDs; "
        "devices not listed get deterministic placeholders",
    )
    sm_nodes: list[str] = Field(
        default_factory=list,
        description="node groups that run the subnet manager (e.g. the UFM appliances); the "
        "first node is the master (sm_priority 15), the others standbys in order",
    )
    sharp: bool | None = Field(
        None,
        description="SHARP in-network aggregation on switches that support it (NVIDIA SM file "
        "sharp_enabled 2, UFM's SHARP Aggregation Manager, NCCL CollNet); default: on for "
        "compute networks, off for the others. SHARP offloads collective operations (MPI, "
        "NCCL) to the switches (NVIDIA SHARP Rev 3.6.0, Introduction; UFM Enterprise User "
        "Manual, Appendix - NVIDIA SHARP Integration), and collectives run on the compute "
        "fabric, so a storage fabric's Aggregation Manager would build trees no job uses; "
        "UFM leaves the Aggregation Manager off unless asked",
    )


class SpineLeafGroups(SpecModel):
    """The shape of a 3-tier fabric's spine-leaf groups; default: derived by the rules. Writing
    any key (here or in core_groups) makes the fabric 3-tier."""

    per_su: int | None = Field(
        None,
        ge=1,
        le=64,
        description="spine-leaf groups per scalable unit: a unit's leaves are split into this many "
        "groups, the leaves that serve the same nodes (every rail) together; implies 3 tiers",
    )
    leaves: int | None = Field(
        None, ge=1, le=1024, description="leaves per group, checked against the leaves it gets"
    )
    spines: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="spines per group; must divide the leaf uplinks, and the spine ports must "
        "suffice",
    )


class CoreGroups(SpecModel):
    """The shape of a 3-tier fabric's core groups (core group j joins spine j of every group)."""

    cores: int | None = Field(
        None,
        ge=1,
        le=1024,
        description="cores per core group; must divide the spine uplinks; default: the fewest "
        "that have enough ports",
    )


class SiteUplinks(SpecModel):
    """Border links from the in-band network's top tier to the site's own network (the data
    centre network): cabled and ordered up to the hand-off; the far end is the site's."""

    count: int = Field(
        0,
        ge=0,
        le=256,
        description="links to the site network, spread round-robin over the top-tier switches; "
        "default 0 (none: the public RA-11333 text does not give its in-band border links, "
        "so the site says how many - 4 x 100G for the DGX SuperPOD H100 example)",
    )
    speed: int | None = Field(
        None,
        ge=1,
        le=1600,
        description="Gb/s per link, a speed the top-tier switch runs; default: its cage speed",
    )
    medium: Literal["multimode", "singlemode"] = Field(
        "singlemode", description="fiber of the hand-off (site cross-connects are single-mode)"
    )
    transceiver: str | None = Field(
        None,
        min_length=1,
        description="catalog transceiver of the switch end (e.g. MMA1L30-CM, 100G CWDM4); "
        "default: the shortest-reach module of `medium` that fits the cage and reaches length_m",
    )
    length_m: float = Field(
        100.0,
        gt=0,
        le=10_000,
        description="fiber run from a top-tier switch to the hand-off (default 100 m, an "
        "assumption: set the site's distance to its meet-me room or patch panel)",
    )
    to: str = Field(
        "dc-network",
        pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",
        description="name of the site network in the cabling plan, the configs and NetBox",
    )
    handoff: str = Field(
        "site-handoff",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._/-]{0,62}$",
        description="where the links are handed to the site: the patch panel or meet-me room "
        "the cabling plan names as the far end's location",
    )
    peer_asn: int | None = Field(
        None,
        ge=1,
        le=4_294_967_294,
        description="the site network's BGP AS number; unset: the sessions take any AS but the "
        "switch's own (NVUE/FRR remote-as external) until the site pins it",
    )
    addresses: str | None = Field(
        None,
        description="IPv4 network the uplinks' /31s are taken from, link k the k-th (the site "
        "end the even address, the switch the odd one); unset: BGP unnumbered on the port "
        "(RFC 5549, which the site's router must then run)",
    )

    @field_validator("addresses")
    @classmethod
    def _p2p_pool(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            ipaddress.IPv4Network(value)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 network: {exc}") from None
        return value


Topology = Literal["fat-tree", "rail-only", "dragonfly-plus", "torus"]


# Leaf oversubscription of a network that does not set it, by role (see
# NetworkSpec.oversubscription for the sources).
ROLE_OVERSUBSCRIPTION = {"compute": "1:1", "storage": "1:1", "inband": "12:1", "oob": "1:1"}


class NetworkSpec(SpecModel):
    role: Literal["compute", "storage", "inband", "oob"] = Field(
        description="what the network carries; decides defaults and which node ports attach"
    )
    topology: Topology = Field(
        "fat-tree",
        description="switch topology: 'fat-tree' (leaves, spines, cores), 'rail-only' (one leaf "
        "per rail, no spines), 'dragonfly-plus' (groups of leaves and spines, spines joined "
        "all-to-all between groups) or 'torus' (switches on a 2D/3D torus with wrap-around links)",
    )
    groups: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="dragonfly-plus: number of groups (each a 2-tier fat-tree of leaves and "
        "spines); nodes are spread evenly over them",
    )
    global_links: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="dragonfly-plus: links between every pair of groups; default: as many as the "
        "spines' global ports allow",
    )
    dimensions: list[Annotated[int, Field(ge=1, le=64)]] | None = Field(
        None,
        min_length=2,
        max_length=3,
        description="torus: switches along each dimension, [x, y] or [x, y, z]; nodes are "
        "spread evenly over the switches",
    )
    fabric: Literal["infiniband", "ethernet"] | None = Field(
        None, description="link layer; default: ethernet for inband and oob, required otherwise"
    )
    tiers: Annotated[Literal["auto", 1, 2, 3], BeforeValidator(patterns.exact_literal)] = Field(
        "auto", description="switch tiers; 'auto' picks the fewest that fit the switch radix"
    )
    rail_optimized: bool | None = Field(
        None,
        description="NIC i of every node of a scalable unit goes to the rail-i leaf; default: "
        "true for compute networks",
    )
    planes: int = Field(
        1,
        ge=1,
        le=8,
        description="independent parallel fabrics; each node port is split across them",
    )
    oversubscription: Ratio | None = Field(
        None,
        description="leaf down:up bandwidth ratio. Default by role, from the published designs: "
        "compute 1:1 (RA-11333 Table 4: 256 leaf-spine cables per SU of 252 node and UFM "
        "ports), storage 1:1 (RA-11333 storage fabric: non-blocking toward the storage "
        "arrays), inband 12:1 (RA-11333 Table 8: 4 leaf-core links per in-band leaf of 48 host "
        "ports - management traffic needs reach, not bisection), oob 1:1 (a single tier)",
    )
    switches: SwitchModels = Field(
        default_factory=SwitchModels, description="switch model per tier; default from the catalog"
    )
    hostnames: Hostnames = Field(default_factory=Hostnames, description="switch hostname patterns")
    endpoints: dict[str, EndpointSpec] | None = Field(
        None,
        description="node groups attached, by group name; default: every group with ports of "
        "this network's role",
    )
    reserved_slots: int = Field(
        0,
        ge=0,
        le=64,
        description="node slots held in the first scalable unit for appliances (e.g. UFM); "
        "counts towards the unit's size",
    )
    spines_for_sus: int | None = Field(
        None,
        ge=1,
        description="size spines (and core) for this many scalable units so the fabric can grow "
        "without recabling; leaves and cables are only built for the units present (3 tiers: "
        "spine-leaf groups get the spines of a full group, the core room for the groups to come)",
    )
    spines: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="spines per plane (3 tiers: per spine-leaf group); default: the fewest that "
        "give every leaf the same number of links to every spine; must divide the leaf uplinks",
    )
    pod_sus: int | None = Field(
        None,
        ge=1,
        description="3-tier only: scalable units per spine-leaf group (top-of-rack leaf classes: "
        "leaves, or MLAG pairs, per group); default: as many as one spine can serve",
    )
    spine_leaf_groups: SpineLeafGroups = Field(
        default_factory=SpineLeafGroups,
        description="3 tiers: shape of the spine-leaf groups (e.g. RA-11338's 4 per unit of 8 "
        "leaves and 6 spines)",
    )
    core_groups: CoreGroups = Field(
        default_factory=CoreGroups, description="3 tiers: shape of the core groups"
    )
    dual_homed: bool = Field(
        False,
        description="leaves come in pairs and every node bonds one port to each leaf of its pair "
        "(MLAG); in-band management networks usually are",
    )
    spread_ports: bool = Field(
        False,
        description="routed Ethernet data networks (compute, storage): leaves come in pairs "
        "and each node's ports alternate between the two leaves of its pair, every port its "
        "own routed /31 (no MLAG, no peer link, no bond); one leaf failure leaves every node "
        "on the network (NVIDIA Enterprise RA, Networking Logical Architecture: two ports to "
        "two separate switches)",
    )
    uplink_to: str | None = Field(
        None,
        description="network whose top tier this network's top tier uplinks into (e.g. oob -> "
        "inband)",
    )
    uplinks_per_switch: int = Field(
        2, ge=0, le=64, description="uplinks of each top-tier switch when uplink_to is set"
    )
    site_uplinks: SiteUplinks = Field(
        default_factory=SiteUplinks,
        description="in-band network: border links from its top tier to the site's "
        "data-centre network (the out-of-band network reaches the site through in-band)",
    )
    max_racks_per_switch: int | None = Field(
        None,
        ge=1,
        le=64,
        description="single-tier (oob) networks: racks one access switch may serve; switches "
        "serve neighbouring racks only, so copper stays short",
    )
    leaf_placement: Literal["with_nodes", "central"] = Field(
        "with_nodes",
        description="where top-of-rack leaves that serve nodes of several units stand: beside "
        "the nodes they serve (a unit's network racks), or in the central racks as NVIDIA DGX "
        "SuperPOD RA-11333 keeps its in-band leaves in its management racks",
    )
    medium: Literal["auto", "copper", "multimode", "singlemode"] = Field(
        "auto",
        description="cable medium; 'auto' picks copper, multimode or single-mode fiber by reach",
    )
    os: Literal["cumulus", "sonic", "eos"] = Field(
        "cumulus",
        description="network OS of ethernet switches (config flavour): cumulus (NVUE "
        "startup.yaml), sonic (config_db.json + frr.conf) or eos (Arista EOS: the AVD "
        "structured config, and the startup-config pyavd renders from it with fabricc[eos])",
    )
    sonic_release: Literal["202311", "202405", "202411", "202505", "202511", "202605"] = Field(
        "202605",
        description="os: sonic: the SONiC release the config_db.json files are for; sets "
        "VERSIONS|DATABASE to that release's CONFIG_DB schema version (sonic-utilities "
        "scripts/db_migrator.py), so that `config reload` runs no migration",
    )
    qos: RoceQos = Field(default_factory=RoceQos, description="lossless RoCE settings (ethernet)")
    adaptive_routing: bool | None = Field(
        None,
        description="adaptive routing on switches whose model supports it (Spectrum-X NVUE, "
        "InfiniBand via the NVIDIA SM file), on the switch-to-switch links that run at a speed "
        "the models route adaptively at (catalog adaptive_routing_speeds), on Cumulus for "
        "Ethernet; the NCCL files follow (NCCL_NET_PLUGIN=spcx); default: on for compute "
        "networks",
    )
    subnet_manager: SubnetManager = Field(
        default_factory=SubnetManager, description="OpenSM settings (infiniband)"
    )
    vlan: int | None = Field(
        None, ge=1, le=4094, description="access VLAN of host ports (management networks)"
    )
    mtu: int = Field(9216, ge=1280, le=9216, description="interface MTU of ethernet ports")
    cumulus_release: str | None = Field(
        None,
        pattern=r"^5\.[0-9]{1,2}$",
        description="Cumulus Linux release the NVUE files (and the ZTP scripts' release check) "
        "are written for (5.15 renamed `enable on` to `state enabled` and an interface's `ip` to "
        "`ipv4`/`ipv6`); default: 5.18, the newest release qualified for Spectrum-X (Cumulus "
        "Linux 5.19 What's New: 'only qualified for non-Spectrum-X'), for every role: one "
        "release across the site's Cumulus switches. The management switches' DHCP relay "
        "needs 5.7 or later (option 82 'agent'); from 5.14 it is written as server groups "
        "(Cumulus Linux 5.14 'DHCP Relays')",
    )

    @field_validator("cumulus_release")
    @classmethod
    def _relay_release(cls, value: str | None, info: ValidationInfo) -> str | None:
        """Management networks relay DHCP with option 82, which NVUE has from 5.7 ('nv show
        service dhcp-relay <vrf-id> agent': introduced in Cumulus Linux 5.7.0)."""
        if value is None or info.data.get("role") not in ("inband", "oob"):
            return value
        major, minor = (int(part) for part in value.split("."))
        if (major, minor) < RELAY_AGENT_RELEASE:
            raise ValueError(
                f"the access switches of a management network relay DHCP with option 82, which "
                f"Cumulus Linux has from 5.7; {value} has no relay agent - use 5.7 or later "
                f"(default {CUMULUS_RELEASE})"
            )
        return value

    @property
    def port_mtu(self) -> int:
        """The MTU every data port of the network is set to, switch and host alike: mtu, capped
        at 9214 on Arista EOS (EOS User Manual, "mtu (Interfaces)": 68 to 9214 bytes on a
        routed port), so that no host sends a frame its leaf drops."""
        return min(self.mtu, EOS_MAX_MTU) if self.os == "eos" else self.mtu

    @property
    def nvue_release(self) -> str:
        """cumulus_release as given, else CUMULUS_RELEASE (one default for every role)."""
        return self.cumulus_release or CUMULUS_RELEASE

    @property
    def wants_sharp(self) -> bool:
        """subnet_manager.sharp as given, else on for compute networks."""
        if self.subnet_manager.sharp is not None:
            return self.subnet_manager.sharp
        return self.role == "compute"

    @property
    def wants_adaptive_routing(self) -> bool:
        """adaptive_routing as given, else on for compute networks."""
        if self.adaptive_routing is not None:
            return self.adaptive_routing
        return self.role == "compute"


class AsnPlan(SpecModel):
    first: int = Field(
        4_200_000_000,
        ge=1,
        le=4_294_967_294,
        description="first ASN of the pool (RFC 6996 private 4-byte range by default)",
    )
    last: int = Field(4_200_099_999, ge=1, le=4_294_967_294, description="last ASN of the pool")


class Addressing(SpecModel):
    oob: str = Field("10.128.0.0/16", description="IPv4 pool for BMCs and switch management ports")
    inband: str = Field("10.64.0.0/16", description="IPv4 pool for in-band host addresses")
    loopbacks: str = Field("10.0.0.0/20", description="IPv4 pool for switch loopbacks (/32 each)")
    loopbacks_v6: str | None = Field(None, description="optional IPv6 pool for loopbacks (/128)")
    p2p: str | None = Field(
        None,
        description="IPv4 pool for /31 switch-to-switch links; unset: BGP unnumbered (RFC 5549)",
    )
    hosts: str = Field(
        "10.192.0.0/12", description="IPv4 pool for RoCE host NIC addresses (/31 per NIC)"
    )
    asn: AsnPlan = Field(default_factory=AsnPlan, description="BGP ASN pool (RoCE fabrics)")

    @field_validator("oob", "inband", "loopbacks", "p2p", "hosts")
    @classmethod
    def _ipv4_network(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            network = ipaddress.IPv4Network(value)
        except ValueError as exc:
            raise ValueError(f"not an IPv4 network: {exc}") from None
        _usable_pool(network, _IPV4_SPECIAL, MIN_PREFIX_V4)
        return value

    @field_validator("loopbacks_v6")
    @classmethod
    def _ipv6_network(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            network = ipaddress.IPv6Network(value)
        except ValueError as exc:
            raise ValueError(f"not an IPv6 network: {exc}") from None
        _usable_pool(network, _IPV6_SPECIAL, MIN_PREFIX_V6)
        return value


class NcclOutput(SpecModel):
    profile: Literal["skeleton", "complete"] = Field(
        "complete",
        description="'skeleton': CPU/PCIe tree only (NCCL detects the rest); 'complete': like "
        "NCCL_TOPO_DUMP_FILE output, with GPUs, NVLinks and NICs",
    )


class DiagramOutput(SpecModel):
    render: Literal["auto", "always", "never"] = Field(
        "auto", description="render SVGs with Graphviz: 'auto' when `dot` is installed"
    )


SpareFamily = Literal["node", "appliance", "switch", "transceiver", "cable", "pdu", "power-cord"]
Spare = (
    Annotated[int, Field(ge=0, le=100_000)]
    | Annotated[str, Field(pattern=r"^(100|[1-9]?[0-9])(\.[0-9]{1,2})?%$")]
)


class BomOutput(SpecModel):
    spares: dict[SpareFamily, Spare] = Field(
        default_factory=dict,
        description="spares per part family: a percentage of each part's quantity ('2%', rounded "
        "up) or a count of each part (4); each a BOM line of its own. Given on top of the "
        "default policy (transceivers and cables 2%, at least one of each part), which a family "
        "written here replaces (transceiver: 0 orders none)",
    )


# NVIDIA Network Operator releases whose images fabricc knows (emit/provisioning/network_operator.py)
NetworkOperatorRelease = Literal["25.7.0", "25.4.0"]


class K8sOutput(SpecModel):
    network_operator: NetworkOperatorRelease = Field(
        "25.7.0",
        description="NVIDIA Network Operator release whose component images "
        "nic-cluster-policy.yaml pins (repository and tag as the release's hack/release.yaml "
        "gives them: 25.7.0 nvcr.io/nvidia/mellanox with network-operator-v25.7.0 tags; 25.4.0 "
        "the upstream ghcr.io images at their own versions)",
    )


class Outputs(SpecModel):
    nccl: NcclOutput = Field(default_factory=NcclOutput, description="NCCL topology files")
    diagrams: DiagramOutput = Field(default_factory=DiagramOutput, description="diagrams")
    bom: BomOutput = Field(default_factory=BomOutput, description="bill of materials")
    k8s: K8sOutput = Field(
        default_factory=K8sOutput, description="Kubernetes feeds (provisioning/k8s)"
    )


class Spec(SpecModel):
    """An AI factory: site, node groups, networks, addressing."""

    version: Annotated[Literal[1], BeforeValidator(patterns.exact_literal)] = Field(
        1, description="spec format version"
    )
    metadata: Metadata = Field(description="name and description of the design")
    catalog: list[YamlFile] = Field(
        default_factory=list,
        description="extra catalog YAML files (relative to the spec) that add or override models",
    )
    site: SiteSpec = Field(default_factory=SiteSpec, description="rows, racks and distances")
    nodes: dict[Name, NodeGroupSpec] = Field(
        min_length=1, description="node groups by name: GPU nodes, appliances, storage"
    )
    networks: dict[Name, NetworkSpec] = Field(
        default_factory=dict, description="networks by name (e.g. compute, storage, inband, oob)"
    )
    addressing: Addressing = Field(default_factory=Addressing, description="address pools")
    outputs: Outputs = Field(default_factory=Outputs, description="options of the emitters")
