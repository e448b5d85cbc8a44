"""Build the sdist and the wheel from a copy: ``python tools/build_dist.py OUTDIR [python -m build options]``.

setuptools writes ``build/`` and ``src/*.egg-info`` into the folder it builds in, and a marketplace install copies
the plugin folder whole, ignored files included. So the build runs in a temporary copy of the files it reads (the
package and the metadata files below), and only OUTDIR receives the sdist and the wheel. tox packages with it
(``package = external``); ``python -m build`` run in the checkout itself would leave those folders behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the build reads: pyproject names the readme (the wheel's own, which stands without the plugin's folder) and
# the license file, MANIFEST.in says what the sdist holds.
FILES = ("pyproject.toml", "MANIFEST.in", "README.md", "LICENSE", "references/python-package.md")


def copy_sources(root: str, target: str) -> None:
    """Copy what the build reads from ``root`` into ``target``, without the bytecode or an old egg-info."""
    for name in FILES:
        os.makedirs(os.path.dirname(os.path.join(target, name)), exist_ok=True)
        shutil.copy2(os.path.join(root, name), os.path.join(target, name))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(os.path.join(root, "src"), os.path.join(target, "src"), ignore=ignore)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args:
        sys.stderr.write("usage: build_dist.py OUTDIR [python -m build options]\n")
        return 2
    outdir = os.path.abspath(args[0])
    with tempfile.TemporaryDirectory(prefix="session-workflow-build-") as copy:
        copy_sources(ROOT, copy)
        return subprocess.run(
            [sys.executable, "-m", "build", "--outdir", outdir, *args[1:], copy], check=False
        ).returncode


if __name__ == "__main__":
    raise SystemExit(main())
