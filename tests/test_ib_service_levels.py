"""How InfiniBand service levels are chosen, said where NCCL reads them: NCCL sets one SL
(NCCL_IB_SL) on every connection and makes no path record query, so a torus routed by
torus-2QoS (dateline SLs) is refused where NCCL runs and 'auto' routes a torus with Nue on one VL, dragonfly+ says
that DFSSSP is held to VL 0, and a fat-tree says its engine needs one SL."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricc.emit import Artifact
from fabricc.errors import DesignError
from tests.support import compile_text, compiled, torus_2qos_storage_spec


def _env(artifacts: tuple[Artifact, ...]) -> str:
    texts = [c for p, c in artifacts if p.startswith("nccl/") and p.endswith(".env")]
    assert len(texts) == 1 and isinstance(texts[0], str)
    return texts[0]


def _sl_block(env: str) -> str:
    """The comment above NCCL_IB_SL and the setting."""
    blocks = env.split("\n\n")
    found = [b for b in blocks if "\nNCCL_IB_SL=" in b]
    assert len(found) == 1
    return found[0]


def test_torus_runs_nue_on_sl0_and_refuses_torus_2qos_for_nccl(tmp_path: Path) -> None:
    """A compute torus defaults to Nue held to one VL (no warning, no 'NOT deadlock-free'
    comment); naming torus-2QoS there is an error with the one-SL choices; a storage torus
    (no NCCL) may keep torus-2QoS."""
    fabric, artifacts = compiled("torus-3d-h100")
    assert not [w for w in fabric.warnings if "torus-2QoS" in w.message]
    block = _sl_block(_env(artifacts))
    assert block.endswith("\nNCCL_IB_SL=0")
    assert "NOT deadlock-free" not in block
    assert "nue_max_num_vls 1" in block
    text = torus_2qos_storage_spec().replace("    role: storage\n", "    role: compute\n")
    with pytest.raises(DesignError) as raised:
        compile_text(text, tmp_path)
    message = str(raised.value)
    assert "networks.compute.subnet_manager.routing_engine" in message
    assert "path record query" in message and "NCCL_IB_SL" in message
    assert "nue_max_num_vls 1" in message and "routing_engine: updn" in message
    (tmp_path / "storage").mkdir()
    storage, _ = compile_text(torus_2qos_storage_spec(), tmp_path / "storage")
    assert not [w for w in storage.warnings if "torus-2QoS" in w.message]


def test_dragonfly_plus_says_dfsssp_is_held_to_vl0() -> None:
    fabric, artifacts = compiled("dragonfly-plus-h100")
    assert not [w for w in fabric.warnings if "torus-2QoS" in w.message]
    block = _sl_block(_env(artifacts))
    assert "dfsssp" in block and "max_op_vls 1" in block and "ERR AD25" in block
    conf = dict(artifacts)["configs/compute-sm/opensm.conf"]
    assert isinstance(conf, str) and "\nmax_op_vls 1\n" in conf


def test_fat_tree_sl0_is_the_engines_one_sl() -> None:
    fabric, artifacts = compiled("superpod-h100-4su")
    assert not [w for w in fabric.warnings if "torus-2QoS" in w.message]
    block = _sl_block(_env(artifacts))
    # the comment names no engine the subnet manager does not run: 'auto' picks per subnet
    engines = {
        line.split()[1]
        for path, text in artifacts
        if path.endswith("/opensm.conf") and isinstance(text, str)
        for line in text.splitlines()
        if line.startswith("routing_engine ")
    }
    assert engines and engines <= {"ftree", "updn"}
    assert "ftree or updn (its opensm.conf names which) routes credit-loop free" in block
