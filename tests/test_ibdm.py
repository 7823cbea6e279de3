"""The IBDM topology files as IBDM itself reads them: Debian's ibutils (ibdmsh, the IBDM Tcl
shell that ibtopodiff and ibdiagnet's topology matching are built on) parses every .topo of an
example with IBDM_IBNL_PATH at the cabling folder, so every .ibnl file the .topo names is parsed
by IBDM's IBNL grammar too. A .topo system IBDM cannot build (an IBNL syntax error, a port name
the system type lacks) is an error line and a non-zero return code."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support import compiled, require_tool

# IBFabric_parseTopology returns 0 when every system of the file was built from its IBNL type
PARSE = """\
foreach topo $argv {
    set fabric [new_IBFabric]
    puts "RESULT $topo [IBFabric_parseTopology $fabric $topo]"
}
"""
_DEFINED = re.compile(r"^-I- Defined (\d+)/(\d+) systems/nodes", re.M)


def _write(example: str, folder: Path) -> list[Path]:
    _, artifacts = compiled(example)
    topos = []
    for path, content in artifacts:
        if path.startswith("cabling/") and path.endswith((".topo", ".ibnl")):
            assert isinstance(content, str)
            target = folder / Path(path).name
            target.write_text(content)
            if path.endswith(".topo"):
                topos.append(target)
    return sorted(topos)


def _systems_and_nodes(topo: Path) -> tuple[int, int]:
    """Systems a .topo names and the IB nodes their IBNL types define (a switch is one node, an
    HCA port one CA node)."""
    folder = topo.parent
    systems: dict[str, str] = {}
    for line in topo.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        words = line.split()
        if line.startswith(" "):
            systems[words[3]] = words[2]
        else:
            systems[words[1]] = words[0]
    nodes = {
        kind: (folder / f"{kind}.ibnl").read_text().count("\nNODE ") for kind in systems.values()
    }
    return len(systems), sum(nodes[kind] for kind in systems.values())


@pytest.mark.parametrize(
    "example",
    [
        "superpod-h100-4su",
        "gb200-nvl72-su",
        "gb300-nvl72-xdr",
        "torus-3d-h100",
        "dragonfly-plus-h100",
        "mixed-gb200-gb300",
    ],
)
def test_ibdm_parses_every_topo_and_ibnl_file(example: str, tmp_path: Path) -> None:
    require_tool("ibdmsh")
    topos = _write(example, tmp_path)
    assert topos
    script = tmp_path / "parse.tcl"
    script.write_text(PARSE)
    result = subprocess.run(
        ["ibdmsh", str(script), *map(str, topos)],
        cwd=tmp_path,
        env={"IBDM_IBNL_PATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert "-E-" not in output, output[-3000:]
    for topo in topos:
        assert f"RESULT {topo} 0" in output, output[-3000:]
    # every system of every .topo built, with the nodes its IBNL type defines
    defined = [(int(s), int(n)) for s, n in _DEFINED.findall(output)]
    assert defined == [_systems_and_nodes(topo) for topo in topos], output[-3000:]
