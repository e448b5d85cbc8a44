"""The build backend (pyproject's ``build-backend``): setuptools, run in a temporary copy of what the build reads.

setuptools writes ``src/*.egg-info`` (and, by version, ``build/``) into the folder it builds in, and a marketplace
install copies the plugin folder whole, ignored files included. So ``python -m build``, pip and tox build here
without leaving a file: each hook that writes copies the package and its metadata files into a temporary folder,
runs setuptools' own hook there and hands back its answer; the output folders it is given stay where they are.
An editable install (``tools/dev.sh``) asks for its requirements and metadata in a copy too, and builds its wheel
in place: that wheel must point at this checkout's ``src``, and setuptools writes its files in a temporary folder.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import shutil
import tempfile
from typing import Any

# setuptools is the build's own requirement, imported when a frontend calls a hook (not typed for mypy here).
_setuptools: Any = importlib.import_module("setuptools.build_meta")


def _forget_own_bytecode() -> None:
    """Python wrote this module's bytecode beside it on import (before any line here ran): remove it and the
    ``__pycache__`` folder if that leaves it empty, so the build leaves nothing in the plugin folder."""
    cached = importlib.util.cache_from_source(__file__)
    with contextlib.suppress(OSError):
        os.remove(cached)
        os.rmdir(os.path.dirname(cached))


_forget_own_bytecode()

# What the build reads besides src/: pyproject names the readme and the license file, MANIFEST.in what the sdist
# holds, the sdist carries this backend so a wheel builds from it too, and an unpacked sdist adds the two files
# setuptools wrote into it.
FILES = (
    "pyproject.toml",
    "MANIFEST.in",
    "README.md",
    "LICENSE",
    "references/python-package.md",
    "tools/backend/build_in_copy.py",
    "PKG-INFO",
    "setup.cfg",
)


def copy_sources(root: str, target: str) -> None:
    """Copy what the build reads from ``root`` into ``target``: those of the files above that exist (a checkout
    has no PKG-INFO) and ``src``, without bytecode or an old egg-info."""
    for name in FILES:
        if os.path.isfile(os.path.join(root, name)):
            os.makedirs(os.path.dirname(os.path.join(target, name)), exist_ok=True)
            shutil.copy2(os.path.join(root, name), os.path.join(target, name))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    shutil.copytree(os.path.join(root, "src"), os.path.join(target, "src"), ignore=ignore)


def _in_a_copy(hook: str, *args: Any) -> Any:
    """setuptools' ``hook`` run in a temporary copy of the checkout (the working directory): its answer."""
    root = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="session-workflow-build-") as copy:
        copy_sources(root, copy)
        os.chdir(copy)
        try:
            return getattr(_setuptools, hook)(*args)
        finally:
            os.chdir(root)


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return list(_in_a_copy("get_requires_for_build_wheel", config_settings))


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return list(_in_a_copy("get_requires_for_build_sdist", config_settings))


def get_requires_for_build_editable(config_settings: dict[str, Any] | None = None) -> list[str]:
    return list(_in_a_copy("get_requires_for_build_editable", config_settings))


def prepare_metadata_for_build_wheel(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return str(_in_a_copy("prepare_metadata_for_build_wheel", os.path.abspath(metadata_directory), config_settings))


def prepare_metadata_for_build_editable(metadata_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    out = os.path.abspath(metadata_directory)
    return str(_in_a_copy("prepare_metadata_for_build_editable", out, config_settings))


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    metadata = None if metadata_directory is None else os.path.abspath(metadata_directory)
    return str(_in_a_copy("build_wheel", os.path.abspath(wheel_directory), config_settings, metadata))


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    return str(_in_a_copy("build_sdist", os.path.abspath(sdist_directory), config_settings))


build_editable = _setuptools.build_editable
