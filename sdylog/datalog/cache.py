"""On-disk caches of the Datalog front end and compiler: parsed programs and
compiled clause code, so that a process does not parse and compile the same
rules again. Kept under $SDYLOG_CACHE_DIR (default ~/.cache/sdylog); any
failure to read or write a cache just means working without it: a file that
is missing, unreadable, from another version or corrupt (each carries a
hash of its contents, checked on reading) is ignored and written again, and
a folder that cannot be made or written is not used."""
from __future__ import annotations

import atexit
import hashlib
import marshal
import os
import pickle
import sys
from functools import lru_cache

# (in the file names: processes of other versions sharing the folder keep their
# own files; bumped when what a load builds changes, e.g. a stepped stratum's parts)
_VERSION = f"3-{sys.version_info[0]}.{sys.version_info[1]}"
# The code cache keeps the most recently used entries only: one propagation run
# uses ~200, and every rule edit or new shape of facts adds some, so an unbounded
# file grows to megabytes that each process reads whole before its first compile.
_MAX_CODES = 1000
# Parsed programs: one file per distinct set of rule texts, so each rule edit
# adds one; the least recently used beyond this many are removed. A run of the
# export pipeline reads ~6 programs, and several checkouts may share the folder
# (each its own files): too few, and they evict each other's programs, which
# every process then parses again (~0.3 s each for the reshard rules).
_MAX_PROGRAMS = 64


def cache_dir() -> str | None:
    d = os.environ.get("SDYLOG_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "sdylog")
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return d


_MAGIC = b"sdylog-cache-1\n"


def _framed(data: bytes) -> bytes:
    """The bytes of a cache file: a header, a hash of `data`, then `data`."""
    return _MAGIC + hashlib.sha256(data).digest() + data


def _read_framed(path: str) -> bytes:
    """The data of a cache file; ValueError if it is not one, or corrupt."""
    with open(path, "rb") as f:
        raw = f.read()
    n = len(_MAGIC)
    data = raw[n + 32:]
    if not raw.startswith(_MAGIC) or hashlib.sha256(data).digest() != raw[n:n + 32]:
        raise ValueError(f"{path}: not an intact cache file")
    return data


def _write_atomic(path: str, data: bytes) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(_framed(data))
        os.replace(tmp, path)
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass


@lru_cache(maxsize=None)
def rule_program(path: str):
    """The rule program at `path` (a .dl file), parsed once per process and
    remembered on disk (load_program_cached): what every driver runs."""
    from sdylog.datalog import load_program
    return load_program_cached(path, load_program)


def load_program_cached(path: str, load):
    """load(path), remembered on disk by the contents of the rule files it read."""
    d = cache_dir()
    index = _index_file(d, path) if d else None
    if index:
        try:
            files = pickle.loads(_read_framed(index))
            cached = os.path.join(d, f"program-{_files_key(files)}.pickle")
            program = pickle.loads(_read_framed(cached))
            os.utime(cached)   # (its age says when it was last used: see _drop_old_programs)
            return program
        except Exception:
            pass
    program = load(path)
    if index:
        try:
            files = sorted(os.path.abspath(f) for f in program.files)
            _write_atomic(index, pickle.dumps(files))
            _write_atomic(os.path.join(d, f"program-{_files_key(files)}.pickle"), pickle.dumps(program))
            _drop_old_programs(d)
        except Exception:
            pass
    return program


def _index_file(d: str, path: str) -> str:
    """The file naming the rule files a program's main file `path` read (one
    per main file: processes loading other programs do not rewrite it)."""
    name = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:32]
    return os.path.join(d, f"programs-{_VERSION}-{name}.idx")


def _drop_old_programs(d: str) -> None:
    """Remove all but the _MAX_PROGRAMS most recently used program files."""
    paths = [os.path.join(d, n) for n in os.listdir(d) if n.startswith("program-") and n.endswith(".pickle")]
    if len(paths) <= _MAX_PROGRAMS:
        return
    paths.sort(key=os.path.getmtime, reverse=True)
    for old in paths[_MAX_PROGRAMS:]:
        try:
            os.remove(old)
        except OSError:
            pass


def _files_key(files) -> str:
    h = hashlib.sha256(_VERSION.encode())
    for name in files:
        h.update(name.encode())
        with open(name, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:32]


class CodeCache:
    """Compiled Python code of generated sources, by the hash of the source and its name; saved
    most recently used first, at most _MAX_CODES entries."""

    def __init__(self):
        self.codes: dict[str, object] | None = None
        self.used: dict[str, None] = {}   # keys used by this process, in order
        self.added = 0

    def _load(self) -> None:
        self.codes = {}
        d = cache_dir()
        if not d:
            return
        try:
            self.codes = marshal.loads(_read_framed(os.path.join(d, f"codes-{_VERSION}.marshal")))
        except Exception:
            self.codes = {}

    def compile(self, src: str, name: str):
        if self.codes is None:
            self._load()
            atexit.register(self.save)
        # (the name too: a runtime error is located by the rule ids in it, runtime_errors.py)
        key = hashlib.sha1(f"{name}\0{src}".encode()).hexdigest()
        code = self.codes.get(key)
        if code is None:
            code = compile(src, name, "exec")
            self.codes[key] = code
            self.added += 1
        self.used[key] = None
        return code

    def save(self) -> None:
        """(Run at exit: whatever happens, no error.)"""
        if not self.added or self.codes is None:
            return
        try:
            d = cache_dir()
            if not d:
                return
            codes = {k: self.codes[k] for k in self.used}
            for k, code in self.codes.items():
                if len(codes) >= _MAX_CODES:
                    break
                codes.setdefault(k, code)
            _write_atomic(os.path.join(d, f"codes-{_VERSION}.marshal"), marshal.dumps(codes))
        except Exception:
            pass
        self.added = 0


CODES = CodeCache()
