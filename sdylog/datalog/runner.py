"""Running a program as the `souffle` command does: `.input R` reads
FACTS_DIR/R.facts, `.output R` writes OUT_DIR/R.csv (tab-separated unless a
`delimiter` is given; `filename` relative to those folders); `-D -` prints
every output to stdout in Soufflé's format; `.printsize R` prints `R<TAB>n`.
Files are written only once everything succeeded."""
from __future__ import annotations

import os
import sys
import tempfile

from sdylog.datalog.lexer import error
from sdylog.datalog.program import Program
from sdylog.datalog.sql import ident


def input_path(facts_dir: str, d) -> str:
    name = d.params.get("filename", f"{d.relation}.facts")
    return name if os.path.isabs(name) else os.path.join(facts_dir, name)


def load_inputs(engine, program: Program, facts_dir: str) -> None:
    for d in program.directives_of("input"):
        path = input_path(facts_dir, d)
        engine.load_file(d.relation, path, d.params.get("delimiter", "\t"), display=path,
                         skip_header=d.params.get("headers") == "true")


def format_value(v, kind: str) -> str:
    if kind == "float":
        return format(v, "g")
    return str(v)


def relation_text(engine, relation: str, delimiter: str = "\t", headers: bool = False) -> str:
    decl = engine.decl(relation)
    lines = [delimiter.join(c.name for c in decl.columns)] if headers else []
    if decl.arity == 0:
        lines += ["()"] if engine.size(relation) else []
    else:
        kinds = decl.kinds
        lines += [delimiter.join(format_value(v, k) for v, k in zip(row, kinds)) for row in engine.read(relation)]
    return "".join(line + "\n" for line in lines)


def _copy_to(engine, relation: str, path: str, delimiter: str, headers: bool) -> None:
    """Large outputs: DuckDB writes the file (floats as %g, no quoting)."""
    decl = engine.decl(relation)
    sel = ", ".join(f"printf('%g', c{i}) AS {ident(c.name)}" if c.kind == "float" else f"c{i} AS {ident(c.name)}"
                    for i, c in enumerate(decl.columns))
    order = ", ".join(f"c{i}" for i in range(decl.arity))
    engine.con.execute(f"COPY (SELECT {sel} FROM {engine.table(relation)} ORDER BY {order}) TO "
                       f"'{path.replace(chr(39), chr(39) * 2)}' (DELIMITER '{delimiter.replace(chr(39), chr(39) * 2)}', "
                       f"HEADER {'true' if headers else 'false'}, QUOTE '', ESCAPE '')")


def stdout_block(engine, relation: str, headers: bool = False) -> str:
    decl = engine.decl(relation)
    head = f"---------------\n{relation}\n"
    if headers:
        head += "\t".join(c.name for c in decl.columns) + "\n"
    return head + "===============\n" + relation_text(engine, relation) + "===============\n"


def write_outputs(engine, program: Program, out_dir: str, stdout=None) -> None:
    stdout = stdout or sys.stdout
    order = {r: i for i, s in enumerate(program.strata) for r in s.relations}
    directives = sorted((d for d in program.directives if d.kind in ("output", "printsize")),
                        key=lambda d: order.get(d.relation, -1))
    files: list[tuple[str, str]] = []    # (temporary, final)
    printed: list[str] = []
    try:
        for d in directives:
            if d.kind == "printsize":
                printed.append(f"{d.relation}\t{engine.size(d.relation)}\n")
                continue
            headers = d.params.get("headers") == "true"
            if out_dir == "-" or d.params.get("IO") == "stdout":
                printed.append(stdout_block(engine, d.relation, headers))
                continue
            name = d.params.get("filename", f"{d.relation}.csv")
            final = name if os.path.isabs(name) else os.path.join(out_dir, name)
            folder = os.path.dirname(os.path.abspath(final))
            if not os.path.isdir(folder):
                raise error(d.loc, f"output folder '{folder}' does not exist")
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".sdylog-", suffix=".tmp")
            os.close(fd)
            files.append((tmp, final))
            delimiter = d.params.get("delimiter", "\t")
            if engine.decl(d.relation).arity == 0:
                with open(tmp, "w", encoding="utf-8") as f:
                    f.write(relation_text(engine, d.relation, delimiter, headers))
            else:
                _copy_to(engine, d.relation, tmp, delimiter, headers)
        for tmp, final in files:
            os.replace(tmp, final)
        files = []
    finally:
        for tmp, _ in files:
            if os.path.exists(tmp):
                os.remove(tmp)
    stdout.write("".join(printed))


def run_like_souffle(program: Program, facts_dir: str, out_dir: str, engine_name: str | None = None,
                     stdout=None) -> None:
    from sdylog.datalog.engines import default_engine
    name = engine_name or default_engine()
    if name == "souffle":
        return _run_souffle(program, facts_dir, out_dir, stdout or sys.stdout)
    from sdylog.datalog.engines import make_engine
    with make_engine(program, name) as engine:
        load_inputs(engine, program, facts_dir)
        engine.run()
        write_outputs(engine, program, out_dir, stdout)


def _run_souffle(program: Program, facts_dir: str, out_dir: str, stdout) -> None:
    """The compiled program does its own IO; outputs go to a fresh folder first."""
    import shutil

    from sdylog.datalog.printer import print_program
    from sdylog.datalog.souffle_engine import compiled, run_binary

    for d in program.directives_of("input"):
        path = input_path(facts_dir, d)
        if not os.path.isfile(path):
            raise error(None, f"cannot open fact file '{path}' of relation '{d.relation}'")
    binary = compiled(print_program(program))
    if out_dir == "-":
        stdout.write(run_binary(binary, facts_dir, "-"))
        return
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=out_dir, prefix=".sdylog-")
    try:
        text = run_binary(binary, facts_dir, tmp)
        for name in os.listdir(tmp):
            os.replace(os.path.join(tmp, name), os.path.join(out_dir, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stdout.write(text)
