"""The vendored dependency: the tree is its lock, the lock is the pins of ``tools/vendor.py``, the published
wheels still unpack to it (less what is left out, which nothing kept imports), each supported Python gets its set
(``core.deps``) and its locks run cold."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from session_workflow.core import deps
from tools import vendor

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[1]


def test_the_tree_is_its_lock_and_the_lock_the_pins() -> None:
    assert vendor.problems(str(REPO / "vendor")) == []


@pytest.fixture()
def copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "vendor", tmp_path / "vendor", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path / "vendor"


def test_a_changed_file_is_named(copy: Path) -> None:
    target = copy / "py39" / "filelock" / "_api.py"
    target.write_bytes(target.read_bytes() + b"\n")
    assert vendor.problems(str(copy)) == ["py39/filelock/_api.py: differs from the lock"]


def test_an_added_or_removed_file_is_named(copy: Path) -> None:
    (copy / "py311" / "filelock" / "extra.py").write_text("")
    (copy / "py311" / "filelock.LICENSE").unlink()
    assert vendor.problems(str(copy)) == [
        "py311/filelock/extra.py: not in the lock",
        "py311/filelock.LICENSE: in the lock, missing",
    ]


def test_a_lock_that_pins_another_wheel_is_named(copy: Path) -> None:
    lock = json.loads((copy / "lock.json").read_text())
    lock["py311"]["wheels"]["filelock"]["sha256"] = "0" * 64
    (copy / "lock.json").write_text(json.dumps(lock))
    assert vendor.problems(str(copy)) == [
        "lock.json: py311 does not pin what tools/vendor.py pins; run python tools/vendor.py"
    ]


def test_every_set_carries_its_license_files() -> None:
    for oldest, pins in vendor.SETS:
        for name, _version, _digest, _left_out in pins:
            assert (REPO / "vendor" / vendor.folder_of(oldest) / f"{name}.LICENSE").read_text().strip()


def test_the_published_wheels_unpack_to_the_tree(wheels: Path) -> None:
    """The wheels pip downloads (hash-checked against the pins) give exactly the vendored files."""
    for entry in vendor.SETS:
        tree = vendor.tree_of(entry, vendor.download(entry, str(wheels)))
        folder = REPO / "vendor" / vendor.folder_of(entry[0])
        on_disk = {
            path.relative_to(folder).as_posix()
            for path in folder.rglob("*")
            if path.is_file() and "__pycache__" not in path.parts
        }
        assert on_disk == set(tree), folder
        assert all((folder / path).read_bytes() == data for path, data in tree.items()), folder


def test_only_what_runs_is_vendored() -> None:
    """The writers import filelock (``core.atomic``, where there is no flock) and nothing else: platformdirs is
    the tests' oracle for the state folder (tests/core/test_locations.py), never shipped."""
    assert {pin[0] for _oldest, pins in vendor.SETS for pin in pins} == {"filelock"}
    assert sorted(path.name for path in (REPO / "vendor").iterdir()) == ["lock.json", "py311", "py39"]


def imported_modules(path: Path, package: str) -> Iterator[str]:
    """The absolute names of the modules ``path`` (module ``package``'s own file) imports at run time: every
    import but those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_bytes())
    skipped = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for statement in block.body
        for node in ast.walk(statement)
    }
    base = package if path.name == "__init__.py" else package.rpartition(".")[0]
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = base.split(".")
            origin = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (origin, node.module or "") if part)
            yield module
            yield from (f"{module}.{alias.name}" for alias in node.names)


def lazy_names(path: Path, package: str) -> dict[str, str]:
    """A package ``__init__``'s lazy table (a name -> ``.module`` dict its ``__getattr__`` imports from): each
    ``package.name`` and the module it comes from."""
    tree = ast.parse(path.read_bytes())
    return {
        f"{package}.{key.value}": package + value.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values)
        if isinstance(key, ast.Constant)
        and isinstance(key.value, str)
        and isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and value.value.startswith(".")
    }


def test_no_kept_module_imports_a_left_out_one() -> None:
    """What is left out of a package is what no kept module imports (outside annotations), directly or through
    the package's lazy tables, on any platform: those tables name it only for callers that ask for it by name
    (FileLock never does)."""
    for oldest, pins in vendor.SETS:
        folder = REPO / "vendor" / vendor.folder_of(oldest)
        for name, _version, _digest, left_out in pins:
            gone = tuple(f"{name}.{path.rstrip('/').removesuffix('.py').replace('/', '.')}" for path in left_out)
            modules = {
                path: ".".join(path.relative_to(folder).with_suffix("").parts).removesuffix(".__init__")
                for path in (folder / name).rglob("*.py")
            }
            lazy = {k: v for p, m in modules.items() if p.name == "__init__.py" for k, v in lazy_names(p, m).items()}
            assert any(target.startswith(gone) for target in lazy.values()) == bool(left_out)
            for path, module in modules.items():
                targets = [lazy.get(target, target) for target in imported_modules(path, module)]
                reached = [
                    target for target in targets if target in gone or target.startswith(tuple(f"{g}." for g in gone))
                ]
                assert reached == [], path
            assert not [path for path in left_out if (folder / name / path).exists()]


@pytest.mark.parametrize("version", [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13)])
def test_each_supported_python_gets_its_set(version: tuple[int, int]) -> None:
    """``core.deps`` reads the sets from the folders' names; they are the sets of ``tools/vendor.py``: the newest
    whose oldest Python is not newer than this one."""
    oldest = max(entry[0] for entry in vendor.SETS if entry[0] <= version)
    assert deps.vendored_dir(version) == str(REPO / "vendor" / vendor.folder_of(oldest))


def test_the_sets_are_read_from_the_folders_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("py39", "py310", "py312", "py3", "pyx", "lock.json"):
        (tmp_path / "vendor" / name).mkdir(parents=True)
    monkeypatch.setattr(deps, "PLUGIN_ROOT", str(tmp_path))
    expected = {(3, 8): None, (3, 9): "py39", (3, 11): "py310", (3, 12): "py312", (3, 14): "py312"}
    for version, folder in expected.items():
        assert deps.vendored_dir(version) == (None if folder is None else str(tmp_path / "vendor" / folder))


# This interpreter and the other CPython 3.9+ the machine has (pyenv's; CI's tox envs run this on each).
PYTHONS = sorted(
    {
        sys.executable,
        *(
            str(found)
            for minor in range(9, 14)
            for found in (Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions").glob(
                f"3.{minor}.*/bin/python3.{minor}"
            )
        ),
    }
)
COLD = (
    "import sys; sys.path.insert(0, {src!r}); from session_workflow.core.deps import add_vendored; add_vendored();"
    " import filelock, os, tempfile; from filelock import FileLock, SoftFileLock, WindowsFileLock;"
    " folder = tempfile.mkdtemp(); [lock(os.path.join(folder, lock.__name__)).acquire(timeout=5).lock.release() for"
    " lock in (FileLock, SoftFileLock)]; print(sys.version_info[0], sys.version_info[1], filelock.__version__,"
    " filelock.__file__, sep='\\n')"
)


@pytest.mark.parametrize("python", PYTHONS)
def test_each_python_imports_its_pinned_set_cold(python: str) -> None:
    """``-I -S``, as the hooks run: nothing but the vendored copy can provide filelock, and its locks work (the
    flock one, and the soft one of a POSIX without flock: what is left out of the package is not needed)."""
    code = COLD.format(src=str(REPO / "src"))
    done = subprocess.run([python, "-I", "-S", "-B", "-c", code], capture_output=True, text=True, timeout=60)
    major, minor, imported, where = done.stdout.rstrip("\n").split("\n")  # a line each: the path may hold spaces
    oldest, pins = next(entry for entry in vendor.SETS if (int(major), int(minor)) >= entry[0])
    assert [imported] == [pin[1] for pin in pins], done.stderr
    assert where.startswith(str(REPO / "vendor" / vendor.folder_of(oldest)) + os.sep)


def test_an_installed_wheel_has_no_vendored_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deps, "PLUGIN_ROOT", str(tmp_path))  # site-packages/.. : no vendor/ folder
    before = list(sys.path)
    assert deps.vendored_dir() is None and deps.add_vendored() is None
    assert sys.path == before
