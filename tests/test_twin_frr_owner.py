"""`fabricc twin`: which frr.conf a switch runs - NVUE's render on Cumulus, the file on SONiC.

Cumulus Linux rewrites /etc/frr/frr.conf from startup.yaml when NVUE applies the config, so a
frr.conf lying beside startup.yaml never runs and a hand edit of startup.yaml must show; SONiC in
split-unified mode reads frr.conf as ZTP installed it. Real builds of spectrum-x-2plane
(Cumulus) and roce-lab (SONiC); no namespaces, no root.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from fabricc.twin.folder import load
from fabricc.twin.nvue import nvue_set
from fabricc.twin.routing import running_frr
from tests.test_twin import _built

STALE = "router bgp 65999\n bgp router-id 192.0.2.1\n"


def test_cumulus_runs_what_nvue_renders_even_beside_a_written_frr_conf(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root = tmp_path / "out"
    shutil.copytree(_built("spectrum-x-2plane", tmp_path_factory), root)
    startup = root / "configs/p1-leaf01/startup.yaml"
    text = startup.read_text()
    assert "autonomous-system: 4200000000" in text
    # the hand edit: the leaf's ASN, and a stale frr.conf beside it that NVUE would overwrite
    startup.write_text(
        text.replace("autonomous-system: 4200000000", "autonomous-system: 4200000077")
    )
    (root / "configs/p1-leaf01/frr.conf").write_text(STALE)
    folder = load(root)
    frr, rendered = running_frr(folder, "p1-leaf01", nvue_set(folder, "p1-leaf01"))
    assert rendered and frr is not None
    assert "router bgp 4200000077" in frr
    assert "65999" not in frr


def test_sonic_runs_frr_conf_as_installed(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    root = tmp_path / "out"
    shutil.copytree(_built("roce-lab", tmp_path_factory), root)
    (root / "configs/fabric-leaf001/frr.conf").write_text(STALE)
    folder = load(root)
    frr, rendered = running_frr(folder, "fabric-leaf001", None)
    assert (frr, rendered) == (STALE, False)
