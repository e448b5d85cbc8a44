"""Where the trust records live, and the symlink test every writer runs before it writes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.core.locations import (
    _fnv1a64,
    leads_outside,
    record_name,
    resolves_inside,
    safe_name,
)
from session_workflow.core.places import Places
from tests.reliability.strategies import char_text
from tests.shell import shown_value

SRC = Path(__file__).resolve().parents[2] / "src"


# The environments both rules are held to: unset, relative and absolute XDG_STATE_HOME and HOME, trailing slashes.
STATE_ENVS: list[dict[str, str]] = [
    {"HOME": "/home/u"},
    {"HOME": "/home/u/"},
    {"HOME": "/"},
    {"HOME": "/home/u", "XDG_STATE_HOME": "/xdg"},
    {"HOME": "/home/u", "XDG_STATE_HOME": "/xdg/"},
    {"HOME": "/home/u", "XDG_STATE_HOME": "relative"},
    {"HOME": "/home/u", "XDG_STATE_HOME": ""},
    {"HOME": "/home/u", "XDG_STATE_HOME": " "},
    {"HOME": "relative", "XDG_STATE_HOME": "/xdg"},
    {"XDG_STATE_HOME": "/xdg"},
]


@pytest.mark.parametrize(
    ("env", "platform", "expected"),
    [
        ({"HOME": "/home/u"}, "linux", "/home/u/.local/state/session-workflow"),
        ({"HOME": "/home/u/"}, "linux", "/home/u/.local/state/session-workflow"),
        ({"HOME": "/home/u", "XDG_STATE_HOME": "/xdg"}, "linux", "/xdg/session-workflow"),
        ({"HOME": "/home/u", "XDG_STATE_HOME": "relative"}, "linux", "/home/u/.local/state/session-workflow"),
        ({"HOME": "/Users/u"}, "darwin", "/Users/u/Library/Application Support/session-workflow"),
        ({"HOME": "/Users/u", "XDG_STATE_HOME": "/xdg"}, "darwin", "/xdg/session-workflow"),
        ({}, "linux", None),
        ({"HOME": "relative"}, "linux", None),
        ({"HOME": "/home/u\x00x"}, "linux", None),
    ],
)
def test_user_state_dir_needs_only_the_environment(env: dict[str, str], platform: str, expected: str | None) -> None:
    assert Places(env, platform).state == expected


@pytest.mark.parametrize("env", STATE_ENVS)
@pytest.mark.parametrize("platform", ["linux", "darwin"])
def test_user_state_dir_is_what_platformdirs_gives(
    env: dict[str, str], platform: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one stdlib rule (hooks, CLI and mod alike) is platformdirs' wherever HOME or XDG_STATE_HOME is
    absolute: 4.5 and newer, the pin for 3.10+. 4.4, the 3.9 pin, takes a relative XDG_STATE_HOME as it is and
    ignores XDG_STATE_HOME on macOS, so a Python 3.9 run checks the cases without it."""
    platformdirs = pytest.importorskip("platformdirs")
    version = tuple(int(part) for part in platformdirs.__version__.split(".")[:2])
    xdg = env.get("XDG_STATE_HOME", "")
    if version < (4, 5) and xdg.strip() and (platform == "darwin" or not xdg.startswith("/")):
        pytest.skip("platformdirs before 4.5 takes a relative XDG_STATE_HOME and ignores it on macOS")
    from platformdirs.macos import MacOS
    from platformdirs.unix import Unix

    for name in ("HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    dirs = (MacOS if platform == "darwin" else Unix)("session-workflow")
    assert Places(env, platform).state == dirs.user_state_dir


def test_user_state_dir_is_the_same_in_a_cold_interpreter() -> None:
    """The hooks run ``python3 -I -S``: no platformdirs there, the same folder."""
    code = (
        "import os, sys; sys.path.insert(0, sys.argv[1]); from session_workflow.core.places import Places;"
        " print(Places(os.environ).state)"
    )
    env = {"HOME": "/home/u", "XDG_STATE_HOME": "/xdg", "PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-B", "-c", code, str(SRC)], env=env, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "/xdg/session-workflow\n", "")


def test_trust_dir_is_never_inside_a_project_and_ignores_plugin_data() -> None:
    env = {"HOME": "/home/u", "CLAUDE_PLUGIN_DATA": "/data", "CLAUDE_PROJECT_DIR": "/home/u/proj"}
    assert Places(env).trust == os.path.join(Places(env).state or "", "anchors")
    assert Places({}).trust is None


def test_leads_outside_names_the_first_link_out(tmp_path: Path) -> None:
    project, outside = tmp_path / "proj", tmp_path / "outside"
    (project / "inner").mkdir(parents=True)
    outside.mkdir()
    (project / ".claude").symlink_to(outside)
    (project / "inner" / "back").symlink_to(project / "inner")
    assert leads_outside(str(project), str(project / ".claude" / "anchors" / "a.md")) == (
        str(project / ".claude"),
        str(outside),
    )
    assert leads_outside(str(project), str(project / "inner" / "back" / "x")) is None
    assert leads_outside(str(project), str(tmp_path / "elsewhere")) == (str(tmp_path / "elsewhere"),) * 2
    assert resolves_inside(str(project / "inner" / "back"), str(project))
    assert not resolves_inside(str(project / ".claude"), str(project))


@pytest.mark.parametrize(
    ("name", "file_name"),
    [
        ("/home/u/p/.claude/anchors/run.md", "-home-u-p--claude-anchors-run-md-776ae1a5a0550a5d.key"),
        (
            "/home/u/\u00e9 p/.claude/anchors/2026-11-02-run-421.md",
            "-home-u---p--claude-anchors-2026-11-02-run-421-md-e5000cafe536e2a4.key",
        ),
        ("0c5e0e4e-8c8f-4a5e-9f0e-2b7d1f3a9c11", "0c5e0e4e-8c8f-4a5e-9f0e-2b7d1f3a9c11.key"),
        ("", ".key"),
    ],
)
def test_record_names_never_change(name: str, file_name: str) -> None:
    """Trust records and delivery records already on disk are found under these names after an upgrade."""
    assert record_name(name) == file_name


def reference_fnv1a64(text: str) -> int:
    value = 0xCBF29CE484222325
    for byte in text.encode("utf-8", "surrogatepass"):
        value = ((value ^ byte) * 0x100000001B3) % 2**64
    return value


@given(st.lists(st.sampled_from(["/a/", "/a/b/", "/é/", "", "x/"]), min_size=1), st.lists(st.text(max_size=8)))
def test_the_hash_resumed_from_a_folder_is_the_whole_hash(folders: list[str], names: list[str]) -> None:
    """Paths of one folder in a row, then another folder, then back: each hash is FNV-1a of the whole text."""
    for index, name in enumerate(names):
        text = folders[index % len(folders)] + name
        assert _fnv1a64(text) == reference_fnv1a64(text)


@given(char_text())
def test_safe_name_is_one_dash_a_code_point(text: str) -> None:
    """Record names on disk were made with Python's ``re.sub``: one ``-`` for each other code point, surrogates too."""
    assert safe_name(text) == re.sub(r"[^A-Za-z0-9_-]", "-", text)


@given(char_text())
def test_safe_name_in_utf16_is_claude_codes_id_mapping(text: str) -> None:
    """Claude Code's ``id.replace(/[^a-zA-Z0-9_-]/g, "-")`` replaces UTF-16 code units: an astral character is two."""
    units = text.encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[index : index + 2], "little") for index in range(0, len(units), 2)]
    keep = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
    assert safe_name(text, utf16=True) == "".join(chr(code) if code in keep else "-" for code in codes)


def test_safe_name_keeps_a_uuid_and_defuses_paths() -> None:
    assert safe_name("0c5e0e4e-8c8f-4a5e-9f0e-2b7d1f3a9c11") == "0c5e0e4e-8c8f-4a5e-9f0e-2b7d1f3a9c11"
    assert safe_name("../a.b/é\u00a0z") == "---a-b---z"


# --- folder variables a project's env block can set -------------------------------------------------------------


def test_a_folder_variable_counts_only_absolute_and_outside_every_project(tmp_path: Path) -> None:
    project, other = tmp_path / "proj", tmp_path / "other"
    (project / "sub").mkdir(parents=True)
    other.mkdir()
    (project / "link").symlink_to(other)
    (other / "back").symlink_to(project / "sub")
    env = {"HOME": str(tmp_path / "home")}
    dirs = [str(project)]
    assert Places(env).outside_projects(str(other / "data"), dirs)
    assert Places(env).outside_projects(str(project / "link" / "data"), dirs)  # resolved: it lands outside
    for inside in (project, project / "sub" / "data", other / "back" / "data"):
        assert not Places(env).outside_projects(str(inside), dirs), inside
    assert not Places(env).outside_projects("data", []) and not Places(env).outside_projects("/x\x00", [])
    # A session run in the home folder or above it has no repository there (~/.claude/settings.json is the user's
    # own), and Claude Code's own folder counts as outside wherever it is.
    for above in (tmp_path / "home", tmp_path, Path("/")):
        assert Places(env).outside_projects(str(tmp_path / "home" / ".local" / "data"), [str(above)]), above
    env_config = {**env, "CLAUDE_CONFIG_DIR": str(project / "cfg")}
    assert Places(env_config).outside_projects(str(project / "cfg" / "plugins" / "data" / "x"), dirs)
    assert not Places(env_config).outside_projects(str(project / "cfg2"), dirs)
    assert not Places(env).outside_projects("/x\ud800", []) and Places(env).outside_projects(str(other), ["/p\ud800"])
    assert Places({**env, "CLAUDE_PLUGIN_DATA": str(project / "d")}).records(dirs) is None
    assert Places({**env, "CLAUDE_PLUGIN_DATA": str(other)}).records(dirs) == str(other / "work-state-delivered")


def test_a_relative_config_dir_is_ignored_and_named_once(tmp_path: Path) -> None:
    env = {"HOME": "/home/u", "CLAUDE_CONFIG_DIR": "cfg", "XDG_STATE_HOME": "st", "CLAUDE_PLUGIN_DATA": "data"}
    assert Places(env).config == "/home/u/.claude"
    assert Places({"CLAUDE_CONFIG_DIR": "/c"}).config == "/c" and Places({}).config is None
    assert Places(env).ignored_folders([]) == [
        "session-workflow: ignored CLAUDE_CONFIG_DIR=`cfg`: not an absolute path outside the project.",
        "session-workflow: ignored XDG_STATE_HOME=`st`: not an absolute path outside the project.",
        "session-workflow: ignored CLAUDE_PLUGIN_DATA=`data`: not an absolute path outside the project.",
    ]
    data = str(tmp_path / "d\u202e")
    assert Places({"CLAUDE_PLUGIN_DATA": data}).ignored_folders([str(tmp_path)]) == [
        f"session-workflow: ignored CLAUDE_PLUGIN_DATA={shown_value(data)}: not an absolute path outside the project."
    ]
    assert Places({"HOME": "/h", "CLAUDE_PLUGIN_DATA": "/h/.claude/plugins/data/x"}).ignored_folders(["/h/p"]) == []


def test_a_safe_id_up_to_100_characters_is_its_own_file_name_and_a_longer_one_is_hashed() -> None:
    assert record_name("a" * 100) == "a" * 100 + ".key"
    longer = record_name("a" * 101)
    assert longer.startswith("a" * 64 + "-") and len(longer) == 64 + 1 + 16 + len(".key")
