"""hooks/python.sh: the python3 the hooks and the CLI run, never one a project's PATH entry supplies."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.cli import health
from session_workflow.core.places import Places

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = str(REPO / "hooks" / "python.sh")
# The test's python3s are links to the real interpreter (a script is never run: see the shim tests); run with
# these arguments each prints the path it was started as, its working directory and the arguments after them.
SAY = ("-I", "-S", "-c", "import os, sys; print(sys.executable, os.getcwd(), *sys.argv[1:])")
# A version manager's shim: a script that would run whatever it likes (here it says its own path).
SHIM = '#!/bin/sh\necho "$0" "$(pwd -P)" "$@"\n'


def fake_python(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "python3"
    link.symlink_to(os.path.realpath(sys.executable))
    return link


def fake_shim(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "python3"
    script.write_text(SHIM)
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
    done = launch(f"{outside}", project, *SAY, "hook.py", "SessionStart")
    assert done.stdout == f"{outside}/python3 {project} hook.py SessionStart\n"


@pytest.mark.parametrize("where", ["cwd", "project dir"])
def test_an_entry_inside_the_project_is_skipped(world: tuple[Path, Path], where: str) -> None:
    project, outside = world
    cwd = project if where == "cwd" else Path("/")
    given = project if where == "project dir" else None
    done = launch(f"{project}/.venv/bin:{outside}", cwd, *SAY, project=given)
    assert done.stdout.split()[0] == f"{outside}/python3"


@pytest.mark.parametrize("entry", ["", ".venv/bin", "./.venv/bin", "~/bin", "../elsewhere/bin"])
def test_a_relative_entry_is_skipped(world: tuple[Path, Path], entry: str) -> None:
    """Even one that leads outside the project: what it names depends on the working directory."""
    project, outside = world
    fake_python(project.parent / "elsewhere" / "bin")
    done = launch(f"{entry}:{outside}", project, *SAY)
    assert done.stdout.split()[0] == f"{outside}/python3"


def test_a_relative_entry_is_skipped_even_where_it_names_a_folder_from_the_root(world: tuple[Path, Path]) -> None:
    project, outside = world
    fake_python(project.parent / "elsewhere" / "bin")
    done = launch(f"{str(project.parent).lstrip('/')}/elsewhere/bin:{outside}", project, *SAY)
    assert done.stdout.split()[0] == f"{outside}/python3"


def test_a_link_into_the_project_is_resolved_and_skipped(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, outside = world
    (tmp_path / "link").symlink_to(project)
    for entry in (f"{tmp_path}/link/.venv/bin", f"{outside}/../../project/.venv/bin"):
        assert launch(f"{entry}:{outside}", project, *SAY).stdout.split()[0] == f"{outside}/python3"


def test_a_session_at_the_root_still_finds_its_python3(world: tuple[Path, Path]) -> None:
    _project, outside = world
    assert launch(str(outside), Path("/"), *SAY).stdout.split()[:2] == [f"{outside}/python3", "/"]


def test_globs_in_path_are_not_expanded(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, _outside = world
    done = launch(f"{tmp_path}/u*/bin", project, *SAY)
    assert (done.returncode, done.stdout) == (127, "")


def test_no_python3_outside_the_project_is_one_line_and_127(world: tuple[Path, Path]) -> None:
    project, _outside = world
    done = launch(f"{project}/.venv/bin", project, *SAY)
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


def test_a_script_standing_in_for_python3_is_never_run(world: tuple[Path, Path], tmp_path: Path) -> None:
    """A version manager's shim first on PATH would obey the project's pin: the next real interpreter runs."""
    project, outside = world
    fake_shim(tmp_path / "manager" / "shims")
    done = launch(f"{tmp_path}/manager/shims:{outside}", project, *SAY)
    assert done.stdout.split()[0] == f"{outside}/python3"
    only_shim = launch(f"{tmp_path}/manager/shims", project, *SAY)
    assert (only_shim.returncode, only_shim.stdout) == (127, "")


@pytest.mark.parametrize(("pin", "runs"), [("9.9.1\n", "pyenv"), ("system\n", "outside"), ("  3.0 9.9.1", "pyenv")])
def test_pyenv_shims_run_the_global_version_never_the_project_pin(
    world: tuple[Path, Path], tmp_path: Path, pin: str, runs: str
) -> None:
    project, outside = world
    root = tmp_path / "pyenv"
    fake_shim(root / "shims")
    fake_python(root / "versions" / "9.9.1" / "bin")
    (root / "versions" / "3.0" / "bin").mkdir(parents=True)  # an unusable version is passed over
    (root / "version").write_text(pin)
    (project / ".python-version").write_text("3.0\n")
    done = launch(f"{root}/shims:{outside}", project, *SAY)
    expected = f"{root}/versions/9.9.1/bin/python3" if runs == "pyenv" else f"{outside}/python3"
    assert done.stdout.split()[0] == expected, done.stderr


def test_an_entry_relative_to_the_working_directory_spelled_absolute_is_skipped(tmp_path: Path) -> None:
    """A monorepo: the project is a subfolder, the repository ships a python3 beside it; /proc/self/cwd/.., a link
    the repository ships to it, and a directory handle under /dev/fd all lead there from the project (and nowhere
    from /)."""
    repository = tmp_path / "repository"
    project = repository / "project"
    project.mkdir(parents=True)
    fake_python(repository / "sw-test-bin")
    (project / "up").symlink_to("/proc/self/cwd/..")
    outside = tmp_path / "usr" / "bin"
    fake_python(outside)
    handle = os.open(repository / "sw-test-bin", os.O_RDONLY)
    try:
        for entry in (
            "/proc/self/cwd/../sw-test-bin",
            f"{project}/up/sw-test-bin",
            f"/dev/fd/{handle}",
            f"/dev/../proc/self/fd/{handle}",
        ):
            done = subprocess.run(
                ["/bin/sh", LAUNCHER, *SAY],
                cwd=project,
                env={"PATH": f"{entry}:{outside}", "HOME": str(tmp_path), "CLAUDE_PROJECT_DIR": str(project)},
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
                pass_fds=(handle,),
            )
            assert done.stdout.split()[0] == f"{outside}/python3", (entry, done.stdout, done.stderr)
    finally:
        os.close(handle)


def test_a_folder_others_may_write_is_skipped(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, outside = world
    for mode in (0o777, 0o775, 0o757):
        shared = tmp_path / f"shared{mode:o}"
        fake_python(shared)
        shared.chmod(mode)
        assert launch(f"{shared}:{outside}", project, *SAY).stdout.split()[0] == f"{outside}/python3"
    fake_python(tmp_path / "mine")
    assert launch(f"{tmp_path}/mine:{outside}", project, *SAY).stdout.split()[0] == f"{tmp_path}/mine/python3"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_skipped(world: tuple[Path, Path], tmp_path: Path) -> None:
    project, outside = world
    theirs = tmp_path / "theirs"
    fake_python(theirs)
    os.chown(theirs, 4242, -1)
    assert launch(f"{theirs}:{outside}", project, *SAY).stdout.split()[0] == f"{outside}/python3"


# Real interpreters only (pyenv's versions, the system's): a shim would pick its own.
OLD_PYTHONS = sorted(
    str(path)
    for pattern in ("/root/.pyenv/versions/3.[678].*/bin/python3", "/usr/bin/python3.[678]")
    for path in Path("/").glob(pattern.lstrip("/"))
)


@pytest.mark.skipif(not OLD_PYTHONS, reason="no Python 3.6-3.8 here")
@pytest.mark.parametrize("old", OLD_PYTHONS)
def test_a_python3_too_old_is_recorded_and_said_in_the_block(tmp_path: Path, old: str) -> None:
    """Not silent: the error log names the version (doctor shows it), and SessionStart's block says it."""
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    argv = [old, "-I", "-S", str(REPO / "hooks" / "hook.py")]
    start = subprocess.run([*argv, "SessionStart"], input="{}", env=env, capture_output=True, text=True, check=False)
    edit = subprocess.run([*argv, "PostToolUse"], input="{}", env=env, capture_output=True, text=True, check=False)
    version = subprocess.run([old, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True)
    shown = version.stdout.strip()
    assert (start.returncode, edit.returncode, edit.stdout) == (0, 0, "")
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    assert f"Python {shown}" in context and "3.9 or newer" in context
    from session_workflow.core import errorlog

    logged = errorlog.entries(Places(env))
    assert [(entry["where"], entry["python"]) for entry in logged] == [("SessionStart", shown), ("PostToolUse", shown)]
    assert all("needs 3.9+" in str(entry["error"]) for entry in logged)
