"""``session-workflow state …``: where the state lives, who owns it, what each action prints, and its errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.cli import state as state_cli
from session_workflow.cli.main import main
from session_workflow.core import locations, where
from session_workflow.core.places import Places
from session_workflow.workstate import state as workstate

REPO = Path(__file__).resolve().parents[2]
SRC = str(REPO / "src")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s1")
    monkeypatch.chdir(tmp_path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(["state", *argv])
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def stored(project: Path) -> dict[str, object]:
    document = json.loads(Path(locations.state_path(str(project))).read_text())
    assert isinstance(document, dict)
    return document


def git_repo(folder: Path, remote: str) -> None:
    (folder / ".git").mkdir(parents=True)
    (folder / ".git" / "config").write_text(f'[core]\n\tbare = false\n[remote "origin"]\n\turl = {remote}\n')


def test_a_ticket_through_its_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git_repo(tmp_path, "git@github.com:acme/widgets.git")
    assert run(capsys, "set", "--ticket", "#34", "--title", "Fix the parser", "--map", "12", "--auto") == (
        0,
        'work state: #34 "Fix the parser" (map #12), step start, auto\n',
        "",
    )
    assert run(capsys, "step", "execute")[1] == "work state: #34 step start -> execute\n"
    assert run(capsys, "pause")[1] == 'work state: #34 "Fix the parser" (map #12), step execute, paused, auto\n'
    assert run(capsys, "step", "verify")[1] == (
        "work state: #34 step execute -> verify (still paused: run `session-workflow state resume` before working on)\n"
    )
    assert run(capsys, "resume")[1] == 'work state: #34 "Fix the parser" (map #12), step verify, auto\n'
    document = stored(tmp_path)
    assert document["url"] == "https://github.com/acme/widgets/issues/34"
    assert document["session"] == "s1" and document["auto"] is True
    text = document["section"]["text"]  # type: ignore[index]
    assert "Map: #12 https://github.com/acme/widgets/issues/12" in text
    assert run(capsys, "clear")[1] == 'work state: cleared #34 "Fix the parser" (map #12), step verify, auto\n'
    assert run(capsys, "clear")[1] == f"work state: nothing to clear in {locations.state_path(str(tmp_path))}\n"


def test_show_in_text_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = locations.state_path(str(tmp_path))
    assert run(capsys, "show") == (0, f"no work state in {path}\n", "")
    assert json.loads(run(capsys, "show", "--json")[1]) == {"path": path, "orphaned": None, "state": None}
    run(capsys, "set", "--ticket", "PROJ-12", "--title", "Tracker \x1b[2J ticket", "--map", "none", "--step", "plan")
    code, out, _ = run(capsys, "show")
    updated = stored(tmp_path)["updated_at"]
    assert (code, out) == (
        0,
        f"path     {path}\n"
        "map      none (whiteboard ticket)\n"
        'ticket   PROJ-12 "Tracker [2J ticket"\n'
        "url      (none)\n"
        "step     plan\n"
        "auto     off\n"
        "owner    s1 (this session)\n"
        f"updated  {updated}\n",
    )
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "s2")
    shown = json.loads(run(capsys, "show", "--json")[1])
    assert shown["orphaned"] is True and shown["state"] == stored(tmp_path)
    assert "owner    s1 (another session: orphaned here)" in run(capsys, "show")[1]
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    assert "owner    s1 (no session id here to compare)" in run(capsys, "show")[1]


def test_another_sessions_state_is_refused_until_adopted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "set", "--ticket", "34", "--title", "T", "--step", "execute")
    code, out, err = run(capsys, "step", "verify", "--session", "s2")
    assert (code, out) == (1, "")
    assert err == (
        "session-workflow: the work state (#34, step execute) belongs to session s1, not this one; "
        "if that session is gone, claim it with `session-workflow state adopt`\n"
    )
    assert (
        run(capsys, "adopt", "--session", "s2")[1]
        == 'work state: adopted #34 "T" (whiteboard), step execute, from session s1\n'
    )
    assert run(capsys, "step", "verify", "--session", "s2")[0] == 0
    code, out, err = run(capsys, "set", "--ticket", "35", "--title", "U")
    assert code == 0 and err == "session-workflow: took the work state over from session s2\n"
    assert stored(tmp_path)["session"] == "s1"


def test_the_project_dir_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The session's project (core.where), whatever subfolder the shell is in: no walk up to a .git or a state."""
    repo = tmp_path / "repo"
    pkg = repo / "pkg"
    deep = pkg / "src"
    deep.mkdir(parents=True)
    (repo / ".git").mkdir()
    os.makedirs(os.path.dirname(locations.state_path(str(repo))))
    Path(locations.state_path(str(repo))).write_text("{}")
    monkeypatch.chdir(deep)
    assert state_cli.locate(None, Places({})).project_dir == str(deep), "a terminal's project is where it is"
    config = tmp_path / "config"
    transcript = config / "projects" / where.project_slug(str(pkg)) / "abc-1.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text(json.dumps({"type": "user", "cwd": str(pkg)}) + "\n")
    bash = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": "abc-1", "CLAUDE_CONFIG_DIR": str(config)}
    assert state_cli.locate(None, Places(bash)).project_dir == str(pkg), "the Bash tool's: where the session started"
    other = tmp_path / "other"
    other.mkdir()
    assert state_cli.locate(None, Places({"CLAUDE_PROJECT_DIR": str(other)})).project_dir == str(other)
    capsys.readouterr()
    assert state_cli.locate(None, Places({**bash, "CLAUDE_PROJECT_DIR": str(other)})).project_dir == str(pkg)
    assert "ignored CLAUDE_PROJECT_DIR=" in capsys.readouterr().err
    assert state_cli.locate(None, Places({"CLAUDE_PROJECT_DIR": "relative"})).project_dir == str(deep)
    assert state_cli.locate(str(repo), Places({"CLAUDE_PROJECT_DIR": str(other)})).project_dir == str(repo)


def test_without_any_project_dir_the_user_state_dir_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    found = state_cli.locate(None, Places(os.environ))
    assert found.project_dir is None
    assert found.path == workstate.fallback_state_path(Places(os.environ))
    assert run(capsys, "set", "--ticket", "3", "--title", "T")[0] == 0
    assert os.path.isfile(found.path)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["set", "--title", "T"], "the following arguments are required: --ticket"),
        (["set", "--ticket", "0", "--title", "T"], "argument --ticket: expected an issue number"),
        (["set", "--ticket", "has space", "--title", "T"], "argument --ticket: expected an issue number"),
        (["set", "--ticket", "3", "--title", " \n\t"], "argument --title: the title is empty"),
        (["set", "--ticket", "3", "--title", "x" * 1025], "argument --title: the title is longer than 1024"),
        (["set", "--ticket", "3", "--title", "T", "--map", "PROJ-1"], "argument --map: expected a map issue number"),
        (["set", "--ticket", "3", "--title", "T", "--url", "javascript:x"], "argument --url: expected an http(s) URL"),
        (["set", "--ticket", "3", "--title", "T", "--step", "s" * 61], "the step is longer than 60"),
        (["step"], "the following arguments are required: step"),
        (["step", "\n"], "argument step: the step is empty"),
        (["step", "x", "--dir", "/no/such/dir"], "argument --dir: not a directory"),
        (["step", "x", "--session", "has space"], "argument --session: a session id is"),
        (["show", "--bogus"], "unknown option '--bogus' in `session-workflow state show --bogus`"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and message in err, err


def test_a_missing_owner_is_a_bad_argument(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    for action in (["set", "--ticket", "3", "--title", "T"], ["step", "x"], ["pause"], ["resume"], ["adopt"]):
        assert run(capsys, *action) == (
            2,
            "",
            "session-workflow: no session id: run this inside Claude Code (it sets CLAUDE_CODE_SESSION_ID) "
            "or pass --session ID\n",
        )
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "bad id")
    assert run(capsys, "step", "x")[0] == 2


def test_refusals_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = locations.state_path(str(tmp_path))
    assert run(capsys, "step", "x") == (
        1,
        "",
        f"session-workflow: no work state in {path}; start one with `session-workflow state set`\n",
    )
    os.makedirs(os.path.dirname(path))
    Path(path).write_text("not json")
    for action in (["step", "x"], ["show"]):
        code, _out, err = run(capsys, *action)
        assert code == 1 and err.endswith("is not a valid work state; fix it, or start afresh with `state clear`\n")
    assert run(capsys, "clear")[1] == f"work state: removed an invalid state file {path}\n"


def test_the_real_command_never_prints_a_traceback(tmp_path: Path) -> None:
    extra = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": SRC + (os.pathsep + extra if extra else ""), "CLAUDE_CODE_SESSION_ID": "s1"}
    folder = tmp_path / "p"
    folder.mkdir()
    os.makedirs(os.path.dirname(locations.state_path(str(folder))))
    os.mkfifo(locations.state_path(str(folder)))
    for argv, code in (
        (["state", "set", "--ticket", "x y", "--title", "T"], 2),
        (["state", "show", "--dir", str(folder)], 1),
        (["state", "step", "x", "--dir", str(folder)], 1),
        (["state", "step", "x", "--dir", str(tmp_path)], 1),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "session_workflow", *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=30,
        )
        assert result.returncode == code, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_show_json_escapes_control_bidi_and_invisible_characters(capsys: pytest.CaptureFixture[str]) -> None:
    """A hand-edited title's U+202E (and any hidden character) is printed as its escape; the JSON is the same."""
    title = "Fix \u202eexe.txt\u00ad\u2028x\U000e0041 é"
    path = Path(locations.state_path(os.getcwd()))
    path.parent.mkdir(parents=True)
    document = {"version": 1, "ticket": 7, "title": title, "step": "plan", "session": "s1"}
    path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    code, out, _err = run(capsys, "show", "--json")
    assert code == 0 and out.isprintable() is False  # the newlines of the indent only
    assert all(line.isprintable() for line in out.splitlines())
    assert "\\u202e" in out and "\\u00ad" in out and "\\u2028" in out and "\\udb40\\udc41" in out and " é" in out
    assert json.loads(out)["state"]["title"] == title
