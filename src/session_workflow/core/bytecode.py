"""A hook's modules from one file per event: the bytecode the interpreter wrote for them, gathered after a run.

A hook imports about forty modules, and the standard path finder pays for each a directory lookup, the .pyc's
path worked out in Python, the source's stat, an open and a read of the .pyc: about a fifth of what the hook's
imports cost. ``hooks/hook.py`` puts a ``Bundle`` first on ``sys.meta_path`` when the plugin data folder keeps
bytecode. Each event has its own file, and a module's code is read (one ``pread``) only when it is imported:
what SessionStart at ``compact`` needs is not read at ``startup``, nor by UserPromptSubmit.

An entry is what the interpreter's own .pyc held, checked as the .pyc is: the source's mtime (seconds) and size,
from one stat of the source when the module is imported, and the interpreter's magic number for the whole file;
and it is the source the standard finder would take (under this checkout's ``src``, no package of the same name
beside it). A module not in the file, changed since, or unreadable there is imported the standard way, and the
hook's end writes the file afresh from the .pyc files the interpreter wrote. Nothing is compiled here: the file
is never more current, nor less checked, than those .pyc files, and it lives beside them, in the folder hook.py
judged the user's alone. It is a cache, written as a .pyc is (a temp file renamed, no lock: a hook must not wait
for one): a write that fails or is lost to another hook's costs a later run a write.

The file: the magic number, the index's length (4 bytes, little-endian), the index, the codes. The index is
NUL-separated fields, seven per module (name, source, ``1`` for a package, the source's mtime and size as a .pyc
keeps them, the code's offset from the index's end and its length), read with ``split``: damage can make it
unreadable, never a costly ``marshal.loads``.
"""

from __future__ import annotations

import marshal
import os
import sys

from session_workflow.core.boundedio import open_regular, read_prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _frozen_importlib import ModuleSpec
    from importlib.abc import Loader
    from types import ModuleType

    # name -> (source, is a package, its mtime & 0xFFFFFFFF, its size & 0xFFFFFFFF, the code's offset and length)
    Index = dict[str, tuple[str, bool, int, int, int, int]]
    # name -> ((source, is a package, mtime, size), the code's bytes)
    Codes = dict[str, tuple[tuple[str, bool, int, int], bytes]]

else:
    Loader = object  # the import system asks only for the methods

PACKAGE = "session_workflow"
# An index or a module's code bigger than this is not ours (the whole package's index is about 10 KB, its
# biggest module's code about 60 KB).
MAX_INDEX_BYTES = 1 << 20
MAX_CODE_BYTES = 4 << 20
MAX_BUNDLE_BYTES = 64 << 20
_FIELDS = 7
# A .pyc's header: magic number, flags (0: checked by the source's mtime and size), mtime, size.
_PYC_HEADER = 16


def bundle_path(prefix: str, src: str, event: str) -> str:
    """The event's file, where the package's .pyc files are (``sys.pycache_prefix``'s layout): one per plugin
    checkout, interpreter and event. ``event`` is one of hook.py's names (letters only)."""
    folder = os.path.join(prefix, os.path.abspath(src).lstrip(os.sep), PACKAGE)
    return os.path.join(folder, f"{event}.{sys.implementation.cache_tag}.bundle")


_CODE = type(bundle_path.__code__)  # types.CodeType, without importing types


def _ours(name: str) -> bool:
    """A module of the package (the only ones the file serves and keeps)."""
    return name == PACKAGE or name.startswith(PACKAGE + ".")


def _stamp(origin: str) -> tuple[int, int] | None:
    """The source's mtime and size as a .pyc header keeps them; None when it cannot be stat'ed."""
    try:
        info = os.stat(origin)
    except (OSError, ValueError):
        return None
    return int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF


def _current(name: str, entry: tuple[str, bool, int, int, int, int], src: str) -> bool:
    """Whether ``entry`` is for the source the standard finder would take for ``name`` under ``src`` (a package
    ``name/__init__.py`` wins over a module ``name.py`` left beside it), as it was when its code was made."""
    origin, package, mtime, size, _offset, length = entry
    where = os.path.join(src, *name.split("."))
    if origin != where + ("/__init__.py" if package else ".py") or length > MAX_CODE_BYTES:
        return False
    return _stamp(origin) == (mtime, size) and (package or _stamp(where + "/__init__.py") is None)


def _index_end(head: bytes, magic: bytes) -> int:
    """Where the index of a bundle starting with ``head`` ends (its codes' offsets count from there); 0 when the
    bytes are not a bundle of this interpreter."""
    start = len(magic) + 4
    if len(head) < start or head[: len(magic)] != magic:
        return 0
    return start + int.from_bytes(head[len(magic) : start], "little")


def _index(head: bytes, magic: bytes) -> tuple[Index, int]:
    """The index at the start of a bundle and where it ends; empty when the bytes are not a bundle of this
    interpreter, or do not hold the whole index, or it is not seven fields a module."""
    end = _index_end(head, magic)
    if not len(magic) + 4 < end <= len(head):
        return {}, 0
    fields = head[len(magic) + 4 : end].split(b"\0")
    if len(fields) % _FIELDS:
        return {}, 0
    index: Index = {}
    try:
        for at in range(0, len(fields), _FIELDS):
            name, origin, package, *numbers = fields[at : at + _FIELDS]
            if max(map(len, numbers)) > 20:  # not a number of ours (and ``int`` is slow on long digit strings)
                return {}, 0
            mtime, size, offset, length = (int(number) for number in numbers)  # ValueError: not digits
            if min(mtime, size, offset, length) < 0 or package not in (b"0", b"1"):
                return {}, 0
            index[name.decode("ascii")] = (os.fsdecode(origin), package == b"1", mtime, size, offset, length)
    except (ValueError, UnicodeError):
        return {}, 0
    return index, end


def _codes(data: bytes, magic: bytes, src: str) -> Codes:
    """A whole bundle's entries still current, each with its code's bytes."""
    index, base = _index(data, magic)
    return {
        name: (entry[:4], data[base + entry[4] : base + entry[4] + entry[5]])
        for name, entry in index.items()
        if _current(name, entry, src) and base + entry[4] + entry[5] <= len(data)
    }


def _bundle(codes: Codes, magic: bytes) -> bytes:
    """A bundle's bytes: the header, the index, the codes."""
    fields: list[bytes] = []
    offset = 0
    for name, ((origin, package, mtime, size), code) in codes.items():
        numbers = (mtime, size, offset, len(code))
        fields += [name.encode("ascii"), os.fsencode(origin), b"1" if package else b"0"]
        fields += [str(number).encode("ascii") for number in numbers]
        offset += len(code)
    head = b"\0".join(fields)
    return b"".join([magic, len(head).to_bytes(4, "little"), head, *(code for _entry, code in codes.values())])


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
        if entry is not None and self.fd is not None and _current(name, entry, self.src):
            try:
                data = os.pread(self.fd, entry[5], self.base + entry[4])
                code = marshal.loads(data) if len(data) == entry[5] else None
            except Exception:  # damaged code (SystemError, ValueError...) is no code: imported from its source
                code = None
        if not isinstance(code, _CODE):
            if _ours(name):
                self.missed = True
            return None
        spec = self.spec(name, self, origin=entry[0], is_package=entry[1])  # type: ignore[index]
        if entry[1]:  # type: ignore[index]
            spec.submodule_search_locations = [os.path.dirname(entry[0])]  # type: ignore[index]
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
        """After a run that imported a module of the package the standard way: write the file afresh, from what it
        holds still current and the .pyc files the interpreter read or wrote this run (one not of the current
        source, or not timestamp-checked, is left out); no write when that brings nothing new, and none kept when
        it fails (a cache, as a .pyc is)."""
        if not self.missed:
            return
        fresh: Codes = {}
        for name, module in list(sys.modules.items()):
            spec = getattr(module, "__spec__", None)
            if _ours(name) and spec is not None and spec.loader is not self and spec.cached and spec.origin:
                found = self._from_pyc(spec.origin, spec.cached, spec.submodule_search_locations is not None)
                if found is not None:
                    fresh[name] = found
        read = read_prefix(self.path, MAX_BUNDLE_BYTES)
        codes = _codes(read[0] if read else b"", self.magic, self.src)
        if all(codes.get(name) == entry for name, entry in fresh.items()):
            return  # nothing new (a module no .pyc serves misses on each run: no write on each run)
        codes.update(fresh)
        # Written as importlib writes a .pyc (its ``_write_atomic``): a temp file of this process, then a rename; no
        # lock, no fsync. Not ``core.atomic``: its imports (contextlib, collections, functools) are compiled afresh
        # in a new data folder, 18 ms of a first run (every test's sandbox is one).
        temp = f"{self.path}.{os.getpid()}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            os.makedirs(os.path.dirname(self.path), 0o700, exist_ok=True)
            fd = os.open(temp, flags, 0o600)
            try:
                view = memoryview(_bundle(codes, self.magic))
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(temp, self.path)
        except OSError:
            try:  # noqa: SIM105 - contextlib is what this write avoids importing
                os.unlink(temp)
            except OSError:
                pass

    def _from_pyc(self, origin: str, cached: str, package: bool) -> tuple[tuple[str, bool, int, int], bytes] | None:
        """What a .pyc gives an entry: its code as written, when it is this interpreter's, timestamp-checked and of
        the source as it is now."""
        read = read_prefix(cached, MAX_CODE_BYTES + _PYC_HEADER)
        data = read[0] if read else b""
        if len(data) <= _PYC_HEADER or data[:4] != self.magic or data[4:8] != bytes(4):
            return None
        mtime, size = int.from_bytes(data[8:12], "little"), int.from_bytes(data[12:16], "little")
        if _stamp(origin) != (mtime, size):
            return None
        return (origin, package, mtime, size), data[_PYC_HEADER:]
