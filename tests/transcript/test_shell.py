"""Which programs a Bash call ran: the anchor writer or git's commit, never a mention of them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_workflow.transcript.shell import runs_git_commit, simple_commands, writer_verb

SNIPPET = '## Long runs\n- Update the cursor after every step (`session-workflow anchor step FILE "…"`).\n'


@pytest.mark.parametrize(
    ("command", "verb"),
    [
        ('session-workflow anchor step "did a; next: b"', "step"),
        ("bin/session-workflow anchor new --task t", "new"),
        ('"$HOME/My Plugins/bin/session-workflow" anchor step x', "step"),
        ("cd sub && X=1 session-workflow anchor write a.md <<'EOF'\ntext\nEOF", "write"),
        ("if session-workflow anchor close a.md; then :; fi", "close"),
        ("out=$(session-workflow anchor step x)", "step"),
        ("timeout -k 5 30 session-workflow anchor step x", "step"),
        ("sudo -u me env -i PATH=/bin session-workflow anchor adopt a.md", "adopt"),
        ("bash -lc 'cd x && session-workflow anchor step \"y\"'", "step"),
        ("session-workflow anchor \\\n  step x", "step"),
        ("session-workflow anchor new x; session-workflow anchor step y", "step"),
        # Mentions, not runs.
        ("grep -rn 'session-workflow anchor step' docs/", None),
        ("echo 'see (session-workflow anchor write FILE)' >> notes.md", None),
        ("git commit -qm 'docs: explain `session-workflow anchor step`'", None),
        (f"cat >> CLAUDE.md <<'EOF'\n{SNIPPET}EOF\nmake test", None),
        ("cat > notes.md <<-EOF\n\tsession-workflow anchor step x\n\tEOF", None),
        ("make # then session-workflow anchor step x", None),
        ("session-workflow anchor list", None),
        ("session-workflow anchor step --help", None),
        ("session-workflow-helper anchor step x", None),
        # A write whose here-document names another verb is still the write.
        (f"session-workflow anchor write a.md <<'ANCHOR'\n{SNIPPET}ANCHOR", "write"),
    ],
)
def test_the_writer_is_run_not_named(command: str, verb: str | None) -> None:
    assert writer_verb(command) == verb


@pytest.mark.parametrize(
    ("command", "commits"),
    [
        ("git commit -qm x", True),
        ("git add -A && git -C sub -c user.name=me commit -m x", True),
        ("/usr/bin/git cherry-pick abc1234", True),
        ("bash -c 'git revert --no-edit HEAD'", True),
        ("git \\\n  commit -m x", True),
        ("cat NOTES.md", False),
        ("git log --grep commit", False),
        ("git checkout -b commit", False),
        ("echo git commit", False),
        ("git add x; cat NOTES.md", False),
    ],
)
def test_a_commit_is_gits_own(command: str, commits: bool) -> None:
    assert runs_git_commit(command) is commits


def test_quotes_comments_and_bodies_are_undone_as_a_shell_does() -> None:
    line = 'a \'b c\'"d\\"e" f\\ g # h\ncat <<X |wc\nbody ; x\nX\n(i; j) && `k`'
    assert simple_commands(line) == [["a", 'b cd"e', "f g"], ["cat"], ["wc"], ["i"], ["j"], ["k"]]


@given(st.text(alphabet="ab '\"\\#;&|()`<-\n\tEOF$=c", max_size=200))
def test_any_line_is_words_and_no_error(line: str) -> None:
    for words in simple_commands(line):
        assert words and all(isinstance(word, str) for word in words)
    writer_verb(line + " session-workflow")
    runs_git_commit(line + " git")


def test_a_line_of_megabytes_is_one_pass() -> None:
    """Quotes, backslashes, here-documents and ``bash -c`` nesting in a long line cost its length, not more."""
    line = ("bash -c 'bash -c \"x\\\\ y\"' <<E\n" + "a\\\n" * 50_000 + "E\n") * 10 + "session-workflow anchor step x"
    assert writer_verb(line) == "step"
