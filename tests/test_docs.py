"""The documentation: generated reference pages are fresh, the README stays a short front door
whose commands are the ones CI runs, and nothing in the repository or in a build output cites a
document that a user cannot open (the team's private notes)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from fabricc.build import design
from fabricc.catalog import reference as catalog_reference
from fabricc.catalog.loader import load_catalog
from fabricc.spec import reference as spec_reference
from fabricc.spec.loader import load_spec
from tests.support import EXAMPLE_NAMES, GOLDEN_RENDER, ROOT, compiled

# Citations of the team's private notes, which are not part of the repository.
PRIVATE = re.compile(r"REFERENCE\.md|NCCL\.md|shared[/]")


def test_spec_reference_page_is_current() -> None:
    page = (ROOT / spec_reference.PAGE).read_text()
    assert page == spec_reference.page(), (
        f"{spec_reference.PAGE} is stale: run python scripts/regen.py"
    )


def test_catalog_reference_page_is_current() -> None:
    page = (ROOT / catalog_reference.PAGE).read_text()
    assert page == catalog_reference.page(), (
        f"{catalog_reference.PAGE} is stale: run python scripts/regen.py"
    )


def test_spec_reference_documents_every_field() -> None:
    page = spec_reference.page()
    from fabricc.spec.models import NetworkSpec, NodeGroupSpec, SiteSpec, Spec

    for model in (Spec, SiteSpec, NodeGroupSpec, NetworkSpec):
        for name, field in model.model_fields.items():
            assert f"| `{name}` |" in page
            assert field.description, f"{model.__name__}.{name} has no description"


def test_catalog_reference_lists_every_entry_with_its_sources() -> None:
    catalog = load_catalog().catalog
    page = catalog_reference.page(catalog)
    for section in ("nodes", "switches", "host_topologies"):
        for key in getattr(catalog, section):
            assert f"### `{key}`" in page, key
    for section in ("transceivers", "cables", "parts"):
        for key in getattr(catalog, section):
            assert f"| `{key}` |" in page, key
    for key, node in catalog.nodes.items():
        assert " ".join(node.source.split()).replace("|", "\\|") in page, key
        for port in node.ports:
            assert f"| {port.name} | {port.cage} |" in page, (key, port.name)
    for switch in catalog.switches.values():
        assert switch.part_number in page


def test_catalog_reference_escapes_markup() -> None:
    catalog = load_catalog().catalog
    part = next(iter(catalog.parts.values()))
    hostile = part.model_copy(update={"source": 'a <c2c bw="1"/> | *b*'})
    page = catalog_reference.page(catalog.model_copy(update={"parts": {"hostile": hostile}}))
    assert '| a &lt;c2c bw="1"/&gt; \\| \\*b\\* |' in page


def test_readme_is_a_short_front_door() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    assert "docs/report.png" in readme


def yaml_blocks(markdown: str) -> list[str]:
    return re.findall(r"^```yaml\n(.*?)^```", markdown, re.MULTILINE | re.DOTALL)


def test_readme_spec_builds_without_findings(tmp_path: Path) -> None:
    """The README's short spec is at most ten lines and designs cleanly: no error, no warning."""
    (spec,) = yaml_blocks((ROOT / "README.md").read_text())
    assert len(spec.splitlines()) <= 10
    path = tmp_path / "minimal.yaml"
    path.write_text(spec)
    fabric = design(load_spec(path, "minimal.yaml"))
    assert fabric.warnings == []
    assert sum(1 for d in fabric.devices.values() if d.group == "dgx") == 63
    # UFM on the first unit's reserved leaf ports (RA-11333): 16 leaves, 8 spines
    switches = fabric.networks["compute"].switches
    assert (len(switches["leaf"]), len(switches["spine"])) == (16, 8)


def test_getting_started_spec_and_site_catalog_validate(tmp_path: Path) -> None:
    """The spec that getting-started.md writes step by step, with its site catalog, designs."""
    blocks = yaml_blocks((ROOT / "docs" / "getting-started.md").read_text())
    catalog = next(b for b in blocks if b.startswith("parts:"))
    (tmp_path / "site-catalog.yaml").write_text(catalog)
    steps = [b for b in blocks if b.startswith(("metadata:", "nodes:", "networks:", "site:"))]
    spec = "catalog: [site-catalog.yaml]\n" + "".join(steps)
    spec = spec.replace(
        "rack: {power_kw: 45, pdus: 3}", "rack: {power_kw: 45, pdus: 3, pdu_model: pdu-60a-site}"
    )
    path = tmp_path / "hall-a.yaml"
    path.write_text(spec)
    fabric = design(load_spec(path, "hall-a.yaml"))
    assert fabric.loaded.catalog.catalog.nodes["storage-array"].part_number == "FS-4P-NDR"
    assert {d.model for d in fabric.devices.values() if d.kind == "pdu"} == {"pdu-60a-site"}


def test_readme_test_command_is_what_ci_runs() -> None:
    """`.ci/run` runs the README's test command verbatim."""
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    command = (
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && "
        ".venv/bin/python scripts/test.py"
    )
    assert command in readme
    assert command in ci.splitlines()


def test_scripts_test_builds_the_site_strictly() -> None:
    script = (ROOT / "scripts" / "test.py").read_text()
    assert '"mkdocs", "build", "--strict"' in script


def tracked_text_files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listed.split("\0") if name]


def test_repository_cites_no_private_notes() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    found = []
    for name in tracked_text_files():
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        found += [
            f"{name}:{number}"
            for number, line in enumerate(text.splitlines(), 1)
            if PRIVATE.search(line)
        ]
    assert not found, found


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_build_output_cites_no_private_notes(name: str) -> None:
    _, artifacts = compiled(name, GOLDEN_RENDER)
    found = []
    for path, content in artifacts:
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        if PRIVATE.search(text):
            found.append(path)
    assert not found, found


def test_license_file_matches_pyproject() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
