"""The spec language: schema and reference stay in sync, examples validate, YAML 1.2 semantics,
positions of keys and values."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from fabricc.spec.loader import load_spec
from fabricc.spec.schema import schema_dict, schema_text
from fabricc.spec.yamlsource import load_yaml_bytes
from tests.support import EXAMPLE_NAMES, EXAMPLES, ROOT

MODELINE = "# yaml-language-server: $schema=../schemas/fabricc.schema.json"


def test_committed_schema_is_current() -> None:
    committed = (ROOT / "schemas" / "fabricc.schema.json").read_text()
    assert committed == schema_text(), (
        "schemas/fabricc.schema.json is stale: run python scripts/regen.py"
    )


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_has_modeline_and_validates(name: str) -> None:
    path = EXAMPLES / f"{name}.yaml"
    assert path.read_text().splitlines()[0] == MODELINE
    loaded = load_spec(path, f"examples/{name}.yaml")
    assert loaded.spec.metadata.name == name


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_json_schema_accepts_example(name: str) -> None:
    data = yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())
    jsonschema.validate(data, schema_dict())


def test_json_schema_rejects_unknown_key() -> None:
    data = {
        "metadata": {"name": "x"},
        "nodes": {"a": {"model": "dgx-h100", "count": 1}},
        "nodez": {},
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, schema_dict())


def test_schema_is_valid_json_schema() -> None:
    schema = json.loads(schema_text())
    jsonschema.Draft202012Validator.check_schema(schema)


def test_yaml_1_2_core_schema() -> None:
    data, _ = load_yaml_bytes(
        b"a: yes\nb: on\nc: 0o17\nd: 0x1f\ne: 017\nf: 1:1\ng: ~\nh: 1e3\ni: 'true'\nj: true\n",
        "t.yaml",
    )
    assert data == {
        "a": "yes",
        "b": "on",
        "c": 15,
        "d": 31,
        "e": 17,
        "f": "1:1",
        "g": None,
        "h": 1000.0,
        "i": "true",
        "j": True,
    }


def test_positions_of_keys_and_values() -> None:
    text = b"metadata:\n  name: lab\nnodes:\n  gpu: {model: dgx-h100, count: 4}\nlist:\n  - one\n  - two\n"
    _, source = load_yaml_bytes(text, "p.yaml")
    assert str(source.key(("metadata", "name"))) == "p.yaml:2:3"
    assert str(source.value(("metadata", "name"))) == "p.yaml:2:9"
    assert str(source.value(("nodes", "gpu", "count"))) == "p.yaml:4:33"
    assert str(source.value(("list", 1))) == "p.yaml:7:5"
    # a path that does not exist falls back to the nearest enclosing node
    assert str(source.key(("nodes", "gpu", "missing"))) == "p.yaml:4:3"


def test_minimal_spec_is_a_dozen_lines(tmp_path: Path) -> None:
    spec = tmp_path / "minimal.yaml"
    spec.write_text(
        "metadata: {name: minimal}\n"
        "nodes:\n"
        "  dgx: {model: dgx-h100, count: 64}\n"
        "networks:\n"
        "  compute: {role: compute, fabric: infiniband}\n"
        "  inband: {role: inband, dual_homed: true}\n"
        "  oob: {role: oob, uplink_to: inband}\n"
    )
    loaded = load_spec(spec, "minimal.yaml")
    compute = loaded.networks["compute"]
    assert compute.switch_models == {"leaf": "qm9700", "spine": "qm9700", "core": "qm9700"}
    assert compute.rail_optimized
    assert loaded.networks["inband"].switch_models["leaf"] == "sn4600c"
    assert loaded.networks["oob"].switch_models["leaf"] == "sn2201"
