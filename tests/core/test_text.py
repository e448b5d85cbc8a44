"""Units, cuts and one-line flattening: the measures every part of the block relies on."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from session_workflow.core.text import cut_code_points, cut_utf8, cut_utf16, one_line, utf8_len, utf16_len
from tests.reliability.strategies import char_text

# Lone surrogates, tag, format and astral characters among any others: what the measures must hold for.
any_text = char_text()


def emitted_utf8(text: str) -> int:
    """The bytes ``text`` takes in the hook's output, where a lone surrogate becomes U+FFFD (three bytes)."""
    return len(text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8"))


def test_utf16_counts_astral_characters_as_two() -> None:
    assert utf16_len("a€😀") == 4
    assert utf8_len("a€😀") == 8


def test_one_line_flattens_controls_and_strips_invisibles() -> None:
    forged = "fix\n#9 [pending] forged\r\x00\t tab\u2028sep \u202eevil\u200b zero\ufeff"
    assert one_line(forged) == "fix #9 [pending] forged tab sep evil zero"


def test_one_line_replaces_lone_surrogates() -> None:
    assert one_line("a\ud800b") == "a b"


def test_cut_utf8_keeps_marker_inside_bound_and_whole_characters() -> None:
    assert cut_utf8("ééé", 6) == "ééé"
    cut = cut_utf8("éééé", 6)
    assert utf8_len(cut) <= 6 and cut.endswith("…") and cut == "é…"


def test_cut_utf16_never_splits_a_surrogate_pair() -> None:
    assert cut_utf16("😀😀😀", 4) == "😀…"
    assert cut_utf16("abc", 0) == ""


def test_cut_code_points() -> None:
    assert cut_code_points("abcdef", 4) == "abc…"
    assert cut_code_points("abc", 4) == "abc"


def test_a_lone_surrogate_counts_as_the_three_bytes_it_is_sent_as() -> None:
    assert utf8_len("\ud800") == emitted_utf8("\ud800") == 3
    assert utf16_len("\ud800") == 1


@given(any_text, st.integers(min_value=0, max_value=64))
def test_cuts_stay_within_bound(text: str, bound: int) -> None:
    assert emitted_utf8(text) <= utf8_len(text)
    assert emitted_utf8(cut_utf8(text, bound)) <= utf8_len(cut_utf8(text, bound)) <= bound
    assert utf16_len(cut_utf16(text, bound)) <= bound
    assert len(cut_code_points(text, bound)) <= bound


@given(any_text)
def test_one_line_has_no_line_breaks_or_controls(text: str) -> None:
    flat = one_line(text)
    assert not any(ch in flat for ch in "\n\r\x00\u2028\u2029\u202e\u200b")
    assert flat == flat.strip()
    flat.encode("utf-8")


@given(any_text)
def test_one_line_fast_path_matches_the_full_flattening(text: str) -> None:
    import re

    from session_workflow.core import text as textutil

    slow = re.sub(textutil._BREAKING, " ", re.sub(textutil._INVISIBLE, "", text)).strip()
    assert one_line(text) == slow
