"""`fabricc check-nccl`: the validator against real files, a corpus of broken ones and the CLI.

Reference files (tests/nccl/reference, public dumps and vendor files that NCCL's own parser
accepts) must pass. Each file in tests/nccl/broken breaks one rule of NCCL's parser and must fail with
that rule at the expected line; tests/nccl/warnings holds files NCCL accepts but that are risky.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricc.cli import cli
from fabricc.nccl.check import RULES, check_bytes, check_file, has_errors
from fabricc.nccl.parse import Finding, Level, parse

CORPUS = Path(__file__).resolve().parent / "nccl"
REFERENCE = sorted((CORPUS / "reference").glob("*.xml"))

# file -> (rule, line) it must be reported with, as an error.
BROKEN: dict[str, tuple[str, int]] = {
    "affinity-format": ("affinity-format", 2),
    "arch": ("arch", 2),
    "attribute-syntax": ("attribute-syntax", 5),
    "bom": ("bom", 1),
    "child-count": ("child-count", 9),
    "class-format": ("class-format", 3),
    "closing-tag-space": ("closing-tag", 10),
    "cpu-vendor": ("cpu-vendor", 2),
    "duplicate-attribute": ("duplicate-attribute", 2),
    "duplicate-busid": ("duplicate-busid", 4),
    "duplicate-gpu-dev": ("duplicate-gpu-dev", 10),
    "duplicate-net-name": ("duplicate-net-name", 16),
    "duplicate-numaid": ("duplicate-numaid", 11),
    "element-name": ("element-name", 2),
    "encoding": ("encoding", 11),
    "flag-value": ("flag-value", 11),
    "float-format": ("float-format", 11),
    "gpu-class": ("gpu-class", 4),
    "gpu-sm": ("gpu-sm", 5),
    "gpu-under-cpu": ("nesting", 10),
    "nesting-depth": ("nesting-depth", 257),
    "hex-format": ("hex-format", 3),
    "leading-zero-integer": ("integer-format", 5),
    "link-speed": ("link-speed", 3),
    "link-width": ("link-width", 3),
    "mlopart-busid": ("mlopart-busid", 4),
    "missing-intel-modelid": ("required-attribute", 2),
    "missing-system-version": ("system-version", 1),
    "multiline-start-tag": ("multiline-start-tag", 2),
    "net-speed": ("net-speed", 11),
    "net-without-name": ("required-attribute", 11),
    "nvlink-peer": ("nvlink-peer", 7),
    "nvswitch-link-count-h100": ("nvswitch-link-total", 5),
    "nvswitch-link-total": ("nvswitch-link-total", 10),
    "profile-mix-split": ("profile-mix", 2),
    "root-element": ("root-element", 1),
    "space-around-equals": ("attribute-spacing", 2),
    "tab-indent": ("tab", 2),
    "tag-mismatch": ("tag-mismatch", 7),
    "text-node": ("text-node", 11),
    "token-too-long": ("token-too-long", 1),
    "too-many-attributes": ("too-many-attributes", 1),
    "too-many-children": ("too-many-children", 650),
    "too-many-elements": ("too-many-elements", 258),
    "unknown-element": ("unknown-element", 10),
    "unquoted-value": ("unquoted-value", 2),
    "unterminated": ("unterminated", 1),
    "uppercase-busid": ("busid-format", 4),
    "wrong-system-version": ("system-version", 1),
    "xml-declaration": ("xml-declaration", 1),
}
# file -> (rule, line) reported as a warning, with no error in the file.
WARNINGS: dict[str, tuple[str, int]] = {
    "affinity-overlap": ("affinity-overlap", 11),
    "c2c-arch": ("c2c-arch", 7),
    "double-space": ("attribute-spacing", 2),
    "gpu-dev-range": ("gpu-dev-range", 5),
    "internal-attribute": ("internal-attribute", 2),
    "net-speed-in-gbps": ("net-speed", 11),
    "nic-without-net": ("child-count", 10),
    "nvlink-peer-missing": ("nvlink-peer", 7),
    "profile-mix": ("profile-mix", 3),
    "second-system": ("root-element", 12),
    "single-quote": ("single-quote", 2),
    "space-before-close": ("attribute-spacing", 5),
    "too-many-attributes": ("too-many-attributes", 1),
    "too-many-children": ("too-many-children", 138),
    "unknown-attribute": ("unknown-attribute", 5),
}


def _corpus(folder: str) -> list[str]:
    return sorted(p.stem for p in (CORPUS / folder).glob("*.xml"))


def test_reference_files_are_the_published_bytes() -> None:
    sources = (CORPUS / "reference" / "SOURCES.md").read_text()
    listed = {
        name: digest
        for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+\.xml)$", sources, re.MULTILINE)
    }
    assert sorted(listed) == [p.name for p in REFERENCE]
    for path in REFERENCE:
        assert hashlib.sha256(path.read_bytes()).hexdigest() == listed[path.name]


@pytest.mark.parametrize("path", REFERENCE, ids=[p.name for p in REFERENCE])
def test_reference_files_pass(path: Path) -> None:
    findings = check_file(path)
    assert not has_errors(findings), [f.render(path.name) for f in findings]


def test_dump_attributes_that_nccl_sets_are_only_warnings() -> None:
    # The IBM file is a raw NCCL_TOPO_DUMP_FILE: host_hash is NCCL's own, not a generator's.
    findings = check_file(CORPUS / "reference" / "ibm-cloud-h100-vsi-topo.xml")
    assert {(f.rule, f.level, f.line) for f in findings} == {
        ("internal-attribute", Level.WARNING, 2),
        ("internal-attribute", Level.WARNING, 64),
    }


def test_every_broken_file_has_an_expectation() -> None:
    assert _corpus("broken") == sorted(BROKEN)
    assert _corpus("warnings") == sorted(WARNINGS)


def test_every_rule_is_exercised_by_the_corpus() -> None:
    covered = {rule for rule, _ in BROKEN.values()} | {rule for rule, _ in WARNINGS.values()}
    assert covered == set(RULES)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_file_fails_with_its_rule_and_line(name: str) -> None:
    rule, line = BROKEN[name]
    findings = check_file(CORPUS / "broken" / f"{name}.xml")
    errors = {(f.rule, f.line) for f in findings if f.level is Level.ERROR}
    assert (rule, line) in errors, [f.render(name) for f in findings]


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_risky_file_warns_with_its_rule_and_line(name: str) -> None:
    rule, line = WARNINGS[name]
    findings = check_file(CORPUS / "warnings" / f"{name}.xml")
    assert not has_errors(findings), [f.render(name) for f in findings]
    assert (rule, line) in {(f.rule, f.line) for f in findings if f.level is Level.WARNING}


def test_findings_point_at_the_column_of_the_offending_token() -> None:
    findings = check_file(CORPUS / "broken" / "uppercase-busid.xml")
    (finding,) = [f for f in findings if f.rule == "busid-format"]
    line = (CORPUS / "broken" / "uppercase-busid.xml").read_text().splitlines()[finding.line - 1]
    assert line[finding.col - 1 :].startswith('busid="0000:1B:00.0"')


def test_ncclparser_quirks_from_the_spec() -> None:
    ok = b'<system version="1">\r\n  <!-- a <cpu> in a comment -- is fine -->\r\n</system>'
    assert check_bytes(ok) == []
    # Everything on one line, no final newline, comments before the root: all accepted.
    assert (
        check_bytes(b'<!-- c --><system version="1"><cpu numaid="0" arch="arm64"/></system>') == []
    )
    # version "01" reads as 1 with strtol, but is not how to write it.
    findings = check_bytes(b'<system version="01"/>')
    assert [(f.rule, f.level) for f in findings] == [("integer-format", Level.ERROR)]


def test_octal_trap_is_explained() -> None:
    (finding,) = check_bytes(b'<system version="1"><cpu numaid="010" arch="arm64"/></system>')
    assert finding.rule == "integer-format"
    assert "octal" in finding.message


def test_elements_inside_an_ignored_subtree_are_not_checked() -> None:
    text = b'<system version="1"><cpu numaid="0" arch="arm64"><nvs><gpu/></nvs></cpu></system>'
    rules = [f.rule for f in check_bytes(text)]
    assert rules == ["unknown-element"]


def test_parser_keeps_positions_of_elements_and_attributes() -> None:
    document = parse(b'<system version="1">\n  <cpu numaid="3" arch="arm64"/>\n</system>\n')
    (system,) = document.roots
    (cpu,) = system.children
    assert (cpu.line, cpu.col) == (2, 3)
    numaid = cpu.attribute("numaid")
    assert numaid is not None and (numaid.line, numaid.col, numaid.value) == (2, 8, "3")
    assert cpu.self_closing and cpu.parent is system


_PIECES = st.sampled_from(
    [
        *"<>/=\"' \t\n\r!?-abcgpuinstm0123x:.",
        '<system version="1">',
        "</system>",
        "<cpu",
        "</cpu>",
        '<pci busid="0000:01:00.0" class="0x030200" link_speed="" link_width="16">',
        "</pci>",
        '<gpu dev="0" sm="90" rank="0" gdr="1"/>',
        "<!--",
        "-->",
        "\ufeff",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=40).map("".join))
def test_any_input_gives_findings_inside_the_file(text: str) -> None:
    data = text.encode()
    findings = check_bytes(data)
    lines = data.count(b"\n") + 1
    assert all(1 <= f.line <= lines and f.col >= 1 and f.rule in RULES for f in findings)


# -- agreement with NCCL 2.30.7's own code ---------------------------------------------------------
# One-change variants of fabricc's DGX H100 file, each with the verdict NCCL's code gives it
# (src/graph/xml.cc and topo.cc of NCCL 2.30.7, run on CPU with one rank per GPU).

DGX_H100 = (
    Path(__file__).resolve().parent / "golden" / "superpod-h100-4su" / "nccl" / "dgx-h100.xml"
).read_text()


def _variant(old: str, new: str, count: int = -1) -> list[Finding]:
    assert old in DGX_H100
    return check_bytes(DGX_H100.replace(old, new, count).encode())


def _errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level is Level.ERROR]


def test_the_dgx_h100_file_is_clean() -> None:
    assert check_bytes(DGX_H100.encode()) == []


def test_gpu_function_with_mlopart_bits_fails_like_nccl() -> None:
    # topo.cc ncclTopoCheckMloPartBusId: the low two bits of the bus id hold the MLOPart index.
    (error,) = _errors(_variant("0000:1b:00.0", "0000:1b:00.1"))
    assert error.rule == "mlopart-busid"
    assert (
        "BusId 0x1b001 has non-zero bits in MLOPart mask 0x3, cannot encode MLOPart partition "
        "index without collision" in error.message
    )
    assert _variant("0000:1b:00.0", "0000:1b:00.4") == []  # 0x1b004: bits clear, NCCL accepts


def test_cpu_without_affinity_splits_the_fusion_like_nccl() -> None:
    # NCCL accepts it, but each rank fills the affinity of its own CPU only: 4 CPUs, 16 NETs.
    errors = _errors(check_bytes(re.sub(r' affinity="[^"]*"', "", DGX_H100).encode()))
    assert {f.rule for f in errors} == {"profile-mix"} and len(errors) == 2
    assert all("4 CPUs and 16 NETs instead of 2 and 8" in f.message for f in errors)


def test_gpu_without_gdr_and_rank_is_accepted_like_nccl() -> None:
    # ncclTopoGetSystem sets rank, and gdr when absent, on each rank's GPU.
    assert _variant(' rank="0" gdr="1"', "") == []


def test_gpu_pci_without_class_is_accepted_like_nccl() -> None:
    # ncclTopoFillGpu sets class 0x03 when absent.
    assert (
        _variant('<pci busid="0000:1b:00.0" class="0x030200" ', '<pci busid="0000:1b:00.0" ') == []
    )


def test_nvlink_without_tclass_is_accepted_like_nccl() -> None:
    # ncclTopoGetXmlFromGpu fills tclass (NVSwitch for a target that is not a PCI device).
    assert _variant(' tclass="0x068000"', "") == []


def test_space_before_slash_is_only_a_warning_like_nccl() -> None:
    # xmlGetNode reads the extra space as one attribute with an empty name and goes on.
    findings = _variant('maxconn="131072"/>', 'maxconn="131072" />')
    assert findings and {(f.rule, f.level) for f in findings} == {
        ("attribute-spacing", Level.WARNING)
    }


def test_net_without_name_says_that_nccl_drops_the_nic() -> None:
    (error,) = _errors(_variant('<net name="mlx5_0" ', "<net ", 1))
    assert error.rule == "required-attribute"
    assert "drops the NIC silently" in error.message
    assert "not found" not in error.message  # NCCL never reads name as a required attribute


def test_net_without_dev_is_accepted_like_nccl() -> None:
    # ncclTopoPopulateNics sets dev to the plugin's device index.
    assert _variant('<net name="mlx5_0" dev="0" ', '<net name="mlx5_0" ', 1) == []


# -- the CLI ---------------------------------------------------------------------------------------


def test_cli_passes_good_files() -> None:
    result = CliRunner().invoke(cli, ["check-nccl", *map(str, REFERENCE)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count(": ok\n") == len(REFERENCE)


def test_cli_reports_file_line_col_rule_and_exits_1() -> None:
    broken = CORPUS / "broken" / "gpu-under-cpu.xml"
    result = CliRunner().invoke(cli, ["check-nccl", str(REFERENCE[0]), str(broken)])
    assert result.exit_code == 1
    assert f"{broken}:10:5: error: nesting: <gpu> cannot sit under <cpu>" in result.stderr
    assert f"{REFERENCE[0]}: ok" in result.stdout


def test_cli_warnings_do_not_fail() -> None:
    risky = CORPUS / "warnings" / "single-quote.xml"
    result = CliRunner().invoke(cli, ["check-nccl", str(risky)])
    assert result.exit_code == 0
    assert f"{risky}:2:15: warning: single-quote:" in result.stderr


def test_cli_usage_error_exits_2() -> None:
    assert CliRunner().invoke(cli, ["check-nccl"]).exit_code == 2


def test_missing_file_is_an_error_like_in_every_verb() -> None:
    """A file that is not there is an input error (exit 1), named without an invented position."""
    result = CliRunner().invoke(cli, ["check-nccl", "no-such-file.xml"])
    assert result.exit_code == 1
    assert result.stderr == "no-such-file.xml: error: file not found\n"
    for verb in ("validate", "build"):
        other = CliRunner().invoke(cli, [verb, "no-such-file.yaml"])
        assert other.exit_code == 1
        assert other.stderr.startswith("no-such-file.yaml: error: file not found\n")
