"""Which programs a Bash call ran, as far as the run record asks: the anchor writer, or git making a commit.

A command the model ran is data from the transcript. The record asks of it only whether it ran
``session-workflow anchor VERB`` (an anchor write opens the record's window) or ``git commit`` (only then is a
``[branch abc1234] subject`` line of its output a commit). A mention is no run: quotes are undone into words, so
a quoted mention stays inside one word, and a comment or a here-document's body is skipped. A line is split into
simple commands at the unquoted ``;``, ``&``, ``|``, ``(``, ``)``, backquote and newline (a backslash-newline
joins two lines); ``bash -c 'SCRIPT'`` (``sh``, ``zsh``, ``dash``, flags such as ``-lc``) is read as its script.
Not a shell: nothing is expanded, and a ``$(...)`` inside double quotes is quoted text. String methods only, one
pass: the hot path imports no ``re`` (so no ``shlex``), and a line of megabytes costs its length.
"""

from __future__ import annotations

SEPARATORS = frozenset(";&|()`\n")
SHELLS = frozenset(("bash", "sh", "zsh", "dash"))
# Words before a program's name: shell keywords, and programs that run the next one (their options skipped).
KEYWORDS = frozenset(("{", "!", "if", "then", "else", "elif", "do", "while", "until"))
RUNNERS = frozenset(("env", "exec", "command", "nohup", "time", "nice", "sudo", "timeout", "xargs"))
# Options of those runners and of git that take the next word as their value.
VALUED_OPTIONS = frozenset(("-u", "-n", "-g", "-k", "-s", "-C", "-c", "--git-dir", "--work-tree", "--namespace"))
COMMIT_VERBS = frozenset(("commit", "cherry-pick", "revert"))
WRITE_VERBS = ("new", "step", "write", "restore", "close", "adopt")
# How deep ``bash -c`` scripts are read (a script of a script of a script is left as words).
MAX_DEPTH = 2


def simple_commands(line: str, depth: int = 0) -> list[list[str]]:
    """The words of each simple command ``line`` runs, quotes undone, comments and here-document bodies left out;
    the script of a ``bash -c`` among them read as well."""
    commands: list[list[str]] = []
    words: list[str] = []
    word: list[str] = []
    started = False  # a word is under way (a quote opened one, even an empty one)
    heredocs: list[tuple[str, bool]] = []  # delimiters whose bodies start at the next newline; tabs stripped
    at, end, quote = 0, len(line), ""
    while at < end:
        char = line[at]
        if quote == "'":
            quote = "" if char == "'" else quote
            if quote:
                word.append(char)
            at += 1
        elif quote == '"':
            if char == "\\" and line[at + 1 : at + 2] in ('"', "\\", "$", "`", "\n"):
                word.append(line[at + 1] if line[at + 1] != "\n" else "")
                at += 2
                continue
            quote = "" if char == '"' else quote
            if quote:
                word.append(char)
            at += 1
        elif char == "\\":
            word.append(line[at + 1 : at + 2].replace("\n", ""))
            started = started or line[at + 1 : at + 2] != "\n"
            at += 2
        elif char in "'\"":
            quote, started = char, True
            at += 1
        elif char == "#" and not started:  # a comment, to the line's end
            stop = line.find("\n", at)
            at = end if stop < 0 else stop
        elif line.startswith("<<", at) and not line.startswith("<<<", at):
            at = _heredoc(line, at + 2, heredocs)
        elif char in SEPARATORS or char in " \t":
            if started:
                words.append("".join(word))
                word, started = [], False
            if char in SEPARATORS and words:
                commands.append(words)
                words = []
            at += 1
            if char == "\n" and heredocs:
                at = _past_bodies(line, at, heredocs)
        else:
            word.append(char)
            started = True
            at += 1
    if started:
        words.append("".join(word))
    if words:
        commands.append(words)
    if depth < MAX_DEPTH:
        for found in list(commands):
            script = _shell_script(found)
            if script is not None:
                commands += simple_commands(script, depth + 1)
    return commands


def _heredoc(line: str, at: int, heredocs: list[tuple[str, bool]]) -> int:
    """Note the here-document whose ``<<`` ends at ``at`` (``<<-`` strips tabs; a quoted delimiter is unquoted);
    return where its delimiter word ends."""
    strip = line.startswith("-", at)
    at += strip
    while at < len(line) and line[at] in " \t":
        at += 1
    start = at
    while at < len(line) and line[at] not in SEPARATORS and line[at] not in " \t<>":
        at += 1
    delimiter = line[start:at].replace("'", "").replace('"', "").replace("\\", "")
    if delimiter:
        heredocs.append((delimiter, strip))
    return at


def _past_bodies(line: str, at: int, heredocs: list[tuple[str, bool]]) -> int:
    """Where the line goes on after the bodies of ``heredocs`` that start at ``at`` (each up to its delimiter's
    own line; an unclosed one runs to the end)."""
    for delimiter, strip in heredocs:
        while at < len(line):
            stop = line.find("\n", at)
            body_line = line[at : len(line) if stop < 0 else stop]
            at = len(line) if stop < 0 else stop + 1
            if (body_line.lstrip("\t") if strip else body_line) == delimiter:
                break
    heredocs.clear()
    return at


def program_at(words: list[str]) -> int:
    """Where the program's name is among a simple command's words: past variable assignments, shell keywords and
    the runners before it (``env``, ``timeout 30``, ``sudo -u x``) with their options."""
    at = 0
    while at < len(words):
        word = words[at]
        if word in KEYWORDS or _assignment(word):
            at += 1
        elif word in RUNNERS:
            at = _past_options(words, at + 1)
            if word == "timeout" and at < len(words):
                at += 1  # its duration
        else:
            break
    return at


def _assignment(word: str) -> bool:
    name = word.partition("=")[0]
    return "=" in word and bool(name) and (name[0].isalpha() or name[0] == "_") and name.replace("_", "a").isalnum()


def _past_options(words: list[str], at: int) -> int:
    """Where the words after ``at`` stop being options (one of ``VALUED_OPTIONS`` takes the next word too)."""
    while at < len(words) and words[at].startswith("-") and words[at] != "-":
        at += 2 if words[at] in VALUED_OPTIONS else 1
    return at


def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _shell_script(words: list[str]) -> str | None:
    """The script of a ``bash -c SCRIPT`` (or ``-lc``, ``sh``, ``zsh``, ``dash``), else None."""
    at = program_at(words)
    if at >= len(words) or _name(words[at]) not in SHELLS:
        return None
    for index in range(at + 1, len(words) - 1):
        flag = words[index]
        if not flag.startswith("-"):
            return None
        if not flag.startswith("--") and "c" in flag:
            return words[index + 1]
    return None


def writer_verb(command: str) -> str | None:
    """The verb of the last ``session-workflow anchor VERB`` a shell line runs (by name or a path to it), a
    writer's; None when it runs none (it only names one, or asks for help)."""
    found = None
    for words in simple_commands(command) if "session-workflow" in command else ():
        at = program_at(words)
        if words[at : at + 2] and _name(words[at]) == "session-workflow" and words[at + 1 : at + 2] == ["anchor"]:
            verb = words[at + 2] if at + 2 < len(words) else ""
            if verb in WRITE_VERBS and not {"-h", "--help"} & set(words[at + 3 :]):
                found = verb
    return found


def runs_git_commit(command: str) -> bool:
    """Whether a shell line runs ``git commit`` (or ``cherry-pick``, ``revert``: git's commands that report the
    commit they made as ``[branch abc1234] subject``)."""
    for words in simple_commands(command) if "git" in command else ():
        at = program_at(words)
        if at < len(words) and _name(words[at]) == "git":
            verb = _past_options(words, at + 1)
            if verb < len(words) and words[verb] in COMMIT_VERBS:
                return True
    return False
