"""The one place that writes what a command outputs (`-o`, `--db`, `-D`,
`facts -o`), so that a failing command never leaves a partial or stray file
and never destroys what the user pointed an output at.

A command names its outputs first (`plan`: each checked before any work, so
that a missing or unwritable folder fails at once, not after the whole
pipeline), then hands every output its contents together (`write_all`):

- a regular file (new or existing) is written whole or not at all: into a
  temporary folder beside it, renamed over it once every output of the
  command is rendered. A new file's mode comes from the umask; an existing
  file keeps its mode.
- a symlink is followed: the file it points at is written (the link stays).
- an existing file that is not regular (a device such as /dev/null, a FIFO),
  or a file the path reaches through an open descriptor (/dev/stdout,
  /dev/fd/N), is written through, appended to as the shell's `>>` would (a
  shell's `>` has emptied it already): replacing it would destroy the
  device, or the file the shell holds open.
- '-' is stdout.
"""
from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from sdylog.ir.diagnostics import SdylogError, UsageError

# An output's contents: its text, or a function that writes the file at the
# path it is given (a path that does not exist yet: DuckDB, for one, takes an
# empty file for a broken database).
Contents = str | Callable[[str], None]


@dataclass(frozen=True)
class Output:
    """One file a command writes, as checked before the work."""
    name: str            # as the user wrote it (for messages); '-': stdout
    path: str            # where the bytes go: symlinks followed, absolute
    through: bool        # written through (stdout, a device, FIFO, descriptor), never replaced
    mode: int | None = None                 # an existing regular file's permission bits, kept
    missing_folders: tuple[str, ...] = ()   # made by write_all, outermost first
    what: str = "output"                    # the option that named it (e.g. '--db'), for messages

    @property
    def stdout(self) -> bool:
        return self.name == "-"


def plan(name: str, what: str = "output", create_folder: bool = False) -> Output:
    """Check that `name` can be written; raise SdylogError naming `what`
    (e.g. '--db') otherwise. '-' is stdout. `create_folder`: the file's
    folder is made if it is missing (then it must be makeable)."""
    if name == "-":
        return Output("-", "-", True, what=what)
    if not name:
        raise SdylogError(f"{what}: empty file name")
    try:
        st = os.stat(name)                      # (follows symlinks)
    except (FileNotFoundError, NotADirectoryError):
        st = None                               # new (or a symlink to a file to make): its folder is checked below
    except OSError as e:
        raise SdylogError(f"cannot write {what} '{name}': {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise SdylogError(f"cannot write {what} '{name}': it is a folder")
    if st is not None and (not stat.S_ISREG(st.st_mode) or _behind_descriptor(name)):
        if not os.access(name, os.W_OK):
            raise SdylogError(f"cannot write {what} '{name}': permission denied")
        return Output(name, name, True, what=what)
    path = os.path.realpath(name)
    folder = os.path.dirname(path)
    missing = []
    while create_folder and not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    if not os.path.exists(folder):
        raise SdylogError(f"cannot write {what} '{name}': folder '{folder}' does not exist")
    if not os.path.isdir(folder):
        raise SdylogError(f"cannot write {what} '{name}': '{folder}' is not a folder")
    # (access(2) answers as the kernel will: root may write in a read-only
    # folder, nobody on a read-only file system)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise SdylogError(f"cannot write {what} '{name}': folder '{folder}' is not writable")
    return Output(name, path, False, stat.S_IMODE(st.st_mode) if st else None, tuple(reversed(missing)), what)


def _behind_descriptor(name: str) -> bool:
    """Whether the path's chain of symlinks goes through /proc (/dev/stdout ->
    /proc/self/fd/1): a file some process holds open, not one to replace."""
    path = os.path.abspath(name)
    for _ in range(40):                         # (the kernel's own limit on a chain)
        folder = os.path.realpath(os.path.dirname(path))
        if folder == "/proc" or folder.startswith("/proc/"):
            return True
        path = os.path.join(folder, os.path.basename(path))
        if not os.path.islink(path):
            return False
        path = os.path.join(folder, os.readlink(path))
    return False


def write_all(items: list[tuple[Output, Contents]]) -> None:
    """Write every output, or none (raising SdylogError, or what a contents
    function raised): each file is rendered into a temporary file first, then
    the written-through outputs are written (stdout last), then the files
    renamed into place."""
    check_distinct(*(o for o, _ in items))
    made: list[str] = []                          # folders made, removed again on failure
    staged: dict[int, tuple[str, str]] = {}       # id(output) -> (temporary folder, temporary file)
    current = None
    try:
        for out, contents in items:
            current = out
            if isinstance(contents, str) and out.through:
                continue                          # (written from the text)
            for f in out.missing_folders:
                if not os.path.isdir(f):
                    os.mkdir(f)
                    made.append(f)
            tmpdir = tempfile.mkdtemp(dir=tempfile.gettempdir() if out.through else os.path.dirname(out.path),
                                      prefix=".sdylog-")
            tmp = os.path.join(tmpdir, os.path.basename(out.path))
            staged[id(out)] = (tmpdir, tmp)
            if isinstance(contents, str):
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(contents)
            else:
                contents(tmp)
            if out.mode is not None:
                os.chmod(tmp, out.mode)
        # the outputs that can still fail (a closed FIFO or pipe, a full device) before the renames
        for out, contents in sorted(((o, c) for o, c in items if o.through), key=lambda oc: oc[0].stdout):
            current = out
            _write_through(out, contents.encode("utf-8") if isinstance(contents, str) else staged[id(out)][1])
        for out, _ in items:
            if not out.through:
                current = out
                os.replace(staged[id(out)][1], out.path)
        made = []
    except OSError as e:
        where = "" if current is None else " stdout" if current.stdout else f" '{current.name}'"
        raise SdylogError(f"cannot write{where}: {e.strerror or e}") from None
    finally:
        for tmpdir, _ in staged.values():
            shutil.rmtree(tmpdir, ignore_errors=True)
        for f in reversed(made):
            try:
                os.rmdir(f)
            except OSError:
                pass


def _write_through(out: Output, data: bytes | str) -> None:
    """Append bytes (or the temporary file at path `data`) to stdout, a
    device, a FIFO or a descriptor."""
    if out.stdout:
        sys.stdout.flush()
        f = sys.stdout.buffer
        _copy(data, f)
        f.flush()
        return
    with open(out.path, "ab") as f:
        _copy(data, f)


def _copy(data: bytes | str, f) -> None:
    if isinstance(data, bytes):
        f.write(data)
    else:
        with open(data, "rb") as src:
            shutil.copyfileobj(src, f)


def check_distinct(*outputs: Output | None) -> None:
    """Two outputs of one command may not name one file (bad usage: exit 2).
    write_all checks; a command whose work is long checks first too."""
    seen: dict[str, Output] = {}
    for out in outputs:
        if out is not None and not out.through:
            if out.path in seen:
                first = seen[out.path]
                raise UsageError(f"{first.what} '{first.name}' and {out.what} '{out.name}' name the same file")
            seen[out.path] = out


def write_text(name: str | None, text: str) -> None:
    """One output: stdout when `name` is None or '-'."""
    write_all([(plan(name or "-"), text)])


class Background:
    """A file written on a thread while the command goes on (DuckDB works
    without the GIL), from parts the command hands over as they are ready:
    `start(fn)` runs fn(temporary path, parts) in a temporary folder beside
    the output, `parts` giving what `add(part)` hands over, and ending when
    `finish(path)` (the contents write_all calls) is called; finish then
    waits for fn and moves the file to `path` (the same file system), or
    raises what fn raised. `discard()` (always, at the end) stops fn when it
    asks for a part finish has not ended (the command failed: nothing more
    is written), waits and removes what is left."""

    _END, _STOP = object(), object()

    def __init__(self, out: Output):
        import queue
        self.out = out
        self.thread = None
        self.error: BaseException | None = None
        self.tmpdir = self.tmp = None
        self.parts = queue.SimpleQueue()

    def start(self, fn: Callable[[str, Iterator], None]) -> None:
        import threading
        self.tmpdir = tempfile.mkdtemp(dir=tempfile.gettempdir() if self.out.through
                                       else os.path.dirname(self.out.path), prefix=".sdylog-")
        self.tmp = os.path.join(self.tmpdir, os.path.basename(self.out.path))

        def work():
            try:
                fn(self.tmp, self._handed())
            except BaseException as e:   # (raised again by finish, on the command's thread)
                self.error = e
        self.thread = threading.Thread(target=work, name=f"sdylog writes {self.out.name}", daemon=True)
        self.thread.start()

    def add(self, part) -> None:
        self.parts.put(part)

    def _handed(self) -> Iterator:
        while (part := self.parts.get()) is not self._END:
            if part is self._STOP:
                raise _Discarded()
            yield part

    def finish(self, path: str) -> None:
        self.parts.put(self._END)
        self.thread.join()
        if self.error is not None:
            raise self.error
        os.replace(self.tmp, path)

    def discard(self) -> None:
        if self.thread is not None:
            self.parts.put(self._STOP)    # (after finish's end: never read)
            self.thread.join()
        if self.tmpdir is not None:
            shutil.rmtree(self.tmpdir, ignore_errors=True)


class _Discarded(Exception):
    """The command failed before it handed over every part."""
