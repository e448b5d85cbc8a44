"""Which folder is the session's project, and where its task list is (``core.where``): one rule for the hooks, the
CLI and the mod (``hooks/mod/where.ts``, held to the table this file writes)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from session_workflow.core import where
from session_workflow.core.locations import TRUST_FOLDER
from session_workflow.core.places import Places
from tests.mod_tables import check_mod_table
from tests.shell import shown_value

REPO = Path(__file__).resolve().parents[2]
MOD_GOLDEN = REPO / "tests" / "mod" / "python-where.ts"
SESSION = "5f0c-sess"


def transcript(config: Path, project: Path | str, session: str, *cwds: Path) -> Path:
    """A transcript as Claude Code writes it: under the slug of the folder it started in, its first cwd that one."""
    path = config / "projects" / where.project_slug(str(project)) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ['{"type":"summary"}', "not json", *(json.dumps({"type": "user", "cwd": str(cwd)}) for cwd in cwds)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def mono(tmp_path: Path) -> tuple[Path, Path, Path]:
    """mono/ (its .git) holding pkg/ (where the session starts) holding src/ (where the model cds)."""
    pkg = tmp_path / "mono" / "pkg"
    (pkg / "src").mkdir(parents=True)
    (tmp_path / "mono" / ".git").mkdir()
    return tmp_path / "mono", pkg, pkg / "src"


def test_a_hook_takes_claude_project_dir_whatever_the_cwd_and_the_env(mono: tuple[Path, Path, Path]) -> None:
    """Claude Code sets CLAUDE_PROJECT_DIR for its hooks over any env block, and CLAUDECODE=1 there too."""
    root, pkg, src = mono
    env = {"CLAUDE_PROJECT_DIR": str(pkg), "CLAUDECODE": "1"}
    assert where.project_dir(Places(env), str(src), hook=True) == str(pkg)
    assert where.project_dir(Places(env), str(root), "/no/such/transcript", hook=True) == str(pkg)
    assert where.project_dir(Places({**env, "CLAUDE_PROJECT_DIR": "relative"}), str(src), hook=True) == str(src)
    assert where.project_dir(Places({**env, "CLAUDE_PROJECT_DIR": str(pkg / "gone")}), str(src), hook=True) == str(src)


def test_the_bash_tool_finds_the_project_in_the_sessions_transcript(
    mono: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """CLAUDE_PROJECT_DIR there is a settings env block's (a repository's): ignored; the session id the engine sets
    names the transcript, whose first cwd is where the session started, wherever the shell is now."""
    root, pkg, src = mono
    config = tmp_path / "config"
    transcript(config, pkg, SESSION, pkg, src)
    env = {"CLAUDECODE": "1", "CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_CONFIG_DIR": str(config)}
    assert where.project_dir(Places(env), str(src)) == str(pkg)
    assert where.project_dir(Places({**env, "CLAUDE_PROJECT_DIR": str(root)}), str(src)) == str(pkg)
    assert where.command_project_dir(Places({**env, "CLAUDE_PROJECT_DIR": str(root)}), str(src)) == (
        str(pkg),
        f"session-workflow: ignored CLAUDE_PROJECT_DIR={shown_value(str(root))}: Claude Code sets it for hooks,"
        " not here.",
    )
    assert where.command_project_dir(Places(env), str(src)) == (str(pkg), None)
    for other in ("other-session", "../x", "a/b", "x" * 129, ""):
        assert where.project_dir(Places({**env, "CLAUDE_CODE_SESSION_ID": other}), str(src)) == str(src)


def test_a_terminal_takes_its_own_claude_project_dir_else_its_cwd(mono: tuple[Path, Path, Path]) -> None:
    """No walk up to a .git or a settings file: Claude Code reads .claude/settings.json where it starts only."""
    root, _pkg, src = mono
    assert where.project_dir(Places({"CLAUDE_PROJECT_DIR": str(root)}), str(src)) == str(root)
    assert where.project_dir(Places({}), str(src)) == str(src)
    assert where.project_dir(Places({}), "relative") is None
    assert where.project_dir(Places({}), None) is None


def test_the_transcript_is_found_under_the_slug_of_a_folder_above_the_cwd_else_anywhere(tmp_path: Path) -> None:
    config, start = tmp_path / "config", tmp_path / "p r🙂j"
    (start / "deep" / "er").mkdir(parents=True)
    env = {"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_CONFIG_DIR": str(config)}
    assert where.session_transcript(Places(env), str(start)) is None
    here = transcript(config, start, SESSION, start)
    assert where.project_slug("/p r🙂j") == "-p-r--j", "an astral character is two UTF-16 units: two dashes"
    assert where.session_transcript(Places(env), str(start / "deep" / "er")) == str(here)
    here.unlink()
    elsewhere = transcript(config, "/a/long/path/cut/and/hashed-1a2b", SESSION, start)
    assert where.session_transcript(Places(env), str(start)) == str(elsewhere)
    assert where.project_dir(Places({**env, "CLAUDECODE": "1"}), str(start / "deep")) == str(start)
    assert (
        where.session_transcript(Places({"CLAUDE_CODE_SESSION_ID": SESSION, "CLAUDE_CONFIG_DIR": "rel"}), None) is None
    )


def test_a_slug_past_200_units_is_cut_and_hashed_as_claude_code_does() -> None:
    """A folder name holds 255 bytes: Claude Code 2.1.332 keeps a slug's first 200 units and appends the base-36
    magnitude of the path's 32-bit string hash (values from its own function, run in node)."""
    long = "/home/u/" + "a-long-folder-name/" * 12 + "p r🙂j"
    assert where.project_slug(long) == "-home-u" + "-a-long-folder-name" * 10 + "-a--jb5tb2"
    assert where.project_slug("/x/" + "é" * 300) == "-x" + "-" * 198 + "-el88be"
    assert where.project_slug("/" + "a" * 199) == "-" + "a" * 199


def test_the_start_dir_is_the_first_record_with_a_cwd(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'not json\n{"type": "summary"}\n{"cwd": 3}\n{"cwd": "/proj"}\n{"cwd": "/later"}\n')
    assert where.session_start_dir(str(path)) == "/proj"
    assert where.session_start_dir(str(tmp_path)) is None
    assert where.session_start_dir(str(tmp_path / "missing")) is None


# --- one table for the mod (hooks/mod/where.ts) ----------------------------------------------------------------------

# The environments the mod and Python are held to: CLAUDE_CONFIG_DIR unset, relative, absolute (with a trailing
# slash too), HOME unset and relative, CLAUDE_CODE_TASK_LIST_ID unset, empty, set, with characters a file name cannot
# keep and an astral one; XDG_STATE_HOME unset, relative, absolute.
MOD_ENVS: list[dict[str, str]] = [
    {"HOME": "/home/u"},
    {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "/cfg"},
    {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "/cfg/"},
    {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "relative/cfg"},
    {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": ""},
    {"CLAUDE_CONFIG_DIR": "relative/cfg"},
    {"HOME": "relative", "CLAUDE_CONFIG_DIR": "/cfg"},
    {},
    {"HOME": "/home/u/", "CLAUDE_CODE_TASK_LIST_ID": "shared-list"},
    {"HOME": "/home/u", "CLAUDE_CODE_TASK_LIST_ID": ""},
    {"HOME": "/home/u", "CLAUDE_CODE_TASK_LIST_ID": "../../etc x.y"},
    {"HOME": "/home/u", "CLAUDE_CODE_TASK_LIST_ID": "list-🙂-é"},
    {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "relative", "CLAUDE_CODE_TASK_LIST_ID": "team"},
    {"HOME": "/home/u", "XDG_STATE_HOME": "/xdg"},
    {"HOME": "/home/u", "XDG_STATE_HOME": "/xdg/"},
    {"HOME": "/home/u", "XDG_STATE_HOME": "relative"},
    {"HOME": "relative", "XDG_STATE_HOME": "/xdg"},
]
MOD_SESSIONS = ["5f0c-sess", "id with/odd:chars"]


def python_where_cases() -> list[dict[str, object]]:
    """What the Python side gives for each environment, session and system: the task list and the trust folder."""
    cases: list[dict[str, object]] = []
    for env in MOD_ENVS:
        for session in MOD_SESSIONS:
            for system, platform in (("Linux", "linux"), ("Darwin", "darwin")):
                trust = _trust_dir_on(env, platform)
                cases.append(
                    {
                        "env": env,
                        "session": session,
                        "sysname": system,
                        "tasks": Places(env).task_list_dir(session),
                        "trust": trust,
                    }
                )
    return cases


def _trust_dir_on(env: dict[str, str], platform: str) -> str | None:
    """``core.places.Places.trust`` as it is on ``platform``."""
    root = Places(env, platform).state
    return os.path.join(root, TRUST_FOLDER) if root else None


def test_the_mods_where_table_is_what_python_gives() -> None:
    """tests/mod/python-where.ts (tests/mod/where.test.ts holds the mod's ``taskListDir`` and ``trustDir`` to it) is
    exactly what ``task_list_dir`` and ``trust_dir`` give; SESSION_WORKFLOW_UPDATE_GOLDEN=1 writes it anew."""
    header = (
        "// Generated by tests/core/test_where.py (SESSION_WORKFLOW_UPDATE_GOLDEN=1): the folders the Python side\n"
        "// gives for these environments, which that test holds it to; tests/mod/where.test.ts holds the mod to it.\n"
    )
    check_mod_table(MOD_GOLDEN, "PYTHON_WHERE", header, python_where_cases())


def test_the_trust_folder_of_the_table_is_trust_dir_here() -> None:
    assert _trust_dir_on(MOD_ENVS[0], sys.platform) == Places(MOD_ENVS[0]).trust


def test_the_table_covers_the_cases_the_issue_names() -> None:
    """Relative, absolute and unset CLAUDE_CONFIG_DIR, a set and an unset CLAUDE_CODE_TASK_LIST_ID, and each makes
    a difference somewhere in the table."""
    cases = python_where_cases()
    given = [env.get("CLAUDE_CONFIG_DIR") for env in MOD_ENVS]
    assert None in given and any(v and v.startswith("/") for v in given) and any(v and v[0] != "/" for v in given)
    tasks = {c["tasks"] for c in cases}
    assert "/cfg/tasks/5f0c-sess" in tasks and "/home/u/.claude/tasks/5f0c-sess" in tasks
    assert "/home/u/.claude/tasks/shared-list" in tasks and "/home/u/.claude/tasks/list-----" in tasks
    assert "/home/u/.claude/tasks/id-with-odd-chars" in tasks and None in tasks


def test_no_tasks_folder_only_when_surely_absent(tmp_path: Path) -> None:
    """Nothing there, or a file on the way: no task list can exist. A folder, a file in its place, a path that
    cannot be looked at (the store then says it cannot read it) and no home at all are not absent."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "file").write_text("")
    assert where.no_tasks_folder(str(tmp_path / "gone"))
    assert where.no_tasks_folder(str(tmp_path / "file" / "tasks"))
    assert not where.no_tasks_folder(str(tmp_path / "tasks"))
    assert not where.no_tasks_folder(str(tmp_path / "file"))
    assert not where.no_tasks_folder(None)
    (tmp_path / "loop").symlink_to(tmp_path / "loop")  # ELOOP: cannot tell, so the store looks and says so
    assert not where.no_tasks_folder(str(tmp_path / "loop" / "tasks"))
