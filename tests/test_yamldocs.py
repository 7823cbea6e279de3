"""fabricc.emit.provisioning.yamldocs: the one-pass YAML writer gives byte for byte the text of
yaml.dump_all with the Dumper it is given (the k8s emitter's and PyYAML's SafeDumper), for any
documents of dicts, lists, str and int (hypothesis), falling back to PyYAML where it must."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricc.emit.provisioning.k8s import _Dumper
from fabricc.emit.provisioning.yamldocs import dump_documents

LOOK_ALIKES = [
    "10", "on", "Off", "yes", "NULL", "~", "1e3", "0x1f", "a: b", "-x", "y\n", "", " a",
    "12:30", "2024-01-01", ".inf", "# c", "a #b", "'q'", '"d"', "x" * 120, "a " * 60,
    '{"type": "nv-ipam"}', "ü", "tab\there", "\x85",
]  # fmt: skip
# Names and addresses (the writer's own fast path), YAML look-alikes, odd and long text.
TEXT = st.one_of(
    st.from_regex(r"[A-Za-z][A-Za-z0-9_./-]{0,20}", fullmatch=True),
    st.from_regex(r"[0-9]{1,3}(\.[0-9]{1,3}){3}(/[0-9]{1,2})?", fullmatch=True),
    st.sampled_from(LOOK_ALIKES),
    st.text(max_size=12),
)
SCALAR = st.one_of(st.integers(), TEXT)
TREE = st.recursive(
    st.dictionaries(TEXT, SCALAR, max_size=4),
    lambda inner: st.dictionaries(
        TEXT, st.one_of(SCALAR, inner, st.lists(st.one_of(SCALAR, inner), max_size=3)), max_size=4
    ),
    max_leaves=20,
)
DUMPERS = st.sampled_from([_Dumper, yaml.SafeDumper])


def expected(docs: list[dict[str, Any]], dumper: type[yaml.SafeDumper], start: bool) -> str:
    return yaml.dump_all(docs, Dumper=dumper, sort_keys=False, explicit_start=start, width=100)


@settings(max_examples=400)
@given(st.lists(TREE, max_size=4), DUMPERS, st.booleans())
def test_same_text_as_pyyaml(docs: list[dict[str, Any]], dumper: Any, start: bool) -> None:
    assert dump_documents(docs, dumper, start) == expected(docs, dumper, start)


def node(name: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def test_node_and_pool_documents_are_written_without_pyyaml(monkeypatch: Any) -> None:
    """The emitters' usual documents take the one-pass path (no fallback), quoting included."""
    docs = [
        node("gpu01", {"topology.fabricc.io/rack": "B01", "topology.fabricc.io/su": "1"}),
        {"spec": {"cidr": "10.0.0.0/12", "staticAllocations": [
            {"nodeName": "gpu01", "prefix": "10.0.0.0/31", "gateway": "10.0.0.0"}
        ], "empty": [], "none": {}}},
    ]  # fmt: skip
    text = expected(docs, _Dumper, True)
    assert "su: '1'" in text
    dumped: list[object] = []  # what PyYAML was given: single scalars to spell, never the documents
    dump_all = yaml.dump_all

    def spy(documents: Any, *args: Any, **kwargs: Any) -> Any:
        dumped.append(documents)
        return dump_all(documents, *args, **kwargs)

    monkeypatch.setattr(yaml, "dump_all", spy)
    assert dump_documents(docs, _Dumper) == text
    assert dumped and docs not in dumped


def test_aliases_multiline_and_long_text_fall_back_to_pyyaml() -> None:
    shared = {"a": 1}
    for docs in (
        [{"x": shared, "y": shared}],  # one object twice: an anchor and an alias
        [{"config": '{\n  "a": 1\n}'}],  # literal block
        [{"k": "word " * 30}],  # folded past the width
        [{"k": [[1, 2]]}],  # nested sequence
        [{"k": 1.5}],  # another type
        [{"k": True}],
    ):
        assert dump_documents(docs, _Dumper) == expected(docs, _Dumper, True)
