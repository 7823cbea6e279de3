"""The IBDM topology files as IBDM itself reads them: Debian's ibutils (ibdmsh, the IBDM Tcl
shell that ibtopodiff and ibdiagnet's topology matching are built on) parses every .topo of an
example with IBDM_IBNL_PATH at the cabling folder, so every .ibnl file the .topo names is parsed
by IBDM's IBNL grammar too. A .topo system IBDM cannot build (an IBNL syntax error, a port name
the system type lacks) is an error line and a non-zero return code.

Then the match: the 4-SU compute.topo against the subnet OpenSM discovers when the emitted
ibsim.net runs in ibsim (opensm -D 0x07 writes opensm-subnet.lst), with ibtopodiff's edge
matcher. IBDM matches hosts by name: an HCA whose NodeDescription is "<host> HCA-<k>" is node
<host>/U<k> of its system, so the test gives the simulated CAs those descriptions (the .ibnl
says which U each port is). ibutils 1.5.7's edge matcher formats GUIDs with sprintf into a
buffer one byte short, which glibc's fortified sprintf aborts ("buffer overflow detected"); a
preloaded sprintf without the length check (built with cc) lets it run to its report."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.ib_support import simulator
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


# __sprintf_chk without the check: ibutils 1.5.7 writes "0x%016lx" (19 bytes) into 18
SPRINTF_SHIM = """
#include <stdarg.h>
#include <stdio.h>
int __sprintf_chk(char *s, int flag, unsigned long slen, const char *fmt, ...) {
  va_list ap; va_start(ap, fmt); int r = vsprintf(s, fmt, ap); va_end(ap); return r;
}
"""
_IBNL_CA = re.compile(r"^NODE CA 1 \S+ U(\d+)\n\s+1 -> (\S+)$", re.M)
_NET_CA = re.compile(r'"([^"/]+)/([^"]+)"')


def _ibdm_net(net: str, folder: Path, topo: str) -> str:
    """ibsim.net with every CA described as IBDM names HCA ports: "<host> HCA-<U index>"."""
    u_index: dict[str, dict[str, int]] = {}
    for ibnl in folder.glob("*.ibnl"):
        text = ibnl.read_text()
        u_index[text.split()[1]] = {port: int(u) for u, port in _IBNL_CA.findall(text)}
    kinds = {}
    for line in topo.splitlines():
        words = line.split()
        if line.startswith(" ") and len(words) == 5:
            kinds[words[3]] = words[2]

    def describe(match: re.Match[str]) -> str:
        host, port = match.group(1), match.group(2)
        port = port if port[:1].isalpha() else f"P{port}"
        return f'"{host} HCA-{u_index[kinds[host]][port]}"'

    return _NET_CA.sub(describe, net)


def test_4su_compute_topo_matches_the_subnet_opensm_discovers(tmp_path: Path) -> None:
    require_tool("ibtopodiff", "ibsim", "opensm", "cc")
    _, artifacts = compiled("superpod-h100-4su")
    files = dict(artifacts)
    cabling = tmp_path / "cabling"
    cabling.mkdir()
    _write("superpod-h100-4su", cabling)
    topo = files["cabling/compute.topo"]
    net = files["configs/compute-sm/ibsim.net"]
    assert isinstance(topo, str) and isinstance(net, str)
    shim_c = tmp_path / "shim.c"
    shim_c.write_text(SPRINTF_SHIM)
    shim = tmp_path / "shim.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(shim), str(shim_c)], check=True)
    with simulator(_ibdm_net(net, cabling, topo), tmp_path / "sim") as sim:
        sim.opensm_once()  # -D 0x07: writes opensm-subnet.lst into OSM_TMP_DIR
    subnet = tmp_path / "sim" / "opensm-subnet.lst"
    assert subnet.exists()
    result = subprocess.run(
        ["ibtopodiff", "-t", str(cabling / "compute.topo"), "-d", str(subnet), "-e"],
        cwd=tmp_path,  # it writes ibtopodiff.names there
        env={"IBDM_IBNL_PATH": str(cabling), "PATH": "/usr/bin:/bin", "LD_PRELOAD": str(shim)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-3000:]
    assert "-E-" not in output, [line for line in output.splitlines() if "-E-" in line][:10]
    # every port end the plan lists (each cable from both ends), and every host by name
    ends = sum(1 for line in topo.splitlines() if " -> " in line)
    assert f"-I- Total of {ends} ports match the provided topology" in output, output[-2000:]
    hosts = sum(1 for line in net.splitlines() if line.startswith("Ca\t"))
    assert f"-I- Matched {hosts} hosts by name" in output
