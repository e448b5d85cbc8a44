"""The numbers the docs state are the code's numbers, and the README's configuration table is what the code reads.

Tolerant of rewording: each doc is searched for "<number> <unit>" (``10,000-unit``, ``4,096 bytes``, ``6 h``…),
and every number stated with a unit must be one the code defines for that unit; the promises each doc must
state are checked to be there. Wording around the numbers is free to change.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from session_workflow.anchor import age as anchor_age
from session_workflow.anchor import block
from session_workflow.anchor import writer as anchor_writer
from session_workflow.core import config
from session_workflow.hook import compose, precompact
from session_workflow.tasks import render as tasks_render
from session_workflow.transcript import record
from session_workflow.workstate import section as workstate_section
from tests.test_promises import HOUR, project_ctx, write_anchor

REPO = Path(__file__).resolve().parents[1]
DOCS = {
    "README.md": REPO / "README.md",
    "SKILL.md": REPO / "skills" / "compaction-survival" / "SKILL.md",
    "anchor-format.md": REPO / "references" / "anchor-format.md",
    "failure-modes.md": REPO / "references" / "failure-modes.md",
    "how-it-works.md": REPO / "references" / "how-it-works.md",
    "security-model.md": REPO / "references" / "security-model.md",
}
STATED = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})*|\d+)[ -](UTF-16|units?|bytes|characters|tasks|hours|h|s)\b")


def hook_timeouts() -> set[int]:
    spec = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    return {hook["timeout"] for groups in spec["hooks"].values() for group in groups for hook in group["hooks"]}


def mod_constant(name: str) -> int:
    """A number the hooks module defines (``export const NAME = 300`` in TypeScript, which Python cannot import)."""
    text = (REPO / "hooks" / "mod" / "checkpoint.ts").read_text(encoding="utf-8")
    match = re.search(rf"^export const {name} = ([0-9_]+)$", text, re.MULTILINE)
    assert match, f"hooks/mod/checkpoint.ts defines no {name}"
    return int(match.group(1).replace("_", ""))


def code_values() -> dict[str, set[int]]:
    """What the code defines, per unit a doc may state a number in."""
    units = {compose.CAP_UTF16, block.CAP, block.DROP_NAMES_CAP, precompact.MAX_CHARS}
    hours = {age // 3600 for age in (anchor_age.STARTUP_MAX_AGE, anchor_age.POINTER_AGE, anchor_age.DORMANT_AGE)}
    byte_caps = {tasks_render.CAP_BYTES, tasks_render.SUBJECT_BYTES, tasks_render.DESCRIPTION_BYTES}
    return {
        "UTF-16": units,
        "unit": units,
        "units": units,
        "characters": {precompact.MAX_CHARS, anchor_writer.SLUG_MAX},
        "bytes": byte_caps
        | {workstate_section.MAX_SECTION_BYTES, mod_constant("MAX_REMINDER_BYTES"), record.MARK_BYTES},
        "tasks": {tasks_render.MAX_TASKS},
        "h": hours,
        "hours": hours,
        "s": hook_timeouts(),
    }


def stated(doc: str) -> list[tuple[int, str]]:
    text = DOCS[doc].read_text(encoding="utf-8")
    return [(int(number.replace(",", "")), unit) for number, unit in STATED.findall(text)]


# The promises each doc states (number, unit): they must be there, so a rewrite that drops one is noticed.
REQUIRED = {
    "README.md": [(10_000, "UTF-16"), (40, "tasks"), (4_096, "bytes"), (600, "characters"), (6, "h"), (300, "bytes")],
    "SKILL.md": [(8_000, "UTF-16"), (400, "units"), (24, "hours"), (6, "hours"), (72, "h")],
    "anchor-format.md": [(8_000, "UTF-16"), (400, "units"), (24, "h"), (6, "h"), (48, "characters")],
    "failure-modes.md": [(8_000, "UTF-16"), (24, "hours")],
    "how-it-works.md": [(10_000, "UTF-16"), (40, "tasks"), (4_096, "bytes"), (600, "characters"), (300, "bytes")],
    "security-model.md": [],
}


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_every_number_a_doc_states_is_the_codes(doc: str) -> None:
    values = code_values()
    found = stated(doc)
    wrong = [(number, unit) for number, unit in found if number not in values[unit]]
    assert wrong == [], f"{doc} states numbers the code does not define: {wrong}"
    missing = [promise for promise in REQUIRED[doc] if promise not in found]
    assert missing == [], f"{doc} no longer states {missing}"


def test_the_required_numbers_are_the_promised_literals() -> None:
    """The docs' numbers are the promises themselves, not whatever the code says today."""
    values = code_values()
    for promises in REQUIRED.values():
        for number, unit in promises:
            assert number in values[unit], (number, unit)


def config_table() -> dict[str, str]:
    """The README's configuration tables: variable (with any ``=value``) -> effect; an option's row gives its
    override variable."""
    text = DOCS["README.md"].read_text(encoding="utf-8")
    table = text.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([A-Z_]+(?:=[^`]*)?)` \| (.+) \|$", table, re.MULTILINE)
    options = re.findall(r"^\| `[a-z_]+` \([^|]*\) \| `([A-Z_]+)` \| (.+) \|$", table, re.MULTILINE)
    return dict(rows + options)


def test_the_configuration_table_names_what_the_code_reads() -> None:
    source = "\n".join(path.read_text(encoding="utf-8") for path in (REPO / "src").rglob("*.py"))
    read = set(re.findall(r'"([A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9])"', source))  # every name an env lookup could use
    read |= {name for option in config.HOOK_OPTIONS for name in option.names()}  # prefix + key
    table = {row.split("=", 1)[0] for row in config_table()}
    assert table <= read, f"the table names variables no code reads: {table - read}"
    ours = {name for name in read if name.startswith("SESSION_WORKFLOW_")}
    assert ours <= table, f"variables of ours the table does not name: {ours - table}"


@pytest.mark.parametrize(("value", "injected"), [("0", False), ("1", True), ("", True), (None, True)])
def test_the_anchor_switch_works_as_the_table_says(tmp_path: Path, value: str | None, injected: bool) -> None:
    effect = config_table()["SESSION_WORKFLOW_ANCHOR_HOOKS"]
    assert effect.startswith("`0`/`false`/`off`/`no` turn anchor re-injection")  # else (or unset) it stays on
    write_anchor(tmp_path, "a.md", "## Mission\nmission-marker\n", HOUR)
    env = {} if value is None else {"SESSION_WORKFLOW_ANCHOR_HOOKS": value}
    assert ("mission-marker" in compose.compose(project_ctx(tmp_path, **env)).text) == injected
