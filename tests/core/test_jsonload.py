"""``jsonload.loads`` answers exactly as ``json.loads`` does, and loading it imports neither json nor re."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_workflow.core import jsonload

SRC = Path(__file__).resolve().parents[2] / "src"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4),
    max_leaves=12,
)
fragments = st.sampled_from(
    ["{", "}", "[", "]", ",", ":", '"', "\\", "\\u12", "\ud800", "1e", "-", "NaN", "Infinity", " ", "\n", "\ufeff"]
)


def outcome(load: object, data: bytes | str) -> object:
    try:
        value = load(data)  # type: ignore[operator]
    except json.JSONDecodeError as error:
        return ("JSONDecodeError", error.msg, error.pos)
    except (ValueError, RecursionError) as error:
        return (type(error).__name__,)
    return ("value", json.dumps(value, sort_keys=True) if not _has_nan(value) else repr(value))


def _has_nan(value: object) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list):
        return any(map(_has_nan, value))
    if isinstance(value, dict):
        return any(map(_has_nan, value.values()))
    return False


@settings(max_examples=300, deadline=None)
@given(value=json_values, pad=st.sampled_from(["", " ", "\n\t ", "\r"]))
def test_valid_documents_load_as_json_loads_them(value: object, pad: str) -> None:
    text = pad + json.dumps(value, ensure_ascii=False) + pad
    assert outcome(jsonload.loads, text) == outcome(json.loads, text)
    data = text.encode("utf-8", "surrogatepass")
    assert outcome(jsonload.loads, data) == outcome(json.loads, data)


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(fragments | st.text(max_size=3), max_size=12), encoding=st.sampled_from(["utf-8", "utf-16"]))
def test_any_text_fails_or_loads_as_json_loads_does(pieces: list[str], encoding: str) -> None:
    text = "".join(pieces)
    assert outcome(jsonload.loads, text) == outcome(json.loads, text)
    data = text.encode(encoding, "surrogatepass")
    assert outcome(jsonload.loads, data) == outcome(json.loads, data)


@pytest.mark.parametrize(
    "data", [b"", b" ", b"{} x", b"[1] ", b"\xef\xbb\xbf{}", b"\xff\xfe{\x00}\x00", b"\x80", b"NaN", b"[" * 100_000]
)
def test_edge_inputs_match_json_loads(data: bytes) -> None:
    assert outcome(jsonload.loads, data) == outcome(json.loads, data)


flat_value = st.none() | st.booleans() | st.integers() | st.text() | st.floats() | st.lists(st.integers(), max_size=2)
flat_values = st.lists(flat_value, max_size=6)


@settings(max_examples=300, deadline=None)
@given(values=flat_values)
def test_a_flat_list_dumps_as_json_dumps_does(values: list[object]) -> None:
    assert jsonload.dumps_flat(values) == json.dumps(values, ensure_ascii=True, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(record=st.dictionaries(st.text(max_size=5) | st.integers(), flat_value, max_size=6))
def test_a_flat_mapping_dumps_as_json_dumps_does_with_sorted_keys(record: dict[object, object]) -> None:
    try:
        expected: object = json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    except TypeError:
        expected = TypeError
    try:
        got: object = jsonload.dumps_flat_object(record)  # type: ignore[arg-type]
    except TypeError:
        got = TypeError
    assert got == expected


def test_loading_a_document_imports_neither_json_nor_re() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(SRC)!r}); from session_workflow.core import jsonload;"
        " print(jsonload.loads(b'{\"a\": [1, 2.5, null]}'), jsonload.dumps_flat(['\u00e9', 3, None]),"
        " 'json' in sys.modules, 're' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["{'a':", "[1,", "2.5,", "None]}", '["\\u00e9",3,null]', "False", "False"]
