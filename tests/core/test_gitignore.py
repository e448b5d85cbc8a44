"""``core.gitignore``: the state folders' two rules, the folder's own ``.gitignore`` and the repository's
``info/exclude`` line, found without git (the hook path) and written once."""

from __future__ import annotations

import os
from pathlib import Path

from session_workflow.core.gitignore import ensure_excluded, ensure_gitignore, exclude_line, git_dirs


def repo(root: Path) -> Path:
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root / ".git"


def test_the_git_folder_and_a_worktrees_common_one_are_found(tmp_path: Path) -> None:
    git = repo(tmp_path / "main")
    folder = tmp_path / "main" / "sub" / ".claude" / "anchors"
    folder.mkdir(parents=True)
    assert git_dirs(str(folder)) == (str(tmp_path / "main"), str(git))
    (git / "worktrees" / "tree").mkdir(parents=True)
    (git / "worktrees" / "tree" / "commondir").write_text("../..\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / ".git").write_text(f"gitdir: {git}/worktrees/tree\n")
    assert git_dirs(str(tmp_path / "tree")) == (str(tmp_path / "tree"), str(git))
    assert git_dirs(str(tmp_path)) is None


def test_the_line_is_anchored_and_escapes_what_git_reads_specially() -> None:
    assert exclude_line(".claude/anchors") == "/.claude/anchors/"
    assert exclude_line("a b/!x#[*?]\\/.claude/anchors") == "/a\\ b/\\!x\\#\\[\\*\\?\\]\\\\/.claude/anchors/"
    assert exclude_line("a\nb/.claude/anchors") is None
    assert exclude_line("../.claude/anchors") is None


def test_the_line_is_written_once_after_what_is_there(tmp_path: Path) -> None:
    git = repo(tmp_path)
    (git / "info" / "exclude").write_text("# git ls-files --others --exclude-from=.git/info/exclude\n*.log")
    folder = tmp_path / ".claude" / "anchors"
    folder.mkdir(parents=True)
    ensure_gitignore(str(folder))
    ensure_gitignore(str(folder))
    lines = (git / "info" / "exclude").read_text().splitlines()
    assert lines[1:] == ["*.log", "# session-workflow: its state, never committed", "/.claude/anchors/"]
    assert (folder / ".gitignore").read_text() == "*\n"


def test_nothing_is_written_where_the_repository_points_but_no_git_folder_is(tmp_path: Path) -> None:
    """A hostile ``.git`` file names its git folder itself: one without a HEAD, or an exclude that is a link, is
    never written to."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "info").mkdir(parents=True)
    project = tmp_path / "project"
    (project / ".claude" / "anchors").mkdir(parents=True)
    (project / ".git").write_text(f"gitdir: {elsewhere}\n")
    ensure_excluded(str(project / ".claude" / "anchors"))
    assert os.listdir(elsewhere / "info") == []
    (elsewhere / "HEAD").write_text("ref: refs/heads/main\n")
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (elsewhere / "info" / "exclude").symlink_to(victim)
    ensure_excluded(str(project / ".claude" / "anchors"))
    assert victim.read_text() == "keep\n"
