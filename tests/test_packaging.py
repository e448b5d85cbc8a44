"""Packaging: one version everywhere, a build without warnings, an sdist without the tests, and a plugin folder
that holds only the plugin after the developer commands ran in it.

A marketplace install copies the plugin folder whole, ignored files included, so no command the README names (the
demo; ``bash .ci/run``, which runs tox: ruff, mypy, pytest with hypothesis, the wheel build) may leave a file
in it: the tools' caches go to the dev cache (tox.ini, pyproject.toml, tests/conftest.py), bytecode to the
plugin's data folder or the user's cache (the hook shims and ``bin/session-workflow`` set ``sys.pycache_prefix``),
the build runs in a copy (the build backend, ``tools/backend/``). Each command runs here in a git copy of the
tracked files, whose ``git status --ignored`` must stay empty. The build needs ``build`` (the test extras) and
pip's ``setuptools>=77``.
"""

from __future__ import annotations

import email.parser
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from tools.checkout import checkout_files, copy_checkout

import session_workflow

REPO = Path(__file__).resolve().parents[1]
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "-c", "commit.gpgsign=false"]


def tracked() -> list[str]:
    names = checkout_files(str(REPO), others=False)
    assert names is not None, f"{REPO} is no git checkout"
    return names


def checkout(tmp_path: Path) -> Path:
    """A git repository of the tracked files (as they are in the work tree), committed."""
    copy = tmp_path / "checkout"
    copy_checkout(str(REPO), str(copy), others=False)
    subprocess.run([*GIT, "init", "-q", str(copy)], check=True)
    subprocess.run([*GIT, "-C", str(copy), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(copy), "commit", "-q", "-m", "copy"], check=True)
    return copy


def left_behind(copy: Path) -> list[str]:
    """Every file in ``copy`` that git does not track, ignored ones included (what an install would copy extra)."""
    args = ["status", "--ignored", "--porcelain", "--untracked-files=all"]
    return subprocess.run(["git", "-C", str(copy), *args], capture_output=True, text=True, check=True).stdout.split()


def a_newcomers_env(**extra: str) -> dict[str, str]:
    """The environment without this runner's bytecode switch: a newcomer's shell writes bytecode."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def manifest() -> dict[str, object]:
    loaded: dict[str, object] = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    return loaded


def test_the_package_holds_the_one_version_the_manifests_state() -> None:
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert 'version = {attr = "session_workflow.__version__"}' in pyproject
    project = pyproject.split("\n[project]\n", 1)[1].split("\n[", 1)[0]
    assert 'dynamic = ["version"]' in project and not re.search(r"^version\s*=", project, re.MULTILINE)
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    listed = [plugin["version"] for plugin in market["plugins"] if plugin["name"] == "session-workflow"]
    assert manifest()["version"] == session_workflow.__version__
    assert listed == [session_workflow.__version__]


def test_the_build_warns_nothing_writes_nothing_here_and_ships_no_tests(tmp_path: Path) -> None:
    pytest.importorskip("build")
    copy, dist = checkout(tmp_path), tmp_path / "dist"
    # setuptools' deprecations are UserWarnings: as errors they fail the build (pip's own warnings stay warnings).
    env = a_newcomers_env(PYTHONWARNINGS="error::UserWarning")
    command = [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), "."]  # as a user types it
    done = subprocess.run(command, cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log[-4000:]
    assert not re.findall(r".*(?:warning|deprecat).*", log, re.IGNORECASE)
    assert left_behind(copy) == []
    version = session_workflow.__version__
    assert sorted(path.name for path in dist.iterdir()) == [
        f"session_workflow-{version}-py3-none-any.whl",
        f"session_workflow-{version}.tar.gz",
    ]

    with tarfile.open(dist / f"session_workflow-{version}.tar.gz") as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    files = {name for name in names if not name.startswith("src/session_workflow.egg-info/")}
    made = {"PKG-INFO", "setup.cfg", "src", "src/session_workflow", "src/session_workflow.egg-info"}
    folders = {str(Path(name).parent) for name in tracked() if name.startswith("src/")} - {"src"}
    expected = {name for name in tracked() if name.startswith("src/")} | folders | made
    metadata_files = {"LICENSE", "MANIFEST.in", "README.md", "pyproject.toml", "references/python-package.md"}
    backend = {"tools/backend/build_in_copy.py"}  # pyproject's backend-path: a wheel builds from the sdist
    assert files - {"references", "tools", "tools/backend"} == expected | metadata_files | backend  # no tests/

    with zipfile.ZipFile(dist / f"session_workflow-{version}-py3-none-any.whl") as wheel:
        metadata = email.parser.Parser().parsestr(wheel.read(f"session_workflow-{version}.dist-info/METADATA").decode())
        assert f"session_workflow-{version}.dist-info/licenses/LICENSE" in wheel.namelist()
        # The plugin folder's vendored copy stays there: an installed wheel declares filelock instead.
        assert all(name.startswith("session_workflow") for name in wheel.namelist())
    required = [line for line in metadata.get_all("Requires-Dist") or [] if "extra ==" not in line]
    assert required == ["filelock>=3.12"]
    assert (metadata["Version"], metadata["License-Expression"], metadata["Requires-Python"]) == (
        version,
        "MIT",
        ">=3.9",
    )
    assert metadata.get_all("License-File") == ["LICENSE"]
    # The wheel's long description stands on its own: every link absolute, no step that needs the plugin folder.
    description = metadata.get_payload()
    assert isinstance(description, str)
    assert description == (REPO / "references" / "python-package.md").read_text(encoding="utf-8")
    assert metadata["Description-Content-Type"] == "text/markdown"
    links = re.findall(r"\]\(([^)]*)\)", description)
    assert links and [link for link in links if not link.startswith("https://")] == []
    assert not re.search(r"claude plugin|--plugin-dir|/path/to/", description)
    classifiers = metadata.get_all("Classifier") or []
    assert not [line for line in classifiers if line.startswith("License ::")]
    python = [line for line in classifiers if line.startswith("Programming Language :: Python :: 3")]
    assert python == ["Programming Language :: Python :: 3", "Programming Language :: Python :: 3 :: Only"] + [
        f"Programming Language :: Python :: 3.{minor}" for minor in (9, 10, 11, 12, 13)
    ]
    repository = manifest()["repository"]
    assert metadata.get_all("Project-URL") == [
        f"Homepage, {repository}",
        f"Source, {repository}",
        f"Issues, {repository}/issues",
    ]


def demo() -> tuple[list[str], dict[str, str]]:
    return [sys.executable, "bin/session-workflow", "demo"], {}


def unit_tests() -> tuple[list[str], dict[str, str]]:
    """Hypothesis's examples, pytest's cache, the bytecode of the ``-I -S`` hook subprocesses (which ignore the
    PYTHONDONTWRITEBYTECODE that tox sets, as here, for the test modules)."""
    files = ["tests/core/test_text.py", "tests/hook/test_prompt_submit.py"]
    return [sys.executable, "-m", "pytest", "-q", "-x", *files], {"PYTHONDONTWRITEBYTECODE": "1"}


def ruff() -> tuple[list[str], dict[str, str]]:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed here (tox's lint env has it)")
    return [sys.executable, "-m", "ruff", "check", "--quiet", "src", "hooks", "tests", "tools"], {}


def mypy() -> tuple[list[str], dict[str, str]]:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed here (tox's type env has it)")
    # One small module (its cache is written all the same; a cold run of the whole tree takes a minute), checked
    # for this interpreter's version, which any installed mypy supports.
    return [sys.executable, "-m", "mypy", "--python-version", f"3.{sys.version_info[1]}", "tools/checkout.py"], {}


@pytest.mark.parametrize("command", [demo, unit_tests, ruff, mypy])
def test_a_developer_command_leaves_nothing_in_the_plugin_folder(
    command: Callable[[], tuple[list[str], dict[str, str]]], tmp_path: Path
) -> None:
    argv, tox_env = command()
    copy = checkout(tmp_path)
    env = a_newcomers_env(**tox_env)
    done = subprocess.run(argv, cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert left_behind(copy) == []


@pytest.mark.parametrize("event", ["SessionStart", "PreCompact", "UserPromptSubmit", "PreToolUse", "PostToolUse"])
def test_a_hook_writes_bytecode_only_in_the_plugin_data_folder(event: str, tmp_path: Path) -> None:
    copy, data, project = checkout(tmp_path), tmp_path / "data", tmp_path / "project"
    project.mkdir()
    data.mkdir()  # Claude Code makes it
    argv = [sys.executable, "-I", "-S", str(copy / "hooks" / "hook.py"), event]
    payload = json.dumps({"session_id": "s", "cwd": str(project), "hook_event_name": "SessionStart"})
    inside = {"CLAUDE_PLUGIN_DATA": str(project / "data")}  # a folder the repository could fill: none written
    for env in ({"CLAUDE_PLUGIN_DATA": str(data)}, {}, inside):
        env.update(PATH=os.environ.get("PATH", ""), HOME=str(tmp_path / "home"))
        subprocess.run(argv, input=payload, cwd=project, env=env, capture_output=True, text=True, timeout=60)
        assert left_behind(copy) == []
    assert not list(project.rglob("*.pyc"))
    cached = [str(path.relative_to(data)) for path in data.rglob("*.pyc")]
    assert any(path.startswith(f"pycache{copy}/src/session_workflow/") for path in cached)  # for the next start
    assert not list((tmp_path / "home").rglob("*.pyc"))
