"""Assemble the changelog's unreleased section from ``changelog.d/``: ``python tools/changelog.py [--release VERSION]``.

Each change writes its own fragment, ``changelog.d/NN.md`` (NN: the issue), so no two branches edit one section:
bullet lines for users, then optionally a ``## Contributors`` section (a new module, a new rule) that is for the
reviewer and for CONTRIBUTING, never for the changelog. Without options this prints the section the fragments
make, in issue order; ``--release VERSION`` writes it into CHANGELOG.md as ``## VERSION — DATE``, above the
sections already released, and removes the fragments it used.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTRIBUTORS = "## Contributors"


def _order(name: str) -> tuple[int, str]:
    stem = name[: -len(".md")]
    return (int(stem), name) if stem.isdigit() else (sys.maxsize, name)


def fragments(folder: str) -> list[str]:
    """The fragment files of ``folder``, issue numbers first in numeric order, other names after."""
    if not os.path.isdir(folder):
        return []
    return sorted((name for name in os.listdir(folder) if name.endswith(".md")), key=_order)


def user_lines(text: str) -> str:
    """A fragment's part for users: its text before ``## Contributors``, without the blank lines around it."""
    return text.split(f"\n{CONTRIBUTORS}", 1)[0].split(CONTRIBUTORS, 1)[0].strip("\n")


def section(folder: str, heading: str) -> str:
    """The section the fragments make, under ``heading``; empty when there is none."""
    parts = []
    for name in fragments(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as handle:
            lines = user_lines(handle.read())
        if lines:
            parts.append(lines)
    return f"{heading}\n\n" + "\n".join(parts) + "\n" if parts else ""


def release(root: str, version: str, date: str) -> int:
    """Write the section into ``root``'s CHANGELOG.md above its first ``## `` section and remove the fragments."""
    folder = os.path.join(root, "changelog.d")
    text = section(folder, f"## {version} — {date}")
    if not text:
        sys.stderr.write("changelog.d holds no fragment: nothing to release\n")
        return 1
    path = os.path.join(root, "CHANGELOG.md")
    with open(path, encoding="utf-8") as handle:
        old = handle.read()
    at = old.find("\n## ")
    new = old + "\n" + text if at < 0 else old[: at + 1] + text + "\n" + old[at + 1 :]
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(new)
    for name in fragments(folder):
        os.remove(os.path.join(folder, name))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--release", metavar="VERSION", help="write the section into CHANGELOG.md, drop fragments")
    parser.add_argument("--date", help="the release date (default: today, UTC)")
    parser.add_argument("--root", default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    date = args.date or datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    if args.release:
        return release(args.root, args.release, date)
    sys.stdout.write(section(os.path.join(args.root, "changelog.d"), "## Unreleased"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
