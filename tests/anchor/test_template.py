"""An anchor created from the template and never filled: the rule that tells it (``anchor.template.is_unfilled``),
the one line it injects, and that no template prompt (an HTML comment) is ever shown as its cursor or next action:
in the block, PreCompact, ``anchor list``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from session_workflow.anchor.part import precompact_facts, prepare
from session_workflow.anchor.report import list_anchors
from session_workflow.anchor.template import HEAD_SECTIONS, is_unfilled, resume_steps
from session_workflow.anchor.text import TAIL_MARKER, AnchorText, clean_for_model, heading_of
from session_workflow.anchor.writer import add_step, anchor_template, step_anchor, write_anchor
from session_workflow.core.context import HookContext
from session_workflow.core.places import Places
from session_workflow.core.text import shell_quote, utf16_len
from tests.anchor.test_report import put
from tests.shell import assert_splits, hostile_names, shown_path
from tests.trust import state_env, trust

REPO = Path(__file__).resolve().parents[2]
NOW = 2_000_000_000.0
TASK = "Migrate the billing service"
NAME = "2033-05-18-migrate-the-billing-service.md"


def template(project: Path, name: str = NAME) -> str:
    """What ``session-workflow anchor new`` writes for ``project`` (a git tree)."""
    path = project / ".claude" / "anchors" / name
    return anchor_template(TASK, str(path), str(project), "2033-05-18", "session-workflow anchor new")


def write(project: Path, text: str, name: str = NAME, age: float = 60.0) -> Path:
    return put(project, name, text, age)


def ctx(project: Path, source: str = "compact", event: str = "SessionStart") -> HookContext:
    payload = {"hook_event_name": event, "source": source, "session_id": "s", "cwd": str(project)}
    return HookContext.from_payload(payload, Places(state_env()), NOW)


def unfilled_line(path: str) -> str:
    """The promised line, written out."""
    return (
        f"Control anchor {shown_path(path)}: created, not filled yet. Write it whole with"
        f" `session-workflow anchor write {path} <<'EOF'`, the anchor's text, then a line `EOF`"
        f" (`session-workflow anchor show {path}` prints the template)."
    )


# --- the rule ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("git", [True, False])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_the_writers_template_is_unfilled(tmp_path: Path, git: bool, newline: str) -> None:
    project = tmp_path / "my proj's"
    project.mkdir()
    if git:
        (project / ".git").mkdir()
    text = template(project).replace("\n", newline)
    assert is_unfilled(AnchorText(text))
    assert is_unfilled(AnchorText.from_bytes(("\ufeff" + text).encode()))


def test_a_step_a_word_or_a_heading_of_its_own_fills_it(tmp_path: Path) -> None:
    text = template(tmp_path)
    stepped = add_step(text.encode(), "done: the schema; next: copy the rows")[0]
    assert not is_unfilled(AnchorText(stepped.decode()))
    head, tail = text.split(TAIL_MARKER)
    edits = [
        head.replace("## Mission\n", "## Mission\nMove billing off the legacy queue.\n"),
        head.replace("## Invariants\n", "## Invariants\n- Python 3.9.\n"),
        head.replace("## Plan pointer\n", "## Notes\n\n## Plan pointer\n"),  # a heading of the run's own
        head.replace("# Migrate", "# A second title\n\n# Migrate"),
        head.replace("<!-- The goal in", "<!-- Our goal in"),  # an edited prompt
        head.replace("3. Continue from", "3. Then continue from"),  # an edited resume step
        head.replace("\n## Cursor\n<!--", "\n## Cursor\n- Step 1: ported the lexer\n<!--"),
        "\n".join(line for line in head.split("\n") if not line.startswith("2. Check")),
    ]
    for edited in edits:
        assert edited != head
        assert not is_unfilled(AnchorText(edited + TAIL_MARKER + tail)), edited
    # What is not the HEAD's sections does not fill it: the frontmatter, blank lines, the TAIL.
    same = head.replace("step: 0", "step: 0\nowner: me").replace("## Mission\n", "## Mission\n\n  \n")
    assert is_unfilled(AnchorText(same + TAIL_MARKER + tail + "- 2033-05-18: a decision\n"))


def test_no_format_no_comment_or_a_cut_read_is_never_unfilled(tmp_path: Path) -> None:
    text = template(tmp_path)
    assert not is_unfilled(AnchorText(text.replace("format: anchor/v1", "format: notes")))
    head = text.split(TAIL_MARKER)[0]
    assert not is_unfilled(AnchorText(head, truncated=True))
    assert not is_unfilled(AnchorText("---\nformat: anchor/v1\n---\n# T\n\n## Cursor\n"))


_PROMPTS = {f"<!-- {prompt} -->" for _heading, prompt in HEAD_SECTIONS if prompt}
_HEADINGS = {heading for heading, _prompt in HEAD_SECTIONS}


def _says_something(line: str) -> bool:
    """A line the run could write: neither blank once cleaned, nor a prompt, nor a bare template heading."""
    cleaned = clean_for_model(line).strip()
    heading = heading_of(cleaned)
    if cleaned == TAIL_MARKER:  # ends the HEAD where it stands: what follows it is the TAIL's, not the run's HEAD
        return False
    return bool(cleaned) and cleaned not in _PROMPTS and not (heading and heading[0] == 2 and heading[1] in _HEADINGS)


@given(st.text(min_size=1, max_size=60).filter(lambda t: "\n" not in t and _says_something(t)), st.integers(0, 99))
def test_any_line_the_run_writes_in_the_head_makes_it_filled(line: str, at: int) -> None:
    text = template(Path("/p"))
    lines = text.split("\n")
    closing = lines.index("---", 1)
    marker = lines.index(TAIL_MARKER)
    index = closing + 1 + at % (marker - closing)
    edited = "\n".join([*lines[:index], line, *lines[index:]])
    assert not is_unfilled(AnchorText(edited))


# --- the block, PreCompact, anchor list -------------------------------------------------------------------------


@pytest.mark.parametrize("source", ["startup", "compact", "resume", "clear"])
def test_an_unfilled_anchor_injects_one_line(tmp_path: Path, source: str) -> None:
    path = write(tmp_path, template(tmp_path))
    part = prepare(ctx(tmp_path, source))
    assert part is not None
    assert part.render(8000) == unfilled_line(str(path))
    assert part.floor == utf16_len(unfilled_line(str(path)))
    assert part.render(part.floor - 1) == ""
    # A day untouched (the pointer tier) says the same.
    os.utime(path, (NOW - 30 * 3600, NOW - 30 * 3600))
    trust(path)
    stale = prepare(ctx(tmp_path))
    assert stale is not None and stale.render(8000) == unfilled_line(str(path))


def test_the_line_quotes_a_path_for_the_shell(tmp_path: Path) -> None:
    project = tmp_path / "it's here"
    path = write(project, template(project))
    quoted = "'" + str(path).replace("'", "'\\''") + "'"
    part = prepare(ctx(project))
    assert part is not None
    assert part.render(8000) == (
        f"Control anchor {shown_path(str(path))}: created, not filled yet. Write it whole with"
        f" `session-workflow anchor write {quoted} <<'EOF'`, the anchor's text, then a line `EOF`"
        f" (`session-workflow anchor show {quoted}` prints the template)."
    )


def test_a_partly_filled_anchor_is_shown_its_prompts_never_the_next_action(tmp_path: Path) -> None:
    head, tail = template(tmp_path).split(TAIL_MARKER)
    filled = head.replace("## Mission\n", "## Mission\nMove billing off the legacy queue.\n")
    path = write(tmp_path, filled + TAIL_MARKER + tail)
    part = prepare(ctx(tmp_path))
    assert part is not None
    text = part.render(8000)
    assert "Move billing off the legacy queue." in text and "created, not filled yet" not in text
    assert precompact_facts(ctx(tmp_path, "", "PreCompact")) == (str(path), None)
    assert list_anchors(str(tmp_path), NOW, Places(state_env())) == [
        f"* `{NAME}`  full  1 min  {TASK}  | cursor: (none)"
    ]
    cursor = "- Step 3: copied the rows\n- Next action: check the totals\n"
    write(tmp_path, filled.replace("## Cursor\n", "## Cursor\n" + cursor) + TAIL_MARKER + tail)
    assert precompact_facts(ctx(tmp_path, "", "PreCompact")) == (str(path), "- Next action: check the totals")
    assert list_anchors(str(tmp_path), NOW, Places(state_env())) == [
        f"* `{NAME}`  full  1 min  {TASK}  | cursor: - Step 3: copied the rows"
    ]


def test_precompact_and_anchor_list_of_an_unfilled_anchor(tmp_path: Path) -> None:
    path = write(tmp_path, template(tmp_path))
    assert precompact_facts(ctx(tmp_path, "", "PreCompact")) == (str(path), None)
    assert list_anchors(str(tmp_path), NOW, Places(state_env())) == [
        f"* `{NAME}`  full  1 min  {TASK}  | cursor: (created, not filled yet)"
    ]


def test_the_cold_hook_injects_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, template(tmp_path))
    os.utime(path, (time.time(), time.time()))
    trust(path)
    payload = {"hook_event_name": "SessionStart", "source": "compact", "session_id": "s", "cwd": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-I", "-S", str(REPO / "hooks" / "hook.py"), "SessionStart"],
        input=json.dumps(payload).encode(),
        env={**os.environ, **state_env()},
        capture_output=True,
        timeout=20,
        check=True,
    )
    context = json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    assert context.split("\n\n", 1)[1] == unfilled_line(str(path))
    assert "<!--" not in context


# --- the Resume steps' commands are quoted; an anchor written before is still template, then mended -------------

SHOP = "my shop$(touch SUBSHELL);touch CHAINED;#"


def backticked(line: str) -> list[str]:
    """The commands between backticks in one resume step."""
    return line.split("`")[1::2]


@settings(max_examples=150, deadline=None)
@given(name=hostile_names)
def test_every_resume_command_runs_exactly_on_the_folder_whatever_its_name(name: str) -> None:
    root = "/srv/" + name
    anchor = root + "/.claude/anchors/" + name + ".md"
    first, second, _third = resume_steps(anchor, root, root)
    (show, _all) = backticked(first)
    assert_splits(show, ["session-workflow", "anchor", "show", anchor])
    log, status = backticked(second)
    assert_splits(log, ["git", "-C", root, "log", "--oneline", "-10"])
    assert_splits(status, ["git", "-C", root, "status", "--short"])


def old_template(project: Path, name: str = NAME) -> str:
    """What ``anchor new`` wrote before it quoted commands: the git root unquoted in both commands of Resume step 2."""
    new = template(project, name)
    quoted = shell_quote(str(project))
    old = new.replace(f"git -C {quoted} log", f"git -C {project} log").replace(
        f"git -C {quoted} status", f"git -C {project} status"
    )
    assert old != new
    return old


def test_an_anchor_written_before_quoting_is_still_template_and_the_next_step_quotes_it(tmp_path: Path) -> None:
    project = tmp_path / SHOP
    (project / ".git").mkdir(parents=True)
    old = old_template(project)
    path = write(project, old)
    trust(path)
    assert is_unfilled(AnchorText(old))
    step_anchor(str(path), "done: set up; next: port", Places(state_env()))
    mended = path.read_text(encoding="utf-8")
    assert mended == add_step(template(project).encode("utf-8"), "done: set up; next: port")[0].decode("utf-8")
    (line,) = [line for line in mended.splitlines() if line.startswith("2. Check the durable state")]
    assert_splits(backticked(line)[0], ["git", "-C", str(project), "log", "--oneline", "-10"])


def test_a_whole_write_of_the_old_template_lines_quotes_them_and_changes_nothing_else(tmp_path: Path) -> None:
    project = tmp_path / SHOP
    (project / ".git").mkdir(parents=True)
    path = write(project, template(project))
    trust(path)
    text = old_template(project).replace("# Migrate", "# Now: migrate")
    write_anchor(str(path), text.encode("utf-8"), Places(state_env()))
    assert path.read_text(encoding="utf-8") == template(project).replace("# Migrate", "# Now: migrate")


def test_an_edited_resume_step_is_not_mended(tmp_path: Path) -> None:
    """Only the exact line an earlier writer wrote for this very folder is replaced: the run's own edit stays."""
    project = tmp_path / SHOP
    (project / ".git").mkdir(parents=True)
    edited = old_template(project).replace("then the artifacts", "then the build log and the artifacts")
    path = write(project, edited)
    trust(path)
    step_anchor(str(path), "x", Places(state_env()))
    assert f"git -C {project} log --oneline -10" in path.read_text(encoding="utf-8")
