"""Twin renderer: the FRR configuration that runs the routing an Arista EOS switch is given.

Consumes the command tree of one switch's startup-config (fabricc.twin.eos.parse); produces an
frr.conf with the same routing on the twin's Linux interface names (fabricc.twin.names.eos_linux),
or None when the switch runs no BGP. The startup-config is read, not the AVD structured config:
it is the file the ZTP boot script installs and EOS boots (a hand edit of it shows in the twin),
and pyavd has already rendered and schema-checked the structured config into it, so the twin
reads what EOS reads. Translated:

- `router bgp` (ASN), `router-id`, `timers bgp`, `maximum-paths N` (FRR's per-family
  `maximum-paths`), `bgp bestpath as-path multipath-relax` where the config says it;
  `no bgp default ipv4-unicast` as FRR's, and FRR's `no bgp ebgp-requires-policy`: EOS accepts
  and advertises routes of eBGP peers without a policy (its `bgp missing-policy` is opt-in);
- peer groups (`neighbor G peer group`: remote-as, timers, description, send-community,
  next-hop-self, ebgp-multihop, update-source), numbered neighbours with their group, remote-as
  and description, and EOS's interface neighbours (`neighbor interface EthernetX/Y peer-group G
  remote-as N`: BGP on the port's IPv6 link-local address, RFC 5549) as FRR's unnumbered
  `neighbor <linux-name> interface peer-group G` plus their remote-as, described by the port's
  description (the far end the config names);
- `address-family ipv4|ipv6`: `neighbor activate`, `network`, `redistribute connected|static`
  (also given at `router bgp` level, where EOS applies them to IPv4); `neighbor X next-hop
  address-family ipv6 originate` (IPv4 routes with IPv6 next hops) as FRR's `capability
  extended-nexthop`;
- interfaces in the default VRF: the addresses of loopbacks, routed ports and SVIs (EOS
  `ip address`, `ipv6 address`), their description and `shutdown`; `ipv6 enable` needs nothing
  (Linux gives every interface its link-local address). MTUs are set on the veths by the routing
  stage (fabricc.twin.nvue.switch_config), as the cable MTU check reads them;
- no `ip routing` in the config: FRR's `no ip forwarding` (EOS routes IPv4 only when told).

Not translated, because nothing in the twin uses them: `neighbor G maximum-routes` (a
guard, 0 = none), QoS, the management VRF and its static route.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabricc.twin.eos import Block, Interface, interfaces, section
from fabricc.twin.names import eos_linux
from fabricc.twin.nvue_frr import natural

_PER_FAMILY = ("send-community", "next-hop-self")  # neighbour settings FRR keeps per family
_FAMILIES = ("ipv4", "ipv6")  # EOS `address-family ipv4|ipv6` is FRR's `... unicast`


@dataclass(slots=True)
class _Neighbor:
    name: str  # a peer group, an address, or the Linux name of an interface neighbour
    unnumbered: bool = False
    group: str | None = None
    remote_as: str | None = None
    description: str | None = None
    timers: tuple[str, str] | None = None
    multihop: str | None = None
    update_source: str | None = None
    settings: list[str] = field(default_factory=list)  # per family: send-community, ...
    extended_nexthop: bool = False


@dataclass(slots=True)
class _Family:
    activate: list[str] = field(default_factory=list)
    networks: list[str] = field(default_factory=list)
    redistribute: list[str] = field(default_factory=list)


def _neighbor_line(
    words: list[str], neighbors: dict[str, _Neighbor], ports: dict[str, Interface]
) -> None:
    """One `neighbor ...` command of `router bgp`."""
    if words[1] == "interface" and len(words) >= 3:
        # neighbor interface Ethernet5/1 peer-group G remote-as N
        port = words[2]
        entry = neighbors.setdefault(eos_linux(port), _Neighbor(eos_linux(port), unnumbered=True))
        rest = words[3:]
        k = 0
        while k < len(rest):
            if rest[k : k + 2] == ["peer", "group"] and k + 2 < len(rest):
                entry.group, k = rest[k + 2], k + 3
            elif rest[k] in ("peer-group", "remote-as") and k + 1 < len(rest):
                if rest[k] == "peer-group":
                    entry.group = rest[k + 1]
                else:
                    entry.remote_as = rest[k + 1]
                k += 2
            else:
                k += 1
        if entry.description is None and port in ports and ports[port].description:
            entry.description = ports[port].description
        return
    name = words[1]
    entry = neighbors.setdefault(name, _Neighbor(name))
    rest = words[2:]
    if rest in (["peer", "group"], ["peer-group"]):
        return  # the group's declaration
    if rest[:2] == ["peer", "group"] and len(rest) == 3:
        entry.group = rest[2]
    elif rest[:1] == ["peer-group"] and len(rest) == 2:
        entry.group = rest[1]
    elif rest[:1] == ["remote-as"] and len(rest) == 2:
        entry.remote_as = rest[1]
    elif rest[:1] == ["description"]:
        entry.description = " ".join(rest[1:])
    elif rest[:1] == ["timers"] and len(rest) == 3:
        entry.timers = (rest[1], rest[2])
    elif rest[:1] == ["ebgp-multihop"]:
        entry.multihop = rest[1] if len(rest) > 1 else "255"
    elif rest[:1] == ["update-source"] and len(rest) == 2:
        entry.update_source = eos_linux(rest[1])
    elif rest[:1] and rest[0] in _PER_FAMILY:
        entry.settings.append(rest[0])


def _groups(bgp: Block) -> list[str]:
    return sorted(
        {
            b.words()[1]
            for b in bgp.children
            if b.words()[2:] in (["peer", "group"], ["peer-group"])
            and b.words()[:1] == ["neighbor"]
        }
    )


def _family(block: Block, family: _Family, neighbors: dict[str, _Neighbor]) -> None:
    for child in block.children:
        words = child.words()
        if words[:1] == ["network"] and len(words) >= 2:
            family.networks.append(words[1])
        elif words[:1] == ["redistribute"] and len(words) >= 2:
            family.redistribute.append(words[1])
        elif words[:1] == ["neighbor"] and len(words) >= 3:
            name = eos_linux(words[2]) if words[1] == "interface" else words[1]
            rest = words[3:] if words[1] == "interface" else words[2:]
            if rest == ["activate"]:
                family.activate.append(name)
            elif rest[:3] == ["next-hop", "address-family", "ipv6"]:
                neighbors.setdefault(name, _Neighbor(name)).extended_nexthop = True


def _interface_lines(ports: dict[str, Interface]) -> list[str]:
    lines: list[str] = []
    for name in sorted(ports, key=natural):
        port = ports[name]
        if port.vrf != "default" or eos_linux(name) == "eth0" or not port.routed:
            continue  # the management port lives in VRF MGMT, outside the routed fabric
        if not (port.addresses or port.shutdown):
            continue
        lines.append(f"interface {eos_linux(name)}")
        if port.description:
            lines.append(f" description {port.description}")
        lines.extend(
            f" {'ipv6' if ':' in address else 'ip'} address {address}" for address in port.addresses
        )
        if port.shutdown:
            lines.append(" shutdown")
        lines.extend(["exit", "!"])
    return lines


def _peer_lines(entry: _Neighbor) -> list[str]:
    name = entry.name
    lines: list[str] = []
    word = " interface" if entry.unnumbered else ""
    if entry.group:
        lines.append(f" neighbor {name}{word} peer-group {entry.group}")
        if entry.remote_as:
            lines.append(f" neighbor {name} remote-as {entry.remote_as}")
    else:
        lines.append(f" neighbor {name}{word} remote-as {entry.remote_as or 'external'}")
    return lines


def _settings(entry: _Neighbor) -> list[str]:
    name = entry.name
    lines: list[str] = []
    if entry.description:
        lines.append(f" neighbor {name} description {entry.description}")
    if entry.timers:
        lines.append(f" neighbor {name} timers {entry.timers[0]} {entry.timers[1]}")
    if entry.multihop:
        lines.append(f" neighbor {name} ebgp-multihop {entry.multihop}")
    if entry.update_source:
        lines.append(f" neighbor {name} update-source {entry.update_source}")
    if entry.extended_nexthop:
        lines.append(f" neighbor {name} capability extended-nexthop")
    return lines


def render(blocks: list[Block], hostname: str = "") -> str | None:
    """frr.conf for the switch whose startup-config parsed to `blocks`; None without BGP."""
    bgp = section(blocks, "router bgp")
    if bgp is None or len(bgp.words()) != 3:
        return None
    hostname = hostname or next(
        (b.words()[1] for b in blocks if b.words()[:1] == ["hostname"] and len(b.words()) == 2), ""
    )
    ports = interfaces(blocks)
    neighbors: dict[str, _Neighbor] = {}
    families: dict[str, _Family] = {}
    router: list[str] = [f"router bgp {bgp.words()[2]}"]
    tail: list[str] = []
    groups = _groups(bgp)
    maximum_paths: str | None = None
    for child in bgp.children:
        words = child.words()
        if words[:1] == ["router-id"] and len(words) == 2:
            router.append(f" bgp router-id {words[1]}")
        elif words[:2] == ["timers", "bgp"] and len(words) == 4:
            tail.append(f" timers bgp {words[2]} {words[3]}")
        elif words[:1] == ["maximum-paths"] and len(words) >= 2:
            maximum_paths = words[1]
        elif words == ["no", "bgp", "default", "ipv4-unicast"]:
            tail.append(" no bgp default ipv4-unicast")
        elif words == ["bgp", "bestpath", "as-path", "multipath-relax"]:
            tail.append(" bgp bestpath as-path multipath-relax")
        elif words[:1] == ["neighbor"] and len(words) >= 3:
            _neighbor_line(words, neighbors, ports)
        elif words[:1] == ["network"] and len(words) >= 2:
            families.setdefault("ipv4", _Family()).networks.append(words[1])
        elif words[:1] == ["redistribute"] and len(words) >= 2:
            families.setdefault("ipv4", _Family()).redistribute.append(words[1])
        elif words[:1] == ["address-family"] and len(words) == 2 and words[1] in _FAMILIES:
            _family(child, families.setdefault(words[1], _Family()), neighbors)
    router.extend([" bgp log-neighbor-changes", " no bgp ebgp-requires-policy", *tail])
    for group in groups:
        router.append(f" neighbor {group} peer-group")
        entry = neighbors.get(group)
        if entry is not None:
            if entry.remote_as:
                router.append(f" neighbor {group} remote-as {entry.remote_as}")
            router.extend(_settings(entry))
    members = sorted((n for n in neighbors if n not in groups), key=natural)
    for name in members:
        router.extend(_peer_lines(neighbors[name]))
        router.extend(_settings(neighbors[name]))
    for key in sorted(families):
        family = families[key]
        router.extend([" !", f" address-family {key} unicast"])
        router.extend(f"  network {prefix}" for prefix in family.networks)
        router.extend(f"  redistribute {source}" for source in family.redistribute)
        if maximum_paths is not None:
            router.append(f"  maximum-paths {maximum_paths}")
        for name in [*groups, *members]:
            entry = neighbors.get(name)
            if name in family.activate:
                router.append(f"  neighbor {name} activate")
            for setting in entry.settings if entry else []:
                router.append(f"  neighbor {name} {setting}")
        router.append(" exit-address-family")
    lines = [
        f"! frr.conf rendered by the fabricc twin from the EOS startup-config of {hostname}",
        "frr defaults traditional",
        f"hostname {hostname}",
        "log syslog informational",
        "service integrated-vtysh-config",
        "!",
    ]
    if not any(b.words()[:2] == ["ip", "routing"] and "vrf" not in b.words() for b in blocks):
        # `ip routing vrf X` routes only that VRF; the fabric is the default one
        lines.extend(["no ip forwarding", "!"])
    lines.extend(_interface_lines(ports))
    lines.extend([*router, "exit", "!"])
    return "\n".join(lines) + "\n"
