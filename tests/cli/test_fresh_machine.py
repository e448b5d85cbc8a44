"""What a newcomer sees on a machine with no network: the README's commands on a python3 that has no filelock (nor
platformdirs, nor pip).

The interpreter is a venv made ``--without-pip``, run with ``PYTHONNOUSERSITE=1``, a throwaway HOME and no package
index (``PIP_INDEX_URL`` and every proxy a closed loopback port, no ``PIP_FIND_LINKS``, no pip configuration): the
writers import the plugin folder's vendored copy, nothing is installed or downloaded, and nothing is written but
the project's ``.claude/`` and the user's state folder (which holds the plugin's bytecode too).
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
from session_workflow.core import deps
from session_workflow.core.places import Places

REPO = Path(__file__).resolve().parents[2]
BIN = REPO / "bin" / "session-workflow"
CLOSED = "http://127.0.0.1:9"  # the discard port: every connection is refused, as without a network
# No index, no pip configuration (so no find-links), no PIP_FIND_LINKS (the sandboxes keep no PIP_* variable).
OFFLINE_INDEX = {"PIP_INDEX_URL": f"{CLOSED}/simple", "PIP_CONFIG_FILE": os.devnull}
OFFLINE = {**OFFLINE_INDEX, **{name: CLOSED for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy")}}


def vendored_line() -> str:
    """The doctor's dependency line for the real CLI on this interpreter: the vendored copy, by name."""
    folder = deps.vendored_dir()
    assert folder is not None
    code = f"import sys; sys.path.insert(0, {folder!r}); import filelock; print(filelock.__version__)"
    done = subprocess.run([sys.executable, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, check=True)
    return f"✔ writers' dependency: filelock {done.stdout.strip()}, vendored in {folder}"


def files_under(*folders: Path) -> set[Path]:
    return {path for folder in folders if folder.exists() for path in folder.rglob("*") if not path.is_dir()}


class Fresh:
    """A pip-less venv without filelock and platformdirs, a throwaway HOME, no index, and how to run things there."""

    def __init__(self, root: Path, venv: Path) -> None:
        self.root = root
        self.venv = venv
        self.python = venv / "bin" / "python3"
        self.home = root / "home"
        self.home.mkdir()
        self.state = self.home / ".local" / "state" / "session-workflow"
        self.project = root / "project"
        self.project.mkdir()

    def env(self, **extra: str) -> dict[str, str]:
        keep = ("LANG", "LC_ALL", "TZ", "SYSTEMROOT")
        env = {k: v for k, v in os.environ.items() if k in keep}
        path = os.pathsep.join([str(self.venv / "bin"), os.environ.get("PATH", "")])
        return {**env, **OFFLINE, "PATH": path, "HOME": str(self.home), "PYTHONNOUSERSITE": "1", **extra}

    def bash_tool(self) -> tuple[Path, dict[str, str]]:
        """(config dir, environment) as Claude Code's Bash tool has them: the plugin's bin/ first on PATH,
        CLAUDECODE and a session id, no CLAUDE_PROJECT_DIR."""
        config = self.root / "config"
        env = self.env(
            PATH=os.pathsep.join([str(REPO / "bin"), self.env()["PATH"]]),
            CLAUDECODE="1",
            CLAUDE_CONFIG_DIR=str(config),
            CLAUDE_CODE_SESSION_ID=str(uuid.uuid4()),
        )
        return config, env

    def run(
        self, argv: list[str], env: dict[str, str], stdin: str = "", cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd or self.root, timeout=300, check=False
        )

    def written(self) -> set[Path]:
        """Every file in the sandbox outside the state folder and the project's ``.claude/``."""
        allowed = files_under(self.state, self.project / ".claude")
        return files_under(self.root) - allowed - files_under(self.venv)


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


def plugin_bytecode_folders() -> set[str]:
    return {str(path) for path in REPO.rglob("__pycache__") if ".git" not in path.parts}


def test_the_demo_shows_both_injections_offline(fresh: Fresh) -> None:
    before = plugin_bytecode_folders()
    done = fresh.run([str(fresh.python), str(BIN), "demo"], fresh.env())
    assert (done.returncode, done.stderr) == (0, "")
    for source in ("startup", "compact"):
        assert f"===== SessionStart ({source}): what Claude Code would inject =====" in done.stdout
    assert done.stdout.count(" of 10000 UTF-16 units =====") == 2
    assert "(nothing)" not in done.stdout
    assert "## Control anchor: " in done.stdout and "Port the invoice writer to LedgerClient" in done.stdout
    assert fresh.written() == set() and plugin_bytecode_folders() == before


def test_a_writer_from_claude_codes_bash_tool_needs_no_install(fresh: Fresh) -> None:
    """As the Bash tool runs it: by name on PATH (the plugin's bin/), its first line running the fresh python3, in
    the project (the Bash tool has no CLAUDE_PROJECT_DIR)."""
    config, env = fresh.bash_tool()
    done = fresh.run(["session-workflow", "anchor", "new", "--task", "Fresh machine"], env, cwd=fresh.project)
    assert (done.returncode, done.stderr) == (0, "")
    anchor = Path(done.stdout.strip())
    assert anchor.parent == fresh.project / ".claude" / "anchors" and anchor.is_file()
    step = fresh.run(["session-workflow", "anchor", "step", str(anchor), "first step"], env, cwd=fresh.project)
    assert (step.returncode, step.stderr) == (0, "")
    assert registry.Registry(Places({"HOME": str(fresh.home)})).is_ours(str(anchor))
    assert fresh.written() == set() and not config.exists()


def test_doctor_names_the_same_vendored_copy_from_a_terminal_and_the_bash_tool(fresh: Fresh) -> None:
    _config, bash_env = fresh.bash_tool()
    terminal = fresh.run([str(fresh.python), str(BIN), "doctor"], fresh.env(), cwd=fresh.project)
    bash = fresh.run(["session-workflow", "doctor"], bash_env, cwd=fresh.project)
    # The Bash tool's shell has this copy loaded (--plugin-dir); the terminal's machine has it nowhere installed,
    # which is the one essential failure there.
    for done, code in ((terminal, 1), (bash, 0)):
        assert (done.returncode, done.stderr) == (code, ""), done.stdout
        lines = done.stdout.splitlines()
        assert lines[0] == f"session-workflow doctor: plugin {REPO}, project {fresh.project}"
        assert lines[2] == vendored_line()
        missing = "✘ Claude Code plugin: session-workflow is not installed"
        essential = [line for line in lines if line.startswith(missing)]
        assert len(essential) == code and lines[-1].startswith("nothing essential" if code == 0 else "1 essential")
    assert fresh.written() == set()


def test_the_hooks_need_neither_package(fresh: Fresh) -> None:
    """A SessionStart on a project with an adopted anchor injects it, on the same bare interpreter."""
    anchors = fresh.project / ".claude" / "anchors"
    anchors.mkdir(parents=True)
    (anchors / "2026-12-01-offline.md").write_text("# Mission\nStay offline.\n\n## Cursor\n- Next action: wait\n")
    env = fresh.env(CLAUDE_PROJECT_DIR=str(fresh.project))
    registry.Registry(Places(env)).vouch(
        str(anchors / "2026-12-01-offline.md"), None, "adopt", 0.0
    )  # adopted (here, by this test)
    payload = {"session_id": str(uuid.uuid4()), "cwd": str(fresh.project), "hook_event_name": "SessionStart"}
    hook = [str(fresh.python), "-I", "-S", str(REPO / "hooks" / "hook.py"), "SessionStart"]
    ran = fresh.run(hook, env, json.dumps({**payload, "source": "compact"}))
    assert ran.returncode == 0 and ran.stderr == ""
    assert "## Control anchor: " in json.loads(ran.stdout)["hookSpecificOutput"]["additionalContext"]


def test_an_installed_copy_uses_the_packages_it_declares(fresh: Fresh) -> None:
    """``pipx install`` leaves the package without hooks/ and vendor/, with filelock installed beside it (here:
    copied as pip would): the demo runs the hook's ``main`` from the package, and the doctor names the site folder,
    not a vendored copy; without it the doctor gives pip's command, and the writers still run (flock)."""
    site = fresh.root / "site"
    shutil.copytree(REPO / "src" / "session_workflow", site / "session_workflow")
    vendored = deps.vendored_dir()
    assert vendored is not None
    shutil.copytree(Path(vendored) / "filelock", site / "filelock")
    env = fresh.env(PYTHONPATH=str(site), PYTHONDONTWRITEBYTECODE="1")
    done = fresh.run([str(fresh.python), "-m", "session_workflow", "demo"], env)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("(an installed copy: the hook runs from the installed package")
    assert done.stdout.count(" of 10000 UTF-16 units =====") == 2 and "(nothing)" not in done.stdout
    doctor = fresh.run([str(fresh.python), "-m", "session_workflow", "doctor"], env, cwd=fresh.project)
    assert vendored_line().replace(", vendored in " + vendored, f", from {site}") in doctor.stdout.splitlines()
    bare = fresh.root / "bare-site"  # the declared dependencies missing: the package never reaches for vendor/
    shutil.copytree(REPO / "src" / "session_workflow", bare / "session_workflow")
    env = fresh.env(PYTHONPATH=str(bare), PYTHONDONTWRITEBYTECODE="1")
    missing = fresh.run([str(fresh.python), "-m", "session_workflow", "doctor"], env, cwd=fresh.project)
    # Not essential where flock is (the writers run): the same essential count as with filelock installed.
    assert (missing.returncode, missing.stdout.splitlines()[-1]) == (doctor.returncode, doctor.stdout.splitlines()[-1])
    assert f"  fix: `{fresh.python} -m pip install filelock`" in missing.stdout.splitlines()


def compiled_from_source(stderr: str) -> list[str]:
    """The modules ``python -v`` says it compiled from source although their own ``__pycache__`` held bytecode."""
    import importlib.util

    found = []
    for line in stderr.splitlines():
        if line.startswith("# code object from ") and not line.endswith(".pyc'"):
            source = line[len("# code object from ") :]
            if os.path.isfile(importlib.util.cache_from_source(source)) or source.startswith(str(REPO)):
                found.append(source)
    return found


@pytest.mark.parametrize("flags", [["-I"], [], ["-B"]], ids=["isolated", "plain", "dont-write-bytecode"])
def test_no_call_compiles_the_standard_library_and_the_plugin_only_once(
    fresh: Fresh, flags: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With or without bytecode writing (``-B`` is PYTHONDONTWRITEBYTECODE): the standard library's own
    ``__pycache__`` is read on the first call already, the plugin's modules are compiled once into the user's state
    folder, and no bytecode lands in the plugin folder or the project."""
    before = plugin_bytecode_folders()
    _config, env = fresh.bash_tool()
    cli = [str(fresh.python), *flags, "-v", str(BIN), "state"]
    first = fresh.run([*cli, "set", "--ticket", "1", "--title", "T", "--map", "1"], env, cwd=fresh.project)
    assert first.returncode == 0, first.stderr[-2000:]
    compiled = compiled_from_source(first.stderr)
    assert compiled and all(path.startswith(str(REPO) + os.sep) for path in compiled)
    again = fresh.run([*cli, "step", "execute"], env, cwd=fresh.project)
    # The three small modules that judge the bytecode folder (its chain, as the trust folder's) are
    # compiled on every call: before the judgement no bytecode is read from that folder.
    judging = [str(REPO / "src" / "session_workflow" / name) for name in ("__init__.py", "core/__init__.py")]
    judging.append(str(REPO / "src" / "session_workflow" / "core" / "folders.py"))
    assert again.returncode == 0 and compiled_from_source(again.stderr) == judging
    prefix = Path(Places({"HOME": str(fresh.home)}).state or "") / "pycache"
    cached = files_under(prefix)
    assert cached and all(str(path).startswith(str(prefix) + str(REPO)) for path in cached)
    assert fresh.written() == set() and plugin_bytecode_folders() == before
    assert not any(path.name == "__pycache__" for path in fresh.project.rglob("*"))


def test_the_vendored_copy_wins_over_an_installed_one(tmp_path: Path) -> None:
    """From the plugin folder the tested copy always goes first, even on an interpreter whose site-packages hold
    other releases (this one's: the package's declared dependencies)."""
    pytest.importorskip("filelock")
    env = {"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")}
    done = subprocess.run([sys.executable, str(BIN), "doctor"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert done.stdout.splitlines()[2] == vendored_line(), done.stdout


def test_an_installed_session_workflow_never_shadows_the_plugins(tmp_path: Path) -> None:
    """An interpreter whose site-packages hold another ``session_workflow`` (an old ``pip install``) still runs
    the plugin folder's own code from ``bin/session-workflow``: the installed one is never imported."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python3"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    marker = tmp_path / "installed-copy-ran"
    planted = Path(site) / "session_workflow"
    planted.mkdir()
    (planted / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n__version__ = '0.0.0'\n")
    env = {"HOME": str(tmp_path / "home"), "PATH": os.pathsep.join([str(venv / "bin"), os.environ.get("PATH", "")])}
    for args in (["--version"], ["doctor"]):
        done = subprocess.run(
            [str(python), str(BIN), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
        )
        assert not marker.exists(), (args, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, done.stderr
    version = subprocess.run([str(python), str(BIN), "--version"], env=env, capture_output=True, text=True, check=True)
    from session_workflow import __version__

    assert version.stdout.strip() == f"session-workflow {__version__}" != "session-workflow 0.0.0"


def test_a_relative_xdg_state_home_never_takes_the_clis_bytecode(tmp_path: Path) -> None:
    """A relative ``XDG_STATE_HOME`` (which a project's folder would resolve) is ignored, as the state folder's
    rule ignores it: the plugin's bytecode goes under HOME's state folder, nothing into the working directory."""
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    env = {"HOME": str(home), "XDG_STATE_HOME": "state", "PATH": os.environ.get("PATH", "")}
    done = subprocess.run(
        [sys.executable, str(BIN), "--version"], env=env, cwd=work, capture_output=True, text=True, timeout=120
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert sorted(work.iterdir()) == []
    assert list((home / ".local" / "state" / "session-workflow" / "pycache").rglob("*.pyc"))
