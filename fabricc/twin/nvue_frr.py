"""Twin renderer: the frr.conf Cumulus Linux renders from an NVUE startup.yaml.

Consumes the merged `set` tree of one switch's startup.yaml (fabricc.twin.nvue.nvue_set);
produces the FRR configuration NVUE applies for it, or None when the switch runs no BGP. Cumulus
keeps routing in NVUE and writes /etc/frr/frr.conf itself when the config is applied (Cumulus
Linux user guide, "NVUE and FRR": NVUE owns frr.conf unless the operator opts out), so a build
that writes only startup.yaml still routes; the twin boots what this renders. Rendered: `router
bgp` (ASN, router-id), peer groups (remote-as, timers), neighbors (unnumbered `interface`
neighbors or numbered addresses, description, peer group), the IPv4 and IPv6 unicast families
(networks, `redistribute connected`, multipaths as `maximum-paths`, a neighbor's
`nexthop-setting self` as `next-hop-self`), `path-selection multipath
aspath-ignore` as `bgp bestpath as-path multipath-relax`, and the addresses of the loopback, the
routed ports, the SVIs and their VRR (`<svi>-v0`, the name Cumulus gives the VRR interface) as
`interface` stanzas, which zebra installs; a neighbor's `aspath allow-my-asn` as `allowas-in`
and its inbound/outbound `policy route-map`, and the `router policy` prefix lists, AS-path lists
and route maps they name.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

Tree = dict[str, object]
VRR_SUFFIX = "-v0"  # Cumulus names the VRR macvlan of vlanN "vlanN-v0" (user guide, "VRR")


def _map(value: object) -> Tree:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def _on(value: object) -> bool:
    return value in ("on", "enabled", "enable", True)


def _addresses(entry: Tree, family: str = "ipv4") -> list[str]:
    return sorted(_map(_map(entry.get(family)).get("address")))


def addresses(entry: Tree) -> list[str]:
    """The IPv4 and IPv6 addresses an interface entry holds."""
    return _addresses(entry) + _addresses(entry, "ipv6")


def vrr_addresses(entry: Tree) -> list[str]:
    """The VRR (virtual router) addresses of an SVI entry, empty when VRR is off."""
    vrr = _map(_map(entry.get("ipv4")).get("vrr"))
    if vrr and vrr.get("state", "enabled") not in ("enabled", "on"):
        return []
    return sorted(_map(vrr.get("address")))


def vrr_mac(entry: Tree) -> str | None:
    mac = _map(_map(entry.get("ipv4")).get("vrr")).get("mac-address")
    return str(mac) if mac else None


def natural(name: str) -> tuple[tuple[int, str], ...]:
    """Sort key of an interface name by its numbers (swp9s1 before swp10s0)."""
    return tuple((int(p), "") if p.isdecimal() else (-1, p) for p in re.split(r"(\d+)", name))


def _interfaces(tree: Tree) -> Iterator[tuple[str, list[str]]]:
    """(interface, addresses) for every addressed interface, as zebra should hold them."""
    interfaces = _map(tree.get("interface"))
    for name in sorted(interfaces, key=natural):
        entry = _map(interfaces[name])
        if entry.get("type") == "eth" or entry.get("vrf") not in (None, "default"):
            continue  # the management port lives in VRF mgmt, outside the routed fabric
        addresses = _addresses(entry) + _addresses(entry, "ipv6")
        if addresses:
            yield name, addresses
        vrr = vrr_addresses(entry)
        if vrr:
            yield name + VRR_SUFFIX, vrr


def _timers(prefix: str, timers: Tree) -> list[str]:
    lines: list[str] = []
    keepalive, hold = timers.get("keepalive"), timers.get("hold")
    if isinstance(keepalive, int) and isinstance(hold, int):
        lines.append(f" {prefix} timers {keepalive} {hold}")
    retry = timers.get("connection-retry")
    if isinstance(retry, int):
        lines.append(f" {prefix} timers connect {retry}")
    return lines


def _neighbor(name: str, entry: Tree) -> list[str]:
    kind = entry.get("type", "numbered")
    word = " interface" if kind == "unnumbered" else ""
    group = entry.get("peer-group")
    remote = entry.get("remote-as")
    lines: list[str] = []
    if group:
        lines.append(f" neighbor {name}{word} peer-group {group}")
        if remote is not None:
            lines.append(f" neighbor {name} remote-as {remote}")
    else:
        lines.append(f" neighbor {name}{word} remote-as {remote or 'external'}")
    description = entry.get("description")
    if description:
        lines.append(f" neighbor {name} description {description}")
    lines.extend(_timers(f"neighbor {name}", _map(entry.get("timers"))))
    return lines


def _per_neighbor(name: str, neighbors: Tree, key: str) -> list[str]:
    """Per-neighbor settings of one family: `nexthop-setting self` is `next-hop-self`,
    `aspath allow-my-asn` (on, `occurrences` N) `allowas-in N`, `policy inbound|outbound
    route-map` `route-map ... in|out`."""
    lines: list[str] = []
    for neighbor in sorted(neighbors, key=natural):
        family = _map(_map(_map(neighbors[neighbor]).get("address-family")).get(key))
        if family.get("nexthop-setting") == "self":
            lines.append(f"  neighbor {neighbor} next-hop-self")
        allow = _map(_map(family.get("aspath")).get("allow-my-asn"))
        if allow and (_on(allow.get("enable")) or _on(allow.get("state"))):
            lines.append(f"  neighbor {neighbor} allowas-in {allow.get('occurrences', 1)}")
        policy = _map(family.get("policy"))
        for direction, word in (("inbound", "in"), ("outbound", "out")):
            route_map = _map(policy.get(direction)).get("route-map")
            if route_map:
                lines.append(f"  neighbor {neighbor} route-map {route_map} {word}")
    return lines


def _rule_ids(entry: Tree) -> list[str]:
    rules = _map(entry.get("rule"))
    return sorted(rules, key=lambda r: int(r) if r.isdecimal() else 0)


def policy(tree: Tree) -> list[str]:
    """`router policy`: prefix lists (`match` PREFIX `max-prefix-len`/`min-prefix-len` as
    `le`/`ge`), AS-path lists (`aspath-exp`) and route maps (`match ip-prefix-list`,
    `as-path-list`; `action permit|deny`), as FRR spells them."""
    found = _map(_map(tree.get("router")).get("policy"))
    lines: list[str] = []
    prefix_lists = _map(found.get("prefix-list"))
    for name in sorted(prefix_lists):
        entry = _map(prefix_lists[name])
        word = "ipv6" if entry.get("type") == "ipv6" else "ip"
        rules = _map(entry.get("rule"))
        for rule in _rule_ids(entry):
            body = _map(rules[rule])
            action = body.get("action", "permit")
            for prefix, bound in sorted(_map(body.get("match")).items()):
                length = int(prefix.partition("/")[2] or 32)
                limits = _map(bound)
                extra = ""
                ge, le = limits.get("min-prefix-len"), limits.get("max-prefix-len")
                if isinstance(ge, int) and ge > length:
                    extra += f" ge {ge}"
                if isinstance(le, int) and le > length:
                    extra += f" le {le}"
                lines.append(f"{word} prefix-list {name} seq {rule} {action} {prefix}{extra}")
    as_paths = _map(found.get("as-path-list"))
    for name in sorted(as_paths):
        entry = _map(as_paths[name])
        rules = _map(entry.get("rule"))
        for rule in _rule_ids(entry):
            body = _map(rules[rule])
            expression = body.get("aspath-exp")
            action = body.get("action", "permit")
            lines.append(f"bgp as-path access-list {name} seq {rule} {action} {expression}")
    if lines:
        lines.append("!")
    route_maps = _map(found.get("route-map"))
    for name in sorted(route_maps):
        entry = _map(route_maps[name])
        rules = _map(entry.get("rule"))
        for rule in _rule_ids(entry):
            body = _map(rules[rule])
            action = _map(body.get("action"))
            lines.append(f"route-map {name} {'deny' if 'deny' in action else 'permit'} {rule}")
            match = _map(body.get("match"))
            if match.get("ip-prefix-list"):
                lines.append(f" match ip address prefix-list {match['ip-prefix-list']}")
            if match.get("as-path-list"):
                lines.append(f" match as-path {match['as-path-list']}")
            lines.extend(["exit", "!"])
    return lines


def _family(name: str, family: Tree, members: list[str], activate: bool) -> list[str]:
    lines = [f" address-family {name} unicast"]
    lines.extend(f"  network {prefix}" for prefix in sorted(_map(family.get("network"))))
    redistribute = _map(family.get("redistribute"))
    for source in ("connected", "static"):
        if _on(_map(redistribute.get(source)).get("enable")) or _on(
            _map(redistribute.get(source)).get("state")
        ):
            lines.append(f"  redistribute {source}")
    multipaths = _map(family.get("multipaths"))
    if isinstance(multipaths.get("ebgp"), int):
        lines.append(f"  maximum-paths {multipaths['ebgp']}")
    if isinstance(multipaths.get("ibgp"), int):
        lines.append(f"  maximum-paths ibgp {multipaths['ibgp']}")
    if activate:
        lines.extend(f"  neighbor {member} activate" for member in members)
    lines.append(" exit-address-family")
    return lines


def render(tree: Tree) -> str | None:
    """frr.conf for the switch whose merged NVUE `set` tree is `tree`; None without BGP."""
    bgp = _map(_map(tree.get("router")).get("bgp"))
    vrf_bgp = _map(_map(_map(_map(tree.get("vrf")).get("default")).get("router")).get("bgp"))
    asn = bgp.get("autonomous-system")
    if not asn or not _on(bgp.get("state", "enabled")) or not vrf_bgp:
        return None
    if not _on(vrf_bgp.get("state", "enabled")):
        return None
    hostname = str(_map(tree.get("system")).get("hostname", ""))
    lines = [
        f"! frr.conf rendered by the fabricc twin from the NVUE startup.yaml of {hostname}",
        "frr defaults datacenter",
        f"hostname {hostname}",
        "log syslog informational",
        "service integrated-vtysh-config",
        "!",
    ]
    for name, addresses in _interfaces(tree):
        lines.append(f"interface {name}")
        lines.extend(
            f" {'ipv6' if ':' in address else 'ip'} address {address}" for address in addresses
        )
        lines.extend(["exit", "!"])
    lines.append(f"router bgp {asn}")
    router_id = bgp.get("router-id") or vrf_bgp.get("router-id")
    if router_id:
        lines.append(f" bgp router-id {router_id}")
    lines.append(" bgp log-neighbor-changes")
    multipath = _map(_map(vrf_bgp.get("path-selection")).get("multipath"))
    if _on(multipath.get("aspath-ignore")):
        lines.append(" bgp bestpath as-path multipath-relax")
    groups = _map(vrf_bgp.get("peer-group"))
    for group in sorted(groups):
        entry = _map(groups[group])
        lines.append(f" neighbor {group} peer-group")
        if entry.get("remote-as") is not None:
            lines.append(f" neighbor {group} remote-as {entry['remote-as']}")
        lines.extend(_timers(f"neighbor {group}", _map(entry.get("timers"))))
    neighbors = _map(vrf_bgp.get("neighbor"))
    for name in sorted(neighbors, key=natural):
        lines.extend(_neighbor(name, _map(neighbors[name])))
    families = _map(vrf_bgp.get("address-family"))
    members = sorted(groups) + [n for n in sorted(neighbors, key=natural) if n not in groups]
    members = [m for m in members if m in groups or not _map(neighbors[m]).get("peer-group")]
    for key, name, activate in (("ipv4-unicast", "ipv4", False), ("ipv6-unicast", "ipv6", True)):
        family = _map(families.get(key))
        if family and _on(family.get("state", "enabled")):
            lines.append(" !")
            lines.extend(_family(name, family, members, activate))
            lines[-1:-1] = _per_neighbor(name, neighbors, key)
    lines.extend(["exit", "!"])
    lines.extend(policy(tree))
    return "\n".join(lines) + "\n"
