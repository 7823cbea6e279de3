"""The in-band network's border links to the site network (site_uplinks): cabled to the hand-off,
ordered (the near module and the fiber, never the site's equipment), on ports the top tier keeps
for them, routed with an eBGP session, and read back by verify and the twin."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import yaml

from fabricc.build import build
from fabricc.emit.bom import emit as emit_bom
from fabricc.ir import EXTERNAL, SITE
from fabricc.twin.folder import load
from fabricc.verify.compare import compare
from fabricc.verify.model import MISWIRED, OK, UNEXPECTED, PlannedCable, SeenLink
from tests.support import compile_text, compiled

SPEC = """\
metadata: {name: site}
site: {rack: {power_kw: 45}}
nodes:
  dgx: {model: dgx-h100, count: 16, nodes_per_rack: 4}
networks:
  inband:
    role: inband
    dual_homed: true
    site_uplinks:
      count: 3
      addresses: 192.0.2.0/29
      peer_asn: 64512
      handoff: MMR-B
"""


def _table(artifacts: Sequence[tuple[str, str | bytes]], path: str) -> list[dict[str, str]]:
    text = dict(artifacts)[path]
    assert isinstance(text, str)
    return list(csv.DictReader(io.StringIO(text)))


def test_the_4su_superpod_orders_and_cables_its_four_cwdm4_uplinks() -> None:
    fabric, artifacts = compiled("superpod-h100-4su")
    site = [link for link in fabric.links if link.kind == SITE]
    assert len(site) == 4
    top = fabric.networks["inband"].switches["spine"]
    # round-robin over the top tier, two each, on distinct ports
    assert Counter(link.a for link in site) == dict.fromkeys(top, 2)
    assert len({(link.a, link.a_port) for link in site}) == 4
    far = fabric.devices["dc-network"]
    assert far.kind == EXTERNAL and far.rack is None
    rows = [r for r in _table(artifacts, "cabling/cables.csv") if r["kind"] == "site-uplink"]
    assert [r["b_port"] for r in sorted(rows, key=lambda r: r["cable_id"])] == [
        "site1",
        "site2",
        "site3",
        "site4",
    ]
    for row in rows:
        assert row["b_device"] == "dc-network" and row["b_rack"] == "MMR-A patch panel"
        assert row["a_transceiver"] == "MMA1L30-CM" and row["b_transceiver"] == ""
        assert row["medium"] == "smf" and row["cable_part"] == "LC-OS2-100"
        assert row["cable_id"].endswith(row["b_port"].removeprefix("site").zfill(6))
    lines = _table(emit_bom(fabric), "bom/bom.csv")
    bom = {r["part_number"]: r for r in lines if r["category"] != "spare"}
    # four near-end CWDM4 modules and four single-mode fibers; nothing of the site's
    assert bom["MMA1L30-CM"]["quantity"] == "4"
    assert bom["LC-OS2-100"]["quantity"] == "4"
    assert not any("external" in r["description"].lower() for r in bom.values())


def test_a_spec_without_site_uplinks_has_none(tmp_path: Path) -> None:
    fabric, _ = compile_text(SPEC.replace("count: 3", "count: 0"), tmp_path)
    assert not any(link.kind == SITE for link in fabric.links)
    assert not any(d.kind == EXTERNAL for d in fabric.devices.values())


def test_site_uplinks_are_routed_with_an_ebgp_session_to_the_site(tmp_path: Path) -> None:
    fabric, artifacts = compile_text(SPEC, tmp_path)
    site = sorted((link for link in fabric.links if link.kind == SITE), key=lambda x: x.b_port)
    assert [(link.b_ip, link.a_ip) for link in site] == [
        ("192.0.2.0", "192.0.2.1"),
        ("192.0.2.2", "192.0.2.3"),
        ("192.0.2.4", "192.0.2.5"),
    ]
    for link in site:
        text = dict(artifacts)[f"configs/{link.a}/startup.yaml"]
        assert isinstance(text, str)
        tree = {k: v for doc in yaml.safe_load(text) for k, v in doc["set"].items()}
        port = tree["interface"][f"swp{link.a_port}"]
        assert port["description"] == f"dc-network:{link.b_port}"
        addresses = port.get("ip", port.get("ipv4", {}))["address"]
        assert f"{link.a_ip}/31" in addresses
        bgp = tree["vrf"]["default"]["router"]["bgp"]
        neighbor = bgp["neighbor"][link.b_ip]
        assert neighbor["type"] == "numbered" and neighbor["remote-as"] == 64512
        assert tree["router"]["bgp"]["autonomous-system"] != 64512


def test_without_addresses_the_session_is_unnumbered_and_takes_any_site_as(
    tmp_path: Path,
) -> None:
    text = SPEC.replace("      addresses: 192.0.2.0/29\n      peer_asn: 64512\n", "")
    fabric, artifacts = compile_text(text, tmp_path)
    link = next(link for link in fabric.links if link.kind == SITE)
    startup = dict(artifacts)[f"configs/{link.a}/startup.yaml"]
    assert isinstance(startup, str)
    tree = {k: v for doc in yaml.safe_load(startup) for k, v in doc["set"].items()}
    neighbor = tree["vrf"]["default"]["router"]["bgp"]["neighbor"][f"swp{link.a_port}"]
    assert neighbor == {"type": "unnumbered", "remote-as": "external"}


def test_verify_takes_any_unknown_device_at_the_near_port_as_the_site() -> None:
    planned = [
        PlannedCable("S-1", ("spine1", "swp60"), ("dc-network", "site1"), "100G", external=True),
        PlannedCable("L-1", ("leaf1", "swp1"), ("spine1", "swp1"), "100G"),
    ]
    router = SeenLink(("spine1", "swp60"), ("border-rtr-7", "Ethernet1/1"), "100G")
    fabric_link = SeenLink(("leaf1", "swp1"), ("spine1", "swp1"), "100G")
    findings = compare(planned, [router, fabric_link])
    assert [f.status for f in findings] == [OK, OK]
    assert not any(f.status == UNEXPECTED for f in findings)
    # a design switch at the border port is a miswiring, not the site
    wrong = SeenLink(("spine1", "swp60"), ("leaf1", "swp1"), "100G")
    statuses = {f.cable: f.status for f in compare(planned, [wrong])}
    assert statuses["S-1"] == MISWIRED


def test_the_twin_keeps_border_cables_apart(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    build(spec, out)
    folder = load(out)
    assert len(folder.site_cables) == 3
    assert all(row["b_device"] == "dc-network" for row in folder.site_cables)
    assert not any(row["kind"] == "site-uplink" for row in folder.cables)
