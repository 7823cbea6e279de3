"""Check stage: every Ethernet switch runs its network's operating system.

Consumes the Fabric IR and the catalog's operating_systems of each switch model; produces, per
Ethernet network, an error at networks.<n>.os when a switch model of the network lists operating
systems but not the network's (naming the choices every model of the network runs), and a warning
per switch model that names none: fabricc writes no config files for those switches
(fabricc/synth/switchos.py), rather than files for an OS they cannot load.
"""

from __future__ import annotations

from collections import defaultdict

from fabricc.errors import Diagnostic, error, warning
from fabricc.ir import Fabric
from fabricc.spec.yamlsource import format_path

SHOWN = 3  # switch names shown per warning


def check_switch_os(fabric: Fabric) -> list[Diagnostic]:
    catalog = fabric.loaded.catalog.catalog
    by_network: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name in sorted(fabric.devices):
        device = fabric.devices[name]
        if device.kind != "switch" or device.network is None:
            continue
        if fabric.loaded.networks[device.network].fabric != "ethernet":
            continue
        by_network[device.network][device.model].append(name)
    found: list[Diagnostic] = []
    for network_name in sorted(by_network):
        network = fabric.loaded.networks[network_name]
        os = network.spec.os
        path = (*network.path, "os")
        models = by_network[network_name]
        listed = {m: catalog.switches[m].runs() for m in sorted(models)}
        for model, systems in listed.items():
            if systems:
                continue
            switches = models[model]
            shown = ", ".join(switches[:SHOWN]) + (", ..." if len(switches) > SHOWN else "")
            found.append(
                warning(
                    f"switch model {model!r} names no operating system it runs: no config files "
                    f"for its {len(switches)} switch(es) of network {network_name!r} ({shown})",
                    path=format_path(path),
                    location=fabric.loaded.source.value(path),
                    hint="add operating_systems (os, platform, source) to its catalog entry; "
                    "see docs/any-vendor.md",
                )
            )
        refused = {m: s for m, s in listed.items() if s and os not in s}
        if not refused:
            continue
        common = set.intersection(*(set(s) for s in listed.values() if s))
        choices = ", ".join(sorted(common)) if common else "none: no OS runs on all of them"
        runs = "; ".join(
            f"{m} ({catalog.switches[m].vendor}) runs {', '.join(s)}" for m, s in refused.items()
        )
        found.append(
            error(
                f"network {network_name!r} runs os: {os}, which its switch models do not run: "
                f"{runs}; the choices for this network: {choices}",
                path=format_path(path),
                location=fabric.loaded.source.value(path),
                hint=f"set os to one of: {', '.join(sorted(common))}"
                if common
                else "use switch models that run the same OS (catalog operating_systems)",
            )
        )
    return found
