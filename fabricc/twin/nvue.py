"""Twin reader of switch configs: the settings of one switch as its OS would apply them.

Consumes configs/<switch>/startup.yaml (NVUE, Cumulus), config_db.json (SONiC) or startup-config
(EOS CLI, fabricc.twin.eos) from the build folder; produces plain facts the twin applies with
Linux tools: interface MTUs, access VLANs, SVI addresses and the DHCP relay (servers, upstream
and downstream interfaces, circuit-id mode).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import yaml

from fabricc.errors import Location, SpecError, error
from fabricc.twin import eos
from fabricc.twin.folder import BuildFolder
from fabricc.twin.names import eos_linux

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # PyYAML without libyaml
    _Loader = yaml.SafeLoader


@dataclass(slots=True)
class Relay:
    servers: list[str]
    upstream: list[str]
    downstream: list[str]  # SVIs (vlanN) or ports
    port_circuit_id: bool  # use-pif-circuit-id: the circuit-id is the physical port


@dataclass(slots=True)
class SwitchConfig:
    name: str
    os: str
    mtu: dict[str, int] = field(default_factory=dict)  # interface -> MTU
    access_vlan: dict[str, int] = field(default_factory=dict)  # bridge port -> its VLAN
    svi: dict[int, list[str]] = field(default_factory=dict)  # VLAN -> addresses "a.b.c.d/n"
    addresses: dict[str, list[str]] = field(default_factory=dict)  # routed interface -> addrs
    relay: Relay | None = None


def _mapping(value: object) -> dict[str, object]:
    return {str(k): v for k, v in value.items()} if isinstance(value, dict) else {}


def nvue_set(folder: BuildFolder, switch: str) -> dict[str, object]:
    """The merged `set` of a startup.yaml (a list of {set: ...} documents)."""
    relative = f"configs/{switch}/startup.yaml"
    try:
        data = yaml.load(folder.text(relative), Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = Location(
            folder.path(relative).as_posix(),
            mark.line + 1 if mark else 1,
            mark.column + 1 if mark else 1,
        )
        raise SpecError([error("startup.yaml is not YAML", location=where)]) from None
    merged: dict[str, object] = {}
    for item in data if isinstance(data, list) else []:
        for key, value in _mapping(_mapping(item).get("set")).items():
            merged[key] = value
    return merged


def _cumulus(folder: BuildFolder, switch: str) -> SwitchConfig:
    config = SwitchConfig(switch, "cumulus")
    tree = nvue_set(folder, switch)
    for name, value in sorted(_mapping(tree.get("interface")).items()):
        entry = _mapping(value)
        mtu = _mapping(entry.get("link")).get("mtu")
        if isinstance(mtu, int):
            config.mtu[name] = mtu
        domain = _mapping(_mapping(_mapping(entry.get("bridge")).get("domain")).get("br_default"))
        access = domain.get("access")
        if isinstance(access, int):
            config.access_vlan[name] = access
        addresses = sorted(_mapping(_mapping(entry.get("ipv4")).get("address")))
        vlan = entry.get("vlan")
        if entry.get("type") == "svi" and isinstance(vlan, int):
            config.svi[vlan] = addresses
        elif addresses:
            config.addresses[name] = addresses
    relay = _mapping(_mapping(_mapping(tree.get("service")).get("dhcp-relay")).get("default"))
    if relay:
        servers: list[str] = []
        upstream: list[str] = []
        for group in _mapping(relay.get("server-group")).values():
            servers.extend(sorted(_mapping(_mapping(group).get("server"))))
            upstream.extend(sorted(_mapping(_mapping(group).get("upstream-interface"))))
        agent = _mapping(relay.get("agent"))
        pif = _mapping(agent.get("use-pif-circuit-id")).get("state") == "enabled"
        config.relay = Relay(
            servers,
            upstream,
            sorted(_mapping(relay.get("downstream-interface"))),
            pif and agent.get("state") == "enabled",
        )
    return config


def _sonic(folder: BuildFolder, switch: str) -> SwitchConfig:
    config = SwitchConfig(switch, "sonic")
    db = _mapping(folder.json(f"configs/{switch}/config_db.json"))
    for name, value in sorted(_mapping(db.get("PORT")).items()):
        mtu = _mapping(value).get("mtu")
        if isinstance(mtu, str) and mtu.isdecimal():
            config.mtu[name] = int(mtu)
    for key in sorted(_mapping(db.get("INTERFACE"))):
        name, _, address = key.partition("|")
        if address:
            config.addresses.setdefault(name, []).append(address)
    return config


def _eos(blocks: list[eos.Block], switch: str) -> SwitchConfig:
    """MTUs and addresses of an EOS switch, keyed by their Linux names (et5_1)."""
    config = SwitchConfig(switch, "eos")
    for name, port in sorted(eos.interfaces(blocks).items()):
        if port.mtu is not None:
            config.mtu[eos_linux(name)] = port.mtu
        if port.addresses and port.vrf == "default":
            config.addresses[eos_linux(name)] = list(port.addresses)
    return config


def switch_config(folder: BuildFolder, switch: str) -> SwitchConfig | None:
    if folder.has(f"configs/{switch}/config_db.json"):
        return _sonic(folder, switch)
    if folder.has(f"configs/{switch}/startup.yaml"):
        return _cumulus(folder, switch)
    blocks = eos.startup_config(folder, switch)
    if blocks is not None:
        return _eos(blocks, switch)
    return None
