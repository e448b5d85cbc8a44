"""Hostile file systems: FIFOs, sockets, devices, loops, unreadable and huge files, traversal ids, a missing cwd.

Each case puts one hostile thing where a hook reads (the anchors folder, the task store, the transcript, the
work-state file, the git config, the plugin data dir) next to good state, then runs every hook: exit 0, nothing
on stderr, output bounded and well formed, only the allowed folders written, the good state still delivered,
and all of it well inside a 5 s guard (a hang is what this catches; speed is the benchmark's business).

The fast slice runs every hook in a forked child (a hang cannot stall the run) and SessionStart through the real
shim; the full size runs all three through the real shim, with 100,000 task files instead of 10,000.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Callable, Iterator

import pytest

from session_workflow.anchor.discover import MAX_LISTED
from session_workflow.core.locations import RECORDS_FOLDER, record_name
from session_workflow.core.places import Places

from .sandbox import (
    CAP_UTF16,
    EVENTS,
    Sandbox,
    assert_written_only_under,
    check_run,
    hook_dirs,
    run_forked,
    run_shim,
    sandbox,
    snapshot,
    task_json,
    transcript_jsonl,
)
from .sizes import Size, Tally

NOBODY = 65534
# The fast slice runs the real shim for one case of each kind of hazard; the full size runs it for every case.
FAST_SHIM_CASES = frozenset(
    (
        "fifo-as-anchor",
        "fifo-as-transcript",
        "socket-as-task",
        "dev-zero-as-anchor",
        "dev-urandom-as-transcript",
        "loop-as-anchor",
        "directory-as-anchor",
        "sparse-1gb-anchor",
        "sparse-1gb-transcript",
        "many-task-files",
        "session-id-dotdot-etc",
        "cwd-missing",
    )
)
GIB = 1 << 30
GOOD_ANCHOR = "good.md"
GOOD_TASK = "#2 [pending] Write the exporter"
DECOY = "DECOY-TASK-OUTSIDE-THE-STORE"


class Case:
    """What a case changed and what must still hold: payload and env overrides, texts that must (not) appear."""

    def __init__(
        self,
        payload: dict[str, object] | None = None,
        env: dict[str, str] | None = None,
        present: tuple[str, ...] = (f'<anchor-head file="{GOOD_ANCHOR}">', GOOD_TASK),
        absent: tuple[str, ...] = (DECOY,),
        unprivileged: bool = False,
    ) -> None:
        self.payload = payload or {}
        self.env = env or {}
        self.present = present
        self.absent = absent
        self.unprivileged = unprivileged


def good_world(box: Sandbox) -> None:
    """The state every case keeps beside its hostile thing: an anchor, an open task, a work state, a transcript."""
    box.populate()
    os.replace(os.path.join(box.anchors(), "2026-01-01-port.md"), os.path.join(box.anchors(), GOOD_ANCHOR))
    os.utime(os.path.join(box.anchors(), GOOD_ANCHOR), None)
    box.trust(os.path.join(box.anchors(), GOOD_ANCHOR))


@contextlib.contextmanager
def _in_folder(folder: str) -> Iterator[None]:
    saved = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(saved)


def make_socket(path: str) -> None:
    """A listening-less Unix socket at ``path`` (bound relative to its folder: socket paths are short)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with _in_folder(os.path.dirname(path)):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(os.path.basename(path))
        server.close()


def make_fifo(path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path)


def make_link(target: str) -> Callable[[str], None]:
    def link(path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.unlink(path)
        os.symlink(target, path)

    return link


def make_dir(path: str) -> None:
    if os.path.lexists(path):
        os.unlink(path)
    os.makedirs(path)


def make_sparse(header: bytes) -> Callable[[str], None]:
    def sparse(path: str) -> None:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(header)
            handle.truncate(GIB)

    return sparse


# Where each hostile thing goes, and what the good world then still delivers.
def _ledger(box: Sandbox) -> str:
    path = Places(box.env()).ledger
    assert path is not None
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return path


def _spots(box: Sandbox) -> dict[str, tuple[str, tuple[str, ...]]]:
    good = (f'<anchor-head file="{GOOD_ANCHOR}">', GOOD_TASK)
    return {
        "anchor": (os.path.join(box.anchors(), "x.md"), good),
        "task": (os.path.join(box.tasks(), "1.json"), (f'<anchor-head file="{GOOD_ANCHOR}">', "#2 [pending]")),
        "transcript": (box.transcript(), good),
        "state": (os.path.join(box.state_dir(), "work-state.json"), good),
        "ledger": (_ledger(box), good),
        "git-config": (os.path.join(box.project, ".git", "config"), good),
        "delivery-record": (os.path.join(box.plugin_data, RECORDS_FOLDER, record_name(box.session)), good),
    }


KINDS: dict[str, Callable[[Sandbox], Callable[[str], None]]] = {
    "fifo": lambda box: make_fifo,
    "socket": lambda box: make_socket,
    "dev-zero": lambda box: make_link("/dev/zero"),
    "dev-urandom": lambda box: make_link("/dev/urandom"),
    "loop": lambda box: make_link("loop-b"),  # completed into a two-link loop by _place
    "directory": lambda box: make_dir,
}


def _place(box: Sandbox, kind: str, path: str) -> None:
    if os.path.lexists(path) and not os.path.isdir(path):
        os.unlink(path)
    KINDS[kind](box)(path)
    if kind == "loop":
        os.symlink(os.path.basename(path), os.path.join(os.path.dirname(path), "loop-b"))


def _spot_case(kind: str, spot: str) -> Callable[[Sandbox, Size], Case]:
    def build(box: Sandbox, _size: Size) -> Case:
        path, present = _spots(box)[spot]
        _place(box, kind, path)
        if spot == "git-config":  # without a stored section the reader builds one, reading the git config
            state_file = os.path.join(box.state_dir(), "work-state.json")
            with open(state_file, "rb") as handle:
                document = json.loads(handle.read())
            del document["section"]
            box.write_state(json.dumps(document).encode())
        return Case(present=present)

    return build


def _sparse_case(spot: str) -> Callable[[Sandbox, Size], Case]:
    headers = {
        "anchor": b"---\nformat: anchor/v1\n---\n## Cursor\n- next: the huge one\n",
        "task": task_json(1, "huge"),
        "transcript": transcript_jsonl("/", ["huge"]),
        "state": b'{"version": 1, ',
    }

    def build(box: Sandbox, _size: Size) -> Case:
        path, present = _spots(box)[spot]
        make_sparse(headers[spot])(path)
        if spot == "anchor":  # the huge anchor is the newest: it is the one injected, from a bounded read
            box.trust(path)
            present = ('<anchor-head file="x.md">', "- next: the huge one", GOOD_TASK)
        return Case(present=present)

    return build


def _anchors_folder_loop(box: Sandbox, _size: Size) -> Case:
    folder = box.anchors()
    for name in os.listdir(folder):
        os.unlink(os.path.join(folder, name))
    os.rmdir(folder)
    os.symlink("anchors", folder)
    return Case(present=(GOOD_TASK,))


def _task_dir_loop(box: Sandbox, _size: Size) -> Case:
    folder = box.tasks()
    for name in os.listdir(folder):
        os.unlink(os.path.join(folder, name))
    os.rmdir(folder)
    os.symlink(os.path.basename(folder), folder)
    return Case(present=(f'<anchor-head file="{GOOD_ANCHOR}">',))


def _unreadable(spot: str) -> Callable[[Sandbox, Size], Case]:
    """An unreadable file or folder; as root the hook runs as nobody, for whom mode 000 binds."""

    def build(box: Sandbox, _size: Size) -> Case:
        present: tuple[str, ...] = (f'<anchor-head file="{GOOD_ANCHOR}">', GOOD_TASK)
        if spot == "anchor-file":
            box.write_anchor("x.md", b"---\nformat: anchor/v1\n---\n## Cursor\n- next: secret\n", age=1.0)
            os.chmod(os.path.join(box.anchors(), "x.md"), 0)
        elif spot == "anchors-folder":
            os.chmod(box.anchors(), 0)
            present = (GOOD_TASK,)
        elif spot == "task-file":
            os.chmod(os.path.join(box.tasks(), "1.json"), 0)
            present = (f'<anchor-head file="{GOOD_ANCHOR}">', "#2 [pending]")
        elif spot == "task-folder":
            os.chmod(box.tasks(), 0)
            present = (f'<anchor-head file="{GOOD_ANCHOR}">', "call TaskList to see current open tasks")
        elif spot == "transcript":
            os.chmod(box.transcript(), 0)
        elif spot == "state":
            os.chmod(os.path.join(box.state_dir(), "work-state.json"), 0)
        _open_up(box)
        return Case(present=present, absent=(DECOY, "- next: secret"), unprivileged=True)

    return build


def _open_up(box: Sandbox) -> None:
    """Let an unprivileged hook reach the sandbox (mkdtemp makes its root private)."""
    os.chmod(box.root, 0o755)
    os.chmod(box.plugin_data, 0o777)


def _many_task_files(box: Sandbox, size: Size) -> Case:
    count = size.pick(10_000, 100_000)
    folder = box.tasks()
    completed = task_json(0, "done long ago", "completed").replace(b'"0"', b'"%d"')
    for task_id in range(3, count + 1):
        fd = os.open(os.path.join(folder, f"{task_id}.json"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, completed % task_id)
        os.close(fd)
    box.write_task(f"{count + 1}.json", task_json(count + 1, "The newest open task"))
    present = (f"#{count + 1} [pending] The newest open task", "older task files not read: call TaskList")
    return Case(present=present)


def _many_anchor_files(box: Sandbox, size: Size) -> Case:
    count = size.pick(2_000, 20_000)
    folder = box.anchors()
    for index in range(count):
        fd = os.open(os.path.join(folder, f"note-{index}.md"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"# a note, not an anchor\n")
        os.close(fd)
    os.utime(os.path.join(folder, GOOD_ANCHOR), None)  # newer than the notes
    box.trust(os.path.join(folder, GOOD_ANCHOR))
    if count <= MAX_LISTED:
        return Case()
    # Past MAX_LISTED entries the hook stops listing (by design, to stay bounded), so the anchor may go unseen.
    return Case(present=(GOOD_TASK,))


def _decoy(box: Sandbox, folder: str) -> None:
    box.write(os.path.join(folder, "1.json"), task_json(1, DECOY))


def _hostile_id(raw: str, via: str) -> Callable[[Sandbox, Size], Case]:
    """A session id or task list id that names a path: it must not reach a task list or a record outside."""

    def build(box: Sandbox, _size: Size) -> Case:
        value = raw.replace("$ROOT", box.root)
        reached = os.path.normpath(os.path.join(box.tasks_root, value.replace("\x00", "")))
        for target in (os.path.join(box.root, "etc"), os.path.join(box.root, "decoy"), box.config, box.root, reached):
            if target.startswith(box.root + os.sep) and len(target) < 1024:  # decoys only ever inside the sandbox
                _decoy(box, target)
        if via == "session":
            box.write_transcript(transcript_jsonl(box.project, ["x"]), session="plain")
            return Case(payload={"session_id": value}, present=(f'<anchor-head file="{GOOD_ANCHOR}">',))
        return Case(env={"CLAUDE_CODE_TASK_LIST_ID": value}, present=(f'<anchor-head file="{GOOD_ANCHOR}">',))

    return build


HOSTILE_IDS = {
    "dotdot-etc": "../../etc",
    "dotdot": "..",
    "dot": ".",
    "absolute": "$ROOT/decoy",
    "root": "/",
    "long-4k": "x" * 4096,
    "newline": "a\nb",
}


def _cwd(value: str) -> Callable[[Sandbox, Size], Case]:
    def build(box: Sandbox, _size: Size) -> Case:
        cwd = value.replace("$ROOT", box.root)
        if value == "$ROOT/a-file":
            box.write(cwd, b"not a folder")
        # The transcript names the real project, so the anchor is still found from where the session started.
        return Case(payload={"cwd": cwd}, present=(f'<anchor-head file="{GOOD_ANCHOR}">', GOOD_TASK))

    return build


CASES: dict[str, Callable[[Sandbox, Size], Case]] = {}
for _kind in KINDS:
    for _spot in ("anchor", "task", "transcript", "state", "ledger", "git-config", "delivery-record"):
        CASES[f"{_kind}-as-{_spot}"] = _spot_case(_kind, _spot)
for _spot in ("anchor", "task", "transcript", "state"):
    CASES[f"sparse-1gb-{_spot}"] = _sparse_case(_spot)
for _spot in ("anchor-file", "anchors-folder", "task-file", "task-folder", "transcript", "state"):
    CASES[f"unreadable-{_spot}"] = _unreadable(_spot)
for _name, _raw in HOSTILE_IDS.items():
    CASES[f"session-id-{_name}"] = _hostile_id(_raw, "session")
    CASES[f"task-list-id-{_name}"] = _hostile_id(_raw, "list")
CASES["session-id-nul"] = _hostile_id("a\x00b", "session")  # an environment variable cannot hold a NUL
for _name, _value in {
    "missing": "$ROOT/does/not/exist",
    "relative": "proj",
    "a-file": "$ROOT/a-file",
    "long-4k": "/" + "d" * 4095,
    "filesystem-root": "/",
}.items():
    CASES[f"cwd-{_name}"] = _cwd(_value)
CASES["anchors-folder-loop"] = _anchors_folder_loop
CASES["task-folder-loop"] = _task_dir_loop
CASES["many-task-files"] = _many_task_files
CASES["many-anchor-files"] = _many_anchor_files


def share_registry(box: Sandbox) -> None:
    """Let the unprivileged hook read root's trust records (as the owner of a real registry always can)."""
    folder = Places(box.env()).trust
    assert folder is not None
    for parent, _dirs, files in os.walk(os.path.dirname(os.path.dirname(folder))):
        os.chmod(parent, 0o755)
        for name in files:
            os.chmod(os.path.join(parent, name), 0o644)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_fs(name: str, size: Size, tally: Tally) -> None:
    with sandbox() as box:
        good_world(box)
        case = CASES[name](box, size)
        # Root reads through mode 000, so as root the handler drops to nobody in its forked child.
        user = NOBODY if case.unprivileged and os.geteuid() == 0 else None
        if user is not None:
            share_registry(box)
        env = box.env(**case.env)
        shim = user is None and (size.full or name in FAST_SHIM_CASES)
        before = snapshot(box.root)
        dirs: list[str] = []
        for event in EVENTS:
            payload = box.payload(event, source="compact")
            payload.update(case.payload)
            dirs += hook_dirs(payload, env)
            forked = run_forked(event, payload, env, user=user)
            tally.add("hook runs")
            assert (forked.code, forked.stderr.decode(errors="replace")) == (0, "")
            text = check_run(box, event, payload, forked.stdout)
            assert len(forked.stdout) <= 6 * CAP_UTF16 + 200
            if event == "SessionStart":
                assert text is not None
                for expected in case.present:
                    assert expected in text, f"{expected!r} missing from:\n{text}"
            for unexpected in case.absent:
                assert unexpected not in (text or "")
            if shim and (event == "SessionStart" or size.full):
                run = run_shim(event, json.dumps(payload).encode(), env)
                tally.add("hook processes")
                assert (run.code, run.stderr) == (0, b"")
                shim_text = check_run(box, event, payload, run.stdout)
                if event == "SessionStart":
                    assert shim_text is not None and all(expected in shim_text for expected in case.present)
        assert_written_only_under(before, snapshot(box.root), box.allowed_roots(dirs))


def test_cwd_with_a_lone_surrogate(tally: Tally) -> None:
    """A payload cwd and transcript path with a lone surrogate (JSON can carry one) name no path: no crash (no
    CLAUDE_PROJECT_DIR either, so the cwd would be the project)."""
    with sandbox() as box:
        good_world(box)
        payload = box.payload(source="startup", cwd=box.project + "\ud800", transcript_path="\ud800")
        tally.add("hook runs")
        env = {name: value for name, value in box.env().items() if name != "CLAUDE_PROJECT_DIR"}
        run = run_forked("SessionStart", payload, env)
        assert (run.code, run.stderr) == (0, b"")
        text = check_run(box, "SessionStart", payload, run.stdout)
        assert text is None or GOOD_ANCHOR not in text
