"""Twin stage helper: systemd-networkd units (as `netplan generate` writes them) as `ip` commands.

Consumes the .link, .netdev and .network units of one host (file name -> text) and the links of
its namespace (name -> MAC address); produces the `ip` commands that configure the namespace as
networkd would (renames, bonds, VLANs, bridges and dummies, MTU, members, addresses, routes,
routing-policy rules), the state each interface must then show, and the unit lines the twin
cannot apply. netplan does the YAML semantics; this module only reads its output. Keys and
sections: systemd.network(5), systemd.netdev(5), systemd.link(5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

Section = tuple[str, list[tuple[str, str]]]
Command = tuple[str, ...]

# [Bond] key of systemd.netdev(5) -> option of `ip link add ... type bond` (ip-link(8))
BOND_OPTIONS = {
    "Mode": "mode",
    "TransmitHashPolicy": "xmit_hash_policy",
    "LACPTransmitRate": "lacp_rate",
    "AdSelect": "ad_select",
    "MinLinks": "min_links",
    "PrimaryReselectPolicy": "primary_reselect",
    "GratuitousARP": "num_grat_arp",
    "AllSlavesActive": "all_slaves_active",
    "ARPIPTargets": "arp_ip_target",
    "ARPValidate": "arp_validate",
    "ARPAllTargets": "arp_all_targets",
    "FailOverMACPolicy": "fail_over_mac",
}
BOND_TIMES = {  # time spans, in milliseconds for ip-link
    "MIIMonitorSec": "miimon",
    "UpDelaySec": "updelay",
    "DownDelaySec": "downdelay",
    "ARPIntervalSec": "arp_interval",
}
KINDS = ("bond", "vlan", "bridge", "dummy")
_SPAN = re.compile(r"(\d+(?:\.\d+)?)\s*(us|ms|s|sec|min|h)?")
_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "sec": 1000.0, "min": 60000.0, "h": 3600000.0}


def parse(text: str) -> list[Section]:
    """The sections of a unit in order, each with its keys in order: a section or key may
    repeat ([Route], Address=), which configparser does not keep."""
    sections: list[Section] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1], []))
        elif "=" in line and sections:
            key, value = line.split("=", 1)
            sections[-1][1].append((key.strip(), value.strip()))
    return sections


def values(sections: list[Section], section: str, key: str) -> list[str]:
    return [v for name, keys in sections if name == section for k, v in keys if k == key]


def first(sections: list[Section], section: str, key: str) -> str | None:
    found = values(sections, section, key)
    return found[-1] if found else None  # the last assignment wins (systemd.syntax(7))


def milliseconds(span: str) -> int:
    """A systemd time span ("100ms", "1s", "2min", "5" = seconds) in milliseconds."""
    total = 0.0
    for number, unit in _SPAN.findall(span):
        total += float(number) * _MS[unit or "s"]
    return round(total)


@dataclass(slots=True)
class Expected:
    """What an interface must show once the units are applied."""

    interface: str
    addresses: list[str] = field(default_factory=list)  # address/prefix
    routes: list[tuple[str, str, str]] = field(default_factory=list)  # (to, via, table)
    rules: list[tuple[str, str]] = field(default_factory=list)  # (from, table)
    mtu: int | None = None
    master: str | None = None


@dataclass(slots=True)
class Plan:
    commands: list[Command] = field(default_factory=list)
    expected: dict[str, Expected] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # bond -> the member that stands for it (a kernel without the bonding driver)
    stood_in: dict[str, str] = field(default_factory=dict)

    def members(self, interface: str) -> set[str]:
        """The interface and the links below it (a bond's members)."""
        below = {e.interface for e in self.expected.values() if e.master == interface}
        carrier = self.stood_in.get(interface)
        return {interface} | below | ({carrier} if carrier else set())


def _matches(sections: list[Section], name: str, mac: str | None, original: bool) -> bool:
    keys = [(k, v) for s, ks in sections if s == "Match" for k, v in ks]
    if not keys:
        return False
    for key, value in keys:
        if key in ("Name", "OriginalName") and (key == "OriginalName") == original:
            if not any(fnmatchcase(name, pattern) for pattern in value.split()):
                return False
        elif key in ("MACAddress", "PermanentMACAddress"):
            if mac is None or mac.lower() not in value.lower().split():
                return False
        elif key in ("Name", "OriginalName"):
            continue  # the other stage's name key
        else:
            return False  # Driver=, Path=, Type=: nothing in a namespace to match them on
    return True


def _route(keys: dict[str, str], interface: str) -> tuple[Command, tuple[str, str, str]]:
    to = keys.get("Destination", "0.0.0.0/0")
    to = "default" if to in ("0.0.0.0/0", "::/0") else to
    via, table = keys.get("Gateway", ""), keys.get("Table", "main")
    command: list[str] = ["route", "add"]
    kind = keys.get("Type", "unicast")
    command += [to] if kind == "unicast" else [kind, to]
    if via:
        command += ["via", via]
    if kind == "unicast":
        command += ["dev", interface]
    if keys.get("GatewayOnLink", "no").lower() in ("yes", "true", "1", "on"):
        command.append("onlink")
    if "Metric" in keys:
        command += ["metric", keys["Metric"]]
    if "PreferredSource" in keys:
        command += ["src", keys["PreferredSource"]]
    if "Scope" in keys:
        command += ["scope", keys["Scope"]]
    command += ["table", table, "proto", "static"]
    return tuple(command), (to, via, table)


def _rule(keys: dict[str, str]) -> tuple[Command, tuple[str, str]]:
    command = ["rule", "add"]
    for key, option in (
        ("From", "from"),
        ("To", "to"),
        ("TypeOfService", "tos"),
        ("FirewallMark", "fwmark"),
        ("IncomingInterface", "iif"),
        ("OutgoingInterface", "oif"),
        ("Priority", "priority"),
    ):
        if key in keys:
            command += [option, keys[key]]
    table = keys.get("Table", "main")
    command += ["table", table]
    return tuple(command), (keys.get("From", "all"), table)


def translate(units: dict[str, str], links: dict[str, str], *, bonding: bool = True) -> Plan:
    """The `ip` commands (without `ip -n NS`) that apply the units to a namespace whose links are
    `links` (name -> MAC address), in networkd's order: renames, virtual devices, MTU and
    members, links up, then addresses, routes and rules. Without the bonding driver (`bonding`
    false) a bond's primary member, else its first by name, takes the bond's name and stands for
    it, as one member stands for each bond on the switches."""
    plan = Plan()
    parsed = {name: parse(text) for name, text in sorted(units.items())}
    links = dict(links)
    for unit, sections in parsed.items():  # .link: udev renames before networkd starts
        if not unit.endswith(".link"):
            continue
        new = first(sections, "Link", "Name")
        for name, mac in sorted(links.items()):
            if new and new != name and _matches(sections, name, mac, original=True):
                plan.commands += [("link", "set", name, "down"), ("link", "set", name, "name", new)]
                links[new] = links.pop(name)
                break
    devices: dict[str, list[Section]] = {}
    for unit, sections in parsed.items():
        if unit.endswith(".netdev"):
            device, what = first(sections, "NetDev", "Name"), first(sections, "NetDev", "Kind")
            if device is None or what not in KINDS:
                plan.problems.append(f"{unit}: Kind={what} is not applied by the twin")
                continue
            devices[device] = sections
    networks: dict[str, list[Section]] = {}
    for unit, sections in parsed.items():
        if not unit.endswith(".network"):
            continue
        found = [
            n for n in sorted({*links, *devices}) if _matches(sections, n, links.get(n), False)
        ]
        if not found:
            names = " ".join(values(sections, "Match", "Name")) or unit
            plan.problems.append(f"{unit}: no interface {names} in the namespace")
        for name in found:
            networks.setdefault(name, sections)
    parents = {v: n for n, s in networks.items() for v in values(s, "Network", "VLAN")}
    for name, sections in sorted(devices.items(), key=lambda item: item[0] in parents):
        kind = str(first(sections, "NetDev", "Kind"))
        if kind == "bond" and not bonding:
            _stand_in(plan, name, networks)
            continue
        command: list[str] = ["link", "add"]
        if kind == "vlan":
            if name not in parents:
                plan.problems.append(f"{name}: VLAN without a parent (VLAN= of a .network)")
                continue
            command += ["link", parents[name], "name", name, "type", "vlan"]
            command += ["id", str(first(sections, "VLAN", "Id"))]
        else:
            command += [name, "type", kind]
        for key, option in BOND_OPTIONS.items() if kind == "bond" else ():
            for value in values(sections, "Bond", key):
                command += [option, value.replace(" ", ",")]
        for key, option in BOND_TIMES.items() if kind == "bond" else ():
            span = first(sections, "Bond", key)
            if span is not None:
                command += [option, str(milliseconds(span))]
        plan.commands.append(tuple(command))
        links[name] = ""
    for carrier in plan.stood_in.values():  # now the bond: the bond's unit configures it
        networks.pop(carrier, None)
    for name, sections in sorted(networks.items()):
        expected = plan.expected.setdefault(name, Expected(name))
        mtu = first(sections, "Link", "MTUBytes")
        if mtu is None and name in devices:
            mtu = first(devices[name], "NetDev", "MTUBytes")
        if mtu is not None:
            expected.mtu = int(mtu)
        for key in ("Bond", "Bridge"):
            master = first(sections, "Network", key)
            if master is not None:
                expected.master = master
    # masters first (a member takes its master's MTU when enslaved), then members' own
    order = sorted(plan.expected.values(), key=lambda e: (e.master is not None, e.interface))
    for expected in order:
        if expected.master is not None and expected.master not in plan.stood_in:
            plan.commands += [
                ("link", "set", expected.interface, "down"),
                ("link", "set", expected.interface, "master", expected.master),
            ]
        if expected.mtu is not None:
            plan.commands.append(("link", "set", expected.interface, "mtu", str(expected.mtu)))
    for name, sections in sorted(networks.items()):
        if first(sections, "Network", "PrimarySlave") in ("yes", "true", "1", "on"):
            master = plan.expected[name].master
            if master is not None and master not in plan.stood_in:
                plan.commands.append(("link", "set", master, "type", "bond", "primary", name))
    for expected in sorted(order, key=lambda e: (e.master is None, e.interface)):
        plan.commands.append(("link", "set", expected.interface, "up"))
    for name, sections in sorted(networks.items()):
        expected = plan.expected[name]
        for address in values(sections, "Network", "Address"):
            plan.commands.append(("address", "add", address, "dev", name))
            expected.addresses.append(address)
        routes = [dict(keys) for section, keys in sections if section == "Route"]
        routes += [{"Gateway": g} for g in values(sections, "Network", "Gateway")]
        for keys in routes:
            add, route = _route(keys, name)
            plan.commands.append(add)
            expected.routes.append(route)
        for keys in (dict(k) for s, k in sections if s == "RoutingPolicyRule"):
            add, rule = _rule(keys)
            plan.commands.append(add)
            expected.rules.append(rule)
        for key in ("DHCP", "IPv6AcceptRA"):
            setting = first(sections, "Network", key)
            if setting not in (None, "no", "false", "0", "off"):
                plan.problems.append(f"{name}: {key}={setting} is not applied by the twin")
    return plan


def _stand_in(plan: Plan, bond: str, networks: dict[str, list[Section]]) -> None:
    members = sorted(n for n, s in networks.items() if first(s, "Network", "Bond") == bond)
    primary = [n for n in members if first(networks[n], "Network", "PrimarySlave") == "yes"]
    if not members:
        plan.problems.append(f"{bond}: a bond without members")
        return
    carrier = (primary or members)[0]
    plan.stood_in[bond] = carrier
    plan.commands += [("link", "set", carrier, "down"), ("link", "set", carrier, "name", bond)]
