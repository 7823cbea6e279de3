"""Derived view of the finished design: switch port plans and the SONiC switches they choose.

Consumes the Fabric IR; produces a switch's port plan (cage -> ports it is split into, for every
cage with an Ethernet link) and, for each routed switch of an os: sonic network, its SONiC
platform, SKU and ports (fabricc/catalog/sonic.py), computed once per build and kept on the fabric:
the design check (fabricc/checks/sonic.py) and the SONiC emitter read the same. A model or port
plan SONiC cannot run is a DesignError at the network's os.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricc.catalog.models import SwitchModel
from fabricc.catalog.ports import cage_group, mgmt_port_names, split_port
from fabricc.catalog.sonic import DATA, SonicSwitch, sonic_platforms, sonic_switch
from fabricc.errors import DesignError, Diagnostic, error
from fabricc.ir import Device, Fabric
from fabricc.spec.yamlsource import format_path
from fabricc.synth.addressing import ROUTED_ROLES


def cage_ways(model: SwitchModel, links: Iterable[tuple[str, int]]) -> dict[int, int]:
    """Cage -> ports it is split into, for every cage with a link; `links` are the switch's
    (port, link speed in Gb/s) of its Ethernet links, in any order (management ports skipped)."""
    mgmt_ports = mgmt_port_names(model)
    ways: dict[int, int] = {}
    for port, speed in links:
        if port in mgmt_ports:
            continue
        cage, sub = split_port(port)
        split = cage_group(model, cage).cage_speed // speed if sub else 1
        ways[cage] = max(ways.get(cage, 1), split)
    return ways


def sonic_switches(fabric: Fabric) -> dict[str, SonicSwitch]:
    """Every routed switch of an os: sonic network -> its SONiC switch, in name order; raises
    DesignError naming, for each such network, the first switch (by name) whose model or port
    plan SONiC cannot run."""
    return fabric.derived("portplan.sonic_switches", lambda: _sonic_switches(fabric))


def sonic_switch_of(fabric: Fabric, device: Device, ways: dict[int, int]) -> SonicSwitch:
    """The switch's SONiC platform, SKU (chosen by its port plan `ways`) and ports; a model or
    port plan SONiC cannot run is an error at the network's os."""
    model = fabric.loaded.catalog.catalog.switches[device.model]
    support = model.os_support("sonic")
    platform = None if support is None else sonic_platforms().get(support.platform)
    if support is None:
        result: SonicSwitch | str = (
            "its catalog entry names no SONiC platform (operating_systems, os: sonic)"
        )
    elif platform is None:
        result = (
            f"fabricc has no port layout for its SONiC platform {support.platform!r} "
            f"(known: {', '.join(sonic_platforms())})"
        )
    else:
        sizes = [g.count for g in model.port_groups]
        result = sonic_switch(platform, sizes, ways, tuple(support.skus))
    if isinstance(result, str):
        assert device.network is not None
        other = [f"os: {os}" for os in model.runs() if os != "sonic"]
        others = f"{' or '.join(other)} (the model runs it), or " if other else ""
        path = (*fabric.loaded.networks[device.network].path, "os")
        where = f" ({platform.platform})" if platform is not None else ""
        raise DesignError(
            [
                error(
                    f"SONiC cannot run switch model {device.model!r}{where} as "
                    f"{device.name}: {result}",
                    path=format_path(path),
                    location=fabric.loaded.source.value(path),
                    hint=f"use {others}a switch model whose SONiC SKU runs the port plan "
                    f"(fabricc/{DATA})",
                )
            ]
        )
    return result


def _sonic_switches(fabric: Fabric) -> dict[str, SonicSwitch]:
    networks = fabric.loaded.networks
    sonic = {
        name
        for name, network in networks.items()
        if network.fabric == "ethernet"
        and network.spec.os == "sonic"
        and network.spec.role in ROUTED_ROLES
    }
    catalog = fabric.loaded.catalog.catalog
    if not sonic:
        return {}
    switches = {
        name: device
        for name, device in fabric.devices.items()
        if device.kind == "switch"
        and device.network in sonic
        and catalog.switches[device.model].runs()  # no OS named: no config (a warning)
    }
    # One pass over the Ethernet links (a SONiC switch may have links of other Ethernet networks
    # too, as the config emitters' link index has): no link index of its own.
    links: dict[str, list[tuple[str, int]]] = {name: [] for name in switches}
    ethernet = [name for name, network in networks.items() if network.fabric == "ethernet"]
    for network in ethernet:
        for link in fabric.links_of(network):
            if link.a in links:
                links[link.a].append((link.a_port, link.speed))
            if link.b in links:
                links[link.b].append((link.b_port, link.speed))
    found: dict[str, SonicSwitch] = {}
    refused: dict[str, list[Diagnostic]] = {}  # network -> its first refused switch's error
    for name in sorted(switches):
        device = switches[name]
        assert device.network is not None
        if device.network in refused:
            continue
        ways = cage_ways(catalog.switches[device.model], links[name])
        try:
            found[name] = sonic_switch_of(fabric, device, ways)
        except DesignError as exc:
            refused[device.network] = list(exc.diagnostics)
    if refused:  # every os: sonic network SONiC cannot run, in one run
        raise DesignError([d for network in sorted(refused) for d in refused[network]])
    return found
