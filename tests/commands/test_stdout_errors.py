"""A failing write on stdout (a full disk: `sdylog query ... > /dev/full`)
is a diagnostic, `error: cannot write stdout: ...`, exit 1, for every
command (sdylog/cli.py: report_error tells a full disk from a bug by its
errno). It was `internal error: OSError ...,
please report`, exit 3 (review r37 F5), and `sdylog run F > /dev/full`
also printed Python's own failed flush at exit (exit 120) when stdout
was buffered."""
from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"
FULL = "/dev/full"

COMMANDS = {
    "run": ["run", MLP],
    "opt": ["opt", MLP, "-sdy-propagation-pipeline"],
    "query": ["query", MLP, "final_dim_axis", "--where", "axis=model"],
    "query-list": ["query", "--list"],
    "explain": ["explain", MLP, "%3"],
    "simulate": ["simulate", MLP, "--json"],
    "help": ["--help"],
    "command-help": ["datalog", "--help"],
}


@pytest.mark.skipif(not os.path.exists(FULL), reason="no /dev/full")
@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_full_stdout_is_an_error_exit_1(name, buffered, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    with open(FULL, "w") as full:
        # (-W: click 8.2 warns of its make_default_short_help under -m)
        p = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-m", "sdylog.cli",
                            *map(str, COMMANDS[name])], stdout=full, stderr=subprocess.PIPE, text=True, env=env,
                           cwd=tmp_path)
    assert (p.returncode, p.stderr) == (1, "error: cannot write stdout: No space left on device\n")


def test_a_closed_pipe_is_left_as_it_was():
    """`sdylog query --list | head -1`: no message (exit 1 when the write
    fails, as before)."""
    p = subprocess.Popen([sys.executable, "-m", "sdylog.cli", "query", "--list"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": ""})
    p.stdout.readline()
    p.stdout.close()
    p.wait()
    assert p.stderr.read() == b"" and p.returncode in (0, 1)
    p.stderr.close()


def test_a_full_disk_is_said_so_other_os_errors_are_bugs(capsys):
    from sdylog.cli import report_error
    assert report_error(OSError(errno.ENOSPC, "No space left on device")) == 1
    assert capsys.readouterr().err == "error: cannot write stdout: No space left on device\n"
    assert report_error(OSError(errno.EBADF, "Bad file descriptor")) == 3
    assert capsys.readouterr().err.startswith("internal error: OSError: ")
