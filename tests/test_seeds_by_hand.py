"""seeds.txt's by-hand lines (issue 41): a switch without an OS gets, in writing, everything the
NVUE emitter sets on an access switch that has one - addresses, the relay, and the management
tree's routing (BGP unnumbered on every uplink cable, the design's ASNs, its announced subnet)."""

from __future__ import annotations

import re

from fabricc.ir import MGMT, UPLINK
from fabricc.synth.mgmtnet import management_net
from tests.provisioning_support import provisioning
from tests.support import compiled

EXAMPLE = "megascale-roce"


def _lines() -> dict[str, list[str]]:
    text = provisioning(EXAMPLE)["ztp/seeds.txt"]
    found = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if line[:1] != "#" and fields[1:2] == ["by hand"]:
            found[fields[0]] = fields[2:]
    return found


def _field(fields: list[str], start: str) -> str:
    matches = [f for f in fields if f.startswith(start)]
    assert len(matches) == 1, (start, fields)
    return matches[0]


def _expand(ports: str) -> set[str]:
    out: set[str] = set()
    for part in ports.split(","):
        first, _, last = part.partition("-")
        out.update(str(n) for n in range(int(first), int(last or first) + 1))
    return out


def test_by_hand_lines_carry_the_management_tree_routing() -> None:
    fabric, _ = compiled(EXAMPLE)
    net = management_net(fabric)
    lines = _lines()
    # every OOB access switch of this design has a model without an OS
    assert set(lines) == set(net.subnets)
    assert len(lines) == 8
    server = net.server.split("/")[0]
    for switch, fields in lines.items():
        access = net.subnets[switch]
        device = fabric.devices[switch]
        assert _field(fields, "management address") == f"management address {device.mgmt_ip}"
        gateway = re.fullmatch(
            r"gateway (\S+) on VLAN (\d+), access ports (\S+)", _field(fields, "gateway ")
        )
        assert gateway is not None
        assert gateway.group(1) == f"{access.gateway}/{access.network.prefixlen}"
        cabled = {k.b_port for k in fabric.links if k.kind == MGMT and k.b == switch}
        assert _expand(gateway.group(3)) == cabled
        relay = _field(fields, "DHCP relay")
        assert relay.startswith(f"DHCP relay to {server} from VLAN {gateway.group(2)}, upstream ")
        assert set(relay.rsplit(" ", 1)[1].split(",")) == set(access.uplinks)
        # BGP unnumbered on both ends of every uplink cable between access switches, the
        # neighbour's ASN its own
        bgp = re.fullmatch(
            r"BGP AS (\d+) router-id (\S+) unnumbered (.+)", _field(fields, "BGP AS")
        )
        assert bgp is not None
        assert int(bgp.group(1)) == access.asn
        assert bgp.group(2) == access.gateway
        peers = set(bgp.group(3).split())
        cables = {
            (k.a_port, k.b) if k.a == switch else (k.b_port, k.a)
            for k in fabric.links
            if k.kind == UPLINK and switch in (k.a, k.b)
        }
        assert peers == {f"{port}>{far}/{net.subnets[far].asn}" for port, far in cables}
        announced = _field(fields, "announce ").split()[1:]
        assert announced[0] == str(access.network)
        if access.server_link is not None:
            assert f"server port {access.server_port} address {access.server_link}" in fields
            assert str(access.server_link.network) in announced
    # ASNs are each switch's own
    asns = [re.search(r"BGP AS (\d+)", "\t".join(f)) for f in lines.values()]
    assert len({a.group(1) for a in asns if a}) == len(lines)
