"""Twin reader of seeds.txt's by-hand lines: a switch without an OS, set up as its operator would.

Consumes provisioning/ztp/seeds.txt of the build folder (the file on disk: a hand edit shows)
and the Namer (a by-hand switch's cabling port N is interface swpN in the twin); produces per
by-hand switch the same plain facts the NVUE reader (twin/nvue.py) gives for a Cumulus access
switch - access VLAN per port, the SVI's address, the DHCP relay, routed ports - plus its BGP
(ASN, router-id, unnumbered uplinks, announced prefixes). The emitter's format is
emit/provisioning/byhand.py; a field the twin cannot read is named as a problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricc.twin.folder import BuildFolder
from fabricc.twin.names import Namer
from fabricc.twin.nvue import Relay, SwitchConfig

SEEDS = "provisioning/ztp/seeds.txt"
MARK = "by hand"
_GATEWAY = re.compile(r"gateway (\S+) on VLAN (\d+), access ports (\S+)$")
_RELAY = re.compile(r"DHCP relay to (\S+) from VLAN (\d+), upstream (\S+)$")
_SERVER_PORT = re.compile(r"server port (\S+) address (\S+)$")
_BGP = re.compile(r"BGP AS (\d+) router-id (\S+) unnumbered (.+)$")
_PEER = re.compile(r"(\S+)>(\S+)/(\S+)$")


@dataclass(slots=True)
class HandSwitch:
    config: SwitchConfig
    address: str = ""  # its management address
    asn: int | None = None
    router_id: str = ""
    neighbours: list[tuple[str, str, str]] = field(default_factory=list)  # (port, far, ASN)
    announce: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _ports(text: str) -> list[str]:
    """`1-3,7` -> ['1', '2', '3', '7'] (cabling port names)."""
    ports: list[str] = []
    for part in text.split(","):
        first, dash, last = part.partition("-")
        if dash and first.isdigit() and last.isdigit():
            ports.extend(str(n) for n in range(int(first), int(last) + 1))
        elif part and part != "none":
            ports.append(part)
    return ports


def by_hand_lines(folder: BuildFolder) -> list[list[str]]:
    """The tab-separated fields of every by-hand line of seeds.txt."""
    if not folder.has(SEEDS):
        return []
    found = []
    for line in folder.text(SEEDS).splitlines():
        fields = line.split("\t")
        if not line.startswith("#") and len(fields) >= 2 and fields[1].strip() == MARK:
            found.append([f.strip() for f in fields])
    return found


def _read(name: str, fields: list[str], namer: Namer) -> HandSwitch:
    hand = HandSwitch(SwitchConfig(name, "byhand"))
    config = hand.config
    for text in fields:
        if text.startswith("management address "):
            hand.address = text.split()[-1]
        elif gateway := _GATEWAY.match(text):
            vlan = int(gateway.group(2))
            config.svi[vlan] = [gateway.group(1)]
            for port in _ports(gateway.group(3)):
                config.access_vlan[namer.interface(name, port)] = vlan
        elif relay := _RELAY.match(text):
            config.relay = Relay(
                [relay.group(1)],
                [namer.interface(name, p) for p in _ports(relay.group(3))],
                [f"vlan{relay.group(2)}"],
                True,
            )
        elif server := _SERVER_PORT.match(text):
            config.addresses[namer.interface(name, server.group(1))] = [server.group(2)]
        elif bgp := _BGP.match(text):
            hand.asn, hand.router_id = int(bgp.group(1)), bgp.group(2)
            for peer in bgp.group(3).split():
                found = _PEER.match(peer)
                if found is None:
                    hand.problems.append(f"cannot read BGP neighbour {peer!r}")
                    continue
                port = namer.interface(name, found.group(1))
                hand.neighbours.append((port, found.group(2), found.group(3)))
        elif text.startswith("announce "):
            hand.announce = text.split()[1:]
        else:
            hand.problems.append(f"cannot read {text!r}")
    return hand


def by_hand(folder: BuildFolder, namer: Namer) -> dict[str, HandSwitch]:
    """Switch -> what its by-hand line of seeds.txt tells its operator to set."""
    return {fields[0]: _read(fields[0], fields[2:], namer) for fields in by_hand_lines(folder)}


def nvue_tree(hand: HandSwitch) -> dict[str, object]:
    """The NVUE `set` tree an operator's by-hand setup amounts to - what the NVUE emitter writes
    for an access switch with an OS - so the twin boots it as it boots a Cumulus access switch
    (twin/nvue_frr.py renders its FRR, twin/bridging.py its layer 2). The neighbour's ASN of the
    line is its remote-as: an edited ASN shows as a session that does not come up."""
    config = hand.config
    interfaces: dict[str, object] = {
        port: {"type": "swp", "bridge": {"domain": {"br_default": {"access": vlan}}}}
        for port, vlan in sorted(config.access_vlan.items())
    }
    for vlan, svi in sorted(config.svi.items()):
        interfaces[f"vlan{vlan}"] = {
            "type": "svi",
            "vlan": vlan,
            "ipv4": {"address": {a: {} for a in svi}},
        }
    for port, found in sorted(config.addresses.items()):
        interfaces[port] = {"type": "swp", "ipv4": {"address": {a: {} for a in found}}}
    for port, _, _ in hand.neighbours:
        interfaces.setdefault(port, {"type": "swp"})
    tree: dict[str, object] = {"system": {"hostname": config.name}, "interface": interfaces}
    if config.svi:
        vlans: dict[str, object] = {str(v): {} for v in sorted(config.svi)}
        tree["bridge"] = {"domain": {"br_default": {"vlan": vlans}}}
    if hand.asn is not None and hand.neighbours:
        neighbours = {
            port: {"type": "unnumbered", "remote-as": int(asn) if asn.isdigit() else "external"}
            for port, _, asn in hand.neighbours
        }
        tree["router"] = {"bgp": {"autonomous-system": hand.asn, "router-id": hand.router_id}}
        family = {
            "network": {prefix: {} for prefix in hand.announce},
            "multipaths": {"ebgp": len(neighbours)},
        }
        tree["vrf"] = {
            "default": {
                "router": {
                    "bgp": {"address-family": {"ipv4-unicast": family}, "neighbor": neighbours}
                }
            }
        }
    return tree
