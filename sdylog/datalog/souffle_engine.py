"""Soufflé as a cross-check of sdylog's own engine (`sdylog datalog
--engine souffle`): the program is printed back as Soufflé text, compiled
once per content hash with `souffle -o` (cached in the souffle folder of
sdylog's cache, $SDYLOG_CACHE_DIR or ~/.cache/sdylog), and run with `-j` =
cores, facts through `-F`/`-D`: the compiled program does its own IO."""
from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tempfile

from sdylog.datalog import cache
from sdylog.datalog.ast import NumberLit, nodes
from sdylog.datalog.engines import souffle_path
from sdylog.datalog.lexer import error
from sdylog.datalog.program import Program


def cache_dir() -> str:
    """Where compiled programs are kept: a folder of sdylog's cache."""
    base = cache.cache_dir()
    if base is None:
        raise error(None, "the souffle engine needs a writable cache folder ($SDYLOG_CACHE_DIR)")
    return os.path.join(base, "souffle")


@functools.cache
def souffle_version(exe: str) -> str:
    """`souffle --version` (asked once per process: the word-size check and the
    compiled-binary cache key both need it)."""
    out = subprocess.run([exe, "--version"], capture_output=True, text=True)
    return out.stdout.strip()


def word_bits(version: str) -> int:
    """Soufflé's number width, from `souffle --version` ("Word size: 64 bits")."""
    m = re.search(r"Word size:\s*(\d+)", version)
    return int(m[1]) if m else 32


def wide_number(program: Program, bits: int):
    """The first number literal of `program` that does not fit in `bits`-bit
    signed words, or None."""
    limit = 1 << (bits - 1)
    return next((x for x in nodes(program.clauses)
                 if isinstance(x, NumberLit) and isinstance(x.value, int) and not -limit <= x.value < limit), None)


def check_word_size(program: Program, exe: str) -> None:
    """Soufflé's number width is fixed when Soufflé is built; a program with
    wider constants would be refused with a page of type errors."""
    bits = word_bits(souffle_version(exe))
    wide = wide_number(program, bits)
    if wide is not None:
        raise error(wide.loc, f"the number {wide.value} does not fit in this souffle's {bits}-bit numbers "
                    f"(`souffle --version`); build Soufflé with -DSOUFFLE_DOMAIN_64BIT=ON, or use "
                    f"sdylog's own engine (--engine memory)")


def compiled(text: str, exe: str | None = None) -> str:
    """Path of the executable Soufflé compiles `text` to (built once per text)."""
    exe = exe or souffle_path()
    if exe is None:
        raise error(None, "the souffle engine needs `souffle` on PATH")
    key = hashlib.sha256((souffle_version(exe) + "\0" + text).encode()).hexdigest()[:24]
    d = os.path.join(cache_dir(), key)
    binary = os.path.join(d, "program")
    if os.path.isfile(binary):
        return binary
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "program.dl")
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    with tempfile.TemporaryDirectory(dir=d) as tmp:
        made = os.path.join(tmp, "program")
        res = subprocess.run([exe, "-o", made, src], capture_output=True, text=True, cwd=tmp)
        if res.returncode != 0 or not os.path.isfile(made):
            raise error(None, f"souffle could not compile the program:\n{res.stderr.strip()}")
        os.replace(made, binary)
    return binary


def run_binary(binary: str, facts_dir: str, out_dir: str) -> str:
    res = subprocess.run([binary, "-F", facts_dir, "-D", out_dir, "-j", str(os.cpu_count() or 1)],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise error(None, f"the souffle program failed (exit {res.returncode}):\n{res.stderr.strip()}")
    return res.stdout


def run_program(program: Program, facts_dir: str, out_dir: str, planned: list) -> None:
    """`sdylog datalog --engine souffle`: the compiled program reads the
    facts and writes its files into a private folder; they are then written
    as planned (runner.plan_outputs), with what it printed."""
    import shutil

    from sdylog import outputs
    from sdylog.datalog.printer import print_program
    from sdylog.datalog.runner import input_path

    for d in program.directives_of("input"):
        path = input_path(facts_dir, d)
        if not os.path.isfile(path):
            raise error(None, f"cannot open fact file '{path}' of relation '{d.relation}'")
    exe = souffle_path()
    if exe is None:
        raise error(None, "the souffle engine needs `souffle` on PATH")
    check_word_size(program, exe)
    binary = compiled(print_program(program), exe)
    if out_dir == "-":
        outputs.write_all([(outputs.plan("-"), run_binary(binary, facts_dir, "-"))])
        return
    tmp = tempfile.mkdtemp(prefix="sdylog-souffle-")
    try:
        text = run_binary(binary, facts_dir, tmp)
        written = [(out, functools.partial(shutil.copyfile,
                                           os.path.join(tmp, d.params.get("filename", f"{d.relation}.csv"))))
                   for d, out in planned]
        outputs.write_all(written + [(outputs.plan("-"), text)])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
