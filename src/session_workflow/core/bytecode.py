"""A hook's modules from one file per event: the bytecode the interpreter wrote for them, gathered after a run.

A hook imports about forty modules, and the standard path finder pays for each a directory lookup, the .pyc's
path worked out in Python, the source's stat, an open and a read of the .pyc: about a fifth of what the hook's
imports cost. ``hooks/hook.py`` puts a ``Bundle`` first on ``sys.meta_path`` when the plugin data folder keeps
bytecode. Each event has its own file, and a module's code is read (one ``pread``) only when it is imported:
what SessionStart at ``compact`` needs is not read at ``startup``, nor by UserPromptSubmit.

An entry is what the interpreter's own .pyc held, checked as the .pyc is: the source's mtime (seconds) and size,
from one stat of the source when the module is imported, and the interpreter's magic number for the whole file.
A module not in the file, changed since, or unreadable there is imported the standard way, and the hook's end
writes the file afresh from the .pyc files the interpreter wrote. Nothing is compiled here: the file is never
more current, nor less checked, than those .pyc files, and it lives beside them, in the folder hook.py judged the
user's alone.

The file: the magic number, the index's length (4 bytes, little-endian), the index (marshal: name -> source,
is a package, source mtime and size as a .pyc keeps them, the code's offset from the index's end and its
length), the codes.
"""

from __future__ import annotations

import marshal
import os
import sys

from session_workflow.core.boundedio import open_regular

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _frozen_importlib import ModuleSpec
    from importlib.abc import Loader
    from types import ModuleType

    # name -> (source, is a package, its mtime & 0xFFFFFFFF, its size & 0xFFFFFFFF, the code's offset and length)
    Index = dict[str, tuple[str, bool, int, int, int, int]]

else:
    Loader = object  # the import system asks only for the methods

PACKAGE = "session_workflow"
# An index or a module's code bigger than this is not ours (the whole package's index is about 10 KB, its
# biggest module's code about 60 KB).
MAX_INDEX_BYTES = 1 << 20
MAX_CODE_BYTES = 4 << 20
# A .pyc's header: magic number, flags (0: checked by the source's mtime and size), mtime, size.
_PYC_HEADER = 16


def bundle_path(prefix: str, src: str, event: str) -> str:
    """The event's file, where the package's .pyc files are (``sys.pycache_prefix``'s layout): one per plugin
    checkout, interpreter and event. ``event`` is one of hook.py's names (letters only)."""
    folder = os.path.join(prefix, os.path.abspath(src).lstrip(os.sep), PACKAGE)
    return os.path.join(folder, f"{event}.{sys.implementation.cache_tag}.bundle")


_CODE = type(bundle_path.__code__)  # types.CodeType, without importing types


def _stamp(origin: str) -> tuple[int, int] | None:
    """The source's mtime and size as a .pyc header keeps them; None when it cannot be stat'ed."""
    try:
        info = os.stat(origin)
    except (OSError, ValueError):
        return None
    return int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF


def _current(name: str, entry: object, src: str) -> bool:
    """Whether ``entry`` is an index entry (the file is data until checked) for the source the standard finder
    would take for ``name`` under ``src``, as it was when its code was made."""
    if not (isinstance(entry, tuple) and len(entry) == 6):
        return False
    origin, package, mtime, size, offset, length = entry
    if package not in (True, False) or not (isinstance(offset, int) and isinstance(length, int)):
        return False
    where = os.path.join(src, *name.split(".")) + ("/__init__.py" if package else ".py")
    return origin == where and offset >= 0 and 0 <= length <= MAX_CODE_BYTES and _stamp(origin) == (mtime, size)


def _index_end(head: bytes, magic: bytes) -> int:
    """Where the index of a bundle starting with ``head`` ends (its codes' offsets count from there); 0 when the
    bytes are not a bundle of this interpreter."""
    start = len(magic) + 4
    if len(head) < start or head[: len(magic)] != magic:
        return 0
    return start + int.from_bytes(head[len(magic) : start], "little")


def _index(head: bytes, magic: bytes) -> tuple[Index, int]:
    """The index at the start of a bundle and where it ends; empty when the bytes are not a bundle of this
    interpreter, or do not hold the whole index."""
    end = _index_end(head, magic)
    try:
        index = marshal.loads(head[len(magic) + 4 : end]) if len(magic) + 4 < end <= len(head) else None
    except (ValueError, EOFError, TypeError):
        index = None
    return (index, end) if isinstance(index, dict) else ({}, 0)


def _codes(data: bytes, magic: bytes, src: str) -> dict[str, tuple[tuple[str, bool, int, int], bytes]]:
    """A whole bundle's entries still current, each with its code's bytes."""
    index, base = _index(data, magic)
    found = {}
    for name, entry in index.items():
        if _current(name, entry, src) and base + entry[4] + entry[5] <= len(data):
            found[name] = (entry[:4], data[base + entry[4] : base + entry[4] + entry[5]])
    return found


def _bundle(codes: dict[str, tuple[tuple[str, bool, int, int], bytes]], magic: bytes) -> bytes:
    """A bundle's bytes: the header, the index, the codes."""
    index: Index = {}
    offset = 0
    for name, (stamp, code) in codes.items():
        index[name] = (*stamp, offset, len(code))
        offset += len(code)
    head = marshal.dumps(index)
    return b"".join([magic, len(head).to_bytes(4, "little"), head, *(code for _stamp, code in codes.values())])


class Bundle(Loader):
    """The finder and loader on ``sys.meta_path`` that serve the package's modules from one event's file."""

    def __init__(
        self, path: str, src: str, fd: int | None, index: tuple[Index, int], spec: type[ModuleSpec], magic: bytes
    ) -> None:
        self.path = path
        self.src = src  # the checkout's ``src``, as on ``sys.path``: where each module's source must be
        self.fd = fd
        self.index, self.base = index  # the codes' offsets count from ``base``, where the index ends
        self.spec = spec
        self.magic = magic
        self.missed = False  # a module of the package was imported the standard way: write the file afresh

    @classmethod
    def install(cls, prefix: str, src: str, event: str) -> Bundle | None:
        """Read the event's index (no file yet: an empty one, which notes what is imported the standard way) and
        put the bundle first on ``sys.meta_path``; None on an interpreter without CPython's import internals."""
        try:
            from _frozen_importlib import ModuleSpec
            from _frozen_importlib_external import MAGIC_NUMBER
        except ImportError:
            return None
        path = bundle_path(prefix, src, event)
        opened = open_regular(path)
        fd: int | None = None
        index: tuple[Index, int] = ({}, 0)
        if opened is not None:
            fd = opened[0]
            try:
                head = os.read(fd, 64 << 10)
                end = _index_end(head, MAGIC_NUMBER)
                if len(head) < end <= MAX_INDEX_BYTES:
                    head += os.pread(fd, end - len(head), len(head))
                index = _index(head, MAGIC_NUMBER)
            except OSError:
                index = ({}, 0)
        bundle = cls(path, src, fd, index, ModuleSpec, MAGIC_NUMBER)
        sys.meta_path.insert(0, bundle)
        return bundle

    def find_spec(self, name: str, path: object = None, target: object = None) -> ModuleSpec | None:
        """A spec served from the file when its entry is there, its source unchanged and its code readable; else
        None (the standard finders go on), noted when the module is the package's."""
        entry = self.index.get(name)
        code = None
        if self.fd is not None and _current(name, entry, self.src):
            try:
                data = os.pread(self.fd, entry[5], self.base + entry[4])  # type: ignore[index]
                code = marshal.loads(data) if len(data) == entry[5] else None  # type: ignore[index]
                code = code if isinstance(code, _CODE) else None
            except (OSError, ValueError, EOFError, TypeError, OverflowError):
                code = None
        if code is None:
            if name == PACKAGE or name.startswith(PACKAGE + "."):
                self.missed = True
            return None
        origin, package = entry[0], entry[1]  # type: ignore[index]
        spec = self.spec(name, self, origin=origin, is_package=package)
        if package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        spec.has_location = True  # sets __file__, as the standard loader does
        spec.cached = self.path
        spec.loader_state = code
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        """The default module object."""
        return None

    def exec_module(self, module: ModuleType) -> None:
        """Run the module's code, read by ``find_spec``."""
        exec(module.__spec__.loader_state, module.__dict__)  # type: ignore[union-attr]

    def save(self) -> None:
        """After a run that imported a module of the package the standard way: write the file afresh, under its
        lock: what it holds still current, and the .pyc files the interpreter read or wrote this run. A .pyc that
        is not the current source's, or not timestamp-checked, is left out."""
        if not self.missed:
            return
        fresh: dict[str, tuple[tuple[str, bool, int, int], bytes]] = {}
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            ours = name == PACKAGE or name.startswith(PACKAGE + ".")
            if ours and spec is not None and spec.loader is not self and spec.cached and spec.origin:
                found = self._from_pyc(spec.origin, spec.cached, spec.submodule_search_locations is not None)
                if found is not None:
                    fresh[name] = found
        if not fresh:
            return
        from session_workflow.core.atomic import update_file

        def merged(current: bytes | None) -> bytes | None:
            codes = _codes(current or b"", self.magic, self.src)
            if all(codes.get(name) == entry for name, entry in fresh.items()):
                return None  # nothing new (a module no .pyc serves misses on each run: no write on each run)
            codes.update(fresh)
            return _bundle(codes, self.magic)

        update_file(self.path, merged, 0o600)

    def _from_pyc(self, origin: str, cached: str, package: bool) -> tuple[tuple[str, bool, int, int], bytes] | None:
        """What a .pyc gives an entry: its code as written, when it is this interpreter's, timestamp-checked and of
        the source as it is now."""
        from session_workflow.core.boundedio import read_prefix

        read = read_prefix(cached, 16 << 20)
        data = read[0] if read else b""
        if len(data) <= _PYC_HEADER or data[:4] != self.magic or data[4:8] != bytes(4):
            return None
        mtime, size = int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")
        if _stamp(origin) != (mtime, size):
            return None
        return (origin, package, mtime, size), data[_PYC_HEADER:]
