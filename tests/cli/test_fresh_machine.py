"""What a newcomer sees: the README's commands on a python3 that has neither filelock nor platformdirs.

The interpreter is a venv made ``--without-pip`` (so not even pip is there, as on many a system python3), run
with ``PYTHONNOUSERSITE=1`` and a throwaway HOME; the first-use install borrows its base interpreter's pip, which
installs the real pinned wheels from the ``wheels`` folder (``SESSION_WORKFLOW_WHEELS``), so the test needs no
network but installs what a user gets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from session_workflow.anchor import registry
from session_workflow.cli.bootstrap import manual_command, pin_key
from tests.cli.test_bootstrap import WHAT

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "session-workflow"
INSTALLING = f"session-workflow: installed {WHAT}"


class Fresh:
    """A pip-less venv without the two packages, a throwaway HOME, and how to run things there."""

    def __init__(self, root: Path, venv: Path) -> None:
        self.root = root
        self.venv = venv
        self.python = venv / "bin" / "python3"
        self.home = root / "home"
        self.home.mkdir()

    def env(self, **extra: str) -> dict[str, str]:
        keep = ("LANG", "LC_ALL", "TZ", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        path = os.pathsep.join([str(self.venv / "bin"), os.environ.get("PATH", "")])
        return {**env, "PATH": path, "HOME": str(self.home), "PYTHONNOUSERSITE": "1", **extra}

    def bash_tool(self, wheels: Path) -> tuple[Path, Path, dict[str, str]]:
        """(config dir, project, environment) as Claude Code's Bash tool has them: the plugin's bin/ first on PATH,
        CLAUDECODE and a session id, no CLAUDE_PROJECT_DIR; the wheels for an offline first-use install."""
        config, project = self.root / "config", self.root / "project"
        project.mkdir(exist_ok=True)
        env = self.env(
            PATH=os.pathsep.join([str(REPO / "bin"), self.env()["PATH"]]),
            CLAUDECODE="1",
            CLAUDE_CONFIG_DIR=str(config),
            CLAUDE_CODE_SESSION_ID=str(uuid.uuid4()),
            SESSION_WORKFLOW_WHEELS=str(wheels),
        )
        return config, project, env

    def run(
        self, argv: list[str], env: dict[str, str], stdin: str = "", cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd or self.root, timeout=300, check=False
        )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fresh") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    return folder


@pytest.fixture()
def fresh(tmp_path: Path, venv: Path) -> Fresh:
    machine = Fresh(tmp_path, venv)
    for module in ("filelock", "platformdirs", "pip"):
        probe = machine.run([str(machine.python), "-c", f"import {module}"], machine.env())
        assert probe.returncode != 0, f"{module} is importable in the fresh venv: the test would prove nothing"
    return machine


def test_the_demo_installs_once_and_shows_both_injections(fresh: Fresh, wheels: Path) -> None:
    env = fresh.env(SESSION_WORKFLOW_WHEELS=str(wheels))
    done = fresh.run([str(fresh.python), str(BIN), "demo"], env)
    assert done.returncode == 0, done.stderr
    target = fresh.home / ".cache" / "session-workflow" / "python-deps" / pin_key()
    assert done.stderr == f"{INSTALLING} from {wheels} into {target} (once, for the writers)\n"
    for source in ("startup", "compact"):
        assert f"===== SessionStart ({source}): what Claude Code would inject =====" in done.stdout
    assert done.stdout.count(" of 10000 UTF-16 units =====") == 2
    assert "(nothing)" not in done.stdout
    assert "## Control anchor: " in done.stdout and "Port the invoice writer to LedgerClient" in done.stdout
    again = fresh.run([str(fresh.python), str(BIN), "demo"], fresh.env())  # no wheels, no network needed now
    assert (again.returncode, again.stderr) == (0, "")


def test_a_writer_from_claude_codes_bash_tool_installs_into_the_plugin_data(fresh: Fresh, wheels: Path) -> None:
    """As the Bash tool runs it: by name on PATH (the plugin's bin/), its first line running the fresh python3, in
    the project (the Bash tool has no CLAUDE_PROJECT_DIR)."""
    config, project, env = fresh.bash_tool(wheels)
    done = fresh.run(["session-workflow", "anchor", "new", "--task", "Fresh machine"], env, cwd=project)
    assert done.returncode == 0, done.stderr
    target = config / "plugins" / "data" / "session-workflow-inline" / "python-deps" / pin_key()
    assert done.stderr == f"{INSTALLING} from {wheels} into {target} (once, for the writers)\n"
    anchor = Path(done.stdout.strip())
    assert anchor.parent == project / ".claude" / "anchors" and anchor.is_file()
    step = fresh.run(["session-workflow", "anchor", "step", str(anchor), "first step"], env, cwd=project)
    assert (step.returncode, step.stderr) == (0, "")


def test_offline_the_writer_names_the_command_and_the_hooks_still_work(fresh: Fresh, wheels: Path) -> None:
    project = fresh.root / "project"
    project.mkdir()
    refused = "http://127.0.0.1:9"  # the discard port: every connection is refused, as without a network
    proxies = {"HTTPS_PROXY": refused, "https_proxy": refused, "HTTP_PROXY": refused, "http_proxy": refused}
    env = fresh.env(**proxies, PIP_CONFIG_FILE=os.devnull, CLAUDE_PROJECT_DIR=str(project))
    done = fresh.run([str(fresh.python), str(BIN), "anchor", "new", "--task", "Offline"], env)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    target = fresh.home / ".cache" / "session-workflow" / "python-deps" / pin_key()
    (failed,) = done.stderr.splitlines()
    assert failed.startswith(f"session-workflow: cannot install {WHAT} (ERROR: ")
    # The venv has no pip: its base interpreter's pip ran, told this interpreter's version.
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    command = manual_command(["PIP"], str(target), None, version).replace("PIP ", " -m pip ", 1)
    assert failed.endswith(command) and f"retry: {fresh.python} " not in failed
    assert not (project / ".claude").exists()
    # The hooks never need the two packages: a SessionStart on a project with an anchor still injects it.
    anchors = project / ".claude" / "anchors"
    anchors.mkdir(parents=True)
    (anchors / "2026-12-01-offline.md").write_text("# Mission\nStay offline.\n\n## Cursor\n- Next action: wait\n")
    registry.vouch(env, str(anchors / "2026-12-01-offline.md"), None, "adopt", 0.0)  # adopted (here, by this test)
    payload = {"session_id": str(uuid.uuid4()), "cwd": str(project), "hook_event_name": "SessionStart"}
    hook = [str(fresh.python), "-I", "-S", str(REPO / "hooks" / "hook.py"), "SessionStart"]
    ran = fresh.run(hook, env, json.dumps({**payload, "source": "compact"}))
    assert ran.returncode == 0 and ran.stderr == ""
    assert "## Control anchor: " in json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_demo_of_an_installed_copy_runs_the_packaged_hook(fresh: Fresh, wheels: Path) -> None:
    """``pipx install`` leaves the package without hooks/: the demo runs the hook's ``main`` from the package."""
    site = fresh.root / "site"
    shutil.copytree(REPO / "src" / "session_workflow", site / "session_workflow")
    env = fresh.env(PYTHONPATH=str(site), SESSION_WORKFLOW_WHEELS=str(wheels))
    done = fresh.run([str(fresh.python), "-m", "session_workflow", "demo"], env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith(INSTALLING) and done.stderr.count("\n") == 1
    assert done.stdout.startswith("(an installed copy: the hook runs from the installed package")
    assert done.stdout.count(" of 10000 UTF-16 units =====") == 2 and "(nothing)" not in done.stdout
    version = fresh.run([str(fresh.python), "-m", "session_workflow", "--version"], env)
    assert (version.returncode, version.stdout) == (0, "session-workflow 0.1.0\n")


def test_doctor_runs_before_the_first_use_install_and_does_not_start_it(fresh: Fresh, wheels: Path) -> None:
    """As the Bash tool runs it, on the pip-less venv: exit 0 (its base interpreter's pip is the way to the two
    packages), the dependency line says what the first write will do, and nothing is installed."""
    config, project, env = fresh.bash_tool(wheels)
    done = fresh.run(["session-workflow", "doctor"], env, cwd=project)  # the Bash tool: no CLAUDE_PROJECT_DIR
    assert (done.returncode, done.stderr) == (0, ""), done.stdout
    target = config / "plugins" / "data" / "session-workflow-inline" / "python-deps" / pin_key()
    lines = done.stdout.splitlines()
    assert lines[0] == f"session-workflow doctor: plugin {REPO}, project {project}"
    assert lines[1] == f"✔ python3 for the hooks: {fresh.python}, Python {sys.version.split()[0]}"
    # The venv has no pip: the one named is its base interpreter's, as the install would use.
    head, pip = "· writers' dependencies: not installed yet; the first write has ", f" install {WHAT} from {wheels}"
    assert lines[2].startswith(head) and lines[2].endswith(f" -m pip{pip} into {target}"), lines[2]
    assert f"{head}{fresh.python} " not in lines[2]
    assert f"✔ session-workflow on PATH: {REPO / 'bin' / 'session-workflow'} (this plugin's)" in lines
    assert lines[-1].startswith("nothing essential is missing")
    assert not config.exists() and not (fresh.home / ".local").exists() and not (project / ".claude").exists()
    # And the install still happens at the first write, as before.
    wrote = fresh.run(["session-workflow", "anchor", "new", "--task", "After the doctor"], env)
    assert wrote.returncode == 0 and wrote.stderr.startswith(INSTALLING), wrote.stderr
