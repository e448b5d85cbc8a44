"""SessionStart's and PreCompact's modules from one file per event (``core.bytecode``): served from it on the next
run, checked as a .pyc is, and any damage read as no file. Each case runs the real entry cold on a copy of the
plugin (hooks/ and src/), whose sources a test edits; ``python -v`` says which loader each module came from."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


class Plugin:
    """A copy of the plugin (hooks/ and src/, whose sources a test edits) run cold on a populated sandbox."""

    def __init__(self, tmp_path: Path) -> None:
        from tests.reliability.sandbox import Sandbox

        self.root = tmp_path / "plugin"
        for part in ("hooks", "src"):
            shutil.copytree(REPO / part, self.root / part, ignore=shutil.ignore_patterns("__pycache__"))
        self.box = Sandbox(str(tmp_path / "box"))
        self.box.populate()

    def run(
        self, event: str = "PreCompact", verbose: bool = False, timeout: float = 60
    ) -> subprocess.CompletedProcess[bytes]:
        payload = json.dumps(self.box.payload(event, source="compact" if event == "SessionStart" else None))
        done = subprocess.run(
            [sys.executable, "-I", "-S", *(["-v"] if verbose else []), str(self.root / "hooks" / "hook.py"), event],
            input=payload.encode(),
            env=self.box.env(CLAUDE_PLUGIN_ROOT=str(self.root)),
            cwd=self.box.project,
            capture_output=True,
            timeout=timeout,
        )
        assert done.returncode == 0 and done.stdout, done.stderr[-3000:]
        return done

    def bundles(self) -> list[Path]:
        return sorted(Path(self.box.plugin_data).rglob("*.bundle"))

    def errors(self) -> bool:
        """Whether the error log holds anything."""
        from session_workflow.core.places import Places

        log = Places(self.box.env(CLAUDE_PLUGIN_ROOT=str(self.root))).error_log
        return log is not None and os.path.exists(log)


def served(stderr: bytes) -> dict[str, str]:
    """The package's modules a ``-v`` run imported, each with its loader: ``bundle`` or ``standard``."""
    found = {}
    for line in stderr.decode("utf-8", "replace").splitlines():
        if line.startswith("import 'session_workflow") and " # " in line:
            name = line.split("'")[1]
            found[name] = "bundle" if "bytecode.Bundle object" in line else "standard"
    return found


# What hook.py imports before it can put the bundle first (the packages, the module itself and its reader).
BEFORE_THE_BUNDLE = {
    "session_workflow",
    "session_workflow.core",
    "session_workflow.core.bytecode",
    "session_workflow.core.boundedio",
}


@pytest.mark.parametrize("event", ["SessionStart", "PreCompact"])
def test_a_second_run_imports_the_events_modules_from_its_file(tmp_path: Path, event: str) -> None:
    plugin = Plugin(tmp_path)
    first = plugin.run(event, verbose=True)
    assert set(served(first.stderr).values()) == {"standard"}
    (bundle,) = plugin.bundles()
    assert bundle.name == f"{event}.{sys.implementation.cache_tag}.bundle"
    assert str(bundle).startswith(str(Path(plugin.box.plugin_data).resolve() / "pycache"))
    assert bundle.stat().st_mode & 0o777 == 0o600
    second = plugin.run(event, verbose=True)
    loaders = served(second.stderr)
    assert len(loaders) > 20 and {name for name, how in loaders.items() if how == "standard"} == BEFORE_THE_BUNDLE
    assert second.stdout == plugin.run(event).stdout  # the same block as a run that printed no import lines
    assert plugin.bundles() == [bundle] and not plugin.errors()


def test_the_other_events_keep_no_file(tmp_path: Path) -> None:
    plugin = Plugin(tmp_path)
    plugin.box.write(os.path.join(plugin.box.state_dir(), "work-state.json"), b"")  # UserPromptSubmit has work
    for event in ("UserPromptSubmit", "PreToolUse"):
        payload = plugin.box.payload(event, source=None, prompt="go", tool_name="Edit", tool_input={"file_path": "x"})
        subprocess.run(
            [sys.executable, "-I", "-S", str(plugin.root / "hooks" / "hook.py"), event],
            input=json.dumps(payload).encode(),
            env=plugin.box.env(CLAUDE_PLUGIN_ROOT=str(plugin.root)),
            cwd=plugin.box.project,
            capture_output=True,
            timeout=60,
            check=True,
        )
    assert plugin.bundles() == [] and list(Path(plugin.box.plugin_data).rglob("*.pyc"))


def test_an_edited_source_is_run_as_edited_and_its_code_kept_in_the_file(tmp_path: Path) -> None:
    plugin = Plugin(tmp_path)
    before = plugin.run().stdout
    plugin.run()
    source = plugin.root / "src" / "session_workflow" / "hook" / "precompact.py"
    text = source.read_text(encoding="utf-8")
    old = '    """The PreCompact entry of hooks/hook.py."""\n'
    assert old in text
    source.write_text(text.replace(old, old + '    write_stdout(b"EDITED ")\n'), encoding="utf-8")
    edited = plugin.run(verbose=True)
    assert edited.stdout == b"EDITED " + before
    assert served(edited.stderr)["session_workflow.hook.precompact"] == "standard"
    again = plugin.run(verbose=True)
    assert again.stdout == edited.stdout
    assert served(again.stderr)["session_workflow.hook.precompact"] == "bundle"


def read_bundle(bundle: Path) -> tuple[bytes, dict[str, list[bytes]], bytes]:
    """The file as the format says (core.bytecode's docstring): magic, index length, seven NUL-separated fields
    a module, then the codes."""
    data = bundle.read_bytes()
    magic, size = data[:4], int.from_bytes(data[4:8], "little")
    fields = data[8 : 8 + size].split(b"\0")
    index = {fields[at].decode(): fields[at + 1 : at + 7] for at in range(0, len(fields), 7)}
    return magic, index, data[8 + size :]


def write_bundle(bundle: Path, magic: bytes, index: dict[str, list[bytes]], codes: bytes) -> None:
    head = b"\0".join(field for name, entry in index.items() for field in (name.encode(), *entry))
    bundle.write_bytes(magic + len(head).to_bytes(4, "little") + head + codes)


def damaged_code(error: str) -> bytes:
    """Marshalled code with two bytes changed so that loading it raises ``error`` (found by a seeded search)."""
    import marshal
    import random

    code = marshal.dumps(compile("def f(a, b):\n    return a + b\nx = f(1, 2)\n", "m.py", "exec"))
    rng = random.Random(1)
    for _ in range(100_000):
        changed = bytearray(code)
        for _ in range(2):
            changed[rng.randrange(len(changed))] = rng.randrange(256)
        try:
            marshal.loads(bytes(changed))
        except Exception as raised:  # looking for one kind
            if type(raised).__name__ == error:
                return bytes(changed)
    raise AssertionError(f"no damage raises {error}")


PRECOMPACT = "session_workflow.hook.precompact"


def corrupt(bundle: Path, how: str) -> None:
    """Damage the event's file one way; each must read as no file (or no entry) at all."""
    import marshal

    data = bundle.read_bytes()
    magic, index, codes = read_bundle(bundle)
    size = int.from_bytes(data[4:8], "little")
    if how == "garbage":
        bundle.write_bytes(os.urandom(len(data)))
    elif how == "empty":
        bundle.write_bytes(b"")
    elif how == "another interpreter":
        bundle.write_bytes(b"\x00\x00\r\n" + data[4:])
    elif how == "index cut short":
        bundle.write_bytes(data[: 8 + size // 2])
    elif how == "index length past the end":
        bundle.write_bytes(magic + (1 << 30).to_bytes(4, "little") + data[8:])
    elif how == "an index marshal would take a minute to read":  # what a marshalled index would have risked
        bundle.write_bytes(magic + (5).to_bytes(4, "little") + b"(" + (0x7FFFFFFF).to_bytes(4, "little") + codes)
    elif how == "codes cut short":
        bundle.write_bytes(data[: 8 + size + len(codes) // 3])
    elif how == "entries of another shape":
        index = {
            name: [*entry[:5], b"x"] if n % 2 else [entry[0], b"yes", *entry[2:]]
            for n, (name, entry) in enumerate(index.items())
        }
        write_bundle(bundle, magic, index, codes)
    elif how == "a non-ASCII name":
        index = {name + "\u00e9": entry for name, entry in index.items()}
        write_bundle(bundle, magic, index, codes)
    elif how.startswith("a code that is not code") or how.startswith("damaged code raising"):
        junk = marshal.dumps("print('from the file')") if how.startswith("a code") else damaged_code(how.split()[-1])
        index = {name: [*entry[:4], str(len(codes)).encode(), str(len(junk)).encode()] for name, entry in index.items()}
        write_bundle(bundle, magic, index, codes + junk)
    elif how in ("another module's code under its name", "a length past any module"):
        if how == "a length past any module":
            index[PRECOMPACT] = [*index[PRECOMPACT][:5], str(1 << 40).encode()]
        else:  # the entry of a module it imports, with that module's own source and stamp: all true but the name
            index[PRECOMPACT] = index["session_workflow.hook.io"]
        write_bundle(bundle, magic, index, codes)
    elif how == "a fifo":
        bundle.unlink()
        os.mkfifo(bundle)
    else:
        raise AssertionError(how)


DAMAGE = [
    "garbage",
    "empty",
    "another interpreter",
    "index cut short",
    "index length past the end",
    "codes cut short",
    "an index marshal would take a minute to read",
    "a code that is not code",
    *(f"damaged code raising {error}" for error in ("SystemError", "ValueError", "EOFError", "TypeError")),
    "entries of another shape",
    "a non-ASCII name",
    "another module's code under its name",
    "a length past any module",
    "a fifo",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_file_is_read_as_none_and_written_afresh(tmp_path: Path, how: str) -> None:
    plugin = Plugin(tmp_path)
    expected = plugin.run().stdout
    (bundle,) = plugin.bundles()
    corrupt(bundle, how)
    damaged = plugin.run(verbose=True)
    assert damaged.stdout == expected and b"from the file" not in damaged.stdout
    loaders = served(damaged.stderr)
    standard = {name for name, how in loaders.items() if how == "standard"}
    if how in ("another module's code under its name", "a length past any module"):
        assert standard == BEFORE_THE_BUNDLE | {"session_workflow.hook.precompact"}
    elif how == "codes cut short":  # the modules whose code is whole are served
        assert standard > BEFORE_THE_BUNDLE and "bundle" in loaders.values()
    else:
        assert "bundle" not in loaders.values()
    again = plugin.run(verbose=True)
    assert again.stdout == expected
    standard = {name for name, how in served(again.stderr).items() if how == "standard"}
    assert not plugin.errors() and standard == BEFORE_THE_BUNDLE


def edit(plugin: Plugin, name: str = "precompact") -> None:
    """Change a module's source (its size: the .pyc's check, and the file's, see it whatever the clock)."""
    source = plugin.root / "src" / "session_workflow" / "hook" / f"{name}.py"
    source.write_text(source.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")


def test_a_package_left_beside_its_old_module_is_the_one_run(tmp_path: Path) -> None:
    """A copy over the plugin folder that turned ``hook/precompact.py`` into ``hook/precompact/`` and left the old
    file: the standard finder takes the package, and so does the bundle."""
    plugin = Plugin(tmp_path)
    expected = plugin.run().stdout
    plugin.run()
    hook = plugin.root / "src" / "session_workflow" / "hook"
    (hook / "precompact").mkdir()
    text = (hook / "precompact.py").read_text(encoding="utf-8")
    old = '    """The PreCompact entry of hooks/hook.py."""\n'
    (hook / "precompact" / "__init__.py").write_text(text.replace(old, old + '    write_stdout(b"PACKAGE ")\n'))
    for _ in range(2):
        done = plugin.run()
        assert done.stdout == b"PACKAGE " + expected
    assert not plugin.errors()


def test_a_held_lock_or_a_folder_in_the_files_place_does_not_stop_the_hook(tmp_path: Path) -> None:
    """The file is a cache: its write takes no lock a stopped writer could hold (the writers' lock would make the
    hook wait 30 s, past Claude Code's 10 s), and one that cannot be made costs nothing but a later write."""
    import fcntl

    plugin = Plugin(tmp_path)
    expected = plugin.run().stdout
    (bundle,) = plugin.bundles()
    lock = bundle.parent / f".{bundle.name}.lock"
    with open(lock, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        edit(plugin)
        written = bundle.stat()
        assert plugin.run(timeout=9).stdout == expected
        assert bundle.stat().st_mtime_ns != written.st_mtime_ns  # written afresh, the lock still held
    bundle.unlink()
    bundle.mkdir()
    edit(plugin)
    for _ in range(2):
        assert plugin.run(timeout=9).stdout == expected
    assert bundle.is_dir() and not plugin.errors()


def test_no_file_where_no_bytecode_is_kept(tmp_path: Path) -> None:
    """The plugin data folder inside the project: no bytecode is kept (the entry's rule), so no file either."""
    plugin = Plugin(tmp_path)
    inside = os.path.join(plugin.box.project, ".claude", "data")
    os.makedirs(inside)
    plugin.box.plugin_data = inside
    for _ in range(2):
        loaders = served(plugin.run("SessionStart", verbose=True).stderr)
        assert set(loaders.values()) == {"standard"}
    assert plugin.bundles() == [] and not list(Path(inside).rglob("*.pyc"))


def test_a_module_no_pyc_serves_does_not_rewrite_the_file_on_each_run(tmp_path: Path) -> None:
    """A module whose .pyc cannot be written is imported the standard way on each run; the file is written once."""
    plugin = Plugin(tmp_path)
    expected = plugin.run().stdout
    (bundle,) = plugin.bundles()
    pyc = next(bundle.parent.rglob("precompact.*.pyc"))
    pyc.unlink()
    pyc.mkdir()  # the interpreter cannot write it there again
    edit(plugin)
    written = bundle.stat()
    for _ in range(2):
        done = plugin.run(verbose=True)
        assert done.stdout == expected and served(done.stderr)["session_workflow.hook.precompact"] == "standard"
        now = bundle.stat()
        assert (now.st_ino, now.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)
    assert not plugin.errors()
