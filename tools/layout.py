"""Validate the plugin layout offline: ``python tools/layout.py [ROOT]`` (the tox ``layout`` env).

The real validator (``claude plugin validate``) needs the CLI; this check needs nothing but Python and PyYAML and
covers what that validator does not: paths our hooks and docs name must exist, plugin-root paths must survive a
space in the install path, and the icon must be what the marketplace shows.
"""

from __future__ import annotations

import json
import os
import re
import struct
import sys

import yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

ROOT_VAR = "${CLAUDE_PLUGIN_ROOT}"
MANIFEST_FIELDS = ("name", "version", "description", "author", "license", "repository", "keywords", "icon", "network")
ICON_RANGE = (512, 2048)
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_CODE_PATH = re.compile(
    r"`((?:\$\{CLAUDE_PLUGIN_ROOT\}/)?(?:references|skills|commands|hooks|bin|src|benchmarks|tools)/[\w./-]+)`"
)
_DOCS_DIRS = ("commands", "skills", "references")


def _load_json(path: str) -> tuple[object, str | None]:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle), None
    except (OSError, ValueError) as error:
        return None, f"{os.path.basename(path)}: cannot parse ({error})"


def check_manifest(root: str) -> list[str]:
    """plugin.json parses and has the fields the marketplace shows; LICENSE is there."""
    manifest, error = _load_json(os.path.join(root, ".claude-plugin", "plugin.json"))
    if error:
        return [error]
    if not isinstance(manifest, dict):
        return ["plugin.json: not an object"]
    problems = [f"plugin.json: missing {field}" for field in MANIFEST_FIELDS if not manifest.get(field)]
    if manifest.get("name") != "session-workflow":
        problems.append("plugin.json: name must be session-workflow")
    network = manifest.get("network")
    # The plugin's own code reaches no host, and nothing is installed at run time (the writers' dependencies are
    # vendored: tools/vendor.py).
    if not isinstance(network, dict) or network.get("hosts") != []:
        problems.append('plugin.json: network must be {"hosts": []}')
    if not isinstance(manifest.get("keywords"), list):
        problems.append("plugin.json: keywords must be a list")
    if manifest.get("license") == "MIT" and not os.path.isfile(os.path.join(root, "LICENSE")):
        problems.append("LICENSE: missing")
    return problems


def _hook_commands(spec: dict[str, object]) -> Iterator[dict[str, object]]:
    hooks = spec.get("hooks")
    if not isinstance(hooks, dict):
        return
    for groups in hooks.values():
        for group in groups if isinstance(groups, list) else []:
            entries = group.get("hooks") if isinstance(group, dict) else None
            for entry in entries if isinstance(entries, list) else []:
                if isinstance(entry, dict) and entry.get("type") == "command":
                    yield entry


def _quoted(line: str, position: int) -> bool:
    """True when ``position`` sits inside a double-quoted string on its line."""
    return line[:position].count('"') % 2 == 1


def check_hooks(root: str) -> list[str]:
    """Every hook is exec form (or quotes the plugin root), has a timeout, and names files that exist."""
    path = os.path.join(root, "hooks", "hooks.json")
    spec, error = _load_json(path)
    if error:
        return [error]
    if not isinstance(spec, dict):
        return ["hooks.json: not an object"]
    problems: list[str] = []
    for entry in _hook_commands(spec):
        command = str(entry.get("command", ""))
        args = entry.get("args")
        if not isinstance(entry.get("timeout"), (int, float)):
            problems.append(f"hooks.json: {command!r} has no timeout")
        if args is None:
            index = command.find(ROOT_VAR)
            if index >= 0 and not _quoted(command, index):
                problems.append(f"hooks.json: unquoted {ROOT_VAR} in shell-form command {command!r}")
            continue
        for arg in args if isinstance(args, list) else []:
            if isinstance(arg, str) and arg.startswith(ROOT_VAR):
                target = os.path.join(root, arg[len(ROOT_VAR) :].lstrip("/"))
                if not os.path.exists(target):
                    problems.append(f"hooks.json: {arg} does not exist")
    for module in spec.get("modules", []) if isinstance(spec.get("modules"), list) else []:
        if not os.path.isfile(os.path.join(root, "hooks", str(module))):
            problems.append(f"hooks.json: module {module} does not exist")
    return problems


def frontmatter(path: str) -> tuple[dict[str, object] | None, str, str | None]:
    """Return (frontmatter mapping, body, problem) of a Markdown file."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as error:
        return None, "", f"cannot read ({error.strerror})"
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text, "no frontmatter"
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            try:
                data = yaml.safe_load("".join(lines[1:index]))
            except yaml.YAMLError as error:
                return None, text, f"frontmatter does not parse ({error})"
            if not isinstance(data, dict):
                return None, text, "frontmatter is not a mapping"
            return data, "".join(lines[index + 1 :]), None
    return None, text, "frontmatter is not closed"


def _markdown_files(root: str) -> Iterator[str]:
    for name in ("README.md", "CONTRIBUTING.md", "CHANGELOG.md"):
        if os.path.isfile(os.path.join(root, name)):
            yield os.path.join(root, name)
    for folder in _DOCS_DIRS:
        for base, _dirs, files in os.walk(os.path.join(root, folder)):
            yield from (os.path.join(base, name) for name in sorted(files) if name.endswith(".md"))


def check_docs(root: str) -> list[str]:
    """Commands and skills carry frontmatter with a description (skills: a name equal to their folder)."""
    problems: list[str] = []
    commands = os.path.join(root, "commands")
    for name in sorted(os.listdir(commands)) if os.path.isdir(commands) else []:
        if name.endswith(".md"):
            data, _body, problem = frontmatter(os.path.join(commands, name))
            if problem or data is None:
                problems.append(f"commands/{name}: {problem}")
            elif not data.get("description"):
                problems.append(f"commands/{name}: frontmatter has no description")
    skills = os.path.join(root, "skills")
    for folder in sorted(os.listdir(skills)) if os.path.isdir(skills) else []:
        skill = os.path.join(skills, folder, "SKILL.md")
        if not os.path.isfile(skill):
            problems.append(f"skills/{folder}: no SKILL.md")
            continue
        data, _body, problem = frontmatter(skill)
        if problem or data is None:
            problems.append(f"skills/{folder}/SKILL.md: {problem}")
            continue
        if not data.get("description"):
            problems.append(f"skills/{folder}/SKILL.md: frontmatter has no description")
        if data.get("name") != folder:
            problems.append(f"skills/{folder}/SKILL.md: name {data.get('name')!r} is not the folder name")
    return problems


def _named_paths(text: str) -> Iterator[tuple[str, bool]]:
    """Yield (path, relative_to_doc) for every Markdown link and every code span naming a repo path."""
    for match in _LINK.finditer(text):
        target = match.group(1).split("#", 1)[0]
        if target and not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            yield target, True
    for match in _CODE_PATH.finditer(text):
        yield match.group(1).replace(ROOT_VAR + "/", ""), False


def check_links(root: str) -> list[str]:
    """Every file a doc links to, or names as a repo path in a code span, exists."""
    problems: list[str] = []
    for doc in _markdown_files(root):
        try:
            with open(doc, encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            continue
        for target, relative in _named_paths(text):
            candidates = [os.path.join(os.path.dirname(doc), target)] if relative else []
            candidates.append(os.path.join(root, target))
            if not any(os.path.exists(candidate) for candidate in candidates):
                problems.append(f"{os.path.relpath(doc, root)}: names {target}, which does not exist")
    return problems


def png_size(path: str) -> tuple[int, int] | None:
    """Width and height of a PNG file, or None when it is not one."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(24)
    except OSError:
        return None
    if len(head) < 24 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def check_icon(root: str) -> list[str]:
    """The manifest's icon is a square PNG of 512–2048 px."""
    manifest, error = _load_json(os.path.join(root, ".claude-plugin", "plugin.json"))
    icon = manifest.get("icon") if isinstance(manifest, dict) else None
    if error or not isinstance(icon, str):
        return ["icon: plugin.json names no icon"]
    size = png_size(os.path.join(root, icon))
    if size is None:
        return [f"icon: {icon} is not a PNG"]
    width, height = size
    if width != height or not ICON_RANGE[0] <= width <= ICON_RANGE[1]:
        return [f"icon: {icon} is {width}x{height}; it must be square, {ICON_RANGE[0]}-{ICON_RANGE[1]} px"]
    return []


CHECKS: tuple[Callable[[str], list[str]], ...] = (check_manifest, check_hooks, check_docs, check_links, check_icon)


def check(root: str) -> list[str]:
    """Run every check; return the problems found (empty when the layout is valid)."""
    return [problem for run in CHECKS for problem in run(root)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = os.path.abspath(args[0] if args else ".")
    problems = check(root)
    for problem in problems:
        print(f"layout: {problem}")
    print(f"layout: {len(CHECKS)} checks, {len(problems)} problem(s) in {root}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
