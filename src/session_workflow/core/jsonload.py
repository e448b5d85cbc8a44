"""``json.loads`` (and a flat ``json.dumps``) without importing ``json``: the same C code, driven directly.

Importing the ``json`` package costs about half an interpreter start, nearly all of it through ``re`` (its
decoder compiles patterns at import time). A hook that reads a payload and a transcript line and then finds
nothing to do should not pay that, so this module drives ``_json``'s scanner, the one ``json.loads`` itself
uses, with the decoder's defaults. Anything it does not handle exactly as ``json.loads`` does (non-UTF-8 bytes,
an interpreter without ``_json``, a malformed document on 3.10 and 3.11, whose scanner needs ``json.decoder``
imported to raise its error) is handed to ``json.loads``. Errors are ``ValueError`` (``JSONDecodeError``) or
``RecursionError``, as from ``json.loads``; ``tests/core/test_jsonload.py`` compares the two in a cold
``python3 -I -S`` on every interpreter, valid and malformed documents alike.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

# What json.decoder's WHITESPACE pattern skips around the document.
_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Defaults:
    """The attributes ``_json.make_scanner`` reads, set as ``json.JSONDecoder()`` sets them."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__


def _c_functions() -> tuple[Callable[[str, int], tuple[object, int]], Callable[[str], str]] | None:
    try:
        import _json
    except ImportError:
        return None
    context: Any = _Defaults()  # typeshed types the context as the scanner class itself
    scanner: Callable[[str, int], tuple[object, int]] = _json.make_scanner(context)
    return scanner, _json.encode_basestring_ascii


_C = _c_functions()
_scan_once = _C[0] if _C else None
_quote_ascii = _C[1] if _C else None


def _plain_utf8(data: bytes) -> bool:
    """True when ``json.detect_encoding`` would call ``data`` UTF-8 without a BOM (its first bytes have no NUL
    and no BOM starts it), so decoding it here is what ``json.loads`` does."""
    if data[:1] in (b"\xef", b"\xfe", b"\xff", b"\x00"):
        return False
    return not (len(data) >= 2 and data[1] == 0)


def loads(data: bytes | str) -> object:
    """What ``json.loads(data)`` returns, for the same inputs, with the same errors."""
    if _scan_once is None or (isinstance(data, bytes) and not _plain_utf8(data)):
        import json

        return json.loads(data)
    text = data.decode("utf-8", "surrogatepass") if isinstance(data, bytes) else data
    if text.startswith("\ufeff"):
        import json

        return json.loads(text)  # raises json's "Unexpected UTF-8 BOM"
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan_once(text, start)
    except StopIteration as stop:
        import json

        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    except SystemError:
        # 3.10 and 3.11: the scanner takes JSONDecodeError from an already imported json.decoder and, in a cold
        # interpreter (python3 -I -S) that has none, fails without an error of its own. json raises the real one.
        import json

        return json.loads(text)
    rest = text[end:]
    if rest.strip(_WHITESPACE):
        import json

        raise json.JSONDecodeError("Extra data", text, end + len(rest) - len(rest.lstrip(_WHITESPACE)))
    return value


def quote_ascii(text: str) -> str:
    """``json.dumps(text)`` (ASCII, as ``ensure_ascii=True`` writes it) for a string."""
    if _quote_ascii is None:
        import json

        return json.dumps(text, ensure_ascii=True)
    return _quote_ascii(text)


def _flat(value: object) -> str | None:
    """The JSON of None, a bool, an int or a string, as ``json.dumps`` (ASCII) writes it; None for anything else."""
    if value is None or isinstance(value, bool):
        return "null" if value is None else "true" if value else "false"
    if type(value) is int:
        return int.__repr__(value)
    if type(value) is str and _quote_ascii is not None:
        return quote_ascii(value)
    return None


def dumps_flat(values: Sequence[object]) -> str:
    """``json.dumps(values, ensure_ascii=True, separators=(",", ":"))`` for a list of None, bools, ints and
    strings (a snapshot key), built from the encoder's own string quoting; anything else goes to ``json``."""
    parts = [_flat(value) for value in values]
    if None in parts:
        import json

        return json.dumps(values, ensure_ascii=True, separators=(",", ":"))
    return "[" + ",".join(part for part in parts if part is not None) + "]"


def dumps_indented(document: object) -> str:
    """``json.dumps(document, ensure_ascii=True, indent=1)`` for dicts with string keys and lists of flat values (a
    trust record), built from the encoder's own string quoting, so a writer in a hook (the edit hook's re-vouch)
    imports no ``json``, and with it ``re`` and ``enum``; anything else goes to ``json``."""
    text = _indented(document, 1)
    if text is None:
        import json

        return json.dumps(document, ensure_ascii=True, indent=1)
    return text


def _indented(value: object, level: int) -> str | None:
    flat = _flat(value)
    if flat is not None or not isinstance(value, (list, dict)):
        return flat
    if not value:
        return "[]" if type(value) is list else "{}" if type(value) is dict else None
    inner, outer = "\n" + " " * level, "\n" + " " * (level - 1)
    items: list[str | None]
    if type(value) is list:
        items = [_indented(item, level + 1) for item in value]
        opening, closing = "[", "]"
    elif type(value) is dict and all(type(key) is str for key in value):
        items = [_keyed(key, item, level) for key, item in value.items()]
        opening, closing = "{", "}"
    else:
        return None
    if None in items:
        return None
    return opening + inner + ("," + inner).join(item for item in items if item is not None) + outer + closing


def _keyed(key: str, value: object, level: int) -> str | None:
    text = _indented(value, level + 1)
    return None if text is None else quote_ascii(key) + ": " + text


def dumps_flat_object(record: Mapping[str, object]) -> str:
    """``json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":"))`` for a mapping of strings
    to flat values (a log line), the same way; anything else goes to ``json``."""
    parts = []
    for key in sorted(record) if all(type(key) is str for key in record) else ():
        value = _flat(record[key])
        if value is None:
            break
        parts.append(quote_ascii(key) + ":" + value)
    else:
        if len(parts) == len(record):
            return "{" + ",".join(parts) + "}"
    import json

    return json.dumps(record, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
