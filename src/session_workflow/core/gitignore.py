"""Keep the plugin's state folders out of the user's git status and out of ``git add -A`` (hot-path safe: os only).

Two rules, because a repository can ship its own file in the folder: ``<folder>/.gitignore`` holding ``*`` (made
when missing, never touched when there: it may be the repository's, tracked), and a line for the folder in the
repository's own ``info/exclude`` (in the common git folder, so every worktree has it), which no file the
repository ships inside the folder can undo: git does not look into an excluded folder, so a tracked
``.claude/anchors/.gitignore`` holding ``!*.md`` is never read. (A repository can still re-include the folder from
a ``.gitignore`` above it, ``!anchors/``; ``doctor`` names an anchor git would then stage: ``staged``.)
"""

from __future__ import annotations

import os
import stat

# Bounded reads: a ``.git`` file is one line; an exclude file past this is not appended to (never read whole).
GIT_FILE_BYTES = 4096
EXCLUDE_BYTES = 64 * 1024
# How many folders up from the state folder a ``.git`` is looked for (a monorepo's subproject sits a few deep).
MAX_LEVELS = 64
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


def ensure_gitignore(folder: str) -> None:
    """Keep ``folder`` out of git: its ``.gitignore`` (``*``) when missing, and its line in ``info/exclude``."""
    _ensure_ignore_file(folder)
    ensure_excluded(folder)


def _ensure_ignore_file(folder: str) -> None:
    """Create ``<folder>/.gitignore`` holding ``*`` when missing; never touch an existing one."""
    target = os.path.join(folder, ".gitignore")
    if os.path.lexists(target):
        return
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
    except OSError:
        return
    try:
        os.write(fd, b"*\n")
    except OSError:
        pass
    finally:
        os.close(fd)


def git_dirs(folder: str) -> tuple[str, str] | None:
    """(the work tree's root, the common git folder) of the repository ``folder`` is in, else None.

    A ``.git`` folder is the git folder; a ``.git`` file (a worktree, a submodule) names it (``gitdir: …``), and a
    worktree's git folder names the common one in its ``commondir`` file. Only lstat calls and two bounded reads.
    """
    level = os.path.abspath(folder)
    for _ in range(MAX_LEVELS):
        dot_git = os.path.join(level, ".git")
        try:
            info = os.lstat(dot_git)
        except OSError:
            info = None
        if info is not None:
            if stat.S_ISDIR(info.st_mode):
                git_dir: str | None = dot_git
            elif stat.S_ISREG(info.st_mode):
                named = _read_line(dot_git)
                git_dir = (
                    os.path.join(level, named[len("gitdir: ") :]) if named and named.startswith("gitdir: ") else None
                )
            else:
                git_dir = None
            if git_dir is None:
                return None
            common = _read_line(os.path.join(git_dir, "commondir"))
            return level, os.path.normpath(os.path.join(git_dir, common) if common else git_dir)
        parent = os.path.dirname(level)
        if parent == level:
            return None
        level = parent
    return None


def _read_line(path: str) -> str | None:
    """The first line of a small regular file (not through a link), or None."""
    data = _read(path, GIT_FILE_BYTES)
    if data is None:
        return None
    line = data.split(b"\n", 1)[0].strip().decode("utf-8", "surrogateescape")
    return line or None


def _read(path: str, limit: int) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def exclude_line(relative: str) -> str | None:
    """The ``info/exclude`` pattern for the folder at ``relative`` (from the work tree's root): anchored, a folder,
    every character git reads specially escaped; None for a path no pattern line can hold (a line break)."""
    if not relative or relative.startswith("..") or any(char in relative for char in "\n\r"):
        return None
    escaped = "".join("\\" + char if char in "\\*?[]!# " else char for char in relative.replace(os.sep, "/"))
    return f"/{escaped}/"


def ensure_excluded(folder: str) -> None:
    """Append ``folder``'s line to its repository's ``info/exclude`` (the common git folder's) when not there.

    Only into a git folder that looks like one (a ``HEAD`` file) and an exclude file that is a regular file of this
    user (not a link): the repository names its git folder itself (a ``.git`` file), so a hostile one could name
    another; then nothing is written. Never raises: it runs after the hook's output.
    """
    found = git_dirs(folder)
    if found is None:
        return
    root, common = found
    line = exclude_line(os.path.relpath(os.path.abspath(folder), root))
    if line is None or not os.path.isfile(os.path.join(common, "HEAD")):
        return
    info = os.path.join(common, "info")
    target = os.path.join(info, "exclude")
    current = _read(target, EXCLUDE_BYTES)
    encoded = line.encode("utf-8", "surrogateescape")
    if current is not None and (len(current) > EXCLUDE_BYTES or encoded in current.split(b"\n")):
        return
    if not os.path.isdir(info):
        try:
            os.mkdir(info, 0o755)
        except OSError:
            return
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644)
    except OSError:
        return
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_uid != os.geteuid():
            return
        lead = b"\n" if current and not current.endswith(b"\n") else b""
        os.write(fd, lead + b"# session-workflow: its state, never committed\n" + encoded + b"\n")
    except OSError:
        pass
    finally:
        os.close(fd)


def staged(project: str, folder: str) -> list[str] | None:
    """The untracked files of ``folder`` that ``git add -A`` run in ``project`` would stage (git's own answer,
    ``ls-files --others --exclude-standard``), or None when ``project`` is no git work tree or git cannot say. The
    CLI only (it starts git)."""
    import subprocess

    try:
        done = subprocess.run(
            ["git", "-C", project, "ls-files", "-z", "--others", "--exclude-standard", "--", folder],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return [os.fsdecode(name) for name in done.stdout.split(b"\0") if name]
