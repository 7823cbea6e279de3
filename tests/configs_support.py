"""Test helper: read generated configs back, and spec variants with non-default settings."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import yaml

from fabricc.emit import Artifact
from tests.support import EXAMPLES, ROOT, compile_text

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where present: 4x faster

SONIC_SCHEMA = ROOT / "schemas" / "sonic-config-db.schema.json"
# Lossless RoCE settings that differ from every default (Cumulus Linux user guide, RoCE, gives NVIDIA's
# 26/3, 48/6; the Network Operator's CNP DSCP is 4).
CUSTOM_QOS = (
    "    qos: {roce_dscp: 24, roce_priority: 5, pfc_priority: 5, cnp_dscp: 4, cnp_priority: 7,\n"
    "          ecn_min_kb: 200, ecn_max_kb: 2000, ecn_probability: 50, roce_bandwidth_percent: 70}\n"
)


def by_path(artifacts: tuple[Artifact, ...] | list[Artifact]) -> dict[str, str]:
    return {path: text for path, text in artifacts if isinstance(text, str)}


def config_dbs(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    return {
        path.split("/")[1]: json.loads(text)
        for path, text in files.items()
        if path.startswith("configs/") and path.endswith("/config_db.json")
    }


def nvue(files: dict[str, str]) -> dict[str, dict[str, Any]]:
    """switch -> the `set` tree of its startup.yaml (which must be a list of one `set`)."""
    trees = {}
    for path, text in files.items():
        if path.startswith("configs/") and path.endswith("/startup.yaml"):
            assert not re.search(r"[&*]id\d+", text), f"{path}: YAML anchors or aliases"
            document = yaml.load(text, Loader=LOADER)
            assert isinstance(document, list) and len(document) == 1, path
            assert list(document[0]) == ["set"], path
            trees[path.split("/")[1]] = document[0]["set"]
    return trees


def cables(files: dict[str, str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files["cabling/cables.csv"])))


def with_custom_qos(example: str, network_line: str, tmp_path: Path) -> dict[str, str]:
    """The example with CUSTOM_QOS under the network whose `os:` line is `network_line`."""
    text = (EXAMPLES / f"{example}.yaml").read_text()
    assert network_line in text
    _, artifacts = compile_text(text.replace(network_line, network_line + CUSTOM_QOS), tmp_path)
    return by_path(artifacts)


def ipv4(interface: dict[str, Any]) -> dict[str, Any]:
    """An NVUE interface's IPv4 settings: `ipv4` from Cumulus Linux 5.15, `ip` up to 5.14."""
    section = interface.get("ipv4", interface.get("ip"))
    assert isinstance(section, dict), interface
    return section
