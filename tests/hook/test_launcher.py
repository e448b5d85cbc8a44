"""hooks/python.sh: the python3 the hooks and the CLI run, never one a project's PATH entry supplies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.core import health

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = str(REPO / "hooks" / "python.sh")
# Prints which python3 ran and where: the test's fakes are shell scripts that say their own path.
SAYS = '#!/bin/sh\necho "$0" "$(pwd -P)" "$@"\n'


def fake_python(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "python3"
    script.write_text(SAYS)
    script.chmod(0o755)
    return script


def launch(path: str, cwd: Path, *args: str, project: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": path, "HOME": str(cwd)}
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = str(project)
    return subprocess.run(
        ["/bin/sh", LAUNCHER, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=30, check=False
    )


@pytest.fixture()
def world(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a python3 of its own, and one outside it."""
    project = tmp_path / "project"
    fake_python(project / ".venv" / "bin")
    fake_python(tmp_path / "usr" / "bin")
    return project, tmp_path / "usr" / "bin"


def test_the_first_python3_on_path_runs_with_the_arguments_in_the_same_folder(world: tuple[Path, Path]) -> None:
    project, outside = world
    done = launch(f"{outside}", project, "-I", "-S", "hook.py", "SessionStart")
    assert done.stdout == f"{outside}/python3 {project} -I -S hook.py SessionStart\n"


@pytest.mark.parametrize("where", ["cwd", "project dir"])
def test_an_entry_inside_the_project_is_skipped(world: tuple[Path, Path], where: str) -> None:
    project, outside = world
    cwd = project if where == "cwd" else Path("/")
    given = project if where == "project dir" else None
    done = launch(f"{project}/.venv/bin:{outside}", cwd, "x", project=given)
    assert done.stdout.startswith(f"{outside}/python3 ")


@pytest.mark.parametrize("entry", ["", ".venv/bin", "./.venv/bin", "~/bin", "../elsewhere/bin"])
def test_a_relative_entry_is_skipped(world: tuple[Path, Path], entry: str) -> None:
    """Even one that leads outside the project: what it names depends on the working directory."""
    project, outside = world
    fake_python(project.parent / "elsewhere" / "bin")
    done = launch(f"{entry}:{outside}", project, "x")
    assert done.stdout.startswith(f"{outside}/python3 ")


def test_a_link_into_the_project_is_resolved_and_skipped(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, outside = world
    (tmp_path / "link").symlink_to(project)
    for entry in (f"{tmp_path}/link/.venv/bin", f"{outside}/../../project/.venv/bin"):
        assert launch(f"{entry}:{outside}", project, "x").stdout.startswith(f"{outside}/python3 ")


def test_a_session_at_the_root_still_finds_its_python3(world: tuple[Path, Path]) -> None:
    _project, outside = world
    assert launch(str(outside), Path("/"), "x").stdout.startswith(f"{outside}/python3 / ")


def test_globs_in_path_are_not_expanded(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, _outside = world
    done = launch(f"{tmp_path}/u*/bin", project, "x")
    assert (done.returncode, done.stdout) == (127, "")


def test_no_python3_outside_the_project_is_one_line_and_127(world: tuple[Path, Path]) -> None:
    project, _outside = world
    done = launch(f"{project}/.venv/bin", project, "x")
    assert (done.returncode, done.stdout) == (127, "")
    assert (
        done.stderr == "session-workflow: no python3 on PATH outside the project (relative entries are skipped too)\n"
    )
    assert launch(f"{project}/.venv/bin", project, "--which").stdout == "\n"


def test_which_names_the_choice(world: tuple[Path, Path]) -> None:
    project, outside = world
    assert launch(f"{project}/.venv/bin:{outside}", project, "--which").stdout == f"{outside}/python3\n"


def test_hooks_json_starts_every_hook_through_it() -> None:
    declared = json.loads((REPO / "hooks" / "hooks.json").read_text(encoding="utf-8"))
    for event, groups in declared["hooks"].items():
        for group in groups:
            for entry in group["hooks"]:
                assert entry["command"] == "/bin/sh"
                root = "${CLAUDE_PLUGIN_ROOT}"
                assert entry["args"] == [f"{root}/hooks/python.sh", "-I", "-S", f"{root}/hooks/hook.py", event]


def test_the_cli_runs_through_it_even_from_a_link(world: tuple[Path, Path], tmp_path: Path) -> None:
    """The project's python3 first on PATH (a shell script that would print its path) is not the one that runs."""
    project, _outside = world
    real = Path(sys.executable).resolve().parent
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "session-workflow").symlink_to(REPO / "bin" / "session-workflow")
    env = {"PATH": f"{project}/.venv/bin:{real}", "HOME": str(tmp_path)}
    argv = [str(tmp_path / "bin" / "session-workflow"), "--version"]
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.split()[0]) == (0, "session-workflow"), done.stderr


def test_doctor_names_the_python3_the_hooks_run(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, _outside = world
    real = tmp_path / "real"
    real.mkdir()
    (real / "python3").symlink_to(os.path.realpath(sys.executable))
    check = health.python_check({"PATH": f"{project}/.venv/bin:{real}"}, LAUNCHER, str(project))
    version = ".".join(map(str, sys.version_info[:3]))
    assert (check.mark, check.text) == (health.OK, f"python3 for the hooks: {real}/python3, Python {version}")
    none = health.python_check({"PATH": f"{project}/.venv/bin"}, LAUNCHER, str(project))
    assert (none.text, none.essential) == (
        "python3 for the hooks: none on PATH outside the project; the hooks cannot run",
        True,
    )
