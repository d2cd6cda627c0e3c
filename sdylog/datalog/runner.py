"""Running a program as the `souffle` command does: `.input R` reads
FACTS_DIR/R.facts, `.output R` writes OUT_DIR/R.csv (tab-separated unless a
`delimiter` is given; `filename` relative to those folders); `-D -` prints
every output to stdout in Soufflé's format; `.printsize R` prints `R<TAB>n`.
Files are written only once everything succeeded."""
from __future__ import annotations

import functools
import os

from sdylog.datalog.lexer import error
from sdylog.datalog.program import Program
from sdylog.datalog.table import cell
from sdylog.ir.diagnostics import SdylogError


def input_path(facts_dir: str, d) -> str:
    name = d.params.get("filename", f"{d.relation}.facts")
    return name if os.path.isabs(name) else os.path.join(facts_dir, name)


def load_inputs(engine, program: Program, facts_dir: str) -> None:
    for d in program.directives_of("input"):
        path = input_path(facts_dir, d)
        engine.load_file(d.relation, path, d.params.get("delimiter", "\t"), display=path,
                         skip_header=d.params.get("headers") == "true")


def relation_text(engine, relation: str, delimiter: str = "\t", headers: bool = False) -> str:
    decl = engine.decl(relation)
    lines = [delimiter.join(c.name for c in decl.columns)] if headers else []
    if decl.arity == 0:
        lines += ["()"] if engine.size(relation) else []
    else:
        lines += [delimiter.join(map(cell, row)) for row in engine.read(relation)]
    return "".join(line + "\n" for line in lines)


def stdout_block(engine, relation: str, headers: bool = False) -> str:
    decl = engine.decl(relation)
    head = f"---------------\n{relation}\n"
    if headers:
        head += "\t".join(c.name for c in decl.columns) + "\n"
    return head + "===============\n" + relation_text(engine, relation) + "===============\n"


def plan_outputs(program: Program, out_dir: str) -> list:
    """The output files of the program's `.output` directives, each checked
    (before the run: a missing folder fails at once), with the directive."""
    from sdylog import outputs
    planned = []
    for d in program.directives_of("output"):
        if out_dir == "-" or d.params.get("IO") == "stdout":
            continue
        name = d.params.get("filename", f"{d.relation}.csv")
        try:
            planned.append((d, outputs.plan(name if os.path.isabs(name) else os.path.join(out_dir, name),
                                            f"relation '{d.relation}' to")))
        except SdylogError as e:
            raise error(d.loc, e.message) from None
    return planned


def write_outputs(engine, program: Program, out_dir: str, planned: list | None = None) -> None:
    """The files of `plan_outputs`, then what goes to stdout (`-D -`,
    `IO=stdout`, `.printsize`), in the order of the strata."""
    from sdylog import outputs
    planned = plan_outputs(program, out_dir) if planned is None else planned
    order = {r: i for i, s in enumerate(program.strata) for r in s.relations}
    printed: list[str] = []
    for d in sorted((d for d in program.directives if d.kind in ("output", "printsize")),
                    key=lambda d: order.get(d.relation, -1)):
        if d.kind == "printsize":
            printed.append(f"{d.relation}\t{engine.size(d.relation)}\n")
        elif out_dir == "-" or d.params.get("IO") == "stdout":
            printed.append(stdout_block(engine, d.relation, d.params.get("headers") == "true"))
    outputs.write_all([(out, functools.partial(_write_relation, engine, d)) for d, out in planned]
                      + [(outputs.plan("-"), "".join(printed))])


def _write_relation(engine, d, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(relation_text(engine, d.relation, d.params.get("delimiter", "\t"), d.params.get("headers") == "true"))


def run_like_souffle(program: Program, facts_dir: str, out_dir: str, engine_name: str | None = None) -> None:
    from sdylog.datalog.engines import propagation_engine
    name = propagation_engine(engine_name)
    planned = plan_outputs(program, out_dir)
    if name == "souffle":
        from sdylog.datalog.souffle_engine import run_program
        return run_program(program, facts_dir, out_dir, planned)
    from sdylog.datalog.memory_engine import MemoryEngine
    with MemoryEngine(program) as engine:
        load_inputs(engine, program, facts_dir)
        engine.run()
        write_outputs(engine, program, out_dir, planned)
