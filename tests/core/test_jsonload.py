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
@given(
    pieces=st.lists(fragments | st.text(max_size=3), max_size=12),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-16-le"]),
)
def test_any_text_fails_or_loads_as_json_loads_does(pieces: list[str], encoding: str) -> None:
    text = "".join(pieces)
    assert outcome(jsonload.loads, text) == outcome(json.loads, text)
    data = text.encode(encoding, "surrogatepass")
    assert outcome(jsonload.loads, data) == outcome(json.loads, data)


@pytest.mark.parametrize(
    "data",
    [
        *(b"", b" ", b"{} x", b"[1] ", b"\xef\xbb\xbf{}", b"\xff\xfe{\x00}\x00", b"\x80", b"NaN", b"[" * 100_000),
        # UTF-16 without a BOM (json.detect_encoding reads the NULs), and whitespace json does not take.
        *('{"a": 1}'.encode("utf-16-le"), '{"a": 1}'.encode("utf-16-be"), "[1]".encode("utf-32-le")),
        # Two bytes are UTF-16 when either is NUL; three with a NUL second are UTF-8 (json's detect_encoding).
        *("1".encode("utf-16-le"), "1".encode("utf-16-be"), b"1\x00 ", b"\x001 "),
        *(b"{}\f", b"\f{}", b"[1]\x0b", b"[1]\x1c", "[1]\u00a0".encode(), "[1]\u2028".encode()),
    ],
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
    done = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["{'a':", "[1,", "2.5,", "None]}", '["\\u00e9",3,null]', "False", "False"]


# --- cold: what a hook's ``python3 -I -S`` gets -------------------------------------------------------------

# Runs in ``sys.executable -I -S``: documents come framed on stdin (a 4-byte length, a byte saying whether to pass
# them as bytes or as text, the bytes), outcomes go out one ``ascii()`` line each. Before each document every
# ``json`` module is dropped from ``sys.modules``, so each is parsed as in a fresh hook: on 3.10 and 3.11 the C
# scanner looks only there for ``json.decoder`` (the one thing this state changes), and 3.12+ imports it itself.
COLD_SCRIPT = r"""
import sys

def outcome(load, data):
    try:
        value = load(data)
    except RecursionError:
        return "RecursionError"
    except ValueError as error:
        if type(error).__name__ == "JSONDecodeError":
            return ascii(("JSONDecodeError", error.msg, error.pos, error.lineno, error.colno))
        return ascii((type(error).__name__, str(error)))
    except Exception as error:
        return ascii(("unexpected", type(error).__name__, str(error)))
    return ascii(("value", value))

if __name__ == "__main__":
    sys.path.insert(0, sys.argv[1])
    from session_workflow.core import jsonload

    data = sys.stdin.buffer.read()
    offset = 0
    while offset < len(data):
        size = int.from_bytes(data[offset : offset + 4], "big")
        as_text = data[offset + 4] == 1
        document = data[offset + 5 : offset + 5 + size]
        offset += 5 + size
        for name in [name for name in sys.modules if name == "json" or name.startswith("json.")]:
            del sys.modules[name]
        assert "json.decoder" not in sys.modules
        given = document.decode("utf-8", "surrogatepass") if as_text else document
        sys.stdout.write(outcome(jsonload.loads, given) + "\n")
"""
_namespace: dict[str, object] = {}
exec(COLD_SCRIPT, _namespace)  # the same ``outcome``, here, for json.loads in pytest's warm interpreter
warm_outcome = _namespace["outcome"]

COLD_VALUES: list[object] = [
    None,
    True,
    False,
    0,
    -0.0,
    -12,
    3.25e-7,
    10**30,
    float("inf"),
    float("-inf"),
    float("nan"),
    "",
    "plain",
    "é — ☃ \U0001f600",
    'quote " backslash \\ slash / controls \x00\x1f\t\n',
    "\ud800 \udfff",
    [],
    {},
    [1, [2, [3, {"k": [None, {"": ""}]}]]],
    {"id": "4", "subject": "Ship — docs", "status": "pending", "blocks": [], "blockedBy": ["1"], "metadata": {}},
]
COLD_FRAGMENTS = [
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    '"',
    "\\",
    "\\u12",
    "\\ud800",
    "\\x",
    "1e",
    "-",
    "0",
    "01",
    ".5",
    "NaN",
    "Infinity",
    "-Infinity",
    "nul",
    "tru",
    " ",
    "\n",
    "\x01",
    "é",
    "\ufeff",
    '"a"',
    "1.5e3",
]


def cold_corpus() -> list[tuple[bytes, bool]]:
    """(document, pass it as text) for valid and malformed documents alike: every value above in json's spellings,
    every cut of each, seeded random fragment strings, and the hostile shapes (bad UTF-8, BOM, UTF-16, nesting)."""
    import random

    documents: list[bytes] = []
    for value in COLD_VALUES:
        for spelled in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1), f" {json.dumps(value)}\n"):
            data = spelled.encode("utf-8", "surrogatepass")
            documents += [data[:length] for length in range(len(data) + 1)]
            documents += [data + b" x", data + b"\n" + data]
    chance = random.Random(26)
    documents += ["".join(chance.choices(COLD_FRAGMENTS, k=chance.randint(1, 8))).encode("utf-8") for _ in range(1500)]
    documents += [
        b"\xef\xbb\xbf{}",
        b"\xff\xfe{\x00}\x00",
        '{"a": "é"}'.encode("utf-16"),
        '{"a": "é"}'.encode("utf-16-le"),
        b"{}\f",
        b"[1]\x0b",
        b'{"a": "\xff"}',
        b'{"a": "\xc3"}',
        b'{"a": "\xed\xa0\x80"}',
        b'["\xc0\xaf"]',
        b"\x80",
        b"\x00" * 8,
        b"[" * 100_000,
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 50_000,
        b"9" * 5000,
        b'"' + b"x" * (1 << 20),
    ]
    unique = list(dict.fromkeys(documents))
    return [(document, False) for document in unique] + [(document, True) for document in unique if _text(document)]


def _text(document: bytes) -> bool:
    try:
        document.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return False
    return True


def cold_outcomes(corpus: list[tuple[bytes, bool]]) -> list[str]:
    framed = b"".join(len(doc).to_bytes(4, "big") + bytes([as_text]) + doc for doc, as_text in corpus)
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", COLD_SCRIPT, str(SRC)],
        input=framed,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert (done.returncode, done.stderr.decode("utf-8", "replace")[-3000:]) == (0, "")
    return done.stdout.decode("ascii").splitlines()


def _warm(document: bytes, as_text: bool) -> str:
    given: bytes | str = document.decode("utf-8", "surrogatepass") if as_text else document
    return str(warm_outcome(json.loads, given))  # type: ignore[operator]


def test_cold_loads_answers_as_json_loads_on_this_interpreter() -> None:
    """Under ``python3 -I -S`` (no ``json`` imported), valid and malformed documents alike: ``loads`` gives what
    ``json.loads`` gives, value or error (type, message, position). On 3.10 and 3.11 the scanner alone raised
    SystemError here."""
    corpus = cold_corpus()
    assert len(corpus) > 3000
    cold = cold_outcomes(corpus)
    assert len(cold) == len(corpus)
    differing = [(doc[:80], as_text, got) for (doc, as_text), got in zip(corpus, cold) if got != _warm(doc, as_text)]
    assert differing == []
    assert sum(got.startswith("('JSONDecodeError'") for got in cold) > 1000


@pytest.mark.parametrize("document", [b'{"a" 1}', b'"abc', b'["\\x"]', b"[1,", b'{"id": "4", "subj', b"\xff"])
def test_cold_loads_in_a_fresh_interpreter_as_after_the_purge(document: bytes) -> None:
    """One document per fresh ``-I -S`` process gives what the batch (``json`` purged before each) gives."""
    assert cold_outcomes([(document, False)]) == [_warm(document, False)]


_INDENTED_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=12))
_INDENTED = st.recursive(
    _INDENTED_LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=20,
)


@given(_INDENTED)
def test_dumps_indented_is_json_dumps_with_indent_1(document: object) -> None:
    """A trust record's bytes are the same whether ``json`` or the hot path's encoder wrote them."""
    assert jsonload.dumps_indented(document) == json.dumps(document, ensure_ascii=True, indent=1)


def test_dumps_indented_hands_other_values_to_json() -> None:
    for document in ({"f": 1.5}, {"t": (1, 2)}, {1: "int key"}, [float("inf")]):
        assert jsonload.dumps_indented(document) == json.dumps(document, ensure_ascii=True, indent=1)
