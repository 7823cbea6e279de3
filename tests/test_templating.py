"""YAML formatting of the config emitters (fabricc.emit.templating): yaml_scalar and yaml_block
read back, through a YAML parser, as exactly the values they were given (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from fabricc.emit.templating import SharedTrees, render, render_framed, yaml_block

# Text that looks like YAML of another type ("10", "on", "null", "1e3", ": x") must stay a string.
TEXT = st.one_of(
    st.text(st.characters(categories=("L", "N", "P", "S", "Zs")), min_size=1, max_size=12),
    st.sampled_from(
        ["10", "on", "off", "yes", "No", "null", "~", "1e3", "0x1f", "a: b", "-x", "y\n"]
    ),
    st.from_regex(r"[a-z][a-z0-9/:.-]{0,10}", fullmatch=True),
)
SCALAR = st.one_of(st.integers(), TEXT)
TREE = st.recursive(
    st.dictionaries(TEXT, SCALAR, max_size=4),
    lambda inner: st.dictionaries(TEXT, st.one_of(SCALAR, inner), max_size=4),
    max_leaves=20,
)


@given(TREE)
def test_yaml_block_reads_back_as_the_tree_in_its_key_order(tree: dict[str, Any]) -> None:
    text = "top:\n" + yaml_block(tree, 2) if tree else "top: {}\n"
    loaded = yaml.safe_load(text)
    assert loaded == {"top": tree}
    assert json.dumps(loaded) == json.dumps({"top": tree})  # same order at every level


def test_yaml_block_shape() -> None:
    tree = {"interface": {"swp1": {"type": "swp", "link": {"mtu": 9216, "state": {"up": {}}}}}}
    assert yaml_block(tree, 4) == (
        "    interface:\n"
        "      swp1:\n"
        "        type: swp\n"
        "        link:\n"
        "          mtu: 9216\n"
        "          state:\n"
        "            up: {}\n"
    )
    assert yaml_block({"10": "on", "ip": {"10.0.0.1/31": {}}}) == (
        '"10": "on"\nip:\n  "10.0.0.1/31": {}\n'
    )


@given(TREE, TREE)
def test_yaml_block_shared_subtrees_read_as_copies(
    tree: dict[str, Any], shared: dict[str, Any]
) -> None:
    """One mapping object at several places and depths of the tree (as the config builders share
    per-port subtrees) is written as if each place held its own copy."""
    with_shared = {"a": shared, "b": {"c": shared, "d": shared}, "e": tree, "f": shared}
    copies = json.loads(json.dumps(with_shared))
    assert yaml_block(with_shared, 2) == yaml_block(copies, 2)


@given(TREE, TREE, st.integers(min_value=0, max_value=3))
def test_yaml_block_trees_shared_between_calls_read_as_copies(
    tree: dict[str, Any], shared: dict[str, Any], indent: int
) -> None:
    """A mapping registered with SharedTrees (the switches of a build hold one QoS section) is
    written as if each tree held its own copy, at every indent and in every call."""
    registry = SharedTrees()
    registry.share(shared)
    first = {"a": shared, "b": {"c": shared}, "e": tree}
    second = {"x": {"y": {"z": shared}}, "a": shared}
    for built in (first, second, first):
        copies = json.loads(json.dumps(built))
        assert yaml_block(built, indent, registry) == yaml_block(copies, indent)


def test_a_shared_tree_is_spelled_once_per_indent() -> None:
    registry = SharedTrees()
    qos = registry.share({"roce": {"enable": "on", "mode": "lossless"}})
    yaml_block({"qos": qos}, 4, registry)
    yaml_block({"qos": qos, "nested": {"qos": qos}}, 4, registry)
    _, texts = registry.held[id(qos)]
    assert sorted(texts) == [" " * 6, " " * 8]
    assert texts[" " * 6] == '      roce:\n        enable: "on"\n        mode: lossless\n'


@given(
    st.text(max_size=30),
    st.text(max_size=300),
    st.booleans(),
    st.sampled_from([None, 104, 106]),
    st.sampled_from([None, "lo,docker0"]),
)
def test_render_framed_is_render(
    host: str, rows: str, nccl: bool, tc: int | None, exclude: str | None
) -> None:
    """A framed render gives render's text for any slot text (markers, braces and line breaks
    included) and whatever the fixed values the template branches on."""
    fixed = {"design": "d", "nccl": nccl, "nccl_tc": tc, "socket_exclude": exclude}
    slots = {"host": host, "qos_functions": "qos1() { :; }\n", "rows": rows}
    assert render_framed("host/roce.sh.j2", fixed, **slots) == render(
        "host/roce.sh.j2", **fixed, **slots
    )
