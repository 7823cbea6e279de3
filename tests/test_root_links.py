"""Issue 41: a management tree's root provisions itself by DHCP through the in-band network
(synth/rootlinks.py). Its management port is cabled to a top-tier switch its uplinks reach, on a
routed /31 that switch relays from; the cable, its modules, the addresses, the relay, Kea's
reservation and seeds.txt all say so - and where a root cannot have such a link, seeds.txt says
why it stays a seed."""

from __future__ import annotations

import csv
import io
import ipaddress
import json

import yaml

from fabricc.ir import MGMT, UPLINK
from fabricc.synth.mgmtnet import management_net
from tests.support import compiled


def _files(name: str) -> dict[str, str]:
    _, artifacts = compiled(name)
    return {path: text for path, text in artifacts if isinstance(text, str)}


def test_roots_hang_off_the_in_band_top_tier() -> None:
    fabric, _ = compiled("superpod-h100-4su")
    files = _files("superpod-h100-4su")
    net = management_net(fabric)
    roots = [s for s in net.subnets if s not in net.served_by]
    assert sorted(roots) == ["oob-dgx-leaf001", "oob-leaf001"]
    assert sorted(net.root_links) == sorted(roots)
    assert not set(roots) & set(net.seeds)  # no USB drive for a tree's root
    rows = list(csv.DictReader(io.StringIO(files["cabling/cables.csv"])))
    kea = json.loads(files["provisioning/kea/kea-dhcp4.conf"])["Dhcp4"]["subnet4"]
    for root in roots:
        link = net.root_links[root]
        assert link.switch in net.inband.real if net.inband else False
        # a switch its own uplinks reach
        assert any(k.kind == UPLINK and k.a == root and k.b == link.switch for k in fabric.links), (
            root
        )
        # the cable: eth0 to a cage, a Cat6 cord into a 1000BASE-T SFP in a QSA
        [row] = [r for r in rows if r["a_device"] == root and r["a_port"] == "eth0"]
        assert (row["b_device"], row["b_port"], row["kind"]) == (link.switch, link.port, MGMT)
        assert (row["medium"], row["speed_gbps"], row["b_transceiver"]) == (
            "cat6",
            "1",
            "MC3208411-T",
        )
        assert row["cable_part"].startswith("CAT6-") and row["a_rack"] and row["b_rack"]
        # the addresses: a /31, the switch's end first, the root's its management address
        assert link.network.prefixlen == 31
        assert ipaddress.ip_address(link.relay) == link.network.network_address
        assert fabric.devices[root].mgmt_ip == link.address
        assert link.network.subnet_of(ipaddress.IPv4Network(fabric.loaded.spec.addressing.oob))
        # Kea: the /31, the switch its router, the root reserved by the port's circuit-id
        [subnet] = [s for s in kea if s["subnet"] == str(link.network)]
        assert subnet["option-data"] == [{"name": "routers", "data": link.relay}]
        [reservation] = subnet["reservations"]
        assert reservation["circuit-id"] == f"'swp{link.port}'"
        assert (reservation["ip-address"], reservation["hostname"]) == (link.address, root)
        [option] = reservation["option-data"]
        assert option["code"] == 239 and option["data"].endswith(f"/{root}/ztp.sh")
        # the root's eth0 on the /31, its gateway the relaying switch
        nvue = yaml.safe_load(files[f"configs/{root}/startup.yaml"])[0]["set"]
        eth0 = nvue["interface"]["eth0"]
        assert eth0["ipv4"]["address"] == {f"{link.address}/31": {}}
        assert eth0["ipv4"]["gateway"] == {link.relay: {}}
        # the relaying switch: a routed 1G port, a DHCP relay from it with the port as
        # circuit-id, the /31 announced
        top = yaml.safe_load(files[f"configs/{link.switch}/startup.yaml"])[0]["set"]
        port = top["interface"][f"swp{link.port}"]
        assert port["link"]["speed"] == "1G" and port["description"] == f"{root}:eth0"
        assert port["ipv4"]["address"] == {f"{link.relay}/31": {}}
        relay = top["service"]["dhcp-relay"]["default"]
        assert f"swp{link.port}" in relay["downstream-interface"]
        assert relay["agent"]["use-pif-circuit-id"] == {"state": "enabled"}
        [group] = relay["server-group"].values()
        assert group["server"] == {net.server: {}} and group["upstream-interface"]
        bgp = top["vrf"]["default"]["router"]["bgp"]["address-family"]["ipv4-unicast"]
        assert str(link.network) in bgp["network"]
    # the BOM: one adapter and one module per root link
    bom = list(csv.DictReader(io.StringIO(files["bom/bom.csv"])))
    counts = {
        row["part_number"]: row["quantity"] for row in bom if row["category"] == "transceiver"
    }
    assert counts["MAM1Q00A-QSA28"] == counts["MC3208411-T"] == str(len(roots))
    # seeds.txt: the roots are named as provisioned by DHCP, not listed as seeds
    seeds = files["provisioning/ztp/seeds.txt"]
    listed = [line.split("\t")[0] for line in seeds.splitlines() if not line.startswith("#")]
    assert listed == net.seeds and not set(roots) & set(listed)
    for root in roots:
        assert f"# {root} (a management tree's root): by DHCP on" in seeds


def test_a_root_that_holds_the_site_server_stays_a_seed_and_says_why() -> None:
    # no server node: the site's server hangs off the first tree's root, which the in-band
    # network reaches only through that root - it keeps its USB drive, the others do not
    fabric, _ = compiled("mixed-gb200-gb300")
    net = management_net(fabric)
    roots = [s for s in net.subnets if s not in net.served_by]
    [site] = [s for s in roots if net.subnets[s].server_port is not None]
    assert site in net.seeds and site not in net.root_links
    assert sorted(net.root_links) == sorted(set(roots) - {site})
    seeds = _files("mixed-gb200-gb300")["provisioning/ztp/seeds.txt"]
    [line] = [line for line in seeds.splitlines() if line.startswith(f"{site}\t")]
    assert "holds the site's provisioning server" in line


def test_an_oob_network_that_uplinks_nowhere_keeps_its_roots() -> None:
    # no in-band network to relay for them: no root link, the roots stay seeds
    fabric, _ = compiled("roce-lab")
    net = management_net(fabric)
    assert not net.root_links
    assert not any(
        link.kind == MGMT and fabric.devices[link.b].network != "oob" for link in fabric.links
    )
    assert sorted(net.seeds) == sorted(s for s in net.subnets if s not in net.served_by)
