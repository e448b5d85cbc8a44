"""The trust record's recorded kind: which rules found it, and that those rules still classify as they did."""

from __future__ import annotations

import pytest

from session_workflow.anchor import registry
from session_workflow.anchor.discover import kind_of_bytes
from session_workflow.anchor.text import KIND_LABELS

FRONT = "---\nformat: anchor/v1\nstep: 3\n---\n"
CURSOR = "## Cursor\n- Next action: port the writer\n"
TAIL = "<!-- anchor:tail -->\n"

# What the classification said when KIND_RULES was 1. A record on disk holds [1, kind] for text like this, and the
# hook trusts that kind without reading the file: if a change to the rules flips any row, bump KIND_RULES (so old
# records are read again) and then update this table.
KINDS_AT_RULES_1 = [
    (FRONT + "# Run\n\n" + CURSOR, "live"),
    (FRONT.replace("step: 3\n", 'step: 3\nparked: "waiting for review"\n') + "# Run\n\n" + CURSOR, "parked"),
    (FRONT + "# Run\n\n**Status:** done\n\n" + CURSOR, "done"),
    (FRONT + "# Run\n\nStatus: merged to main.\n" + CURSOR, "done"),
    (FRONT + "# Run\n\n" + CURSOR + TAIL + "Status: done\n", "live"),
    (FRONT + "# Run\n\nThe status is not done yet.\n" + CURSOR, "live"),
    ("# Notes\n\nNothing here.\n", "not an anchor"),
    ("# Run\n\n" + CURSOR, "live"),
    ("\ufeff" + FRONT.replace("\n", "\r\n") + "# Run\r\n\r\n**Status:** done\r\n", "done"),
    (FRONT + "# Run\n\n" + "x" * 70_000 + "\n**Status:** done\n", "live"),
]


def test_kind_rules_are_the_version_records_name() -> None:
    assert registry.KIND_RULES == 1, "KIND_RULES changed: update KINDS_AT_RULES_1 to what the new rules say"


@pytest.mark.parametrize(("text", "label"), KINDS_AT_RULES_1)
def test_the_rules_still_classify_as_recorded(text: str, label: str) -> None:
    assert KIND_LABELS[kind_of_bytes(text.encode("utf-8"))] == label


def test_a_record_keeps_its_kind_for_its_newest_identity_only() -> None:
    newest, before = registry.Identity(1, 2, 3, 4), registry.Identity(1, 2, 3, 5)
    record = registry.Record("/p/a.md", [newest, before], [], kind=2)
    assert record.kind_of(newest) == 2 and record.kind_of(before) is None
    parsed = registry.parse(registry.encode(record, "step", 0.0), "/p/a.md")
    assert parsed is not None and parsed.kind_of(newest) == 2
