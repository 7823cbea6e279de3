"""Synthesis pass 5b: the in-band network's border links to the site's own network.

Consumes the built in-band network (its top tier, with the ports other networks' uplinks took)
and its `site_uplinks`; produces one EXTERNAL device for the site network (not bought, not
racked, not configured) and a SITE link per border link, round-robin over the top-tier
switches on their highest free cages, with its /31 when the spec gives a pool. The top tier
reserves the ports before it is sized (site_guests), like the uplinks of other networks.
"""

from __future__ import annotations

import ipaddress

from fabricc.catalog.models import SwitchModel
from fabricc.errors import Diagnostic, error
from fabricc.ir import EXTERNAL, SITE, Device, Fabric, Link
from fabricc.spec.loader import LoadedSpec
from fabricc.spec.resolve import ResolvedNetwork, switch_port_speeds
from fabricc.spec.yamlsource import format_path
from fabricc.synth.oob import UPLINK_PORTS, free_port
from fabricc.synth.portbook import PortBook
from fabricc.synth.sizing import Guests

SITE_PORT = "site{k}"  # the far end's port: the k-th (1-based) position of the hand-off


def site_speed(network: ResolvedNetwork, model: SwitchModel) -> int:
    """The speed of the border links: as given, else the top tier's cage speed."""
    speed = network.spec.site_uplinks.speed
    return speed if speed is not None else max(switch_port_speeds(model))


def _top_model(loaded: LoadedSpec, network: ResolvedNetwork) -> SwitchModel:
    models = network.switch_models
    key = models.get("core") or models.get("spine") or models["leaf"]
    return loaded.catalog.catalog.switches[key]


def site_guests(loaded: LoadedSpec) -> dict[str, Guests]:
    """The ports each in-band network's top tier gives up to its border links."""
    guests: dict[str, Guests] = {}
    for network in loaded.networks.values():
        count = network.spec.site_uplinks.count
        if count:
            guests[network.name] = Guests(count, site_speed(network, _top_model(loaded, network)))
    return guests


def connect_site_uplinks(
    fabric: Fabric,
    network: ResolvedNetwork,
    switches: list[str],
    book: PortBook,
    problems: list[Diagnostic],
) -> None:
    """The site network as an EXTERNAL device and `site_uplinks.count` links to it from
    `switches` (the top tier), link k from switch k mod n on its highest free port."""
    site = network.spec.site_uplinks
    if not site.count or not switches:
        return
    path = (*network.path, "site_uplinks")
    source = fabric.loaded.source
    catalog = fabric.loaded.catalog.catalog
    fabric.add(
        Device(
            name=site.to,
            kind=EXTERNAL,
            model=EXTERNAL,
            role="site-network",
            index=0,
            network=network.name,
            spec_path=(*path, "to"),
        )
    )
    pool = ipaddress.IPv4Network(site.addresses) if site.addresses is not None else None
    for k in range(site.count):
        name = switches[k % len(switches)]
        model = catalog.switches[fabric.devices[name].model]
        speed = site_speed(network, model)
        speeds = switch_port_speeds(model)
        port = free_port(book, name, model, speeds[speed]) if speed in speeds else None
        if port is None:
            at = (*path, "speed" if speed not in speeds else "count")
            problems.append(
                error(
                    f"{name} has no free {speed}G port left for site uplink {k + 1}",
                    path=format_path(at),
                    location=source.value(at),
                    hint="fewer site uplinks, a speed the switch runs, or a larger top tier",
                    code=UPLINK_PORTS if speed in speeds else "",
                )
            )
            return
        link = Link(network.name, SITE, name, port, site.to, SITE_PORT.format(k=k + 1), speed)
        if pool is not None:
            base = int(pool.network_address) + 2 * k
            link.b_ip = str(ipaddress.IPv4Address(base))
            link.a_ip = str(ipaddress.IPv4Address(base + 1))
        fabric.links.append(link)
