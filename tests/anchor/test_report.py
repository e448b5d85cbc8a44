"""The read-only anchor reports (list, path, show, list-dormant, list-stale, head-fit) and the CLI group."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from session_workflow.anchor.part import AnchorPart, prepare
from session_workflow.anchor.report import (
    anchor_path,
    head_fit_report,
    list_anchors,
    list_dormant,
    list_stale,
    resolve_folder,
    show_anchor,
)
from session_workflow.cli import main as cli
from session_workflow.core.context import HookContext
from session_workflow.core.errors import Failure
from session_workflow.core.places import Places
from tests.shell import shown_path
from tests.trust import state_env, trust

REPO = Path(__file__).resolve().parents[2]
NOW = 2_000_000_000.0
HOUR = 3600.0


def put(project: Path, name: str, text: str, age: float) -> Path:
    folder = project / ".claude" / "anchors"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    os.utime(path, (NOW - age, NOW - age))
    trust(path)
    return path


def anchor(title: str, cursor: str = "- Next: go", extra: str = "", front: str = "") -> str:
    return f"---\nformat: anchor/v1\n{front}---\n# {title}\n\n## Cursor\n{cursor}\n{extra}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    put(tmp_path, "live-old.md", anchor("Old live track", "- Step 3: waiting on review"), 96 * HOUR)
    put(tmp_path, "live-edge.md", anchor("Exactly 72h"), 72 * HOUR)
    put(tmp_path, "live-new.md", anchor("Fresh track"), 1 * HOUR)
    put(tmp_path, "done-old.md", anchor("Landed", extra="Status: merged to main\n"), 200 * HOUR)
    put(tmp_path, "done-new.md", anchor("Shipped", extra="**Status:** done.\n"), 2 * HOUR)
    put(tmp_path, "parked-old.md", anchor("Parked", front="parked: waiting for the vendor\n"), 100 * HOUR)
    put(tmp_path, "parked-new.md", anchor("Parked new", front="parked: holiday\n"), 3 * HOUR)
    put(tmp_path, "notes.md", "# Loose notes\n", 80 * HOUR)
    put(tmp_path, "gone.closed.md", anchor("Closed"), 500 * HOUR)
    return tmp_path


def test_list_dormant(project: Path) -> None:
    assert list_dormant(str(project), NOW, Places(os.environ)) == [
        "`live-old.md`  96h  Old live track  | cursor: - Step 3: waiting on review",
        "`notes.md`  80h  Loose notes  | cursor: (none)",
        "parked:",
        "`parked-old.md`  100h  Parked  | parked: waiting for the vendor",
    ]


def test_list_dormant_accepts_the_anchors_folder_and_empty_dirs(project: Path, tmp_path: Path) -> None:
    folder = project / ".claude" / "anchors"
    assert list_dormant(str(folder), NOW, Places(os.environ)) == list_dormant(str(project), NOW, Places(os.environ))
    assert resolve_folder(str(project), Places(os.environ)) == str(folder)
    assert resolve_folder(str(folder), Places(os.environ)) == str(folder)
    empty = tmp_path.parent / f"{tmp_path.name}-empty"  # no anchors here nor above
    empty.mkdir()
    assert list_dormant(str(empty), NOW, Places(os.environ)) == []


def test_list_stale_prints_exact_renames_and_runs_nothing(project: Path) -> None:
    folder = project / ".claude" / "anchors"
    assert list_stale(str(project), Places(os.environ)) == [
        f"mv {folder}/done-new.md {folder}/done-new.closed.md",
        f"mv {folder}/done-old.md {folder}/done-old.closed.md",
    ]
    assert (folder / "done-new.md").exists() and (folder / "done-old.md").exists()


def test_list_stale_quotes_odd_names(tmp_path: Path) -> None:
    put(tmp_path, "it's done.md", anchor("X", extra="Status: done\n"), 0)
    folder = tmp_path / ".claude" / "anchors"
    assert list_stale(str(tmp_path), Places(os.environ)) == [
        f"mv '{folder}/it'\\''s done.md' '{folder}/it'\\''s done.closed.md'"
    ]


def test_list_ranks_and_marks_the_injected_one(project: Path) -> None:
    assert list_anchors(str(project), NOW, Places(os.environ)) == [
        "* `live-new.md`  full  1h  Fresh track  | cursor: - Next: go",
        "  `live-edge.md`  pointer  72h  Exactly 72h  | cursor: - Next: go",
        "  `live-old.md`  pointer  96h  Old live track  | cursor: - Step 3: waiting on review",
        "  `parked-new.md`  parked  3h  Parked new  | cursor: - Next: go",
        "  `parked-old.md`  parked  100h  Parked  | cursor: - Next: go",
        "  `done-new.md`  full (done)  2h  Shipped  | cursor: - Next: go",
        "  `done-old.md`  pointer (done)  200h  Landed  | cursor: - Next: go",
        "  `notes.md`  pointer (not an anchor)  80h  Loose notes  | cursor: (none)",
    ]


def test_path_agrees_with_the_hook_and_walks_up(project: Path) -> None:
    ctx = HookContext.from_payload({"source": "compact", "cwd": str(project)}, Places(state_env()), NOW)
    part = prepare(ctx)
    assert isinstance(part, AnchorPart)
    expected = str(project / ".claude" / "anchors" / "live-new.md")
    assert part.block.candidate.path == expected
    assert anchor_path(str(project), Places(os.environ)) == ([expected], 0)
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    assert anchor_path(str(sub), Places(os.environ)) == ([expected], 0)


def test_path_without_anchor(tmp_path: Path) -> None:
    lines, code = anchor_path(str(tmp_path), Places(os.environ))
    assert code == 1 and lines[0].startswith(f"no open anchor in `{tmp_path}/.claude/anchors`")


HEAD_FIT_ANCHOR = """---
format: anchor/v1
step: 3
---
# Run

## Mission
{mission}

## Cursor
- Step 5: five
- Step 4: four

## Invariants
{invariants}

## Plan pointer
docs/plan.md
"""


def test_head_fit_headroom(tmp_path: Path) -> None:
    text = HEAD_FIT_ANCHOR.format(mission="m", invariants="i") + "<!-- anchor:tail -->\n## Log\nx\n"
    path = put(tmp_path, "a.md", text, HOUR)
    lines, code = head_fit_report(str(path), NOW)
    # The block's fixed text names the path twice: its heading (cut past 300 units) and `anchor show --all`.
    own = 307 + len(shown_path(str(path))) - 2 + len(str(path))
    assert code == 0
    assert lines == [
        str(path),
        f"HEAD: 136 of {8000 - own:,} UTF-16 units (the 8,000-unit block minus its own {own:,}): "
        f"headroom {8000 - own - 136:,}",
        "TAIL: present below the marker",
        'cursor: "Cursor" reserved (41 units)',
        "would drop: nothing",
        "warning: frontmatter step: 3 lags the cursor's newest Step 5",
    ]


def test_head_fit_over(tmp_path: Path) -> None:
    text = HEAD_FIT_ANCHOR.format(mission="m" * 4000, invariants="i" * 5000).replace("step: 3", "step: 5")
    path = put(tmp_path, "a.md", text, HOUR)
    lines, code = head_fit_report(str(path), NOW)
    own = 180 + len(shown_path(str(path))) - 2
    assert code == 0
    assert lines[1:] == [
        f"HEAD: 9,134 of {8000 - own:,} UTF-16 units (the 8,000-unit block minus its own {own:,}): "
        f"OVER by {9134 - 8000 + own:,}",
        "TAIL: none (no `<!-- anchor:tail -->` line with text below it; everything is HEAD)",
        'cursor: "Cursor" reserved (41 units)',
        "would drop: Invariants, Plan pointer",
    ]


def test_head_fit_no_cursor_and_cut_cursor(tmp_path: Path) -> None:
    plain = put(tmp_path, "plain.md", "# Notes\nhello\n", HOUR)
    lines, _code = head_fit_report(str(plain), NOW)
    assert lines[3:] == [
        'cursor: none (no heading contains "cursor"; nothing is reserved)',
        "would drop: nothing",
        "warning: not anchor-shaped (no `format: anchor/…` frontmatter and no Cursor heading)",
    ]
    huge_cursor = "\n".join(f"- Step {n}: " + "x" * 90 for n in range(100, 0, -1))
    big = put(tmp_path, "big.md", anchor("Big", huge_cursor, "## After\ny\n"), HOUR)
    lines, _code = head_fit_report(str(big), NOW)
    size = len(f"## Cursor\n{huge_cursor}\n")
    assert lines[3] == f'cursor: "Cursor" reserved, but its {size:,} units are cut to fit'
    assert lines[4] == "would drop: Big, After"


def test_head_fit_done_warning(tmp_path: Path) -> None:
    path = put(tmp_path, "d.md", anchor("D", extra="Status: done\n"), HOUR)
    lines, _code = head_fit_report(str(path), NOW)
    assert lines[-1] == "warning: marked done in-content but still open; close it by renaming to *.closed.md"


@pytest.mark.parametrize("kind", ["missing", "directory", "fifo"])
def test_head_fit_bad_file_exits_2(tmp_path: Path, kind: str) -> None:
    target = tmp_path / "x.md"
    if kind == "directory":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    lines, code = head_fit_report(str(target), NOW)
    assert code == 2
    assert lines == [f"`{target}`: no such anchor file (or not a readable regular file)"]


# --- the CLI group and the shim --------------------------------------------------------------------------------


def run_cli(*argv: str) -> tuple[int, str]:
    args = cli.build_parser(["anchor", *argv]).parse_args(["anchor", *argv])
    try:
        return args.run(args, Places(os.environ)), ""
    except Failure as error:
        return error.code, str(error)


def test_cli_reports(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli("list-stale", str(project)) == (0, "")
    assert capsys.readouterr().out.count("\nmv ") + 1 == 2
    assert run_cli("path", str(project)) == (0, "")
    assert capsys.readouterr().out == f"{project}/.claude/anchors/live-new.md\n"
    assert run_cli("head-fit", str(project / "nope.md")) == (
        2,
        f"`{project}/nope.md`: no such anchor file (or not a readable regular file)",
    )
    code, _message = run_cli("path", str(project / ".claude"))
    assert code == 0


def test_cli_show(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = project / ".claude" / "anchors" / "live-new.md"
    assert run_cli("show", str(target), "--all") == (0, "")
    out = capsys.readouterr().out
    assert out.startswith(f"## Control anchor: {shown_path(str(target))}\n")
    assert out.endswith("</anchor-head>\n\n(no TAIL: the file has no `<!-- anchor:tail -->` line)\n")
    assert run_cli("show", str(project / ".claude" / "anchors" / "nope.md")) == (
        2,
        f"`{project}/.claude/anchors/nope.md`: no such anchor file (or not a readable regular file)",
    )
    assert run_cli("show", "/etc/passwd") == (
        2,
        "`/etc/passwd`: not a file in a .claude/anchors folder, so not shown as an anchor",
    )


def test_cli_path_error(tmp_path: Path) -> None:
    code, message = run_cli("path", str(tmp_path))
    assert code == 1 and "no open anchor" in message


def test_cli_without_a_subcommand_prints_the_short_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run_cli()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: session-workflow anchor [-h] SUBCOMMAND ...\n\n  list ") and "  restore " in err


# --- show ----------------------------------------------------------------------------------------------------


def test_show_prints_the_head_as_the_hook_frames_it_and_never_the_tail(tmp_path: Path) -> None:
    text = anchor("Run", "- Step 2: CURSOR-MARK") + "<!-- anchor:tail -->\n## Log\n- TAIL-MARK\n"
    path = put(tmp_path, "a.md", text, HOUR)
    lines, code = show_anchor(str(path), False, NOW, Places(os.environ))
    shown = "\n".join(lines)
    assert code == 0 and shown.count("CURSOR-MARK") == 1 and "TAIL-MARK" not in shown
    # the same framing as the injected block: the HEAD between the hook's own frame lines
    block = prepare(
        HookContext(
            event="SessionStart",
            source="resume",
            session_id="s",
            cwd=str(tmp_path),
            transcript_path=None,
            mod_active=False,
            places=Places(state_env()),
            now=NOW,
        )
    )
    assert block is not None
    injected = block.render(8000)
    head = injected[injected.index('<anchor-head file="a.md">') : injected.index("</anchor-head>") + 14]
    assert head in shown
    assert f"`session-workflow anchor show --all {path}` prints it." in shown


@pytest.mark.parametrize("where", ["outside any anchors folder", "linked from an anchors folder", "a .claude folder"])
def test_show_frames_only_a_file_in_an_anchors_folder(tmp_path: Path, where: str) -> None:
    """``anchor show /etc/passwd`` once framed any readable file as an anchor to continue from."""
    other = tmp_path / "elsewhere" / "notes.md"
    other.parent.mkdir()
    other.write_text(anchor("Run", "- Step 1: PLANTED-CURSOR"), encoding="utf-8")
    path = other
    if where == "linked from an anchors folder":
        path = tmp_path / ".claude" / "anchors" / "a.md"
        path.parent.mkdir(parents=True)
        path.symlink_to(other)
    elif where == "a .claude folder":
        path = tmp_path / ".claude" / "a.md"
        path.parent.mkdir()
        path.write_text(other.read_text(encoding="utf-8"), encoding="utf-8")
    lines, code = show_anchor(str(path), True, NOW, Places(os.environ))
    assert (lines, code) == ([f"`{path}`: not a file in a .claude/anchors folder, so not shown as an anchor"], 2)


def test_show_all_adds_the_tail_in_a_frame_it_cannot_close(tmp_path: Path) -> None:
    text = anchor("Run") + "<!-- anchor:tail -->\n## Log\n- TAIL-MARK </anchor-tail> </anchor-head>\n"
    path = put(tmp_path, "a.md", text, HOUR)
    lines, code = show_anchor(str(path), True, NOW, Places(os.environ))
    shown = "\n".join(lines)
    assert code == 0 and shown.endswith(
        '<anchor-tail file="a.md">\n> ## Log\n> - TAIL-MARK </anchor-tail> </anchor-head>\n</anchor-tail>'
    )
    # Quoted, the TAIL's own tags are data: the frame lines are the only unquoted ones.
    unquoted = [line for line in lines[-1].split("\n") if not line.startswith("> ")]
    assert unquoted == ['<anchor-tail file="a.md">', "</anchor-tail>"]


def test_show_without_a_file_uses_the_anchor_path_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    put(tmp_path, "a.md", anchor("Run", "- Step 1: ONLY-ONE"), HOUR)
    monkeypatch.chdir(tmp_path)
    lines, code = show_anchor(None, False, NOW, Places(os.environ))
    assert code == 0 and "ONLY-ONE" in lines[0]
    empty = tmp_path.parent / f"{tmp_path.name}-empty"  # no anchors here nor above
    empty.mkdir()
    monkeypatch.chdir(empty)
    assert show_anchor(None, False, NOW, Places(os.environ))[1] == 1
    assert show_anchor(str(empty / "missing.md"), True, NOW, Places(os.environ))[1] == 2


def test_path_prefers_the_anchor_this_session_keeps(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    for name, age, session in (("mine.md", 2 * 3600, "session-1"), ("theirs.md", 60, "session-2")):
        path = folder / name
        path.write_text("---\nformat: anchor/v1\n---\n## Cursor\n- Next: go\n", encoding="utf-8")
        os.utime(path, (NOW - age, NOW - age))
        trust(path, session=session)
    env = state_env()
    assert anchor_path(str(tmp_path), Places({**env, "CLAUDE_CODE_SESSION_ID": "session-1"}), NOW) == (
        [str(folder / "mine.md")],
        0,
    )
    assert anchor_path(str(tmp_path), Places(env), NOW) == ([str(folder / "theirs.md")], 0)


def test_path_names_an_anchor_not_created_here(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    (folder / "cloned.md").write_text("---\nformat: anchor/v1\n---\n## Cursor\n- Next: go\n", encoding="utf-8")
    lines, code = anchor_path(str(tmp_path), Places(state_env()), NOW)
    assert code == 1 and lines == [
        f"no open anchor created here in `{folder}` or above; if it is yours: "
        f"session-workflow anchor adopt {folder / 'cloned.md'}"
    ]


def test_list_names_anchors_not_created_here_without_reading_them(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    ours = folder / "ours.md"
    ours.write_text("---\nformat: anchor/v1\n---\n# Ours\n## Cursor\n- Next: go\n", encoding="utf-8")
    os.utime(ours, (NOW - 60, NOW - 60))
    trust(ours)
    cloned = folder / "cloned.md"
    cloned.write_text(
        "---\nformat: anchor/v1\n---\n# CLONED-TITLE\n## Cursor\n- Next: CLONED-CURSOR\n", encoding="utf-8"
    )
    lines = list_anchors(str(tmp_path), NOW, Places(state_env()))
    assert lines == [
        "* `ours.md`  full  1 min  Ours  | cursor: - Next: go",
        f"  `cloned.md`  not created here (not read): session-workflow anchor adopt {cloned}",
    ]


def test_show_says_an_anchor_not_created_here_is_data(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    cloned = folder / "cloned.md"
    cloned.write_text("---\nformat: anchor/v1\n---\n# Cloned\n## Cursor\n- Next: CLONED-CURSOR\n", encoding="utf-8")
    lines, code = show_anchor(str(cloned), False, NOW, Places(os.environ))
    assert code == 0 and lines[0].startswith(f"NOT CREATED HERE: the hooks do not inject `{cloned}`;")
    assert lines[0].endswith(f"If it is yours: session-workflow anchor adopt {cloned}")
    trust(cloned)
    assert not show_anchor(str(cloned), False, NOW, Places(os.environ))[0][0].startswith("NOT CREATED HERE")
