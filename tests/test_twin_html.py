"""The twin's page in the HTML report: report/twin.html shows what the twin found, every failure
named, beside the design review (which links to it)."""

from __future__ import annotations

import re
from pathlib import Path

from fabricc.twin.html import write_page
from fabricc.twin.report import Report
from tests.support import compiled


def _report() -> Report:
    report = Report("lab", not_modelled=["ASIC buffers"])
    report.provisioning = {
        "by_usb": ["oob-leaf001"],
        "by_hand": ["oob-leaf002"],
        "by_dhcp": ["leaf003", "leaf004"],
        "not_provisioned": ["leaf005"],
        "failures": [{"device": "leaf005", "problem": "oob-leaf002 runs no DHCP relay"}],
    }
    report.networks["fabric"] = {
        "sessions": {
            "designed": 16,
            "failures": [{"device": "spine001", "session": "Ethernet0", "problem": "AS <77>"}],
        },
        "reachability": {"checked": 12, "failures": []},
        "drills": [
            {
                "drill": "one spine down",
                "down": ["spine001"],
                "pairs": 2,
                "still_reach": 2,
                "lost_by_design": [],
                "failures": [],
            }
        ],
    }
    report.networks["compute"] = {
        "fabric": "infiniband",
        "network": "compute",
        "subnet_manager": {"routing_engine": "ftree", "standbys": ["ufm02"], "failures": []},
        "routes": {"lids": 65, "pairs": 4096, "failures": []},
        "drills": [{"drill": "master subnet manager down", "down": ["ufm01"], "pairs": 4096,
                    "failures": [{"device": "ufm02", "problem": "did not take over as master"}]}],
    }  # fmt: skip
    report.networks["mgmt"] = {"booted": False, "reason": "no switch of it has an frr.conf"}
    return report


def test_the_page_names_counts_and_failures(tmp_path: Path) -> None:
    path = write_page(tmp_path, _report())
    assert path == tmp_path / "report" / "twin.html"
    page = path.read_text()
    text = re.sub(r"<[^>]+>", " ", page)
    assert "3 failures, each named below" in text
    assert re.search(r"by dhcp\s+2\s+leaf003, leaf004", text)
    assert re.search(r"by hand\s+1\s+oob-leaf002", text)  # seeds.txt's switches without an OS
    assert re.search(r"not provisioned\s+1\s+leaf005", text)
    assert "device=leaf005, problem=oob-leaf002 runs no DHCP relay" in text
    # a failure's text is escaped, not markup
    assert "AS &lt;77&gt;" in page and "AS <77>" not in page
    assert re.search(r"sessions\s+designed 16\s+1", text)
    assert "master subnet manager down: device=ufm02, problem=did not take over as master" in text
    assert "routing engine: ftree" in text and "standbys: ufm02" in text
    assert "pairs 4,096" in text
    assert "Not booted: no switch of it has an frr.conf" in text
    assert "ASIC buffers" in text
    assert "http" not in page.replace("http-equiv", "")  # self-contained: nothing fetched
    assert not list((tmp_path / "report").glob(".twin-*"))


def test_a_holding_twin_says_so(tmp_path: Path) -> None:
    report = Report("lab")
    report.networks["fabric"] = {"sessions": {"designed": 4, "failures": []}}
    page = write_page(tmp_path, report).read_text()
    assert "everything holds" in page
    assert '<span class="badge">' not in page


def test_the_design_review_links_the_twin_page() -> None:
    _, artifacts = compiled("roce-lab")
    index = next(content for path, content in artifacts if path == "report/index.html")
    assert '<a href="twin.html"' in str(index)
