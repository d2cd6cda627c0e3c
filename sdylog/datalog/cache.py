"""On-disk caches of the Datalog front end and compiler: parsed programs
(with the plans their runs made) and compiled clause code, so that a process
does not parse, plan and compile the same rules again. Kept under
$SDYLOG_CACHE_DIR (default ~/.cache/sdylog); any failure to read or write a
cache just means working without it: a file that is missing, unreadable,
from another version or corrupt (each carries a checksum of its contents,
checked on reading) is ignored and written again, and a folder that cannot
be made or written is not used. A program is saved under a key of its rule
files' contents and of the engine's code (engine_stamp), the contents
read only when the files' stats changed (_stats); what a run seldom
reads (the clauses, plans for other sizes, the C programs of plans bound
already) it unpickles when read (pickled.py), so that a start costs what
the run reads."""
from __future__ import annotations

import atexit
import hashlib
import marshal
import os
import pickle
import sys
import time
import zlib
from functools import lru_cache

# (in the file names: processes of other versions sharing the folder keep their
# own files; bumped when what a load builds changes, e.g. a stepped stratum's parts)
_VERSION = f"10-{sys.version_info[0]}.{sys.version_info[1]}"
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


_MAGIC = b"sdylog-cache-2\n"


def _read(path: str):
    """The object pickled in a cache file; ValueError if it is not one, or
    corrupt. (A checksum, not a cryptographic hash: it tells a file cut short
    or damaged, and whoever may write the folder may write pickles anyway.)"""
    with open(path, "rb") as f:
        raw = f.read()
    n = len(_MAGIC)
    data = memoryview(raw)[n + 4:]
    if raw[:n] != _MAGIC or zlib.crc32(data).to_bytes(4, "little") != raw[n:n + 4]:
        raise ValueError(f"{path}: not an intact cache file")
    return pickle.loads(data)


def _write(path: str, obj) -> None:
    """obj pickled into a cache file: a header, the CRC-32 of the pickle, the
    pickle (written whole or not at all)."""
    data = pickle.dumps(obj)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(_MAGIC + zlib.crc32(data).to_bytes(4, "little") + data)
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
    """load(path), remembered on disk by the contents of the rule files it
    read. The index of `path` names those files, their key (_files_key),
    and their stats when the key was made (_stats): while the stats are
    the same, the key is (no rule file read); when one differs, the key is
    made again from the contents (an edit gives another key)."""
    d = cache_dir()
    index = _index_file(d, path) if d else None
    if index:
        try:
            files, stats, key = _read(index)
            now = _stats(files)
            if now is None or now != stats:
                key = _files_key(files)
                if now is not None:   # (stats to trust next time)
                    _write(index, (files, now, key))
            cached = os.path.join(d, f"program-{key}.pickle")
            program = _read(cached)
            os.utime(cached)   # (its age says when it was last used: drop_least_recent)
            _with_plans(program, cached)
            return program
        except Exception:
            pass
    program = load(path)
    if index:
        try:
            files = sorted(os.path.abspath(f) for f in program.files)
            stats = _stats(files)   # (before the contents: a file edited meanwhile gets another stat)
            key = _files_key(files)
            _write(index, (files, stats, key))
            cached = os.path.join(d, f"program-{key}.pickle")
            _write(cached, program)
            _with_plans(program, cached)
            drop_least_recent(d, "program-", ".pickle", _MAX_PROGRAMS)
        except Exception:
            pass
    return program


# A file's stat tells an edit only when the edit comes later than the clock's
# granularity (a file system may keep seconds): a file changed this recently
# is read whatever its stat says (as git treats "racily clean" files).
_SETTLED_NS = 2_000_000_000


def _stats(files) -> tuple | None:
    """The engine's stamp and each file's device, inode, size, modification
    and change times; None when a file changed less than _SETTLED_NS ago.
    (Any write or replacement of a file sets its change time, which no
    program can set back: an edit gives other stats, whatever the size or
    modification time left.)"""
    settled = time.time_ns() - _SETTLED_NS
    stats = [engine_stamp()]
    for name in files:
        st = os.stat(name)
        if max(st.st_mtime_ns, st.st_ctime_ns) > settled:
            return None
        stats.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(stats)


_SAVED_WITH_PLANS: list = []   # (program, its file) cached on disk by this process


def _with_plans(program, path: str) -> None:
    """Save the program again at exit if it gained plans (plan.PlanCache, in
    its run_cache): a process running it again plans nothing this one did."""
    if not _SAVED_WITH_PLANS:
        atexit.register(_save_plans)
    _SAVED_WITH_PLANS.append((program, path))


def _save_plans() -> None:
    """Each program whose runs made plans (plan.PlanCache), or bound plans
    or batches of them for C (native_db.TableLayout, in its
    memory_engine.Schema) since it was loaded, saved again. (Run at exit: whatever happens, no error.)"""
    for program, path in _SAVED_WITH_PLANS:
        try:
            plans, schema = program.run_cache.get("plans"), program.run_cache.get("schema")
            if plans is not None and plans.added or schema is not None and schema.tables.added:
                _write(path, program)
        except Exception:
            pass


def _index_file(d: str, path: str) -> str:
    """The file naming the rule files a program's main file `path` read (one
    per main file: processes loading other programs do not rewrite it)."""
    name = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:32]
    return os.path.join(d, f"programs-{_VERSION}-{name}.idx")


def drop_least_recent(d: str, prefix: str, suffix: str, keep: int) -> None:
    """Remove all but the `keep` most recently used (modified) files of
    folder `d` named `prefix...suffix`."""
    used = []                                    # (when last used, path)
    for n in os.listdir(d):
        if n.startswith(prefix) and n.endswith(suffix):
            path = os.path.join(d, n)
            try:
                used.append((os.path.getmtime(path), path))
            except OSError:                      # (removed by another process meanwhile)
                pass
    used.sort(reverse=True)
    for _, old in used[keep:]:
        try:
            os.remove(old)
        except OSError:
            pass


def _files_key(files) -> str:
    """The key of a program saved from the rule files `files`: their contents,
    and the code that made and planned it (engine_stamp)."""
    h = hashlib.sha256(_VERSION.encode())
    h.update(engine_stamp().encode())
    for name in files:
        h.update(name.encode())
        with open(name, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:32]


@lru_cache(maxsize=None)
def engine_stamp() -> str:
    """The size and modification time of each module of the Datalog package
    and of its C extension: a program saved with plans made by other code (an
    edit of the planner or of the C instructions, another build) is not read."""
    here = os.path.dirname(os.path.abspath(__file__))
    stamps = []
    for name in sorted(os.listdir(here)):
        if name.endswith((".py", ".so", ".pyd")):
            st = os.stat(os.path.join(here, name))
            stamps.append(f"{name} {st.st_size} {st.st_mtime_ns}")
    return "\n".join(stamps)


class CodeCache:
    """Python code compiled from generated sources (the Python evaluator's,
    explain's), by the hash of the source and its name (a runtime error is
    located by the rule ids in the name: runtime_errors.py). Kept on disk, the
    entries used last first, at most _MAX_CODES: a process compiles only what
    no earlier one did (an explain run: ~230 sources, 50-90 ms of compiling)."""

    def __init__(self):
        self.saved: dict[str, bytes] | None = None   # key -> marshalled code, as the file holds them
        self.codes: dict[str, object] = {}            # key -> code, those this process used, in order
        self.added = 0
        self.path: str | None = None   # the file read, written again at exit (not another folder's)

    def _load(self) -> None:
        d = cache_dir()
        self.path = os.path.join(d, f"codes-{_VERSION}.pickle") if d else None
        try:
            self.saved = _read(self.path) if self.path else {}
        except Exception:
            self.saved = {}

    def compile(self, src: str, name: str):
        if self.saved is None:
            self._load()
            atexit.register(self.save)
        key = hashlib.sha1(f"{name}\0{src}".encode()).hexdigest()
        code = self.codes.get(key)
        if code is None:
            saved = self.saved.get(key)
            if saved is not None:
                code = marshal.loads(saved)
            else:
                code = compile(src, name, "exec")
                self.added += 1
            self.codes[key] = code
        return code

    def save(self) -> None:
        """(Run at exit: whatever happens, no error.)"""
        if not self.added or self.path is None:
            return
        try:
            codes = {k: marshal.dumps(code) for k, code in self.codes.items()}
            for k, saved in self.saved.items():
                if len(codes) >= _MAX_CODES:
                    break
                codes.setdefault(k, saved)
            _write(self.path, codes)
        except Exception:
            pass
        self.added = 0


CODES = CodeCache()
