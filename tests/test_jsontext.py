"""fabricc.emit.jsontext: the fast indented JSON is byte for byte json.dumps(indent=2,
ensure_ascii=False), the flow JSON json.dumps(), for any JSON-shaped data (hypothesis); unsupported
values and keys raise as json does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricc.emit import jsontext
from fabricc.emit.jsontext import json_dumps, json_flow

SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text())
KEY = st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats())
DATA = st.recursive(
    SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(KEY, inner, max_size=4),
    ),
    max_leaves=30,
)


def expected(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)


@settings(max_examples=300)
@given(DATA)
def test_same_text_as_json_dumps(data: Any) -> None:
    assert json_dumps(data) == expected(data)


@settings(max_examples=200)
@given(DATA)
def test_flow_is_json_dumps(data: Any) -> None:
    assert json_flow(data) == json.dumps(data)


def test_nested_and_flat_containers_line_breaks_in_strings() -> None:
    data = {
        "a": [{"x": "line\nbreak", "y": [1, 2.5, None]}, [], {}],
        "b": {"c": {"d": 'ü\u2028"q"'}},
        7: (True, False),
    }
    assert json_dumps(data) == expected(data)


def test_unsupported_values_and_keys_raise_like_json() -> None:
    with pytest.raises(TypeError):
        json_dumps({"a": {"b": object()}})
    with pytest.raises(TypeError):
        json_dumps({("tuple", "key"): [1]})


def test_without_the_c_encoder_the_standard_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsontext, "_leaf", None)
    monkeypatch.setattr(jsontext, "_flow", None)
    assert json_dumps({"a": [1]}) == expected({"a": [1]})
    assert json_flow({"a": ["ü"]}) == json.dumps({"a": ["ü"]})
