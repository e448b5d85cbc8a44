"""Every command the plugin writes or prints, for hostile names, gives back exactly the intended
words (bash in the C locale, in bytes; shlex where it can read the line) and is one visible line.

Each case is a builder of a shown text (the block's lines, the advice, the prefaces, the Resume steps, the doctor's
fixes, the recovered task list's header) with the words its command must split into; a command shown between
backticks is taken from between them, else the text is the command.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from hypothesis import given, settings

from session_workflow.anchor import block, registry, report, template
from session_workflow.anchor.text import mv_command
from session_workflow.cli import doctor, health
from session_workflow.tasks.render import recovered_header
from tests.shell import assert_splits, hostile_names

SW = ["session-workflow", "anchor"]


def spans(text: str) -> list[str]:
    """The code spans of ``text``, in order."""
    return text.split("`")[1::2]


def check(text: str, *expected: list[str]) -> None:
    """Each expected command is, in order, one of ``text``'s code spans (or ``text`` itself when it has none)."""
    commands = [span for span in spans(text) if span.split(" ", 1)[0] in ("session-workflow", "git", "mv", "claude")]
    commands = commands or [text]
    assert len(commands) == len(expected), (text, commands)
    for command, words in zip(commands, expected):
        assert_splits(command, words)


@settings(max_examples=30, deadline=None)
@given(folder=hostile_names, name=hostile_names)
def test_every_suggested_command_splits_into_exactly_its_words(folder: str, name: str) -> None:
    root = "/srv/" + folder
    path = f"{root}/.claude/anchors/{name}.md"
    closed = path[: -len(".md")] + ".closed.md"
    show, adopt, restore = [*SW, "show", path], [*SW, "adopt", path], [*SW, "restore", "--force", path]
    check(mv_command(path), ["mv", path, closed])
    write, shown = [span for span in spans(block.unfilled_line(path)) if span.startswith("session-workflow")]
    assert write.endswith(" <<'EOF'"), write  # the heredoc the text follows on the next line
    assert_splits(write[: -len(" <<'EOF'")], [*SW, "write", path])
    assert_splits(shown, show)
    check(block.show_command(path), show)
    check(block.show_command(path, whole=True), [*SW, "show", "--all", path])
    check(registry.adopt_command(path), adopt)
    check(registry.restore_command(path), [*SW, "restore", path])
    check(registry.changed_advice(path, 3), show, adopt, restore)
    for line in template.resume_steps(path, root, root)[:2]:
        assert all(spans(line)), line
    first, second, _third = template.resume_steps(path, root, root)
    check(first, show)
    check(second, ["git", "-C", root, "log", "--oneline", "-10"], ["git", "-C", root, "status", "--short"])
    # The prefaces and the doctor's fixes name their commands after a colon, not between backticks.
    preface = report.untrusted_preface(path)
    assert_splits(preface.rsplit("If it is yours: ", 1)[1], adopt)
    changed = report.changed_preface(path, 3)
    keep, back = changed.split("To keep it: ", 1)[1].split("; to put step 3 back: ")
    assert_splits(keep, adopt)
    assert_splits(back, restore)
    candidate = SimpleNamespace(path=path, name=name + ".md")
    fix = doctor.changed(candidate, object(), "")  # type: ignore[arg-type]
    assert fix is not None and fix.fix is not None
    read, yours = fix.fix.split("read it (", 1)[1].split("); if the change is yours: ")
    assert_splits(read, show)
    assert_splits(yours, adopt)


def test_the_doctors_load_fix_names_the_plugin_folder_as_one_word(tmp_path: Path) -> None:
    plugin = tmp_path / "my plugins$(touch X);touch Y;#\x1b[2J" / "session-workflow"
    (plugin / "bin").mkdir(parents=True)
    (plugin / "bin" / "session-workflow").write_text("", encoding="utf-8")
    loaded = health.command_check({"PATH": ""}, str(plugin / "bin" / "session-workflow"), True)
    assert loaded.fix is not None
    check(loaded.fix, ["claude", "--plugin-dir", str(plugin)])


def test_the_recovered_task_lists_command_takes_the_id_as_one_word() -> None:
    header = recovered_header("a_b-9")
    check(header, ["session-workflow", "tasks", "adopt", "a_b-9"])
