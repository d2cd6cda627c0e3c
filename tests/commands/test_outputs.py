"""Outputs (sdylog/outputs.py): whole or nothing, never replacing what is
not a regular file, symlinks followed, folders checked before the work."""
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from as_user import as_user
from sdylog import outputs
from sdylog.ir.diagnostics import SdylogError, UsageError

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"
BAD = "func.func @f() {\n  %0 = stablehlo.foo : () -> ()\n}\n"


def sdylog(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *map(str, args)], capture_output=True, text=True,
                          **kwargs)


def listing(folder):
    return sorted(p.name for p in Path(folder).iterdir())


class umask:
    def __init__(self, mask):
        self.mask = mask

    def __enter__(self):
        self.old = os.umask(self.mask)

    def __exit__(self, *exc):
        os.umask(self.old)


# ---------------------------------------------------------------- write_all
def test_a_new_file_gets_its_mode_from_the_umask(tmp_path):
    for mask, mode in ((0o022, 0o644), (0o027, 0o640)):
        target = tmp_path / f"out{mask}.txt"
        with umask(mask):
            outputs.write_all([(outputs.plan(str(target)), "text\n")])
        assert stat.S_IMODE(target.stat().st_mode) == mode
        assert target.read_text() == "text\n"
    assert listing(tmp_path) == ["out18.txt", "out23.txt"]   # no temporary left


def test_an_existing_file_is_replaced_and_keeps_its_mode(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old contents, longer than the new\n")
    target.chmod(0o604)
    outputs.write_all([(outputs.plan(str(target)), "new\n")])
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o604


def test_a_symlink_is_followed(tmp_path):
    (tmp_path / "real").mkdir()
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "real" / "file.txt")          # dangling: the file it names is made
    outputs.write_all([(outputs.plan(str(link)), "one\n")])
    assert link.is_symlink() and (tmp_path / "real" / "file.txt").read_text() == "one\n"
    outputs.write_all([(outputs.plan(str(link)), "two\n")])
    assert link.is_symlink() and (tmp_path / "real" / "file.txt").read_text() == "two\n"
    assert listing(tmp_path / "real") == ["file.txt"]


def read_fifo(path, into):
    with open(path, "rb") as f:
        into.append(f.read())


@pytest.mark.parametrize("contents, expected", [
    ("through the pipe\n", b"through the pipe\n"),
    (lambda path: Path(path).write_bytes(b"\x00\x01binary"), b"\x00\x01binary"),   # (as --db makes its file)
])
def test_a_fifo_is_written_through(tmp_path, contents, expected):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=read_fifo, args=(fifo, got))
    reader.start()
    outputs.write_all([(outputs.plan(str(fifo)), contents)])
    reader.join(10)
    assert got == [expected]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_is_written_through_not_replaced(tmp_path):
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))   # a /dev/null of our own
    outputs.write_all([(outputs.plan(str(null)), "gone\n")])
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.lstat(null).st_rdev == os.makedev(1, 3)


def test_one_failing_output_leaves_no_other(tmp_path):
    first, second = tmp_path / "first.txt", tmp_path / "second.db"

    def fails(path):
        Path(path).write_text("half")
        raise SdylogError("the database failed")

    with pytest.raises(SdylogError, match="the database failed"):
        outputs.write_all([(outputs.plan(str(first)), "text"), (outputs.plan(str(second)), fails)])
    assert listing(tmp_path) == []


def test_a_failing_written_through_output_leaves_no_file():
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(SdylogError, match="cannot write '/dev/full': No space left"):
            outputs.write_all([(outputs.plan(os.path.join(d, "a.txt")), "text"),
                               (outputs.plan("/dev/full"), "x" * 100000)])
        assert listing(d) == []


def test_plan_errors(tmp_path):
    (tmp_path / "file").write_text("")
    for name, message in ((tmp_path, "it is a folder"),
                          (tmp_path / "missing" / "x", f"folder '{tmp_path / 'missing'}' does not exist"),
                          (tmp_path / "file" / "x", f"'{tmp_path / 'file'}' is not a folder"),
                          ("", "empty file name")):
        with pytest.raises(SdylogError, match=message.replace("(", r"\(")):
            outputs.plan(str(name), "-o")
    # two outputs naming one file: bad usage (exit 2), naming both options
    a = str(tmp_path / "a")
    with pytest.raises(UsageError, match=re.escape(f"error: -o '{a}' and --json '{a}' name the same file")):
        outputs.write_all([(outputs.plan(a, "-o"), ""), (outputs.plan(a, "--json"), "")])
    assert listing(tmp_path) == ["file"]


def test_a_missing_folder_is_made_when_asked_and_removed_on_failure(tmp_path):
    deep = tmp_path / "a" / "b" / "f.txt"
    with pytest.raises(SdylogError, match="failed"):
        outputs.write_all([(outputs.plan(str(deep), create_folder=True), lambda p: (_ for _ in ()).throw(
            SdylogError("failed")))])
    assert listing(tmp_path) == []
    outputs.write_all([(outputs.plan(str(deep), create_folder=True), "ok")])
    assert deep.read_text() == "ok"


# ---------------------------------------------------------------- the commands
def test_run_writes_through_dev_stdout_into_the_shells_file(tmp_path):
    shell_file = tmp_path / "redirected.mlir"
    with open(shell_file, "w") as f:
        inode = os.fstat(f.fileno()).st_ino
        p = subprocess.run([sys.executable, "-m", "sdylog.cli", "run", str(MLP), "-q", "-o", "/dev/stdout"],
                           stdout=f, stderr=subprocess.PIPE, text=True)
    assert p.returncode == 0, p.stderr
    assert "sdy.sharding" in shell_file.read_text()
    assert shell_file.stat().st_ino == inode and listing(tmp_path) == ["redirected.mlir"]


def test_run_output_to_a_failing_device_leaves_no_database(tmp_path):
    p = sdylog("run", MLP, "-q", "-o", "/dev/full", "--db", tmp_path / "rel.duckdb")
    assert p.returncode == 1 and "cannot write '/dev/full': No space left on device" in p.stderr
    assert listing(tmp_path) == []


@pytest.mark.parametrize("command", [["run", "-q", "-o"], ["run", "-q", "--db"], ["opt", "-sdy-close-shardings", "-o"],
                                     ["facts", "-o"]])
def test_a_missing_output_folder_fails_before_the_work(tmp_path, command):
    bad = tmp_path / "bad.mlir"
    bad.write_text(BAD)       # the work would fail: the folder's error shows it never started
    name, *opts, flag = command
    target = tmp_path / "no" / "such" / "x" if name != "facts" else tmp_path / "bad.mlir" / "x"
    p = sdylog(name, bad, *opts, flag, target)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith(f"error: cannot write {flag}") and "bad.mlir:2" not in p.stderr, p.stderr
    assert listing(tmp_path) == ["bad.mlir"]


def test_run_refuses_a_folder_as_output(tmp_path):
    p = sdylog("run", MLP, "-o", tmp_path)
    assert p.returncode == 1 and p.stderr == f"error: cannot write -o '{tmp_path}': it is a folder\n"


def test_datalog_checks_its_output_folder_before_running(tmp_path):
    (tmp_path / "p.dl").write_text(".decl r(x: number)\n.output r\nr(1 / 0) :- r(_).\nr(1).\n")
    p = sdylog("datalog", tmp_path / "p.dl", "-D", tmp_path / "missing")
    assert p.returncode == 1
    assert p.stderr.startswith(f"{tmp_path / 'p.dl'}:2:9: error: cannot write relation 'r' to"), p.stderr
    assert "does not exist" in p.stderr


def test_facts_makes_its_folder(tmp_path):
    p = sdylog("facts", MLP, "-o", tmp_path / "new" / "facts")
    assert p.returncode == 0, p.stderr
    assert "value.facts" in listing(tmp_path / "new" / "facts")
    assert not [n for n in listing(tmp_path / "new" / "facts") if n.startswith(".")]


def test_a_read_only_folder_fails_before_the_work(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(BAD)       # the work would fail: the folder's error shows it never started
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    for flag in ("-o", "--db"):
        p = sdylog("run", bad, flag, ro / "out", **as_user())
        assert p.returncode == 1, p.stderr
        assert p.stderr == f"error: cannot write {flag} '{ro / 'out'}': folder '{ro}' is not writable\n"
    (tmp_path / "p.dl").write_text(".decl r(x: number)\n.output r\nr(1 / 0).\n")    # (would fail too)
    p = sdylog("datalog", tmp_path / "p.dl", "-D", ro, **as_user())
    assert p.returncode == 1 and p.stderr == (f"{tmp_path / 'p.dl'}:2:9: error: cannot write relation 'r' to "
                                              f"'{ro / 'r.csv'}': folder '{ro}' is not writable\n"), p.stderr
    assert listing(ro) == []
