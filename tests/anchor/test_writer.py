"""The anchor writers: the template, step numbering and placement, byte-exact rewrites, refusals, close, the CLI.

The read side's own functions (``anchor_report``, ``anchor_part`` and the real SessionStart hook) are the judges of
what a written anchor means, so a writer and the hook can never disagree about a file.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_workflow.anchor import report as anchor_report
from session_workflow.anchor import writer as anchor_writer
from session_workflow.anchor.template import HEAD_SECTIONS
from session_workflow.anchor.text import (
    NOT_ANCHOR,
    AnchorText,
    cursor_index,
    newest_cursor_step,
    parse_frontmatter,
    split_head,
    split_sections,
)
from session_workflow.anchor.writer import (
    Refusal,
    add_step,
    anchor_template,
    closed_stub,
    record_step_counter,
    slugify,
)
from session_workflow.cli import main as cli
from session_workflow.core.errors import Failure
from session_workflow.core.places import Places
from session_workflow.core.text import one_line
from tests.anchor.test_part import injected_anchor
from tests.shell import shown_path
from tests.trust import state_env, trust

REPO = Path(__file__).resolve().parents[2]
SRC = str(REPO / "src")
HOOK = str(REPO / "hooks" / "hook.py")
Runner = Callable[..., "tuple[int, str, str]"]
NOW = time.mktime((2026, 3, 2, 12, 0, 0, 0, 0, -1))  # local noon: the date is 2026-03-02 in any zone

BASIC = """---
format: anchor/v1
step: 0
---

# Task

## Mission
Do it.

## Cursor
<!-- prompt -->

## Resume steps
1. Read it.

<!-- anchor:tail -->

## Decisions log
"""


def anchors(project: Path) -> Path:
    return project / ".claude" / "anchors"


def make_anchor(project: Path, text: str = BASIC, name: str = "a.md", data: bytes | None = None) -> Path:
    folder = anchors(project)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_bytes(text.encode("utf-8") if data is None else data)
    trust(path)
    return path


def stepped(text: str, step_text: str = "x") -> str:
    new, _previous, _step = add_step(text.encode("utf-8"), step_text)
    return new.decode("utf-8")


# --- pure: slug and template -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "slug"),
    [
        ("Migrate billing to Postgres 16!", "migrate-billing-to-postgres-16"),
        ("  Café — déjà vu  ", "cafe-deja-vu"),
        ("数据迁移", "anchor"),
        ("", "anchor"),
        ("../../etc/passwd", "etc-passwd"),
        ("word " * 30, "-".join(["word"] * 9)),
        ("x" * 80, "x" * 48),
    ],
)
def test_slugify(task: str, slug: str) -> None:
    assert slugify(task) == slug
    assert len(slug) <= anchor_writer.SLUG_MAX


TEMPLATE_GIT = """---
format: anchor/v1
date: 2026-03-02
task: Move billing
step: 0
source: session-workflow anchor new
---

# Move billing

## Mission
<!-- The goal in a sentence or two and the hard constraints. Quote every user instruction that constrains the \
mechanism word for word with an id (U1, U2, ...); a reversal is quoted too and names what it replaces. -->

## Cursor
<!-- Done / in progress / the NEXT ACTION on resume: one imperative step and the precondition to check before it; \
a pending question to re-ask verbatim. `anchor step` adds "- Step N: ..." lines here, newest first. -->

## Resume steps
1. Print this anchor: `session-workflow anchor show <P>/.claude/anchors/2026-03-02-move-billing.md` (`--all` adds \
the TAIL; never Read or cat it, which Claude Code re-attaches whole after each compaction).
2. Check the durable state before trusting the cursor: `git -C <P> log --oneline -10` and `git -C <P> status \
--short`, then the artifacts named in Last-known-good; where they disagree, they win.
3. Continue from the Cursor's newest entry: verify its precondition first, so a half-done step is finished, not \
redone.

## Invariants
<!-- Decisions and constraints that hold for the whole run, so a fresh context does not reopen them. -->

## Parallel tracks
<!-- Only when a peer run shares these trees: its anchor's path and the surface this track never touches. -->

## In-flight work
<!-- Background jobs the cursor waits on: ids, log paths, and 'do not relaunch over the same output'. -->

## Last-known-good
<!-- The recoverable state: commit hashes, branches and PRs, tags, files written, the checkpoint reached. -->

## Plan pointer
<!-- Where the full plan lives (a path), so this file stays a cursor and not a second copy of the plan. -->

<!-- anchor:tail -->

## Decisions log
<!-- Append-only: why the non-obvious calls were made (date, decision, reason). -->

## Folded history
<!-- Closed phases and finished cursor entries, one line each, moved here to keep the HEAD small. -->
"""


def test_template_golden_in_a_git_tree(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    path = str(anchors(tmp_path) / "2026-03-02-move-billing.md")
    text = anchor_template("Move billing", path, str(tmp_path), "2026-03-02", "session-workflow anchor new")
    assert text.replace(str(tmp_path), "<P>") == TEMPLATE_GIT


def test_template_without_git_points_at_the_project_dir(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    text = anchor_template("T", str(project / "x.md"), str(project), "2026-03-02", "s")
    assert "git -C" not in text
    assert f"the cursor: the artifacts named in Last-known-good (under {project}); where" in text


def test_template_is_an_anchor_in_survival_order() -> None:
    text = anchor_template("Line\nbreak # task", "/p/.claude/anchors/x.md", "/p", "2026-03-02", "s")
    head, tail = split_head(text)
    assert tail is not None and "## Decisions log" in tail and "## Folded history" in tail
    sections = split_sections(head)
    assert [s.heading for s in sections][1:] == ["Line break # task"] + [h for h, _ in HEAD_SECTIONS]
    assert AnchorText(head).kind != NOT_ANCHOR
    assert cursor_index(sections) == 3
    assert parse_frontmatter(head) == {
        "format": "anchor/v1",
        "date": "2026-03-02",
        "task": "Line break # task",
        "step": "0",
        "source": "s",
    }
    # Resume steps hold the anchor's own absolute path
    assert "anchor show /p/.claude/anchors/x.md`" in sections[4].text


# --- pure: step ----------------------------------------------------------------------------------------------------


def test_first_step_goes_directly_below_the_cursor_heading() -> None:
    new, previous, step = add_step(BASIC.encode(), "done: a; next: b")
    assert (previous, step) == (0, 1)
    assert new.decode() == BASIC.replace("step: 0", "step: 1").replace(
        "## Cursor\n<!-- prompt -->\n", "## Cursor\n- Step 1: done: a; next: b\n\n<!-- prompt -->\n"
    )


def test_later_steps_go_above_the_newest_step_bullet() -> None:
    text = BASIC.replace("<!-- prompt -->\n", "Phase 2 of 3.\n\n- Step 4: four\n- Step 3: three\n")
    assert "Phase 2 of 3.\n\n- Step 5: x\n- Step 4: four\n" in stepped(text)


def test_step_number_is_one_more_than_the_larger_counter() -> None:
    bullets_ahead = BASIC.replace("<!-- prompt -->", "- Step 7: seven\n- Step 2: two")
    assert add_step(bullets_ahead.encode(), "x")[1:] == (0, 8)
    frontmatter_ahead = bullets_ahead.replace("step: 0", "step: 11")
    new, previous, step = add_step(frontmatter_ahead.encode(), "x")
    assert (previous, step) == (11, 12)
    assert "step: 12\n" in new.decode() and "- Step 12: x\n- Step 7: seven" in new.decode()


def test_step_counts_star_and_plus_bullets_and_ignores_the_tail() -> None:
    text = BASIC.replace("<!-- prompt -->", "* Step 3: a\n+ Step 5: b").replace(
        "## Decisions log", "## Cursor\n- Step 99: in the tail"
    )
    new = stepped(text)
    assert "## Cursor\n- Step 6: x\n* Step 3: a\n+ Step 5: b\n" in new  # above the first step bullet, any marker
    assert new.count("Step 99") == 1


def test_step_adds_a_missing_frontmatter_step_and_reads_a_leading_number() -> None:
    assert "format: anchor/v1\nstep: 1\n---" in stepped(BASIC.replace("step: 0\n", ""))
    assert "step: 4\n" in stepped(BASIC.replace("step: 0", "step: 3 (schema done)"))
    assert "step: 1\n" in stepped(BASIC.replace("step: 0", "step: three"))
    assert "STEP: 1\n" in stepped(BASIC.replace("step: 0", "STEP: 0"))


def test_step_text_is_one_line_and_a_cursor_at_the_end_of_file_gets_a_newline() -> None:
    text = "---\nstep: 0\n---\n## Cursor"
    assert stepped(text, "a\n## Forged\n<!-- anchor:tail -->") == (
        "---\nstep: 1\n---\n## Cursor\n- Step 1: a ## Forged <!-- anchor:tail -->\n"
    )


def test_step_before_a_list_adds_no_blank_line() -> None:
    text = BASIC.replace("<!-- prompt -->", "- Next: b")
    assert "## Cursor\n- Step 1: x\n- Next: b\n" in stepped(text)


def test_step_keeps_crlf_bom_and_undecodable_bytes() -> None:
    data = b"\xef\xbb\xbf" + BASIC.encode().replace(b"Do it.", b"Do \xff it.").replace(b"\n", b"\r\n")
    new, _previous, step = add_step(data, "x")
    assert step == 1
    assert new.startswith(b"\xef\xbb\xbf---\r\n")
    assert b"\r\n- Step 1: x\r\n\r\n<!-- prompt -->\r\n" in new
    assert b"Do \xff it." in new
    assert b"\n" not in new.replace(b"\r\n", b"")
    assert b"step: 1\r\n" in new


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (BASIC.replace("---\nformat: anchor/v1\nstep: 0\n---\n", ""), "no frontmatter"),
        ("\n" + BASIC, "no frontmatter"),
        (BASIC.replace("format: anchor/v1\nstep: 0\n---\n", "format: anchor/v1\n"), "no frontmatter"),
        (BASIC.replace("## Cursor", "## Status"), "no cursor section"),
        (BASIC.replace("## Cursor", "```\n## Cursor\n```"), "no cursor section"),
        (BASIC.replace("## Cursor", "## Status").replace("## Decisions log", "## Cursor"), "no cursor section"),
    ],
)
def test_step_refuses_without_frontmatter_or_head_cursor(text: str, message: str) -> None:
    with pytest.raises(Refusal, match=message) as raised:
        add_step(text.encode(), "x")
    assert raised.value.code == 2


_LINE = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"), max_size=30)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
@given(
    before=st.lists(_LINE, max_size=4),
    steps=st.lists(st.integers(0, 50), max_size=4),
    after=st.lists(_LINE, max_size=4),
    counter=st.integers(0, 60),
    crlf=st.booleans(),
    note=_LINE,
)
def test_step_property(
    before: list[str], steps: list[int], after: list[str], counter: int, crlf: bool, note: str
) -> None:
    """Whatever the cursor holds, the new bullet is the newest, numbered right, and nothing else changes."""
    body = [f"x {line}" for line in before] + [f"- Step {n}: s" for n in steps] + [f"y {line}" for line in after]
    text = "\n".join(["---", f"step: {counter}", "---", "# T", "## Cursor", *body, "<!-- anchor:tail -->", ""])
    if crlf:
        text = text.replace("\n", "\r\n")
    if not one_line(note):
        with pytest.raises(Refusal, match="empty"):
            add_step(text.encode(), note)
        return
    new, previous, step = add_step(text.encode(), note)
    expected = max([counter, *steps]) + 1
    assert (previous, step) == (counter, expected)
    head = split_head(new.decode())[0]
    assert newest_cursor_step(head) == expected
    assert parse_frontmatter(head) == {"step": str(expected)}
    newline = "\r\n" if crlf else "\n"
    bullet = f"- Step {expected}: {one_line(note)}{newline}"
    restored = new.decode().replace(bullet, "", 1).replace(f"step: {expected}", f"step: {counter}", 1)
    assert restored.replace(newline + newline, newline) == text.replace(newline + newline, newline)


# --- pure: write and close -----------------------------------------------------------------------------------------


def test_whole_rewrite_never_moves_the_counter_back_nor_lags_the_cursor() -> None:
    old = BASIC.replace("step: 0", "step: 9").encode()
    lower = BASIC.replace("step: 0", "step: 2").encode()
    assert b"step: 9\n" in record_step_counter(lower, old)
    ahead = BASIC.replace("<!-- prompt -->", "- Step 12: twelve").encode()
    assert b"step: 12\n" in record_step_counter(ahead, old)
    same = BASIC.replace("step: 0", "step: 9").encode()
    assert record_step_counter(same, old) is same
    with pytest.raises(Refusal):
        record_step_counter(b"# no frontmatter\n## Cursor\n", old)


STUB = """---
format: anchor/v1
date: 2026-03-01
task: Move billing
step: 14
closed: 2026-03-02
---

# Move billing

Status: closed
Outcome: billing on PG16; PR 412 merged
Resume: none
"""


def test_closed_stub_golden() -> None:
    text = BASIC.replace("step: 0", "date: 2026-03-01\ntask: Move billing\nstep: 14\nparked: no").replace(
        "# Task", "# Move billing"
    )
    assert closed_stub(text.encode(), "billing on PG16; PR 412 merged", "2026-03-02", "x").decode() == STUB


def test_closed_stub_of_a_bare_crlf_file_uses_the_file_name_and_keeps_crlf() -> None:
    stub = closed_stub(b"\xef\xbb\xbfjust text\r\n", "done", "2026-03-02", "my-file")
    assert stub.startswith(b"\xef\xbb\xbf---\r\nformat: anchor/v1\r\nclosed: 2026-03-02\r\n---\r\n\r\n# my-file\r\n")
    assert stub.endswith(b"Status: closed\r\nOutcome: done\r\nResume: none\r\n")


# --- files: new ----------------------------------------------------------------------------------------------------


def test_new_creates_the_dated_file_and_the_gitignore(tmp_path: Path) -> None:
    env = {**state_env(), "CLAUDE_CODE_SESSION_ID": "abc-1"}
    path = anchor_writer.create_anchor(str(tmp_path), "Move billing", NOW, Places(env))
    assert path == str(anchors(tmp_path) / "2026-03-02-move-billing.md")
    text = Path(path).read_text()
    assert "source: session-workflow anchor new (session abc-1)\n" in text
    assert f"`session-workflow anchor show {path}`" in text
    assert (anchors(tmp_path) / ".gitignore").read_text() == "*\n"


def test_new_never_overwrites_and_skips_closed_names(tmp_path: Path) -> None:
    taken = make_anchor(tmp_path, "mine\n", "2026-03-02-move-billing.md")
    make_anchor(tmp_path, "closed\n", "2026-03-02-move-billing-2.closed.md")
    (anchors(tmp_path) / ".gitignore").write_text("keep\n")
    path = anchor_writer.create_anchor(str(tmp_path), "Move billing", NOW, Places(state_env()))
    assert path.endswith("2026-03-02-move-billing-3.md")
    assert taken.read_text() == "mine\n"
    assert (anchors(tmp_path) / ".gitignore").read_text() == "keep\n"


def test_new_notes_other_open_anchors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    anchor_writer.create_anchor(str(tmp_path), "one", NOW, Places(state_env()))
    assert capsys.readouterr().err == ""
    anchor_writer.create_anchor(str(tmp_path), "two", NOW, Places(state_env()))
    assert "note: 1 other open anchor(s)" in capsys.readouterr().err


# --- files: step, write, refusals ----------------------------------------------------------------------------------


def test_step_on_disk_keeps_mode_and_leaves_no_debris(tmp_path: Path) -> None:
    path = make_anchor(tmp_path)
    path.chmod(0o600)
    assert anchor_writer.step_anchor(str(path), "one", Places(state_env())) == (0, 1)
    assert anchor_writer.step_anchor(str(path), "two", Places(state_env())) == (1, 2)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "- Step 2: two\n- Step 1: one\n" in path.read_text()
    assert sorted(p.name for p in anchors(tmp_path).iterdir()) == [".a.md.lock", "a.md"]


@pytest.mark.parametrize(
    "text", [BASIC.replace("## Cursor", "## Status"), BASIC.replace("---\nformat: anchor/v1\nstep: 0\n---\n", "")]
)
def test_refused_step_leaves_the_file_untouched(tmp_path: Path, text: str) -> None:
    path = make_anchor(tmp_path, text)
    os.utime(path, (1_000_000, 1_000_000))
    with pytest.raises(Refusal):
        anchor_writer.step_anchor(str(path), "x", Places(state_env()))
    assert path.read_text() == text
    assert path.stat().st_mtime == 1_000_000


def test_empty_step_text_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Refusal, match="empty"):
        anchor_writer.step_anchor(str(make_anchor(tmp_path)), " \n\t", Places(state_env()))


def test_write_replaces_whole_and_keeps_the_counter(tmp_path: Path) -> None:
    path = make_anchor(tmp_path, BASIC.replace("step: 0", "step: 5"))
    path.chmod(0o640)
    new = BASIC.replace("Do it.", "Do it better.").encode()
    assert anchor_writer.write_anchor(str(path), new, Places(state_env()), force=True) == 5
    assert path.read_bytes() == new.replace(b"step: 0", b"step: 5")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


@pytest.mark.parametrize(("given", "accepted"), [(0, False), (4, False), (5, True), (6, True)])
def test_write_takes_text_of_the_stored_step_or_later_only(tmp_path: Path, given: int, accepted: bool) -> None:
    """The compare-and-swap at its boundary: step 5 stored, text of step 4 (read before another writer stepped)
    is refused and changes nothing; steps 5 and 6 are taken; ``force`` takes any and never moves the step back."""
    path = make_anchor(tmp_path, BASIC.replace("step: 0", "step: 5"))
    new = BASIC.replace("step: 0", f"step: {given}").replace("Do it.", "Do it better.").encode()
    if accepted:
        assert anchor_writer.write_anchor(str(path), new, Places(state_env())) == given
        assert b"Do it better." in path.read_bytes()
        return
    with pytest.raises(Refusal, match=f"is at step 5 but this text says step {given}: it moved on"):
        anchor_writer.write_anchor(str(path), new, Places(state_env()))
    assert b"Do it better." not in path.read_bytes()
    assert anchor_writer.write_anchor(str(path), new, Places(state_env()), force=True) == 5


@pytest.mark.parametrize("data", [b"", b"  \n", b"# no frontmatter\n## Cursor\n", b"---\nstep: 1\n---\n# Status\n"])
def test_refused_write_leaves_the_file_untouched(tmp_path: Path, data: bytes) -> None:
    path = make_anchor(tmp_path)
    with pytest.raises(Refusal):
        anchor_writer.write_anchor(str(path), data, Places(state_env()))
    assert path.read_text() == BASIC


@pytest.mark.parametrize(
    ("relative", "message"),
    [
        ("notes/a.md", "not in a .claude/anchors folder"),
        (".claude/anchors/a.closed.md", "is closed"),
        (".claude/anchors/.hidden.md", "not an anchor file name"),
        (".claude/anchors/a.txt", "not an anchor file name"),
        (".claude/anchors/missing.md", "No such file"),
        (".claude/anchors/dir.md", "not a regular file"),
    ],
)
def test_writers_only_touch_open_anchor_files(tmp_path: Path, relative: str, message: str) -> None:
    for name in ("notes/a.md", ".claude/anchors/a.closed.md", ".claude/anchors/.hidden.md", ".claude/anchors/a.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(BASIC)
    (anchors(tmp_path) / "dir.md").mkdir()
    with pytest.raises(Refusal, match=message):
        anchor_writer.open_anchor_path(str(tmp_path / relative))


def test_concurrent_steps_lose_nothing(tmp_path: Path) -> None:
    path = make_anchor(tmp_path)
    code = (
        "import os, sys\nfrom session_workflow.anchor.writer import step_anchor\n"
        "from session_workflow.core.places import Places\n"
        "for i in range(15):\n    step_anchor(sys.argv[1], f'w{sys.argv[2]} {i}', Places(os.environ))\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    workers = [
        subprocess.Popen([sys.executable, "-c", code, str(path), str(n)], env=env, stderr=subprocess.PIPE)
        for n in range(4)
    ]
    for worker in workers:
        assert worker.wait(timeout=60) == 0, worker.stderr.read() if worker.stderr else ""
    text = path.read_text()
    assert parse_frontmatter(text) == {"format": "anchor/v1", "step": "60"}
    assert [int(line.split()[2].rstrip(":")) for line in text.splitlines() if line.startswith("- Step")] == list(
        range(60, 0, -1)
    )


# --- files: close ----------------------------------------------------------------------------------------------------


def test_close_writes_the_stub_under_the_closed_name(tmp_path: Path) -> None:
    path = make_anchor(tmp_path, BASIC.replace("step: 0", "task: T\nstep: 3"), "2026-03-01-t.md")
    path.chmod(0o600)
    anchor_writer.step_anchor(str(path), "x", Places(state_env()))
    closed = anchor_writer.close_anchor(str(path), "it shipped\n(v2)", NOW, Places(state_env()))
    assert closed == str(anchors(tmp_path) / "2026-03-01-t.closed.md")
    assert not path.exists()
    assert Path(closed).read_text() == (
        "---\nformat: anchor/v1\ntask: T\nstep: 4\nclosed: 2026-03-02\n---\n\n# Task\n\n"
        "Status: closed\nOutcome: it shipped (v2)\nResume: none\n"
    )
    assert stat.S_IMODE(Path(closed).stat().st_mode) == 0o600
    assert sorted(p.name for p in anchors(tmp_path).iterdir()) == ["2026-03-01-t.closed.md"]


def test_close_never_overwrites_a_closed_file(tmp_path: Path) -> None:
    path = make_anchor(tmp_path, name="t.md")
    (anchors(tmp_path) / "t.closed.md").write_text("earlier run\n")
    closed = anchor_writer.close_anchor(str(path), "done", NOW, Places(state_env()))
    assert closed.endswith("t-2.closed.md")
    assert (anchors(tmp_path) / "t.closed.md").read_text() == "earlier run\n"


def test_close_refuses_an_empty_outcome_and_leaves_the_file(tmp_path: Path) -> None:
    path = make_anchor(tmp_path)
    with pytest.raises(Refusal, match="outcome is empty"):
        anchor_writer.close_anchor(str(path), "  ", NOW, Places(state_env()))
    assert path.read_text() == BASIC


def test_a_closed_anchor_can_no_longer_be_stepped(tmp_path: Path) -> None:
    path = make_anchor(tmp_path)
    closed = anchor_writer.close_anchor(str(path), "done", NOW, Places(state_env()))
    with pytest.raises(Refusal, match="is closed"):
        anchor_writer.open_anchor_path(closed)
    with pytest.raises(Failure, match="no longer exists"):
        anchor_writer.step_anchor(str(path), "late", Places(state_env()))
    assert not path.exists()


# --- the CLI ---------------------------------------------------------------------------------------------------------


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    """``run(*argv) -> (exit code, stdout, stderr)`` through ``cli.main``."""
    for name in ("CLAUDE_PROJECT_DIR", "CLAUDE_CODE_SESSION_ID"):
        monkeypatch.delenv(name, raising=False)

    def invoke(*argv: str) -> tuple[int, str, str]:
        try:
            code = cli.main(list(argv))
        except SystemExit as exit_:
            code = int(exit_.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


@pytest.mark.parametrize("sub", ["new", "step", "write", "close"])
def test_every_subcommand_has_help(run: Runner, sub: str) -> None:
    code, out, _err = run("anchor", sub, "--help")
    assert code == 0 and out.startswith(f"usage: session-workflow anchor {sub}")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["anchor", "new"], "the following arguments are required: --task"),
        (["anchor", "new", "--task", " "], "--task is empty"),
        (["anchor", "new", "--task", "t", "--dir", "/nonexistent/dir"], "no such directory"),
        (["anchor", "step"], "the following arguments are required: FILE, TEXT"),
        (["anchor", "close"], 'close needs FILE --outcome "..." (or --stale)'),
        (["anchor", "close", "x.md"], "close needs FILE"),
        (["anchor", "close", "--stale", "x.md"], "close --stale takes no FILE"),
        (["anchor", "close", "--yes"], "close needs FILE"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(run: Runner, argv: list[str], message: str) -> None:
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_new_step_close_round_trip(run: Runner, tmp_path: Path) -> None:
    code, out, err = run("anchor", "new", "--task", "Round trip", "--dir", str(tmp_path))
    path = out.strip()
    assert code == 0 and err == "" and path.endswith("-round-trip.md") and os.path.isabs(path)
    code, out, _err = run("anchor", "step", path, "done: a; next: b")
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"step 0 -> 1  {path}"
    assert lines[1].startswith("HEAD: ") and "headroom" in lines[1] and len(lines) == 2
    code, out, _err = run("anchor", "close", path, "--outcome", "done")
    assert code == 0 and out == f"closed {path} -> {path[:-3]}.closed.md\n"


def test_cli_new_accepts_the_anchors_folder_as_dir(run: Runner, tmp_path: Path) -> None:
    anchors(tmp_path).mkdir(parents=True)
    code, out, _err = run("anchor", "new", "--task", "t", "--dir", str(anchors(tmp_path)))
    assert code == 0 and Path(out.strip()).parent == anchors(tmp_path)


def test_cli_step_refusal_is_exit_2_and_one_line(run: Runner, tmp_path: Path) -> None:
    path = make_anchor(tmp_path, BASIC.replace("## Cursor", "## Status"))
    code, out, err = run("anchor", "step", str(path), "x")
    assert (code, out) == (2, "")
    assert (
        err
        == "session-workflow: no cursor section: no heading containing 'Cursor' above the <!-- anchor:tail --> line\n"
    )
    assert path.read_text() == BASIC.replace("## Cursor", "## Status")


def test_cli_step_warns_when_the_head_overflows(run: Runner, tmp_path: Path) -> None:
    big = BASIC.replace("Do it.", "word " * 2000)
    path = make_anchor(tmp_path, big)
    code, out, _err = run("anchor", "step", str(path), "x")
    assert code == 0
    assert "OVER by" in out and "would drop: Mission" in out


def test_cli_write_reads_stdin(run: Runner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = make_anchor(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(BASIC.replace("Do it.", "Done.").encode())))
    code, out, _err = run("anchor", "write", str(path))
    assert code == 0 and out.startswith(f"wrote {path} (step 0)\nHEAD: ")
    assert "Done." in path.read_text()


def test_close_stale_shows_then_renames(run: Runner, tmp_path: Path) -> None:
    live = make_anchor(tmp_path, BASIC, "live.md")
    done_text = BASIC.replace("Do it.", "**Status:** merged to main")
    done = make_anchor(tmp_path, done_text, "done.md")
    tail_only = make_anchor(tmp_path, BASIC.replace("## Decisions log", "Status: done"), "tail.md")
    code, out, _err = run("anchor", "close", "--stale", "--dir", str(tmp_path))
    assert code == 0
    assert (
        out.splitlines()[:-1]
        == anchor_report.list_stale(str(tmp_path), Places(os.environ))
        == [f"mv {done} {done.with_suffix('')}.closed.md"]
    )
    assert "none done" in out.splitlines()[-1]
    assert done.exists()
    code, out, _err = run("anchor", "close", "--stale", "--yes", "--dir", str(tmp_path))
    assert code == 0 and out == f"closed {done} -> {done.with_suffix('')}.closed.md\n"
    assert not done.exists() and Path(f"{done.with_suffix('')}.closed.md").read_text() == done_text
    assert live.read_text() == BASIC and tail_only.exists()
    code, out, _err = run("anchor", "close", "--stale", "--yes", "--dir", str(tmp_path))
    assert code == 0 and out.startswith("no open anchor in ")


# --- agreement with the read side and the hook -----------------------------------------------------------------------


def hook_context(project: Path, source: str = "compact") -> str:
    payload = {"hook_event_name": "SessionStart", "source": source, "session_id": "s1", "cwd": str(project)}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "SESSION_WORKFLOW"))}
    env["CLAUDE_CONFIG_DIR"] = str(project / "no-config")
    done = subprocess.run(
        [sys.executable, "-I", "-S", HOOK, "SessionStart"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 0
    if not done.stdout:
        return ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert isinstance(context, str)
    return context


def test_path_agrees_with_what_the_hook_injects(run: Runner, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "src").mkdir(parents=True)
    code, out, _err = run("anchor", "new", "--task", "Agree", "--dir", str(project))
    path = out.strip()
    run("anchor", "step", path, "done: setup; next: the hook")
    for where in (project, project / "src"):
        code, out, _err = run("anchor", "path", str(where))
        assert (code, out) == (0, f"{path}\n")
    chosen = injected_anchor(str(project))
    assert chosen is not None and chosen.path == path
    context = hook_context(project)
    assert f"## Control anchor: {shown_path(path)}" in context
    assert "- Step 1: done: setup; next: the hook" in context
    run("anchor", "close", path, "--outcome", "agreed")
    assert hook_context(project) == ""
    code, _out, err = run("anchor", "path", str(project))
    assert code == 1 and "no open anchor" in err


def test_default_dir_prefers_project_dir_then_session_start_then_cwd(tmp_path: Path) -> None:
    project, start, cwd = (tmp_path / name for name in ("project", "start", "cwd"))
    for folder in (project, start, cwd):
        folder.mkdir()
    config = tmp_path / "config"
    transcript = config / "projects" / "-start" / "abc-123.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('not json\n{"type":"summary"}\n' + json.dumps({"cwd": str(start)}) + "\n")
    env = {"CLAUDE_CONFIG_DIR": str(config), "CLAUDE_CODE_SESSION_ID": "abc-123"}
    assert anchor_writer.default_project_dir(Places({**env, "CLAUDE_PROJECT_DIR": str(project)}), str(cwd)) == str(
        project
    )
    assert anchor_writer.default_project_dir(Places(env), str(cwd)) == str(start)
    assert anchor_writer.default_project_dir(Places({**env, "CLAUDE_CODE_SESSION_ID": "../x"}), str(cwd)) == str(cwd)
    assert anchor_writer.default_project_dir(Places({**env, "CLAUDE_CODE_SESSION_ID": "other"}), str(cwd)) == str(cwd)
    assert anchor_writer.default_project_dir(Places({"CLAUDE_PROJECT_DIR": "relative"}), str(cwd)) == str(cwd)


@pytest.mark.parametrize("dangling", [True, False])
def test_restore_refuses_a_symlink_where_the_gone_anchor_was(tmp_path: Path, dangling: bool) -> None:
    """A link left where the anchor was (dangling or not) is never written through: the copy goes nowhere."""
    from tests.trust import state_env

    project = tmp_path / "project"
    project.mkdir()
    path = anchor_writer.create_anchor(str(project), "Port the parser", time.time(), Places(state_env()), "s-1")
    os.unlink(path)
    target = project / "elsewhere.md"
    if not dangling:
        target.write_text("mine\n")
    os.symlink(target, path)
    with pytest.raises(Failure):
        anchor_writer.restore_anchor(path, Places(state_env()), "s-1", time.time())
    assert os.path.islink(path) and (target.read_text() == "mine\n" if not dangling else not target.exists())


def test_restore_refuses_a_dangling_link_to_another_anchor_this_machine_wrote(tmp_path: Path) -> None:
    """A link where the gone anchor was, to another anchor of the folder this machine wrote and that is gone too:
    the registry has a record (and a copy) for the link's real path, so only ``restore_path``'s symlink check
    stands between ``anchor restore`` and putting the other anchor's copy in this one's place."""
    project = tmp_path / "project"
    project.mkdir()
    path = anchor_writer.create_anchor(str(project), "Port the parser", time.time(), Places(state_env()), "s-1")
    other = anchor_writer.create_anchor(str(project), "Write the docs", time.time(), Places(state_env()), "s-1")
    os.unlink(path)
    os.unlink(other)
    os.symlink(other, path)
    with pytest.raises(Failure, match="is a symlink"):
        anchor_writer.restore_anchor(
            anchor_writer.restore_path(path), Places(state_env()), "s-1", time.time()
        )  # as the CLI
    assert os.path.islink(path) and os.readlink(path) == other and not os.path.lexists(other)


# --- restore --force keeps the changed file and leaves no lock file ----------------------------------------------


def test_restore_force_leaves_no_lock_files_beside_the_changed_copies(tmp_path: Path) -> None:
    """Three forced restores in one second: the changed files are kept as ``.changed-<time>``, ``-2``, ``-3``, and
    no ``.FILE.changed-<time>[-N].lock`` stays behind (no writer ever takes those names again)."""
    project = tmp_path / "project"
    project.mkdir()
    path = anchor_writer.create_anchor(str(project), "Port billing", 0.0, Places(state_env()), "s")
    folder = os.path.dirname(path)
    kept = []
    for attempt in range(3):
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(f"hand edit {attempt}\n")
        restored = anchor_writer.restore_anchor(path, Places(state_env()), "s", 1_000_000.0, force=True)
        assert restored.kept is not None
        kept.append(os.path.basename(restored.kept))
    name = os.path.basename(path)
    assert kept == [
        f"{name}.changed-19700112T134640Z",
        f"{name}.changed-19700112T134640Z-2",
        f"{name}.changed-19700112T134640Z-3",
    ]
    locks = sorted(entry for entry in os.listdir(folder) if entry.endswith(".lock"))
    assert locks == [f".{name}.lock"]  # the anchor's own, which its writers keep using
