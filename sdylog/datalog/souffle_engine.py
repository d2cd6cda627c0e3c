"""Soufflé as a backend (a cross-check of sdylog's own engine): the program
is printed back as Soufflé text, compiled once per content hash with
`souffle -o` (cached in the souffle folder of sdylog's cache,
$SDYLOG_CACHE_DIR or ~/.cache/sdylog), and run with `-j` = cores, facts
through `-F`/`-D`. Relations live in the memory engine's store: a run
writes the facts the strata read and reads back what they derive."""
from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tempfile

from sdylog.datalog import cache
from sdylog.datalog.ast import NumberLit, nodes
from sdylog.datalog.engine import written_by
from sdylog.datalog.engines import souffle_path
from sdylog.datalog.facts_file import read_facts_file
from sdylog.datalog.lexer import error
from sdylog.datalog.memory_engine import MemoryEngine
from sdylog.datalog.printer import print_program, quote
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


class SouffleEngine(MemoryEngine):
    name = "souffle"

    def __init__(self, program: Program | None = None, *, provenance: bool = False):
        if provenance:
            raise error(None, "provenance (explain) needs the memory engine: Soufflé records none")
        if souffle_path() is None:
            raise error(None, "the souffle engine needs `souffle` on PATH")
        super().__init__(program)

    def _run_strata(self, program: Program, strata, plan=None) -> None:
        """The strata as one Soufflé program: the facts they read (what a
        relation holds, or the facts loaded into one they derive) in, what
        they derive out."""
        stepped = [s for s in strata if s.stepped]
        if stepped:
            raise error(None, f"the souffle engine cannot evaluate the stepped stratum of "
                        f"{', '.join(stepped[0].relations)} (Soufflé rejects its negation cycle): use the "
                        f"memory engine")
        derived = written_by(strata)
        reads = {q for r in derived for q in program.reads[r]}
        feed = [r for r in program.relations
                if (r in reads and r not in derived) or (r in derived and self._loaded.get(r))]
        io = [f'.input {r}(IO=file, filename={quote(r + ".facts")}, delimiter="\\t")' for r in feed]
        io += [f'.output {r}(IO=file, filename={quote(r + ".csv")}, delimiter="\\t")' for r in derived]
        check_word_size(program, souffle_path())
        binary = compiled(print_program(program, io))
        with tempfile.TemporaryDirectory(prefix="sdylog-souffle-") as d:
            for r in feed:
                rows = self._loaded.get(r, ()) if r in derived else self.scan(r)
                with open(os.path.join(d, r + ".facts"), "w", encoding="utf-8") as f:
                    f.writelines("\t".join(map(str, row)) + "\n" if row else "()\n" for row in rows)
            run_binary(binary, d, d)
            for r in derived:
                self._store(r, set(read_facts_file(self.decl(r), os.path.join(d, r + ".csv"))), None)
