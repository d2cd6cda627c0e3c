"""Shardy's conformance suites in ../shared/conformance, case by case, in-process.

The cases and their pass criteria are the shared scripts' own: run_lit.py
(split on `// -----`, CHECK-LABEL sections, the per-function retry of a file
that fails whole, FileCheck, expected diagnostics) and run_executable.py
(partition part1, paste it beside part2, interpret). Those scripts run each
`sdylog opt`, `sdylog interpret` and FileCheck as a subprocess (~0.4 s of
Python start-up each); here their module-level `subprocess` is replaced by
`InProcess`, which runs the same command lines in this process (sdylog's
click CLI, the `filecheck` package's main) and returns what the subprocess
would have: exit code, stdout, stderr. Only the few lines of the scripts'
main() that pick a file's cases are written again here (lit_outcomes,
executable_outcome); tests/conformance/test_harness_counts.py checks them
against the scripts themselves.

Case names are those of shared/conformance/reference-baseline.txt:
`SUITE/FILE.mlir#N`, the path under shardy-tests and the case's index as
run_lit.py counts it; an executable test is one case, `#0`.
"""
from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import traceback
import types
from functools import lru_cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_ENV = "SDYLOG_SHARED"
LIT_SUITES = ("propagation", "import", "export")
EXECUTABLE_FOLDERS = ("export/executable_convert_global_to_local", "export/executable_partitioner_pipeline")
RATCHET_FILE = Path(__file__).with_name("ratchet.txt")


def shared_dir() -> Path | None:
    """$SDYLOG_SHARED, else the `shared` folder beside the repository (../shared)
    or beside one of its parent folders (a worktree at /work/wt/NAME finds
    /work/shared); None when there is none with the conformance scripts."""
    env = os.environ.get(SHARED_ENV)
    candidates = [Path(env)] if env else [d / "shared" for d in REPO.parents]
    for path in candidates:
        if (path / "conformance" / "run_lit.py").is_file():
            return path
    return None


def tests_dir() -> Path:
    return shared_dir() / "conformance" / "shardy-tests"


def missing_reason() -> str:
    where = os.environ.get(SHARED_ENV) or f"../shared beside {REPO} or its parent folders"
    return f"no conformance suites (shared/conformance/run_lit.py) in {where}: set ${SHARED_ENV} to the shared folder"


# ---------------------------------------------------------------- the files and their cases
def lit_files() -> list[str]:
    """The lit files run_lit.py runs when given each suite's folder (files
    without a `sdy_opt %s` RUN line, such as the executable tests, it skips)."""
    lit = script("run_lit")
    root = tests_dir()
    out = []
    for suite in LIT_SUITES:
        for f in lit.files_of([root / suite]):
            if lit.parse_run(f.read_text()) is not None:
                out.append(f.relative_to(root).as_posix())
    return out


def executable_files() -> list[str]:
    """The executable tests run_executable.py runs in EXECUTABLE_FOLDERS."""
    root = tests_dir()
    out = []
    for folder in EXECUTABLE_FOLDERS:
        for f in sorted((root / folder).rglob("*.mlir")):
            if _executable_runs(f.read_text()):
                out.append(f.relative_to(root).as_posix())
    return out


def _executable_runs(text: str) -> list[list[str]]:
    """As run_executable.main: the interpreter-test RUN lines, split into
    words, or none when the file has no part2."""
    runs = [line.split("RUN:", 1)[1].split() for line in text.splitlines()
            if "RUN:" in line and "run_sdy_interpreter_test" in line]
    return runs if "//--- part2.mlir" in text else []


def suite_of(case: str) -> str:
    """The suite a case is counted in: propagation, import, export, or an
    executable folder."""
    path = case.split("#", 1)[0]
    for folder in EXECUTABLE_FOLDERS:
        if path.startswith(folder + "/"):
            return folder
    return path.split("/", 1)[0]


def case_key(case: str):
    """Sort order of case names: by file, then case index as a number."""
    path, _, index = case.rpartition("#")
    return path, int(index)


# ---------------------------------------------------------------- running them
def run_file(rel: str) -> list[tuple[str, bool, str]]:
    """(case, passed, why) for every case of one file (under shardy-tests)."""
    if rel.startswith(EXECUTABLE_FOLDERS):
        return [(f"{rel}#0", *executable_outcome(tests_dir() / rel))]
    return [(f"{rel}#{i}", ok, why) for i, (ok, why) in enumerate(lit_outcomes(tests_dir() / rel))]


def lit_outcomes(path: Path) -> list[tuple[bool, str]]:
    """The outcome of each case of a lit file, as run_lit.main computes them."""
    lit = script("run_lit")
    text = path.read_text()
    flags, prefixes = lit.parse_run(text)
    with tempfile.TemporaryDirectory() as tmp:
        if "-split-input-file" in flags or lit.EXPECTED.search(text):
            chunks = lit.SEP.split(text) if "-split-input-file" in flags else [text]
            return [lit.run_case(TOOL, c, flags, prefixes, tmp, LIT_TIMEOUT) for c in chunks]
        return lit.run_sections(TOOL, text, flags, prefixes, tmp, LIT_TIMEOUT)


def executable_outcome(path: Path) -> tuple[bool, str]:
    """As run_executable.main: every RUN variant of the file must pass; the
    reason is the first failing variant's."""
    ex = script("run_executable")
    args = types.SimpleNamespace(opt=TOOL, interpret=INTERPRET, timeout=EXECUTABLE_TIMEOUT)
    text = path.read_text()
    whys = []
    with tempfile.TemporaryDirectory() as tmp:
        for run in _executable_runs(text):
            try:
                ok, why = ex.run_variant(path, text, run[3:], args, tmp)
            except subprocess.TimeoutExpired:
                ok, why = False, "timeout"
            if not ok:
                whys.append(why)
    return not whys, whys[0] if whys else ""


# The scripts' defaults.
TOOL, INTERPRET = "sdylog opt", "sdylog interpret"
LIT_TIMEOUT, EXECUTABLE_TIMEOUT = 60, 120


@lru_cache(maxsize=None)
def script(name: str) -> types.ModuleType:
    """shared/conformance/NAME.py as a module of its own, whose commands run
    in-process (or, with $SDYLOG_CONFORMANCE_SUBPROCESS=1, as subprocesses of
    this Python, as the scripts do; for a case that crashes the process)."""
    spec = importlib.util.spec_from_file_location(f"_conformance_{name}", shared_dir() / "conformance" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.subprocess = Subprocesses if os.environ.get("SDYLOG_CONFORMANCE_SUBPROCESS") == "1" else InProcess
    return module


class InProcess:
    """What the scripts use of the subprocess module, running `sdylog ...`
    and `python -m filecheck ...` in this process; other commands as
    subprocesses."""
    TimeoutExpired = subprocess.TimeoutExpired

    @staticmethod
    def run(cmd, input=None, capture_output=True, text=True, timeout=None):
        if cmd[0] == "sdylog":
            main = _sdylog_main
        elif cmd[:3] == [sys.executable, "-m", "filecheck"]:
            main, cmd = _filecheck_main, cmd[2:]
        else:
            return subprocess.run(cmd, input=input, capture_output=capture_output, text=text, timeout=timeout)
        with _time_limit(cmd, timeout):
            code, out, err = _captured(main, cmd[1:], input)
        if main is _filecheck_main:
            err = _compact(err)
        return subprocess.CompletedProcess(cmd, code, out, err)


class Subprocesses:
    """The scripts' own subprocesses, with `sdylog` this Python's (PATH may
    hold another checkout's)."""
    TimeoutExpired = subprocess.TimeoutExpired

    @staticmethod
    def run(cmd, **kwargs):
        if cmd[0] == "sdylog":
            cmd = [sys.executable, "-m", "sdylog.cli"] + cmd[1:]
        return subprocess.run(cmd, **kwargs)


def _compact(message: str, width: int = 100) -> str:
    """FileCheck's message for run_lit.py, which keeps its last 400
    characters as the reason (otherwise the caret under a long line of
    printed IR): no caret lines, long lines cut, the error line last. (The
    exit code, all that decides a case, is untouched.)"""
    lines = [line for line in message.splitlines() if line.strip(" ^~")]
    errors = [line[:3 * width] for line in lines if "error:" in line]
    rest = [line if len(line) <= width else line[:width] + " ..." for line in lines if "error:" not in line]
    return "".join(line + "\n" for line in rest + errors)


def _sdylog_main(argv):
    """What the `sdylog` console script does (pyproject.toml's entry point)."""
    saved, sys.argv = sys.argv, ["sdylog"] + argv
    try:
        sys.exit(_entry_point()())
    finally:
        sys.argv = saved


@lru_cache(maxsize=None)
def _entry_point():
    from importlib.metadata import entry_points
    (script,) = entry_points(group="console_scripts", name="sdylog")
    return script.load()


def _filecheck_main(argv):
    import filecheck.colors
    from filecheck.main import main
    filecheck.colors.COLOR_SUPPORT = False   # (as in a pipe; it looks at this process's stdout)
    main(["filecheck"] + argv)


def _captured(main, argv, stdin_text):
    """Run main(argv) as a process would run: stdin holding stdin_text; its
    stdout and stderr captured (whatever writes them: Python's streams,
    their bytes buffers, C++ on the file descriptors); the exit code from
    SystemExit, or 1 and the traceback for an exception."""
    code = 0
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        stdin.write((stdin_text or "").encode("utf-8"))
        stdin.seek(0)
        with _standard_streams(stdin, stdout, stderr):
            try:
                main(argv)
            except SystemExit as e:
                if e.code is None or isinstance(e.code, int):
                    code = e.code or 0
                else:
                    print(e.code, file=sys.stderr)
                    code = 1
            except subprocess.TimeoutExpired:   # (_time_limit's, for the caller)
                raise
            except Exception:
                traceback.print_exc()
                code = 1
        return code, _text(stdout), _text(stderr)


@contextlib.contextmanager
def _standard_streams(stdin, stdout, stderr):
    """File descriptors 0, 1 and 2 on these files, and sys.stdin, stdout
    and stderr text streams on the descriptors, as in a process started
    with them; all restored after."""
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    for stream in saved_streams[1:]:
        stream.flush()   # (what was written before goes where it was meant to)
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    try:
        for fd, f in enumerate((stdin, stdout, stderr)):
            os.dup2(f.fileno(), fd)
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            if stream not in saved_streams:
                stream.flush()
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        for fd, saved in enumerate(saved_fds):
            os.dup2(saved, fd)
            os.close(saved)


def _text(f) -> str:
    f.seek(0)
    return f.read().decode("utf-8", "replace")


@contextlib.contextmanager
def _time_limit(cmd, seconds):
    """subprocess.TimeoutExpired after `seconds` (the scripts' per-command
    timeouts), by SIGALRM: Python code is interrupted, a long C call once it
    returns."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise subprocess.TimeoutExpired(cmd, seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------- the ratchet list
def read_ratchet(path: Path = RATCHET_FILE) -> set[str]:
    """The cases sdylog is known to pass: one a line; `# ` lines are comments."""
    if not path.exists():
        return set()
    return {line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("# ")}


RATCHET_HEADER = """\
# Conformance cases sdylog passes (tests/conformance/test_conformance.py), one a
# line, as shared/conformance/reference-baseline.txt names them. A listed case
# that fails fails `python -m pytest`. Regenerate after a change that makes more
# cases pass (the session's summary lists them):
#     python -m pytest tests/conformance --update-ratchet
"""


def write_ratchet(cases, path: Path = RATCHET_FILE) -> None:
    path.write_text(RATCHET_HEADER + "".join(c + "\n" for c in sorted(cases, key=case_key)))


def trim(why: str, limit: int = 600) -> str:
    """A failure's reason on a few lines: its end, where FileCheck and
    diagnostics say what went wrong."""
    why = re.sub(r"\n\s*\n", "\n", why.strip())
    return why if len(why) <= limit else "..." + why[-limit:]


def command_line(rel: str) -> str:
    """The shared script's command for one file, to reproduce a failure."""
    shared = shared_dir()
    if rel.startswith(EXECUTABLE_FOLDERS):
        return f"python {shared}/conformance/run_executable.py -v {shlex.quote(str(tests_dir() / rel))}"
    return f"python {shared}/conformance/run_lit.py -v {shlex.quote(str(tests_dir() / rel))}"


# ---------------------------------------------------------------- in parallel
def jobs() -> int:
    """Worker processes: $SDYLOG_CONFORMANCE_JOBS, else the CPUs this process may use."""
    env = os.environ.get("SDYLOG_CONFORMANCE_JOBS")
    return max(1, int(env)) if env else len(os.sched_getaffinity(0))


class Runs:
    """Files run by a pool of worker processes (spawned: forking a process
    that holds MLIR and jaxlib's threads is unsafe), all submitted at once,
    in the order given; outcomes(rel) waits for one. A worker that dies (a
    crash in C) breaks the pool: the files without an outcome go to a new
    one, and a file whose outcome was lost twice is left to `run_alone`
    (by default its commands as subprocesses, as the scripts run them, so
    that a crash fails only its case)."""

    def __init__(self, files, workers: int, run=None, run_alone=None):
        self._run = run or run_file
        self._run_alone = run_alone or run_file_in_subprocesses
        self._workers = min(workers, max(1, len(files)))
        self._files = list(files)
        self._losses = dict.fromkeys(files, 0)
        self._pool = None
        self._futures = {}
        self._submit(self._files)

    def _submit(self, files):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self._workers, mp_context=multiprocessing.get_context("spawn"))
        for rel in files:
            self._futures[rel] = self._pool.submit(self._run, rel)

    def outcomes(self, rel: str) -> list[tuple[str, bool, str]]:
        from concurrent.futures.process import BrokenProcessPool
        while True:
            try:
                return self._futures[rel].result()
            except BrokenProcessPool:
                self._losses[rel] += 1
                if self._losses[rel] >= 2:
                    return self._run_alone(rel)
                self._restart()

    def _restart(self):
        from concurrent.futures.process import BrokenProcessPool
        broken, self._pool = self._pool, None
        broken.shutdown(wait=True, cancel_futures=True)   # (then each of its futures is done)
        self._submit([rel for rel in self._files if self._futures[rel].cancelled()
                      or isinstance(self._futures[rel].exception(), BrokenProcessPool)])

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def largest_first(files) -> list[str]:
    """The order to run files in: the pool ends sooner when the long ones
    start first."""
    return sorted(files, key=lambda rel: -(tests_dir() / rel).stat().st_size)


def run_file_in_subprocesses(rel: str) -> list[tuple[str, bool, str]]:
    """run_file with every command a subprocess (the scripts' own way), in a
    child process of its own."""
    code = f"import json, conformance_cases as c; print(json.dumps(c.run_file({rel!r})))"
    env = dict(os.environ, SDYLOG_CONFORMANCE_SUBPROCESS="1",
               PYTHONPATH=os.pathsep.join([str(Path(__file__).parent)] + sys.path))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError(f"running {rel} case by case failed: {trim(p.stderr)}")
    return [tuple(row) for row in json.loads(p.stdout.splitlines()[-1])]


def reference_counts() -> dict[str, tuple[int, int]]:
    """suite -> (passed, cases) of Shardy itself, from reference-baseline.txt."""
    counts: dict[str, list[int]] = {}
    path = shared_dir() / "conformance" / "reference-baseline.txt"
    if not path.exists():
        return {}
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) == 2 and "#" in words[0] and not line.startswith("#"):
            c = counts.setdefault(suite_of(words[0]), [0, 0])
            c[0] += words[1] == "pass"
            c[1] += 1
    return {suite: (p, n) for suite, (p, n) in counts.items()}
