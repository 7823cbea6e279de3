"""The twin's check rules on hand-made booted fabrics (no namespaces): which leaf the uplink
drill cuts, what the ECMP check counts towards a leaf whose router id is on an SVI, and how the
machine's own faults (neighbour table overflows) are told apart from the design's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabricc.twin import drills, lab, routing
from fabricc.twin.report import Report
from fabricc.twin.routing import Booted, Router, Wire, designed_ecmp, ecmp_target
from fabricc.twin.run import _refused_neighbors
from fabricc.twin.summary import summary_text

SVI_LEAF = "router bgp 65101\n bgp router-id {rid}\ninterface vlan20\n ip address {rid}/26\n"
LOOPBACK_LEAF = "router bgp 65001\n bgp router-id {rid}\ninterface lo\n ip address {rid}/32\n"


def _router(name: str, role: str, template: str, rid: str) -> Router:
    return Router(name, "ns", template.format(rid=rid), rid, role)


def test_a_tree_skips_the_uplink_drill_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    booted = Booted("oob")
    booted.routers["root"] = _router("root", "spine", SVI_LEAF, "10.0.0.1")
    for k in (1, 2):
        booted.routers[f"leaf{k}"] = _router(f"leaf{k}", "leaf", SVI_LEAF, f"10.0.{k}.1")
        booted.wires.append(Wire(f"U{k}", f"leaf{k}", "swp1", "root", f"swp{k}", "uplink"))
    monkeypatch.setattr(drills, "_drill", lambda *args, **_: {"drill": args[2]})
    results = {r["drill"]: r for r in drills.run(None, booted)}  # type: ignore[arg-type]
    assert "tree" in str(results["one leaf uplink down"]["skipped"])
    assert results["one leaf uplink down"]["failures"] == []


def test_a_leaf_with_a_second_path_is_drilled(monkeypatch: pytest.MonkeyPatch) -> None:
    booted = Booted("oob")
    booted.routers["root"] = _router("root", "spine", SVI_LEAF, "10.0.0.1")
    for k in (1, 2):
        booted.routers[f"leaf{k}"] = _router(f"leaf{k}", "leaf", SVI_LEAF, f"10.0.{k}.1")
    booted.wires = [
        Wire("U1", "leaf1", "swp1", "root", "swp1", "uplink"),  # leaf1: its only link
        Wire("U2", "leaf2", "swp1", "root", "swp2", "uplink"),
        Wire("U3", "leaf2", "swp2", "root", "swp3", "uplink"),
    ]
    taken: dict[str, list[Wire]] = {}

    def record(
        lab: object, booted: object, name: str, wires: list[Wire], *_: object, **__: object
    ) -> dict[str, object]:
        taken[name] = wires
        return {"drill": name}

    monkeypatch.setattr(drills, "_drill", record)
    drills.run(None, booted)  # type: ignore[arg-type]
    assert [w.cable for w in taken["one leaf uplink down"]] == ["U2"]


def test_ecmp_counts_towards_an_svi_router_id() -> None:
    booted = Booted("oob")
    booted.routers["s1"] = _router("s1", "spine", LOOPBACK_LEAF, "10.9.0.1")
    booted.routers["s2"] = _router("s2", "spine", LOOPBACK_LEAF, "10.9.0.2")
    booted.routers["a"] = _router("a", "leaf", SVI_LEAF, "10.128.0.1")
    booted.routers["b"] = _router("b", "leaf", LOOPBACK_LEAF, "10.64.255.1")
    booted.wires = [
        Wire(f"{leaf}{spine}", leaf, f"swp{spine}", f"s{spine}", f"swp{leaf}", "leaf-spine")
        for leaf in ("a", "b")
        for spine in (1, 2)
    ]
    # the access switch's router id is on its SVI: the check counts towards the SVI's /26
    assert ecmp_target(booted, booted.routers["a"]) == ("10.128.0.0/26", {"a"})
    assert ecmp_target(booted, booted.routers["b"]) == ("10.64.255.1/32", {"b"})
    assert designed_ecmp(booted, "b", {"a"}) == 2  # both spines on a shortest path


def test_routes_are_not_settled_before_every_session_has_sent_its_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """gb300-nvl72-spectrum-x: sessions up, queues empty, no route exchanged yet (FRR's
    coalesce time): two equal looks then said "settled" and the ECMP check counted 0 next hops."""
    booted = Booted("compute")
    booted.routers["leaf"] = _router("leaf", "leaf", LOOPBACK_LEAF, "10.0.0.1")
    received = {"swp1": {"state": "Established", "inq": 0, "outq": 0, "pfxRcd": 0}}
    monkeypatch.setattr(routing, "all_peers", lambda lab, routers: {"leaf": received})
    monkeypatch.setattr(routing, "_kernel_routes", lambda lab, router: {})
    assert routing.settled_state(None, booted) is None  # type: ignore[arg-type]
    received["swp1"]["pfxRcd"] = 3
    assert routing.settled_state(None, booted) is not None  # type: ignore[arg-type]
    # a session that is down holds nothing back: its failure will not change by waiting
    received["swp1"] = {"state": "Active", "inq": 0, "outq": 0}
    assert routing.settled_state(None, booted) is not None  # type: ignore[arg-type]


def test_neighbour_overflows_are_read_per_table_and_noted_only_when_they_rose(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    header = "entries  allocs   destroys hash_grows lookups  hits     table_fulls\n"
    ndisc = tmp_path / "ndisc_cache"
    ndisc.write_text(header + "00000010 00000001 0 0 0 0 00000002\n00000010 0 0 0 0 0 0000000a\n")
    monkeypatch.setattr(lab, "NEIGHBOR_STATS", {"IPv6": ndisc, "ARP": tmp_path / "absent"})
    assert lab.neighbor_overflows() == {"IPv6": 12}  # summed over the CPUs' rows, hexadecimal
    assert _refused_neighbors({"IPv6": 12}, {"IPv6": 12}) == []
    (note,) = _refused_neighbors({"IPv6": 12, "ARP": 0}, {"IPv6": 15, "ARP": 0})
    assert "refused 3 new IPv6 neighbour entries" in note


def test_the_machines_notes_reach_the_report_only_when_there_are_some() -> None:
    report = Report("design")
    assert "lab" not in json.loads(report.text())
    report.lab = ["the kernel refused 3 new IPv6 neighbour entries"]
    assert json.loads(report.text())["lab"] == report.lab
    assert "lab: the kernel refused 3" in summary_text(report)
    assert report.holds  # the machine's fault is not the design's failure
