"""verify without the tools: the comparison rules and the parsers' errors.

A crossed pair is one swap; a cable plugged into the wrong free port is a move; a link between
unplanned ports is unexpected; another network's cable is ignored. Malformed discovery files are
errors at FILE:LINE:COL, never tracebacks.
"""

from __future__ import annotations

import json

import pytest

from fabricc.errors import SpecError
from fabricc.verify import ibnetdiscover, lldp
from fabricc.verify.compare import compare
from fabricc.verify.model import (
    MISSING,
    MISWIRED,
    OK,
    UNEXPECTED,
    WRONG_SPEED,
    PlannedCable,
    SeenLink,
)

PLAN = [
    PlannedCable("C-1", ("h1", "p0"), ("leaf1", "1"), "400G"),
    PlannedCable("C-2", ("h2", "p0"), ("leaf1", "2"), "400G"),
    PlannedCable("C-3", ("h3", "p0"), ("leaf1", "3"), "400G"),
    PlannedCable("C-4", ("h4", "p0"), ("leaf1", "4"), "400G"),
]


def test_crossed_cables_are_one_swap_and_a_stray_end_is_a_move() -> None:
    seen = [
        SeenLink(("h1", "p0"), ("leaf1", "2"), "400G"),  # C-1 and C-2 crossed
        SeenLink(("leaf1", "1"), ("h2", "p0"), "400G"),
        SeenLink(("h3", "p0"), ("leaf1", "9"), "400G"),  # C-3 in a free port
        SeenLink(("leaf1", "4"), ("h4", "p0"), "100G"),  # C-4 slow
        SeenLink(("leaf1", "20"), ("h9", "p0"), None),  # nobody planned this
        SeenLink(("oob1", "1"), ("leaf1", "eth0"), None),  # another network's cable
    ]
    findings = compare(PLAN, seen, elsewhere=frozenset({("leaf1", "eth0")}))
    by_cable = {f.cable: f for f in findings}
    swap = "swap the connectors at leaf1:1 and leaf1:2 (cables C-1 and C-2 are crossed)"
    assert (by_cable["C-1"].status, by_cable["C-1"].detail) == (MISWIRED, swap)
    assert by_cable["C-2"].status == MISWIRED
    assert by_cable["C-2"].detail.startswith("swap the connectors at leaf1:")
    assert (by_cable["C-3"].status, by_cable["C-3"].detail) == (
        MISWIRED,
        "the cable at h3:p0 goes to leaf1:3, not leaf1:9",
    )
    assert (by_cable["C-4"].status, by_cable["C-4"].detail) == (
        WRONG_SPEED,
        "planned 400G, found 100G",
    )
    assert [(f.status, f.found) for f in findings if not f.cable] == [
        (UNEXPECTED, "h9:p0 - leaf1:20")
    ]
    assert compare(PLAN, seen[3:4], check_speed=False)[3].status == OK
    assert compare(PLAN, [])[0].status == MISSING


def test_widths_count_even_without_the_speed_check() -> None:
    plan = [PlannedCable("I-1", ("h1", "p"), ("leaf1", "1/1"), "4xNDR")]
    narrow = [SeenLink(("h1", "p"), ("leaf1", "1/1"), "1xSDR")]
    slow = [SeenLink(("h1", "p"), ("leaf1", "1/1"), "4xSDR")]
    assert compare(plan, narrow, check_speed=False)[0].status == WRONG_SPEED
    assert compare(plan, slow, check_speed=False)[0].status == OK
    assert compare(plan, slow)[0].detail == "planned 4xNDR, found 4xSDR"


def test_ibnetdiscover_text_is_parsed_with_rates() -> None:
    text = (
        "vendid=0x2c9\n"
        'Switch\t64 "S-0000000000000010"\t\t# "leaf1" base port 0 lid 3 lmc 0\n'
        '[1]\t"H-0000000000000020"[1](21) \t\t# "h1 mlx5_0" lid 4 4xNDR\n'
        "\n"
        'Ca\t1 "H-0000000000000020"\t\t# "h1 mlx5_0"\n'
        '[1](21) \t"S-0000000000000010"[1]\t\t# lid 4 lmc 0 "leaf1" lid 3 4xNDR\n'
    )
    nodes = ibnetdiscover.parse(text, "f")
    assert nodes[0x10].switch and nodes[0x10].description == "leaf1"
    assert nodes[0x20].description == "h1 mlx5_0"
    assert (nodes[0x10].ports[1].far_guid, nodes[0x10].ports[1].rate) == (0x20, "4xNDR")


def test_malformed_discovery_files_are_positioned_errors() -> None:
    with pytest.raises(SpecError) as caught:
        ibnetdiscover.parse('# header\n[1]\t"S-01"[2]\n', "ib.txt")
    assert str(caught.value).startswith("ib.txt:2:1: error: port line before any Switch or Ca")
    with pytest.raises(SpecError) as caught:
        ibnetdiscover.parse("hello\n", "ib.txt")
    assert str(caught.value).startswith("ib.txt:1:1: error: no InfiniBand nodes found")
    with pytest.raises(SpecError) as caught:
        lldp.parse('{"lldp": [\n  {"interface": ]}', "leaf1.json")
    assert str(caught.value).startswith("leaf1.json:2:17: error: not JSON")
    with pytest.raises(SpecError) as caught:
        lldp.parse(json.dumps({"lldp": [{"interface": [{"name": "swp1"}]}]}), "leaf1.json")
    assert "lacks its name, neighbour system or port" in str(caught.value)


def test_lldp_port_and_speed() -> None:
    entry = {
        "name": "swp1",
        "chassis": [{"name": [{"value": "spine1"}]}],
        "port": [
            {
                "id": [{"type": "mac", "value": "aa:bb:cc:dd:ee:ff"}],
                "descr": [{"value": "swp9"}],
                "auto-negotiation": [{"current": [{"value": "100GbaseCR4 - copper"}]}],
            }
        ],
    }
    (neighbor,) = lldp.parse(json.dumps({"lldp": [{"interface": [entry]}]}), "leaf1.json")
    assert (neighbor.interface, neighbor.system, neighbor.port, neighbor.speed) == (
        "swp1",
        "spine1",
        "swp9",
        100,
    )
