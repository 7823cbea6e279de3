"""Hostile input through the doors other than the spec: an earlier build read back, verify's
discovery files, site catalogs, NCCL topology files, and what fabricc writes on the way out.

One test (or one parametrised family) per class of docs/hostile-input.md: each input is a shape
(a missing column, a short row, JSON of the wrong type, a number past Python's digit limit, a
value past a bound), and each must end in a positioned error, never a traceback or a hang.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from fabricc.cli import cli
from fabricc.errors import SpecError
from fabricc.nccl.check import check_bytes
from fabricc.spec.yamlsource import load_yaml_bytes
from fabricc.verify import ibnetdiscover, lldp
from fabricc.verify.model import Finding
from fabricc.verify.output import findings_csv, findings_text
from fabricc.writer import OutputTree
from fabricc.yamlsafe import SafeDumper, typed_if_plain
from tests.support import EXAMPLES, compiled

LAB = EXAMPLES / "roce-lab.yaml"
DEEP = 200_000


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def assert_positioned(result: Result, where: str) -> None:
    """Exit 1, no traceback, and the first line an error at `where` (FILE:LINE:COL)."""
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith(where) and ": error: " in first, result.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("built") / "lab"
    assert run("build", str(LAB), "-o", str(out)).exit_code == 0
    return out


def _copy(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy"
    shutil.copytree(built, copy, symlinks=True)
    return copy


def _edit_csv(path: Path, change: Callable[[list[list[str]]], None]) -> None:
    with path.open(newline="") as file:
        rows = list(csv.reader(file))
    change(rows)
    with path.open("w", newline="") as file:
        csv.writer(file, lineterminator="\n").writerows(rows)


def _drop_column(name: str) -> Callable[[list[list[str]]], None]:
    def change(rows: list[list[str]]) -> None:
        index = rows[0].index(name)
        for row in rows:
            del row[index]

    return change


def _short_row(rows: list[list[str]]) -> None:
    rows[3] = rows[3][:-2]


def _long_field(rows: list[list[str]]) -> None:
    rows[2][0] = "x" * (csv.field_size_limit() + 1)


def _bad_quantity(rows: list[list[str]]) -> None:
    rows[1][rows[0].index("quantity")] = "9" * 5000


# -- 1. an earlier build read back ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "change", "line"),
    [
        ("inventory/devices.csv", _drop_column("name"), 1),
        ("cabling/cables.csv", _drop_column("a_port"), 1),
        ("cabling/cables.csv", _short_row, 4),
        ("cabling/cables.csv", _long_field, 3),
        ("bom/bom.csv", _bad_quantity, 2),
    ],
    ids=["devices-no-name", "cables-no-a_port", "short-row", "field-limit", "bom-quantity"],
)
def test_damaged_build_folder_is_a_positioned_error(
    built: Path, tmp_path: Path, relative: str, change: Callable[[list[list[str]]], None], line: int
) -> None:
    damaged = _copy(built, tmp_path)
    _edit_csv(damaged / relative, change)
    for args in (("diff", str(built), str(damaged)), ("build", str(LAB), "--keep", str(damaged))):
        extra = ("-o", str(tmp_path / "out")) if args[0] == "build" else ()
        assert_positioned(run(*args, *extra), f"{damaged.as_posix()}/{relative}:{line}:")


def test_deep_summary_json_stops_growth_in_place(built: Path, tmp_path: Path) -> None:
    damaged = _copy(built, tmp_path)
    (damaged / "summary.json").write_text("[" * DEEP + "]" * DEEP)
    before = (damaged / "inventory" / "devices.csv").read_bytes()
    assert_positioned(run("build", str(LAB), "-o", str(damaged)), f"{damaged}/summary.json:1:1:")
    assert (damaged / "inventory" / "devices.csv").read_bytes() == before


# -- 2. verify inputs and over-long numbers --------------------------------------------------------

_PORT = {"id": [{"type": "ifname", "value": "swp1"}]}
_GOOD = {"name": "eth0", "chassis": [{"name": [{"value": "leaf1"}]}], "port": [_PORT]}


@pytest.mark.parametrize(
    "document",
    [
        [],
        "lldp",
        {"lldp": "x"},
        {"lldp": [[1]]},
        {"lldp": [{"interface": "eth0"}]},
        {"lldp": [{"interface": [{**_GOOD, "chassis": {"leaf1": {"id": 1}}}]}]},
        {"lldp": [{"interface": [{**_GOOD, "chassis": [{"name": [{"value": 7}]}]}]}]},
        {"lldp": [{"interface": [{**_GOOD, "port": [{"id": [{"value": 17}]}]}]}]},
        {"lldp": [{"interface": [{**_GOOD, "port": [{**_PORT, "auto-negotiation": 1}]}]}]},
        {"lldp": [{"interface": [{**_GOOD, "port": [{**_PORT, "auto-negotiation": [1]}]}]}]},
    ],
)
def test_lldp_of_the_wrong_shape_is_a_positioned_error(document: object) -> None:
    with pytest.raises(SpecError) as caught:
        lldp.parse(json.dumps(document), "leaf1.json")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.location is not None and diagnostic.location.file == "leaf1.json"


def test_deep_lldp_json_is_refused() -> None:
    with pytest.raises(SpecError, match="nested too deep"):
        lldp.parse('{"lldp": ' + "[" * DEEP + "]" * DEEP + "}", "leaf1.json")


def test_ibnetdiscover_numbers_past_the_digit_limit() -> None:
    digits = "9" * 5000
    text = f'Switch 36 "S-{"a" * 5000}"\n[1] "H-0002c903000e0b72"[{digits}]  # "h" lid 3 4xNDR\n'
    with pytest.raises(SpecError) as caught:
        ibnetdiscover.parse(text, "fabric.txt")
    assert str(caught.value.diagnostics[0].location) == "fabric.txt:1:14"
    port_only = f'Switch 36 "S-0002c903000e0b70"\n[1] "H-0002c903000e0b72"[{digits}]\n'
    with pytest.raises(SpecError) as caught:
        ibnetdiscover.parse(port_only, "fabric.txt")
    assert str(caught.value.diagnostics[0].location) == "fabric.txt:2:26"


def test_yaml_integer_past_the_digit_limit(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(LAB.read_text().replace("count: 4", f"count: {'7' * 5000}", 1))
    line = LAB.read_text().splitlines().index("    count: 4") + 1
    assert_positioned(run("build", str(spec), "-o", str(tmp_path / "o")), f"{spec}:{line}:12:")


# -- 3 and 6. site catalog bounds, wrong values accepted -----------------------------------------

_SWITCH = """\
switches:
  my-switch:
    description: a switch
    part_number: X-1
    source: "assumed"
    fabric: ethernet
    asic: Spectrum-4
    height_u: 1
    power_w: {power}
    port_groups:
      - {{count: 32, form: osfp, cage_speed: 800, breakouts: [{breakout}]}}
"""
_NODE = """\
nodes:
  my-node:
    kind: server
    description: "{description}"
    part_number: X-2
    source: "assumed"
    height_u: {height}
    power_w: {power}
    gpus: 4
    gpu: {{model: H100, sm: 90, memory_gb: 80, nvlink_links: 18, nvlink_generation: 4}}
    ports:
      - {{name: p1, cage: p1, form: osfp, speeds: [400], role: compute, gpu: {gpu}}}
"""
_RACK = """\
parts:
  my-rack:
    category: rack
    description: a rack
    part_number: X-3
    source: "assumed"
    height_u: 42
    width_in: {width}
"""


@pytest.mark.parametrize(
    ("catalog", "line"),
    [
        (_SWITCH.format(power=1000, breakout=0), 11),
        (_SWITCH.format(power=1000, breakout=-2), 11),
        (_SWITCH.format(power=1000, breakout=1_000_000), 11),
        (_SWITCH.format(power="9" * 99, breakout=2), 9),
        (_SWITCH.format(power="9" * 400, breakout=2), 9),
        (_SWITCH.format(power=".inf", breakout=2), 9),
        (_NODE.format(description="ok", height=2, power=900, gpu=1_000_000), 12),
        (_NODE.format(description="ok", height=2, power=900, gpu=4), 3),
        (_NODE.format(description="ok", height=0, power=0, gpu=1), 3),
        (_NODE.format(description=r"ok\e]0;pwned\a", height=2, power=900, gpu=1), 4),
        (_RACK.format(width="19.0"), 8),
        (_RACK.format(width="true"), 8),
    ],
    ids=[
        "breakout-0", "breakout-negative", "breakout-huge", "power-99-digits",
        "power-400-digits", "power-inf", "gpu-huge", "gpu-past-count", "zero-u-zero-w",
        "control-characters", "width-float", "width-bool",
    ],
)  # fmt: skip
def test_site_catalog_values_are_bounded(tmp_path: Path, catalog: str, line: int) -> None:
    site = tmp_path / "site.yaml"
    site.write_text(catalog)
    spec = tmp_path / "spec.yaml"
    spec.write_text(LAB.read_text().replace("metadata:", "catalog: [site.yaml]\nmetadata:", 1))
    assert_positioned(run("build", str(spec), "-o", str(tmp_path / "o")), f"{site}:{line}:")


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("tiers: 2", "tiers: true"), "tiers: true is not one of the allowed values"),
        (("tiers: 2", "tiers: 1.0"), "tiers: 1.0 is not one of the allowed values"),
        (("metadata:", "version: true\nmetadata:"), "version: true is not one"),
        (("metadata:", "addressing: {loopbacks: 224.1.0.0/24}\nmetadata:"), "multicast"),
        (("metadata:", "addressing: {p2p: 127.0.0.0/24}\nmetadata:"), "loopback"),
        (("metadata:", "addressing: {inband: 0.0.0.0/1}\nmetadata:"), "wider than a /8"),
        (("metadata:", "addressing: {loopbacks_v6: '::/0'}\nmetadata:"), "wider than a /32"),
        (("metadata:", "addressing: {loopbacks_v6: 'ff05::/64'}\nmetadata:"), "multicast"),
        (("metadata:", "addressing: {loopbacks_v6: 'fe80::/64'}\nmetadata:"), "link-local"),
        (("metadata:", "<<: {version: 1}\nmetadata:"), "merge keys ('<<') are not supported"),
    ],
)
def test_spec_values_accepted_although_wrong(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(LAB.read_text().replace(*edit, 1))
    result = run("build", str(spec), "-o", str(tmp_path / "o"))
    assert_positioned(result, f"{spec}:")
    assert message in result.stderr


# -- 4. check-nccl in linear time ----------------------------------------------------------------


@pytest.mark.parametrize("close", ["</cpu>", "</x>", ""])
def test_check_nccl_is_linear_in_nesting_depth(close: str) -> None:
    data = ('<system version="1">' + "<cpu>" * 100_000 + close * 100_000 + "</system>").encode()
    started = time.monotonic()
    findings = check_bytes(data)
    assert time.monotonic() - started < 5
    assert any(f.rule == "nesting-depth" for f in findings)


# -- 5. leaks and lies on the way out -------------------------------------------------------------


def test_diff_reads_only_regular_files_inside_the_folder(built: Path, tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:$y$j9T$hash-of-a-password:19000\n")
    planted = _copy(built, tmp_path)
    (planted / "configs" / "planted.txt").symlink_to(secret)
    (planted / "configs" / "planted-dir").symlink_to(tmp_path, target_is_directory=True)
    out = tmp_path / "diff"
    assert run("diff", str(built), str(planted), "-o", str(out)).exit_code == 0
    for file in out.rglob("*"):
        if file.is_file():
            assert b"hash-of-a-password" not in file.read_bytes(), file


def test_verify_findings_escape_control_characters() -> None:
    forged = "swp1\x1b]0;owned\x07\rnetwork x: 0 planned cables: all ok\n\x9b2J"
    finding = Finding("unexpected", "", "", f"leaf1:{forged}", "")
    text = findings_text_of(finding)
    table = findings_csv([finding])
    for output in (text, table):
        assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) < 0xA0 for c in output)
    assert text.count("\n") == 2 and "\\x1b]0;owned\\x07\\r" in text
    assert "\\x1b" in table and table.count("\n") == 2


def findings_text_of(finding: Finding) -> str:
    from fabricc.verify.run import Verdict

    return findings_text(Verdict("fabric", [finding]))


_TYPED = [
    "1e5", "1E5", "1e+5", "-1.5", ".5", "1_000", "0x10", "0o17", "017", "0b101", "1:20",
    ".inf", "-.Inf", ".NaN", "true", "False", "YES", "no", "On", "off", "y", "N", "null", "Null",
    "~", "", "2026-01-01", "2026-1-1 10:00:00", "<<", "=",
]  # fmt: skip
_STRINGS = ["gpu01", "10.0.0.1", "e5", "1e", "0x", "yesno", "nulls", "a:1", "1.2.3"]


@pytest.mark.parametrize("text", _TYPED)
def test_yaml_emitters_quote_what_a_reader_would_type(text: str) -> None:
    assert typed_if_plain(text)
    dumped = yaml.dump({"nodeName": text}, Dumper=SafeDumper)
    assert dumped != f"nodeName: {text}\n"
    assert yaml.safe_load(dumped) == {"nodeName": text}  # YAML 1.1
    assert load_yaml_bytes(dumped.encode(), "x.yaml")[0] == {"nodeName": text}  # 1.2 core


@pytest.mark.parametrize("text", _STRINGS)
def test_yaml_emitters_leave_plain_strings_plain(text: str) -> None:
    assert not typed_if_plain(text)
    assert yaml.dump({"k": text}, Dumper=SafeDumper) == f"k: {text}\n"


def test_kubernetes_node_names_that_look_like_numbers_are_quoted(tmp_path: Path) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(LAB.read_text().replace('hostname: "gpu{n:02d}"', 'hostname: "{n}e5"', 1))
    out = tmp_path / "o"
    assert run("build", str(spec), "-o", str(out)).exit_code == 0
    texts = [p.read_text() for p in (out / "provisioning").rglob("*.yaml")]
    assert texts
    for text in texts:
        for document in yaml.safe_load_all(text):
            assert 1e5 not in _scalars(document) and 100000 not in _scalars(document)


def _scalars(node: object) -> list[object]:
    if isinstance(node, dict):
        return [*node, *(s for value in node.values() for s in _scalars(value))]
    if isinstance(node, list):
        return [s for item in node for s in _scalars(item)]
    return [node]


# -- 7. host scripts ------------------------------------------------------------------------------


def test_host_scripts_write_sysctls_in_slash_form() -> None:
    _, artifacts = compiled("roce-lab")
    scripts = [str(c) for p, c in artifacts if p.startswith("configs/hosts/") and p.endswith(".sh")]
    assert scripts
    for script in scripts:
        assert "net.ipv4.conf.$" not in script
        assert 'sysctl -qw "net/ipv4/conf/$IF/arp_ignore=1"' in script


# -- 9. housekeeping ------------------------------------------------------------------------------


def test_staging_folders_of_killed_builds_are_removed(tmp_path: Path) -> None:
    gone = tmp_path / ".kill.tmp-999999999-abc_1"  # the process id of no process
    (gone / "configs").mkdir(parents=True)
    running = tmp_path / f".kill.tmp-{os.getpid()}-xyz"
    running.mkdir()
    other = tmp_path / ".kill.tmp-notours"
    other.mkdir()
    assert run("build", str(LAB), "-o", str(tmp_path / "kill")).exit_code == 0
    assert not gone.exists() and running.exists() and other.exists()


def _retired(parent: Path, name: str) -> list[Path]:
    return sorted(parent.glob(f".{name}.old-*"))


def _gone_soon(paths: list[Path]) -> bool:
    deadline = time.monotonic() + 30
    while any(p.exists() for p in paths):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _tree(out: Path, files: dict[str, str]) -> None:
    with OutputTree(out) as tree:
        tree.add(list(files.items()))
        tree.commit()


def test_a_rebuild_removes_the_earlier_output_without_waiting_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The earlier output is swapped out and handed to a process of its own that removes it
    (a build of a large design waited seconds for that); the build returns meanwhile."""
    out = tmp_path / "out"
    _tree(out, {"a/first.txt": "1"})
    started: list[list[str]] = []
    real = subprocess.run

    def held(command: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        started.append(command)  # the removal, not started: the build must not need it
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr("fabricc.writer.subprocess.run", held)
    _tree(out, {"b/second.txt": "2"})
    (retired,) = _retired(tmp_path, "out")
    assert (retired / "a" / "first.txt").read_text() == "1", "swapped out, not removed inline"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.txt")) == ["b/second.txt"]
    assert started == [["sh", "-c", 'rm -rf -- "$1" &', "sh", str(retired)]]

    # the next build of the output removes a swapped-out folder whose removal did not finish
    monkeypatch.setattr("fabricc.writer.subprocess.run", real)
    _tree(out, {"c/third.txt": "3"})
    assert _gone_soon([retired, *_retired(tmp_path, "out")])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert (out / "c" / "third.txt").read_text() == "3"


def test_without_a_shell_the_earlier_output_is_removed_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _tree(out, {"a/first.txt": "1"})

    def no_shell(command: list[str], **options: Any) -> subprocess.CompletedProcess[bytes]:
        raise FileNotFoundError(2, "No such file or directory", command[0])

    monkeypatch.setattr("fabricc.writer.subprocess.run", no_shell)
    _tree(out, {"b/second.txt": "2"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_copied_marker_does_not_let_a_build_replace_user_files(
    built: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    shutil.copy(built / ".fabricc-output", mine / ".fabricc-output")
    result = run("build", str(LAB), "-o", str(mine))
    assert result.exit_code == 1 and "not written by fabricc" in result.stderr
    assert (mine / "notes.txt").read_text() == "mine"


def test_an_older_releases_output_is_still_rebuilt_but_its_marker_alone_is_not_enough(
    built: Path, tmp_path: Path
) -> None:
    """Outputs written before the marker listed its entries carry the one-line marker: such a
    folder with the summary and report every build writes is rebuilt; the old marker copied into
    a folder of one's own files is refused like the new one."""
    from fabricc.writer import LEGACY_MARKER

    old = tmp_path / "old"
    shutil.copytree(built, old)
    (old / ".fabricc-output").write_text(LEGACY_MARKER + "\n")
    assert run("build", str(LAB), "-o", str(old)).exit_code == 0
    assert (old / ".fabricc-output").read_text().splitlines()[0] != LEGACY_MARKER
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    (mine / ".fabricc-output").write_text(LEGACY_MARKER + "\n")
    result = run("build", str(LAB), "-o", str(mine))
    assert result.exit_code == 1 and "not written by fabricc" in result.stderr
    assert (mine / "notes.txt").read_text() == "mine"


def test_output_path_with_control_characters_is_shown_escaped(tmp_path: Path) -> None:
    out = tmp_path / "a\nb\x1b[31m"
    result = run("build", str(LAB), "-o", str(out))
    assert result.exit_code == 0
    assert "\x1b" not in result.output and "a\\nb\\x1b[31m" in result.output


# -- 8. errors that say what happened ------------------------------------------------------------


def _catalog_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(LAB.read_text().replace("metadata:", "catalog: [site.yaml]\nmetadata:", 1))
    return spec


def _socket(path: Path) -> None:
    import socket

    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: os.mkfifo(p), "is a FIFO"),
        (_socket, "is a socket"),
        (lambda p: p.symlink_to("/dev/zero"), "is a device, not a file (behind a symbolic link)"),
        (lambda p: p.symlink_to(p.name), "is a loop of symbolic links"),
        (lambda p: None, "not found"),
    ],
    ids=["folder", "fifo", "socket", "dev-zero", "loop", "missing"],
)
def test_catalog_path_that_is_no_file_says_what_it_is(
    tmp_path: Path, make: Callable[[Path], None], message: str
) -> None:
    spec = _catalog_spec(tmp_path)
    make(tmp_path / "site.yaml")
    result = run("build", str(spec), "-o", str(tmp_path / "o"))
    assert_positioned(result, f"{spec}:4:11:")
    assert f"catalog file 'site.yaml' {message}" in result.stderr


def test_site_catalog_mistakes_are_shown_in_the_site_catalog(tmp_path: Path) -> None:
    """A site model that replaces a built-in one breaks the built-in host topology of that
    name: the error is at the site catalog's entry, not at a line of fabricc's own data."""
    spec = _catalog_spec(tmp_path)
    site = tmp_path / "site.yaml"
    site.write_text(_NODE.format(description="ok", height=2, power=900, gpu=1).replace(
        "my-node", "dgx-h100"
    ))  # fmt: skip
    spec.write_text(spec.read_text().replace("model: lab-server", "model: dgx-h100"))
    result = run("build", str(spec), "-o", str(tmp_path / "o"))
    assert_positioned(result, f"{site}:3:")
    assert "fabricc/catalog/data" not in result.stderr


@pytest.mark.parametrize("key", ["null", "~", "true", "1"])
def test_typed_keys_are_shown_where_they_are(tmp_path: Path, key: str) -> None:
    spec = tmp_path / "spec.yaml"
    text = LAB.read_text().replace("metadata:\n", f"metadata:\n  {key}: x\n", 1)
    spec.write_text(text)
    line = text.splitlines().index(f"  {key}: x") + 1
    result = run("build", str(spec), "-o", str(tmp_path / "o"))
    assert_positioned(result, f"{spec}:{line}:3:")
    assert "metadata: key" in result.stderr and "is not a name" in result.stderr


def test_output_path_through_a_symlink_loop_says_so(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    result = run("build", str(LAB), "-o", str(tmp_path / "loop" / "out"))
    assert result.exit_code == 1
    assert "loop of symbolic links" in result.stderr.splitlines()[0]
