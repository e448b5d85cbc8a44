"""Refresh the writers' vendored dependencies: ``python tools/vendor.py`` (pip and a package index), or check
the tree offline: ``python tools/vendor.py --check``.

The plugin runs from its folder, where nothing installed filelock, and it must work on a machine with no index at
all; so the folder carries it (``vendor/py<major><minor>/``), as pip carries its own in ``_vendor``. ``SETS`` is the
one list of sets and pins, written nowhere else: each set names the oldest Python it serves (its folder's name:
``core.deps`` reads the sets from the tree) and the published wheels (name, version, sha256, and what of the
package is left out). Only what the plugin imports at run time is vendored: platformdirs is the tests' oracle for
the state folder, not a dependency, and of filelock 4.x the parts ``FileLock`` reaches on no platform (asyncio,
SQLite, read-write, lease and strict locks: more than half its lines) are left out, which
``tests/test_vendor.py`` holds (no kept module imports a left-out one; each lock runs cold). pip downloads each
wheel with ``--require-hashes`` for that Python; the package folder is unpacked as it is in the wheel but for the
parts left out, its license file beside it (``<name>.LICENSE``), and ``vendor/lock.json`` records the wheels and
the sha256 of every file written. ``tests/test_vendor.py`` fails when the tree, the lock and these pins disagree, and
when a published wheel no longer unpacks to the tree.

3.11 and newer get the newest releases: filelock 4.2+ no longer imports asyncio, about half of a writer's start
(benchmarks/README.md); 3.9 and 3.10 get the newest that still support 3.9.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    # (oldest Python, ((name, version, sha256 of the wheel, paths in the package left out), ...)), newest first; a
    # path ending in / is a folder.
    Set = tuple[tuple[int, int], tuple[tuple[str, str, str, tuple[str, ...]], ...]]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENDOR = os.path.join(ROOT, "vendor")
LOCK = "lock.json"

# What FileLock never reaches in filelock 4.x (its package ``__init__`` loads these lazily, by name, on first use).
NOT_FILELOCK = ("asyncio.py", "_async_lock/", "_sqlite/", "_soft/_lease.py", "_soft/_read_write/", "_soft/_strict/")
SETS: tuple[Set, ...] = (
    (
        (3, 11),
        (("filelock", "4.3.2", "02a8801bc6b2a80921bf3d7895c63084d53bae2a3c86783adce5ae2b89a1825b", NOT_FILELOCK),),
    ),
    # The newest release that still supports 3.9 (filelock 3.20 needs 3.10); its ``import filelock`` loads it whole.
    ((3, 9), (("filelock", "3.19.1", "d38e30481def20772f5baf097c122c3babc4fcdb7e14e57049eb9d88c6dc017d", ()),)),
)


def folder_of(oldest: tuple[int, int]) -> str:
    """The set's folder under ``vendor/``, named for its oldest Python (``core.deps`` reads it back)."""
    return f"py{oldest[0]}{oldest[1]}"


def wheel_name(name: str, version: str) -> str:
    return f"{name}-{version}-py3-none-any.whl"


def sha256_of(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def download(entry: Set, dest: str) -> list[str]:
    """The set's wheels in ``dest`` (pip, hash-checked, for the set's oldest Python); their paths."""
    oldest, pins = entry
    folder = folder_of(oldest)
    missing = [pin for pin in pins if not os.path.isfile(os.path.join(dest, wheel_name(pin[0], pin[1])))]
    if missing:
        os.makedirs(dest, exist_ok=True)
        with tempfile.TemporaryDirectory() as staging:
            requirements = os.path.join(staging, "requirements.txt")
            with open(requirements, "w", encoding="utf-8") as handle:
                handle.writelines(f"{name}=={version} --hash=sha256:{digest}\n" for name, version, digest, _ in missing)
            command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:"]
            command += ["--require-hashes", "--python-version", f"{oldest[0]}.{oldest[1]}", "-d", staging]
            subprocess.run([*command, "-r", requirements], check=True, stdin=subprocess.DEVNULL, cwd=staging)
            for name, version, _digest, _left_out in missing:
                os.replace(
                    os.path.join(staging, wheel_name(name, version)), os.path.join(dest, wheel_name(name, version))
                )
    paths = [os.path.join(dest, wheel_name(name, version)) for name, version, _digest, _left_out in pins]
    for path, (_name, _version, digest, _left_out) in zip(paths, pins):
        if sha256_of(path) != digest:
            raise SystemExit(f"{path}: sha256 is not the pinned {digest} (set {folder})")
    return paths


def unpacked(wheel: str, name: str, left_out: tuple[str, ...] = ()) -> dict[str, bytes]:
    """What the tree holds of one wheel: its package folder as it is but for ``left_out`` (paths in the package; a
    folder ends in /), and its license as ``<name>.LICENSE``."""
    files: dict[str, bytes] = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if member.endswith("/"):
                continue
            inside = member[len(name) + 1 :]
            if member.startswith(name + "/") and not any(
                inside == path or (path.endswith("/") and inside.startswith(path)) for path in left_out
            ):
                files[member] = archive.read(member)
            elif ".dist-info/" in member and os.path.basename(member).startswith("LICENSE"):
                files[f"{name}.LICENSE"] = archive.read(member)
    if f"{name}.LICENSE" not in files:
        raise SystemExit(f"{wheel}: no license file")
    return files


def tree_of(entry: Set, wheels: Sequence[str]) -> dict[str, bytes]:
    """Every file of the set's folder (paths relative to it) from its downloaded wheels."""
    files: dict[str, bytes] = {}
    for wheel, (name, _version, _digest, left_out) in zip(wheels, entry[1]):
        files.update(unpacked(wheel, name, left_out))
    return files


def wheels_of(pins: tuple[tuple[str, str, str, tuple[str, ...]], ...]) -> dict[str, object]:
    """The lock's record of a set's wheels: each one's version, sha256 and the paths left out of its package."""
    return {
        name: {"version": version, "sha256": digest, "left_out": list(left_out)}
        for name, version, digest, left_out in pins
    }


def lock_of(trees: dict[str, dict[str, bytes]]) -> dict[str, object]:
    """The lock file's content: per folder, the oldest Python, the wheels and each file's sha256."""
    lock: dict[str, object] = {}
    for oldest, pins in SETS:
        files = trees[folder_of(oldest)]
        lock[folder_of(oldest)] = {
            "python": f">={oldest[0]}.{oldest[1]}",
            "wheels": wheels_of(pins),
            "files": {path: hashlib.sha256(files[path]).hexdigest() for path in sorted(files)},
        }
    return lock


def write(vendor: str, trees: dict[str, dict[str, bytes]]) -> None:
    """Replace ``vendor`` with the trees and their lock."""
    staging = tempfile.mkdtemp(prefix=".vendor-", dir=os.path.dirname(vendor))
    try:
        for folder, files in trees.items():
            for path, data in files.items():
                target = os.path.join(staging, folder, *path.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as handle:
                    handle.write(data)
        with open(os.path.join(staging, LOCK), "w", encoding="utf-8") as handle:
            json.dump(lock_of(trees), handle, indent=1, sort_keys=True)
            handle.write("\n")
        shutil.rmtree(vendor, ignore_errors=True)
        os.replace(staging, vendor)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def problems(vendor: str = VENDOR) -> list[str]:
    """How the tree differs from its lock and the lock from ``SETS`` (offline); empty when they agree."""
    try:
        with open(os.path.join(vendor, LOCK), encoding="utf-8") as handle:
            lock = json.load(handle)
    except (OSError, ValueError) as error:
        return [f"{LOCK}: cannot read ({error})"]
    found: list[str] = []
    if sorted(lock) != sorted(folder_of(oldest) for oldest, _pins in SETS):
        found.append(f"{LOCK}: folders {sorted(lock)} are not the sets of tools/vendor.py")
    expected: dict[str, str] = {LOCK: ""}
    for oldest, pins in SETS:
        folder = folder_of(oldest)
        entry = lock.get(folder, {})
        if entry.get("wheels") != wheels_of(pins) or entry.get("python") != f">={oldest[0]}.{oldest[1]}":
            found.append(f"{LOCK}: {folder} does not pin what tools/vendor.py pins; run python tools/vendor.py")
        for path, digest in entry.get("files", {}).items():
            expected[f"{folder}/{path}"] = digest
    actual: dict[str, str] = {}
    for base, dirs, names in os.walk(vendor):
        dirs[:] = [name for name in dirs if name != "__pycache__"]  # bytecode is policed elsewhere (tests/conftest.py)
        for name in names:
            full = os.path.join(base, name)
            actual[os.path.relpath(full, vendor).replace(os.sep, "/")] = sha256_of(full)
    actual[LOCK] = ""
    found += [f"{path}: not in the lock" for path in sorted(set(actual) - set(expected))]
    found += [f"{path}: in the lock, missing" for path in sorted(set(expected) - set(actual))]
    found += [
        f"{path}: differs from the lock"
        for path in sorted(expected)
        if actual.get(path, expected[path]) != expected[path]
    ]
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="only compare the tree with its lock and the pins")
    parser.add_argument("--wheels", help="a folder to keep the downloaded wheels in (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.check:
        found = problems()
        print("\n".join(found) or "vendor/: as pinned")
        return 1 if found else 0
    with tempfile.TemporaryDirectory() as scratch:
        dest = args.wheels or scratch
        trees = {folder_of(entry[0]): tree_of(entry, download(entry, dest)) for entry in SETS}
        write(VENDOR, trees)
    print(f"vendor/: {', '.join(f'{pin[0]} {pin[1]} ({folder_of(o)})' for o, pins in SETS for pin in pins)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
