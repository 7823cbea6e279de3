"""Load stage, part 4: check the spec against the catalog and fill in catalog defaults.

Consumes a validated Spec, its SourceMap and the LoadedCatalog; produces the resolved networks
(fabric, switch model per tier, which node ports attach at which speed, leaf port budgets) or
positioned Diagnostics for every cross-field problem: unknown models, switches that cannot run
the fabric's speed, more ports than a switch has, bad hostname patterns, dangling references.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from fabricc.catalog.listing import suggestion
from fabricc.catalog.loader import LoadedCatalog
from fabricc.catalog.media import cabled_speeds
from fabricc.catalog.models import NodeModel, PortSpec, SwitchModel, switch_key
from fabricc.errors import Diagnostic, error, warning
from fabricc.spec.adaptive import adaptive_routing_possible, routes_adaptively_at
from fabricc.spec.hostnames import check_pattern
from fabricc.spec.models import ROLE_OVERSUBSCRIPTION, EndpointSpec, NetworkSpec, Spec
from fabricc.spec.validation import did_you_mean
from fabricc.spec.yamlsource import DataPath, SourceMap, format_path

Tier = Literal["leaf", "spine", "core"]
TIERS: tuple[Tier, ...] = ("leaf", "spine", "core")
PEER_LINK_CAGES = 2  # MLAG peer link of a dual-homed leaf pair


def parse_ratio(text: str) -> tuple[int, int]:
    down, up = text.split(":")
    return int(down), int(up)


@dataclass(frozen=True, slots=True)
class LeafBudget:
    """How a leaf's cages are split between endpoint ports and uplinks."""

    down_ports: int
    down_speed: int
    down_breakout: int
    up_ports: int
    up_speed: int
    up_breakout: int
    reserved_cages: int  # peer links

    @property
    def down_cages(self) -> int:
        return -(-self.down_ports // self.down_breakout)

    @property
    def up_cages(self) -> int:
        return -(-self.up_ports // self.up_breakout)


@dataclass(frozen=True, slots=True)
class Attachment:
    """One node group attached to one network."""

    group: str
    ports: tuple[str, ...]  # node port names, in rail order
    speed: int  # Gb/s per link
    breakout: int  # sub-ports per node port (planes)
    reserved: bool
    leaf_downlinks: int | None
    oversubscription: tuple[int, int]
    path: DataPath  # spec path that asked for it


@dataclass(frozen=True, slots=True)
class ResolvedNetwork:
    name: str
    spec: NetworkSpec
    fabric: Literal["infiniband", "ethernet"]
    rail_optimized: bool
    switch_models: dict[Tier, str]
    attachments: tuple[Attachment, ...]
    oversubscription: tuple[int, int]
    fabric_speed: int  # leaf-spine link speed, Gb/s (the fastest leaf and spine cages share)
    path: DataPath
    core_speed: int = 0  # spine-core link speed, Gb/s (the fastest spine and core cages share)


def switch_port_speeds(switch: SwitchModel, *, uplink_group: bool = False) -> dict[int, int]:
    """Speeds a switch's general-purpose cages can run at -> ports per cage."""
    speeds: dict[int, int] = {}
    for group in switch.port_groups:
        if (group.use == "uplink") != uplink_group:
            continue
        for breakout in group.breakouts:
            speed = group.cage_speed // breakout
            speeds.setdefault(speed, breakout)
    return speeds


def general_cages(switch: SwitchModel) -> int:
    return sum(g.count for g in switch.port_groups if g.use == "any")


def best_speed(port_speeds: list[int], switch_speeds: dict[int, int]) -> int | None:
    common = [s for s in port_speeds if s in switch_speeds]
    return max(common) if common else None


def leaf_budget(
    switch: SwitchModel,
    down_speed: int,
    up_speed: int,
    ratio: tuple[int, int],
    *,
    downlinks: int | None,
    dual_homed: bool,
    has_uplinks: bool,
) -> LeafBudget:
    """Split a leaf's cages between endpoints and uplinks at the requested bandwidth ratio.

    With whole cages on both sides the bandwidth ratio equals the cage ratio, so a down:up ratio
    of a:b gives a*m endpoint cages and b*m uplink cages for the largest m that fits (1:1 on a
    32-cage QM9700: 16 + 16 cages = 32 NDR ports each way, the SuperPOD leaf).
    """
    speeds = switch_port_speeds(switch)
    down_breakout = speeds[down_speed]
    up_breakout = speeds[up_speed]
    reserved = PEER_LINK_CAGES if dual_homed else 0
    cages = general_cages(switch) - reserved
    a, b = ratio
    if downlinks is not None:
        # Uplinks carry down-bandwidth * b / a, rounded up to whole ports.
        up_ports = -(-(downlinks * down_speed * b) // (a * up_speed)) if has_uplinks else 0
        return LeafBudget(
            downlinks, down_speed, down_breakout, up_ports, up_speed, up_breakout, reserved
        )
    if not has_uplinks:
        return LeafBudget(
            cages * down_breakout, down_speed, down_breakout, 0, up_speed, up_breakout, reserved
        )
    m = cages // (a + b)
    if m > 1 and (b * m * up_breakout) % 2:
        # an odd uplink count (31 on a 62-cage MLAG leaf at 1:1) divides over no spine pair:
        # give up one step of the ratio so the uplinks split over two or more spines
        m -= 1
    return LeafBudget(
        a * m * down_breakout,
        down_speed,
        down_breakout,
        b * m * up_breakout,
        up_speed,
        up_breakout,
        reserved,
    )


class _Checker:
    def __init__(self, spec: Spec, source: SourceMap, catalog: LoadedCatalog) -> None:
        self.spec = spec
        self.source = source
        self.catalog = catalog.catalog
        self.loaded_catalog = catalog
        self.problems: list[Diagnostic] = []

    def err(
        self, message: str, path: DataPath, hint: str | None = None, *, key: bool = False
    ) -> None:
        location = self.source.key(path) if key else self.source.value(path)
        self.problems.append(error(message, path=format_path(path), location=location, hint=hint))

    def warn(self, message: str, path: DataPath, hint: str | None = None) -> None:
        self.problems.append(
            warning(message, path=format_path(path), location=self.source.value(path), hint=hint)
        )

    # -- node groups ---------------------------------------------------------------------------

    def node_groups(self) -> None:
        for name, group in self.spec.nodes.items():
            path: DataPath = ("nodes", name)
            model = self.catalog.nodes.get(group.model)
            if model is None:
                self.err(
                    f"unknown node model {group.model!r}",
                    (*path, "model"),
                    suggestion(group.model, self.loaded_catalog, "nodes"),
                )
                continue
            if model.kind in ("compute-tray", "nvlink-switch"):
                self.err(
                    f"{group.model!r} is part of a rack-scale system and cannot be ordered alone",
                    (*path, "model"),
                    "use the rack system model, e.g. gb200-nvl72",
                )
            if model.kind == "rack-system" and group.nodes_per_rack is not None:
                self.err(
                    f"{group.model!r} is a rack-scale system; it fills its own rack",
                    (*path, "nodes_per_rack"),
                    "remove nodes_per_rack",
                    key=True,
                )
            self.hostname(group.hostname, (*path, "hostname"))
            self.gpu_facts(group.model, (*path, "model"))

    def gpu_facts(self, name: str, path: DataPath) -> None:
        """Warn when a GPU model lacks what a product needs: the analysis figures (never taken
        as 0) and the host topology that NCCL's topology file is made from."""
        model = self.catalog.nodes[name]
        if model.rack_scale is not None:
            tray = self.catalog.compute_tray(model)
            if tray is None:
                return
            name, model = tray
        if model.gpu is None or not model.gpus:
            return
        if missing := model.gpu.missing_figures():
            self.warn(
                f"the catalog's {name!r} gives no {', '.join(missing)} for its "
                f"{model.gpu.model} GPUs: the analysis leaves them out (no all-reduce estimate "
                "without nvlink_gbs, no PFLOPS total without the TFLOPS)",
                path,
                f"add them to the `gpu:` of {name!r} in a site catalog, from the GPU's "
                "datasheet, with `figures_source` (`fabricc catalog "
                f"{name}` prints the entry to start from)",
            )
        if name not in self.catalog.host_topologies:
            self.warn(
                f"the catalog has no host topology for {name!r}: its nodes get NCCL settings "
                "but no NCCL topology file",
                path,
                f"add a `host_topologies: {{{name}: ...}}` entry to a site catalog, read from "
                "a node's `nvidia-smi topo -m` and `lspci -tv` (see docs/catalog.md)",
            )

    def hostname(self, pattern: str, path: DataPath) -> None:
        for message, hint in check_pattern(pattern):
            self.err(message, path, hint)

    # -- networks ------------------------------------------------------------------------------

    def networks(self) -> dict[str, ResolvedNetwork]:
        resolved: dict[str, ResolvedNetwork] = {}
        for name, network in self.spec.networks.items():
            result = self.network(name, network)
            if result is not None:
                resolved[name] = result
        for name, network in self.spec.networks.items():
            if network.uplink_to is not None:
                path: DataPath = ("networks", name, "uplink_to")
                if network.uplink_to == name:
                    self.err("a network cannot uplink to itself", path)
                elif network.uplink_to not in self.spec.networks:
                    self.err(
                        f"unknown network {network.uplink_to!r}",
                        path,
                        did_you_mean(network.uplink_to, list(self.spec.networks), "networks"),
                    )
        return resolved

    def network(self, name: str, network: NetworkSpec) -> ResolvedNetwork | None:
        path: DataPath = ("networks", name)
        before = len(self.problems)
        fabric = network.fabric
        if fabric is None:
            if network.role in ("compute", "storage"):
                self.err(
                    f"a {network.role} network needs 'fabric: infiniband' or 'fabric: ethernet'",
                    path,
                    "add 'fabric: infiniband' or 'fabric: ethernet'",
                    key=True,
                )
                return None
            fabric = "ethernet"
        if network.role == "oob" and fabric != "ethernet":
            self.err("the out-of-band network is ethernet", (*path, "fabric"))
        tiers = self._tiers_in_use(network)
        models: dict[Tier, str] = {}
        defaults = self.catalog.default_switches
        default_model = (
            (defaults.infiniband if fabric == "infiniband" else defaults.ethernet.get(network.role))
            if defaults is not None
            else None
        )
        for tier in TIERS:
            chosen = getattr(network.switches, tier)
            tier_path = (*path, "switches", tier)
            if chosen is None:
                chosen = models.get("leaf", default_model) if tier != "leaf" else default_model
            if chosen is None:
                continue
            switch = self.catalog.switches.get(chosen)
            if switch is None:
                self.err(
                    f"unknown switch model {chosen!r}",
                    tier_path,
                    suggestion(chosen, self.loaded_catalog, "switches"),
                )
                continue
            if switch.fabric != fabric:
                self.err(
                    f"{chosen!r} is an {switch.fabric} switch, but this network is {fabric}",
                    tier_path if getattr(network.switches, tier) else (*path, "fabric"),
                    f"pick a {fabric} switch: "
                    + ", ".join(k for k, v in self.catalog.switches.items() if v.fabric == fabric),
                )
                continue
            models[tier] = chosen
        if "leaf" not in models:
            return None
        for tier in tiers:
            if tier not in models:
                return None
        for pattern_tier in TIERS:
            self.hostname(
                getattr(network.hostnames, pattern_tier), (*path, "hostnames", pattern_tier)
            )
        leaf = self.catalog.switches[models["leaf"]]
        fabric_speed = self._fabric_speed(name, network, models, ("leaf", "spine"))
        core_speed = (
            self._fabric_speed(name, network, models, ("spine", "core"))
            if fabric_speed and network.tiers in ("auto", 3)
            else fabric_speed
        )
        ratio = parse_ratio(network.oversubscription or ROLE_OVERSUBSCRIPTION[network.role])
        attachments = self._attachments(name, network, fabric, leaf, fabric_speed, ratio)
        rail_optimized = (
            network.rail_optimized
            if network.rail_optimized is not None
            else network.role == "compute"
        )
        self._port_budgets(name, network, leaf, attachments, fabric_speed)
        if network.role == "oob" and network.dual_homed:
            self.err(
                "out-of-band hosts have one management port; dual_homed does not apply",
                (*path, "dual_homed"),
            )
        if network.subnet_manager.guids is not None and fabric != "infiniband":
            self.warn(
                "subnet_manager applies to infiniband networks only",
                (*path, "subnet_manager"),
                "remove subnet_manager from this network (or set fabric: infiniband)",
            )
        for pname, partition in network.subnet_manager.partitions.items():
            for index, member in enumerate(partition.members):
                if member not in self.spec.nodes:
                    self.err(
                        f"unknown node group {member!r}",
                        (*path, "subnet_manager", "partitions", pname, "members", index),
                        did_you_mean(member, list(self.spec.nodes), "node groups"),
                    )
        for index, member in enumerate(network.subnet_manager.sm_nodes):
            if member not in self.spec.nodes:
                self.err(
                    f"unknown node group {member!r}",
                    (*path, "subnet_manager", "sm_nodes", index),
                    did_you_mean(member, list(self.spec.nodes), "node groups"),
                )
        self._site_uplinks(network, fabric, models, path)
        if len(self.problems) > before and any(
            p.severity.value == "error" for p in self.problems[before:]
        ):
            return None
        return ResolvedNetwork(
            name=name,
            spec=network,
            fabric=fabric,
            rail_optimized=rail_optimized,
            switch_models=models,
            attachments=tuple(attachments),
            oversubscription=ratio,
            fabric_speed=fabric_speed,
            path=path,
            core_speed=core_speed,
        )

    def _site_uplinks(
        self, network: NetworkSpec, fabric: str, models: dict[Tier, str], path: DataPath
    ) -> None:
        """Border links: the in-band network only, at a speed every switch model that may be the
        top tier runs, a known transceiver of the hand-off's fiber, enough /31s for them."""
        site = network.site_uplinks
        at: DataPath = (*path, "site_uplinks")
        if site.count == 0:
            return
        if network.role != "inband":
            self.err(
                f"site_uplinks joins the in-band network's top tier to the site network; this "
                f"is a {network.role} network",
                at,
                "give the in-band network the site uplinks (its top tier is the border; the "
                "out-of-band network reaches the site through it with uplink_to), or remove "
                "site_uplinks here",
                key=True,
            )
            return
        if fabric != "ethernet":
            self.err(
                "site_uplinks are Ethernet links to the site's routers; this in-band network is "
                f"{fabric}",
                at,
                "remove site_uplinks, or run the in-band network on Ethernet",
                key=True,
            )
            return
        if site.speed is not None:
            for model in sorted(set(models.values())):
                speeds = switch_port_speeds(self.catalog.switches[model])
                if site.speed not in speeds:
                    self.err(
                        f"{model} runs no port at {site.speed}G",
                        (*at, "speed"),
                        f"use one of {', '.join(f'{s}' for s in sorted(speeds))} (Gb/s)",
                    )
        if site.transceiver is not None:
            module = self.catalog.transceivers.get(site.transceiver)
            if module is None:
                self.err(
                    f"unknown transceiver {site.transceiver!r}",
                    (*at, "transceiver"),
                    suggestion(site.transceiver, self.loaded_catalog, "transceivers"),
                )
            elif module.media != ("smf" if site.medium == "singlemode" else "mmf"):
                self.err(
                    f"{site.transceiver} is a {module.media} module; the hand-off is {site.medium}",
                    (*at, "transceiver"),
                    "pick a module of the hand-off's fiber, or set site_uplinks.medium",
                )
        if site.addresses is not None:
            pool = ipaddress.IPv4Network(site.addresses)
            if pool.num_addresses < 2 * site.count:
                self.err(
                    f"{site.addresses} holds {pool.num_addresses // 2} /31s; {site.count} "
                    "uplinks need one each",
                    (*at, "addresses"),
                    f"a /{32 - (2 * site.count - 1).bit_length()} or larger",
                )

    @staticmethod
    def _tiers_in_use(network: NetworkSpec) -> tuple[Tier, ...]:
        if network.tiers == 1:
            return ("leaf",)
        if network.tiers == 3:
            return ("leaf", "spine", "core")
        return ("leaf", "spine")

    def _fabric_speed(
        self,
        name: str,
        network: NetworkSpec,
        models: dict[Tier, str],
        pair: tuple[Tier, Tier],
    ) -> int:
        """The speed of the links between two adjacent tiers: the fastest both switch models'
        cages run (a leaf of 400G cages and a spine of 800G cages meet at 400G, while that
        spine and an 800G core meet at 800G). A network of leaves alone: the leaf's fastest."""
        lower, upper = pair
        tiers = [t for t in pair if t in models]
        if network.tiers == 1 or len(tiers) < 2:
            tiers = ["leaf"] if "leaf" in models else []
        switches = [self.catalog.switches[models[t]] for t in tiers]
        speed_sets = [set(switch_port_speeds(switch)) for switch in switches]
        common = set.intersection(*speed_sets) if speed_sets else set()
        if not common:
            self.err(
                f"the {lower} and {upper} switches share no port speed, so they cannot be "
                "cabled together",
                ("networks", name, "switches"),
            )
            return 0
        if len(tiers) == 2:
            # the fastest the media supports: a speed no catalog module or cable carries
            # between these cages is left out (the cabling pass reports a pair with none)
            a, b = switches
            cabled = common & cabled_speeds(self.catalog, a, b, a.fabric)
            if cabled:
                common = cabled
        fastest = max(common)
        if not adaptive_routing_possible(network, switches):
            return fastest
        # adaptive routing only at some speeds (Spectrum-4: 400G and 200G, not 800G): the
        # fastest such speed, from split cages (800G cages as 2x400G), before plain ECMP
        adaptive = [s for s in common if routes_adaptively_at(network, switches, s)]
        if adaptive:
            return max(adaptive)
        between = f"{lower} and {upper}" if len(tiers) == 2 else "leaf"
        self.warn(
            f"the {between} switches of this network route adaptively at no speed their links "
            f"can run at ({fastest}G), so the fabric runs plain ECMP",
            ("networks", name),
            "set adaptive_routing: false to say so, or pick switches that route adaptively",
        )
        return fastest

    def _attachments(
        self,
        name: str,
        network: NetworkSpec,
        fabric: str,
        leaf: SwitchModel,
        fabric_speed: int,
        ratio: tuple[int, int],
    ) -> list[Attachment]:
        path: DataPath = ("networks", name)
        out: list[Attachment] = []
        requested: list[tuple[str, EndpointSpec | None]]
        if network.endpoints is not None:
            requested = list(network.endpoints.items())
            for group_name, _ in requested:
                if group_name not in self.spec.nodes:
                    self.err(
                        f"unknown node group {group_name!r}",
                        (*path, "endpoints", group_name),
                        did_you_mean(group_name, list(self.spec.nodes), "node groups"),
                        key=True,
                    )
        else:
            requested = [(g, None) for g in self.spec.nodes]
        leaf_speeds = switch_port_speeds(leaf)
        for group_name, options in requested:
            group = self.spec.nodes.get(group_name)
            if group is None:
                continue
            model = self.catalog.nodes.get(group.model)
            if model is None:
                continue
            member = self._endpoint_model(model)
            if member is None:
                continue
            group_path = (*path, "endpoints", group_name)
            if options is not None and options.ports is not None:
                known = {p.name: p for p in member.ports}
                ports: list[PortSpec] = []
                for index, port_name in enumerate(options.ports):
                    port = known.get(port_name)
                    if port is None:
                        self.err(
                            f"{group.model!r} has no port {port_name!r}",
                            (*group_path, "ports", index),
                            did_you_mean(port_name, list(known), "ports"),
                        )
                        continue
                    ports.append(port)
            else:
                ports = [p for p in member.ports if p.role == network.role]
                if not ports:
                    if options is not None:
                        self.err(
                            f"{group.model!r} has no {network.role} ports",
                            group_path,
                            "name the ports to use with 'ports: [...]'",
                            key=True,
                        )
                    continue
            ports = sorted(
                ports, key=lambda p: (p.gpu if p.gpu is not None else 1_000, member.ports.index(p))
            )
            for port in ports:
                if fabric not in port.protocols:
                    self.err(
                        f"port {port.name!r} of {group.model!r} does not speak {fabric}",
                        group_path,
                        key=True,
                    )
            planes = network.planes
            speed = self._attachment_speed(ports, planes, leaf_speeds)
            if speed is None:
                if group_name in network.subnet_manager.sm_nodes or model.kind in (
                    "appliance",
                    "server",
                ):
                    self._host_speed_mismatch(network, group_name, member, ports, leaf, path)
                    continue
                self.err(
                    f"{network.switches.leaf or leaf.description!r} cannot run any speed that the "
                    f"{network.role} ports of {group.model!r} support",
                    (*path, "switches", "leaf") if network.switches.leaf else group_path,
                    "choose a leaf switch whose ports match the NIC speed",
                    key=network.switches.leaf is None,
                )
                continue
            if planes > 1 and any(planes not in p.breakouts for p in ports):
                self.err(
                    f"the ports of {group.model!r} cannot be split across {planes} planes",
                    (*path, "planes"),
                    "planes > 1 needs NIC ports that break out (e.g. 800G as 2x400G)",
                )
                continue
            oversub = ratio
            if options is not None and options.oversubscription is not None:
                oversub = parse_ratio(options.oversubscription)
            out.append(
                Attachment(
                    group=group_name,
                    ports=tuple(p.name for p in ports),
                    speed=speed,
                    breakout=planes,
                    reserved=bool(options and options.reserved),
                    leaf_downlinks=options.leaf_downlinks if options is not None else None,
                    oversubscription=oversub,
                    path=group_path if network.endpoints is not None else ("nodes", group_name),
                )
            )
            if options is not None and options.reserved and network.reserved_slots == 0:
                self.err(
                    "this group asks for reserved ports, but the network reserves none",
                    (*group_path, "reserved"),
                    "set reserved_slots on the network",
                )
        return out

    def _host_speed_mismatch(
        self,
        network: NetworkSpec,
        group: str,
        model: NodeModel,
        ports: list[PortSpec],
        leaf: SwitchModel,
        path: DataPath,
    ) -> None:
        """A subnet-manager host, appliance or server whose ports run none of the fabric's
        speeds (an NDR UFM appliance on an XDR fabric): the fix is another host model, not
        another leaf switch."""
        leaf_speeds = sorted(switch_port_speeds(leaf), reverse=True)
        speeds = sorted({s for p in ports for s in p.speeds}, reverse=True)
        role = "subnet-manager host" if group in network.subnet_manager.sm_nodes else model.kind
        fitting = sorted(
            key
            for key, other in self.catalog.nodes.items()
            if other.kind in ("appliance", "server")
            and any(
                p.role == network.role and set(p.speeds) & set(leaf_speeds) for p in other.ports
            )
        )
        group_model = self.spec.nodes[group].model
        self.err(
            f"the {role} group {group!r} is a {group_model!r}, whose {network.role} ports run "
            f"{'/'.join(map(str, speeds))} Gb/s; the leaves of this network "
            f"({switch_key(self.catalog, leaf)!r}) run {'/'.join(map(str, leaf_speeds))} Gb/s, "
            "so it cannot be cabled in",
            ("nodes", group, "model"),
            (
                f"give group {group!r} a model whose ports run this fabric's speed: "
                + ", ".join(repr(k) for k in fitting)
                if fitting
                else "add a host model with ports at this fabric's speed to a site catalog"
            )
            + " (`fabricc catalog MODEL` shows one)",
        )

    @staticmethod
    def _attachment_speed(
        ports: list[PortSpec], planes: int, leaf_speeds: dict[int, int]
    ) -> int | None:
        candidates: set[int] | None = None
        for port in ports:
            speeds = {s // planes for s in port.speeds if s % planes == 0}
            candidates = speeds if candidates is None else candidates & speeds
        if not candidates:
            return None
        return best_speed(sorted(candidates, reverse=True), leaf_speeds)

    def _endpoint_model(self, model: NodeModel) -> NodeModel | None:
        """The model whose ports attach: the node itself, or a rack system's compute tray."""
        if model.rack_scale is None:
            return model
        tray = self.catalog.compute_tray(model)
        return tray[1] if tray is not None else None

    def _port_budgets(
        self,
        name: str,
        network: NetworkSpec,
        leaf: SwitchModel,
        attachments: list[Attachment],
        fabric_speed: int,
    ) -> None:
        path: DataPath = ("networks", name)
        cages = general_cages(leaf)
        if network.dual_homed and cages <= PEER_LINK_CAGES:
            self.err(
                "the leaf switch has no ports left after the MLAG peer link",
                (*path, "switches", "leaf"),
            )
            return
        single_tier = network.tiers == 1
        for attachment in attachments:
            if attachment.leaf_downlinks is None:
                continue
            speeds = switch_port_speeds(leaf)
            ports = (cages - (PEER_LINK_CAGES if network.dual_homed else 0)) * speeds[
                attachment.speed
            ]
            if attachment.leaf_downlinks > ports:
                self.err(
                    f"leaf_downlinks asks for {attachment.leaf_downlinks} ports, but a "
                    f"{switch_key(self.catalog, leaf)} leaf has {ports} at {attachment.speed}G",
                    (*attachment.path, "leaf_downlinks"),
                )
                continue
            if fabric_speed and not single_tier:
                budget = leaf_budget(
                    leaf,
                    attachment.speed,
                    fabric_speed,
                    attachment.oversubscription,
                    downlinks=attachment.leaf_downlinks,
                    dual_homed=network.dual_homed,
                    has_uplinks=True,
                )
                used = budget.down_cages + budget.up_cages + budget.reserved_cages
                if used > cages:
                    a, b = attachment.oversubscription
                    self.err(
                        f"{attachment.leaf_downlinks} endpoint ports at {a}:{b} need "
                        f"{budget.up_ports} uplinks: {used} cages, but the leaf has {cages}",
                        (*attachment.path, "leaf_downlinks"),
                        "lower leaf_downlinks or raise the oversubscription",
                    )
        if network.reserved_slots and not network.rail_optimized and network.role != "compute":
            self.warn(
                "reserved_slots applies to rail-optimized networks",
                (*path, "reserved_slots"),
                "remove reserved_slots, or set rail_optimized: true",
            )


@dataclass(frozen=True, slots=True)
class Resolution:
    networks: dict[str, ResolvedNetwork]
    diagnostics: list[Diagnostic]


def resolve(spec: Spec, source: SourceMap, catalog: LoadedCatalog) -> Resolution:
    checker = _Checker(spec, source, catalog)
    checker.node_groups()
    networks = checker.networks()
    site = spec.site
    if spec.addressing.asn.first > spec.addressing.asn.last:
        checker.err("the ASN pool is empty (first > last)", ("addressing", "asn", "first"))
    if site.rack.reserved_u >= site.rack.height_u:
        checker.err("reserved_u leaves no room in the rack", ("site", "rack", "reserved_u"))
    return Resolution(networks, checker.problems)
