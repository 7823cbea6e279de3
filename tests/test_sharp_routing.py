"""SHARP and adaptive routing per topology: NVIDIA's SM runs the engine NVIDIA uses for the
topology (dfp on Dragonfly+; NVIDIA SHARP, "Setting up NVIDIA SHARP Environment"; InfiniBand
Cluster Bring-up Procedure, "Adaptive Routing": DF_PLUS), every subnet's files say which SM
they are for, and SHARP with NCCL's CollNet is turned off, with the reason, where the SHARP
Aggregation Manager builds no tree under the engine."""

from __future__ import annotations

import re
from pathlib import Path

from tests.configs_support import by_path
from tests.support import EXAMPLES, compile_text, compiled

SM = "configs/compute-sm/"


def _env(files: dict[str, str]) -> str:
    envs = [t for p, t in files.items() if p.startswith("nccl/") and p.endswith(".env")]
    assert len(envs) == 1
    return envs[0]


def test_dragonfly_plus_runs_dfp_under_nvidias_sm_with_sharp() -> None:
    files = by_path(compiled("dragonfly-plus-h100")[1])
    upstream, nvidia = files[SM + "opensm.conf"], files[SM + "nvidia-sm.conf"]
    assert re.search(r"^routing_engine dfsssp$", upstream, re.M)
    assert "For upstream OpenSM 3.3.x" in upstream and "sharp_enabled" not in upstream
    assert re.search(r"^routing_engine dfp$", nvidia, re.M)
    assert "For NVIDIA's SM" in nvidia and "DF_PLUS" in nvidia
    assert re.search(r"^sharp_enabled 2$", nvidia, re.M)
    assert "\nNCCL_COLLNET_ENABLE=1\n" in _env(files)


def test_torus_turns_sharp_and_collnet_off_with_the_reason() -> None:
    files = by_path(compiled("torus-3d-h100")[1])
    nvidia = files[SM + "nvidia-sm.conf"]
    assert re.search(r"^routing_engine nue$", nvidia, re.M)
    assert re.search(r"^sharp_enabled 1$", nvidia, re.M)
    assert "Setting up NVIDIA SHARP Environment" in nvidia
    assert SM + "ufm-gv-sharp.cfg" not in files
    env = _env(files)
    assert "\nNCCL_COLLNET_ENABLE=0\n" in env and "builds trees" in env


def test_rail_only_subnets_route_up_down_and_keep_sharp() -> None:
    files = by_path(compiled("rail-only-h100")[1])
    folders = sorted({p.split("/")[1] for p in files if re.match(r"configs/compute-rail\d-sm/", p)})
    assert len(folders) == 8
    for folder in folders:
        assert re.search(r"^routing_engine updn$", files[f"configs/{folder}/opensm.conf"], re.M)
        assert re.search(r"^sharp_enabled 2$", files[f"configs/{folder}/nvidia-sm.conf"], re.M)
    assert "\nNCCL_COLLNET_ENABLE=1\n" in _env(files)


def test_xdr_subnets_say_upstream_opensm_cannot_run_them() -> None:
    fabric, artifacts = compiled("gb300-nvl72-xdr")
    files = by_path(artifacts)
    upstream = files[SM + "opensm.conf"]
    assert fabric.loaded.networks["compute"].fabric_speed == 800
    assert "NOT for this subnet" in upstream and "XDR" in upstream
    assert SM + "nvidia-sm.conf" in files
    # its storage fabric runs at NDR, which upstream OpenSM knows
    assert fabric.loaded.networks["storage"].fabric_speed == 400
    assert "NOT for this subnet" not in files["configs/storage-sm/opensm.conf"]
    ndr = by_path(compiled("superpod-h100-4su")[1])[SM + "opensm.conf"]
    assert "NOT for this subnet" not in ndr


def test_a_forced_engine_without_sharp_trees_turns_collnet_off(tmp_path: Path) -> None:
    text = (EXAMPLES / "superpod-h100-4su.yaml").read_text()
    old = "    subnet_manager:\n      sm_nodes: [ufm]\n"
    assert old in text
    text = text.replace(old, old + "      routing_engine: minhop\n", 1)
    _, artifacts = compile_text(text, tmp_path)
    files = by_path(artifacts)
    nvidia = files[SM + "nvidia-sm.conf"]
    assert re.search(r"^routing_engine minhop$", nvidia, re.M)
    assert re.search(r"^sharp_enabled 1$", nvidia, re.M) and "with minhop" in nvidia
    env = files["nccl/dgx-h100.env"]
    assert "\nNCCL_COLLNET_ENABLE=0\n" in env
