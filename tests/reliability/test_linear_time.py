"""Linear time on every input: adversarial lines up to 64 KB against every function that runs a pattern (or a
hand-written parser that replaced one) over text from disk, and the hooks and writers around them.

The lines are built the way backtracking blow-ups are: a prefix that starts a match (``status: done to``,
``step:``, ``- Step``, a git ``[remote`` header, ``next action:``...), then one short unit of the grammar's own
tokens (spaces, dots, ``on``/``to``, colons, stars, backslashes, quotes...) repeated to the length, then a suffix
that fails the match at the very end. A nested or adjacent unbounded repeat takes seconds to minutes on such a
line; linear code takes milliseconds. The hang guard is generous (no timing is asserted): it catches a
super-linear parse, it does not measure speed (``benchmarks/`` does). The fast slice goes up to 4 KB; ``tox -e
stress`` runs the full 64 KB.
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.anchor import writer
from session_workflow.anchor.report import head_fit_report
from session_workflow.anchor.text import (
    STEP_BULLET,
    AnchorText,
    clean_for_model,
    is_done_line,
    newest_cursor_step,
    newest_step_next,
    parse_frontmatter,
    split_sections,
)
from session_workflow.core.locations import record_name
from session_workflow.core.text import escaped, one_line, shell_quote, strip_invisible
from session_workflow.hook import precompact
from session_workflow.tasks.store import parse_task, sanitize_list_id
from session_workflow.transcript.record import action_lines, commits_in, span
from session_workflow.transcript.recovery import prompt_text, todo_line
from session_workflow.workstate.section import WorkState, parse_ticket, repo_slug, section
from session_workflow.workstate.state import origin_url

from .sandbox import check_run, run_in_process, sandbox, task_json, transcript_jsonl, work_state_json
from .sizes import Size, Tally

GUARD_SECONDS = 10.0

PREFIXES = (
    "",
    "status: done to ",
    "**Status:** merged on ",
    "status . . done",
    "step:",
    "  STEP \t:",
    "- Step ",
    "* Step 12",
    "# ",
    "## Cursor ",
    "```",
    "---",
    "next action:",
    "- **Next action**: ",
    '[remote "origin',
    "url =",
    "https://github.com/",
    "git@github.com:",
    "ssh://git@",
    "<!-- anchor:tail ",
    "</anchor-head",
)
TOKENS = (
    " ",
    "\t",
    ".",
    ":",
    "on",
    "to",
    "done",
    "status",
    "step",
    "Step",
    "-",
    "*",
    "**",
    "#",
    "x",
    "1",
    "9",
    "\\",
    '"',
    "@",
    "/",
    "github.com",
    ".git",
    "[",
    "]",
    "=",
    "url",
    "next action",
    "<",
    ">",
    "anchor-head",
    "`",
    "~",
    "\u200b",
    "\U000e0041",
    "é",
    "\r",
    "\x0b",
)
# Tokens that the same rules read, so that a unit made of them keeps a match alive for the whole run.
KINDRED = (
    (" ", "\t"),
    (" ", "."),
    (" ", ".", "on", "to", "x"),
    ("*", "#", " "),
    ("\\", '"', "x"),
    ("@", "/", "x", ":", "."),
    ("-", " ", "x", "1"),
    ("1", "9", "."),
    ("`", "~", " "),
    ("<", ">", "/", " "),
    ("\u200b", "\U000e0041", "é", " "),
    ("\r", "\x0b", " ", "\t"),
    TOKENS,
)
MIDDLES = ("", "x", "on", " x ", ".", ":", "@", "/")
SUFFIXES = ("", "!", " x y", "\n", "]", '"', "\x00", "z" * 3, " x")


@st.composite
def adversarial_line(
    draw: st.DrawFn, lengths: tuple[int, ...], prefixes: tuple[str, ...], kindred: tuple[tuple[str, ...], ...]
) -> str:
    """A prefix, a unit of kindred tokens repeated to half the length, a middle token, the unit again, a suffix."""
    kin = draw(st.sampled_from(kindred))
    unit = "".join(draw(st.lists(st.sampled_from(kin), min_size=1, max_size=4)))
    half = draw(st.sampled_from(lengths)) // 2
    run = (unit * (half // len(unit) + 1))[:half]
    middle, suffix = draw(st.sampled_from(MIDDLES)), draw(st.sampled_from(SUFFIXES))
    return draw(st.sampled_from(prefixes)) + run + middle + run + suffix


def adversarial(
    size: Size, prefixes: tuple[str, ...] = PREFIXES, kindred: tuple[tuple[str, ...], ...] = KINDRED
) -> st.SearchStrategy[str]:
    """Adversarial lines up to 4 KB (fast slice) or 64 KB (full size), entering the rules ``prefixes`` start."""
    return adversarial_line((256, 1024, 4096) if not size.full else (16384, 65536), prefixes, kindred)


class Hang(Exception):
    pass


@contextlib.contextmanager
def guard(seconds: float = GUARD_SECONDS) -> Iterator[None]:
    """Raise Hang in the main thread after ``seconds`` (the ``re`` engine checks for signals as it runs)."""

    def alarm(_signum: int, _frame: object) -> None:
        raise Hang(f"still running after {seconds} s: super-linear on this input")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def anchor_with(line: str) -> str:
    """An anchor the writers accept, the adversarial line in its frontmatter, cursor and body."""
    return (
        f"---\nformat: anchor/v1\nstep: 3\n{line}\n---\n# {line}\n\n## Cursor\n- Step 3: {line}\n{line}\n"
        f"Status: {line}\n\n## {line}\n{line}\n<!-- anchor:tail -->\n{line}\n"
    )


def _anchor_reader(line: str) -> None:
    text = anchor_with(line)
    for anchor in (AnchorText(text), AnchorText.from_bytes(text.encode("utf-8", "surrogatepass"))):
        anchor.cursor_line()
        _ = anchor.title, anchor.size, anchor.kind
    newest_cursor_step(text)
    split_sections(text)
    parse_frontmatter(text)
    clean_for_model(text)


def _writer_transforms(line: str) -> None:
    data = anchor_with(line).encode("utf-8", "surrogatepass")
    with contextlib.suppress(writer.Refusal):  # a fence or a stray frontmatter line may hide the cursor
        new, _previous, _step = writer.add_step(data, line + "x")
        writer.record_step_counter(new, data)
        writer.record_step_counter(data, None)


def _workstate(line: str) -> None:
    repo_slug(line)
    origin_url(f'[remote "origin"]\n\turl = {line}\n{line}\n[{line}]\n')
    parse_ticket(line)
    section(WorkState(ticket=1, title=line, step=line), False, None)


def _recovery(line: str) -> None:
    prompt_text({"type": "user", "promptSource": "typed", "message": {"content": line}})
    todo_line(line, line)


def _run_record(line: str) -> None:
    """The record's string-method parsers (commit lines, exit codes, spans) on one hostile value."""
    commits_in(line)
    commits_in("[main abcdef1] " + line)
    span(line)
    block = {"is_error": True, "content": "Exit code " + line}
    action_lines("Bash", {"command": line}, block, None)
    action_lines("Bash", {"command": line}, {"content": line}, {"stdout": "[" + line})
    for found in split_sections(f"## Cursor\n- Step 3: {line}; next: {line}\n- Step 4: {line}\n"):
        newest_step_next(found)


def _tasks(line: str) -> None:
    sanitize_list_id(line)
    parse_task(task_json(1, line, "in_progress", line), 1)
    record_name(line)


def _precompact(line: str) -> None:
    precompact.instructions(("/p/" + line, line), WorkState(ticket=1, title=line, step=line), 3)


def _flatteners(line: str) -> None:
    one_line(line)
    escaped(line, '"')
    strip_invisible(line)
    shell_quote(line)
    for piece in line.split("\n"):
        is_done_line(piece)
        STEP_BULLET.match(piece)


SPACES = ((" ", "\t"), (" ", "\t", "x"), (" ", "."), (" ", ".", "on", "to", "x"))
# Each target, with the prefixes that enter its rules and the tokens those rules repeat over (and all of them).
TARGETS = {
    "anchor reader": (_anchor_reader, PREFIXES[:13], (*SPACES, ("*", "#", " "), ("`", "~", " "), TOKENS)),
    "anchor writer transforms": (_writer_transforms, PREFIXES[4:12], (*SPACES, ("-", " ", "x", "1"), TOKENS)),
    "work state": (_workstate, ("", *PREFIXES[14:19]), (*SPACES, ("@", "/", "x", ":", "."), ("\\", '"'), TOKENS)),
    "recovery": (_recovery, PREFIXES, KINDRED),
    "tasks": (_tasks, PREFIXES, KINDRED),
    "run record": (_run_record, PREFIXES, KINDRED),
    "precompact": (_precompact, (*PREFIXES[12:14], "- ", "**"), (*SPACES, ("*", " ", "-"), TOKENS)),
    "flatteners and line rules": (_flatteners, PREFIXES, KINDRED),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_patterns_stay_linear_on_adversarial_lines(target: str, size: Size, tally: Tally) -> None:
    function, prefixes, kindred = TARGETS[target]

    @size.settings(15, 300)
    @given(line=adversarial(size, prefixes, kindred))
    def prop(line: str) -> None:
        tally.add("adversarial lines")
        with guard():
            function(line)

    prop()


def test_head_fit_report_stays_linear(size: Size, tally: Tally) -> None:
    """``anchor write`` and ``step`` print this report after every write."""

    @size.settings(8, 60)
    @given(line=adversarial(size))
    def prop(line: str) -> None:
        tally.add("adversarial lines")
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "a.md")
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(anchor_with(line))
            with guard():
                head_fit_report(path)

    prop()


@pytest.mark.parametrize("event", ["SessionStart", "PreCompact", "UserPromptSubmit"])
def test_hooks_stay_linear_on_adversarial_state(event: str, size: Size, tally: Tally) -> None:
    """Every hook, on an anchor, tasks, a work state and a transcript made of adversarial lines."""

    @size.settings(5, 40)
    @given(line=adversarial(size), source=st.sampled_from(("compact", "startup", "resume")))
    def prop(line: str, source: str) -> None:
        tally.add("hook runs")
        with sandbox() as box:
            box.write_anchor("a.md", anchor_with(line).encode("utf-8", "surrogatepass"))
            box.write_task("1.json", task_json(1, line, "in_progress", line))
            box.write_state(work_state_json(box.session, line[:2000], line[:60]))
            box.write_transcript(transcript_jsonl(box.project, [line], [("pending", line)]))
            payload = box.payload(event, source=source)
            with guard():
                stdout = run_in_process(event, payload, box.env())
            if event != "PreCompact":  # its 600-character cut may leave a stub line ("-…"): its own tests' concern
                check_run(box, event, payload, stdout)

    prop()
