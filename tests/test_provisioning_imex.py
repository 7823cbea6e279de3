"""IMEX nodes files: one per multi-node NVLink domain (an NVL72 rack), listing the in-band
address of every compute tray of the domain, one per line in tray order - the addresses NetBox
gets for the trays' in-band interfaces - and nothing for single-node domains."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from tests.support import EXAMPLES, compile_text, compiled


def _inband(artifacts: dict[str, str | bytes]) -> dict[str, str]:
    text = artifacts["provisioning/netbox/08-ip-addresses.csv"]
    assert isinstance(text, str)
    return {
        row["device"]: row["address"].split("/")[0]
        for row in csv.DictReader(io.StringIO(text))
        if row["interface"] != "BMC" and row["is_primary"] == "true"
    }


@pytest.mark.parametrize("example", ["gb200-nvl72-su", "gb300-nvl72-xdr"])
def test_one_nodes_file_per_nvl72_domain_with_the_trays_inband_addresses(example: str) -> None:
    fabric, artifacts = compiled(example)
    files = dict(artifacts)
    inband = _inband(files)
    domains = [d for d in fabric.nvlink_domains if len(d.members) > 1]
    assert domains
    written = sorted(p for p in files if p.startswith("provisioning/imex/") and p.endswith(".cfg"))
    assert written == sorted(f"provisioning/imex/{d.name}/nodes_config.cfg" for d in domains)
    seen: set[str] = set()
    for domain in domains:
        text = files[f"provisioning/imex/{domain.name}/nodes_config.cfg"]
        assert isinstance(text, str)
        lines = text.splitlines()
        assert len(lines) == 18  # the compute trays of an NVL72 rack
        assert lines == [inband[tray] for tray in domain.members]
        assert not seen & set(lines)
        seen |= set(lines)
    readme = files["provisioning/imex/README.md"]
    assert isinstance(readme, str)
    assert "/etc/nvidia-imex/nodes_config.cfg" in readme and "NCCL_MNNVL_ENABLE" in readme


def test_no_imex_files_without_multi_node_domains() -> None:
    _, artifacts = compiled("superpod-h100-4su")
    assert not [p for p, _ in artifacts if p.startswith("provisioning/imex/")]


def test_a_domain_without_inband_addresses_gets_no_file_and_is_named(tmp_path: Path) -> None:
    """mixed-gb200-gb300 without its in-band network: IMEX has no addresses to list."""
    text = (EXAMPLES / "mixed-gb200-gb300.yaml").read_text()
    start, end = text.index("  inband:\n"), text.index("  oob:\n")
    text = (text[:start] + text[end:]).replace("    uplink_to: inband\n", "")
    fabric, artifacts = compile_text(text, tmp_path)
    files = dict(artifacts)
    assert not any(fabric.devices[m].inband_ip for d in fabric.nvlink_domains for m in d.members)
    readme = files["provisioning/imex/README.md"]
    assert isinstance(readme, str)
    assert readme.count("no file: a tray has no in-band address") == 16
    assert not [p for p in files if p.endswith("nodes_config.cfg")]
