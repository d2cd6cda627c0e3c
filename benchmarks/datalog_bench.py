"""Datalog engine benchmark: each engine asked for (`--engine`, comma-separated)
on the same cases in the same run, and the ratio to Soufflé's compiled program
where `souffle` is on PATH (compile time excluded: the binary is cached per
program).

    python benchmarks/datalog_bench.py [--quick] [--engine memory,...] [--runs N] [--cases tc,...]

Cases:
  tc        transitive closure, 400 chains of 100 nodes: ~2M path tuples, 99 iterations
  tc-nonlinear  the same closure written path(x,z) :- path(x,y), path(y,z) (semi-naive loop), smaller
  mixed     joins, negation and aggregates over ~600k facts
  many-rules  200 rules in one recursive stratum over ~80k facts (the propagation program's shape)
  propagation, reshard  rules/propagation.dl and rules/reshard.dl on the facts of
            corpus transformer_L48 (transformer_L8 with --quick), as `sdylog opt
            -sdy-propagation-pipeline -sdy-insert-explicit-reshards=...` loads them
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from corpus import CORPUS  # noqa: E402
from propagation_rules_bench import captured_engines  # noqa: E402
from sdylog.datalog import make_engine, parse_program  # noqa: E402
from sdylog.datalog.engines import souffle_path  # noqa: E402

TC = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), edge(y, z).
"""
TC_NONLINEAR = """
.decl edge(x: number, y: number)
.decl path(x: number, y: number)
path(x, y) :- edge(x, y).
path(x, z) :- path(x, y), path(y, z).
"""
MIXED = """
.decl person(id: number, city: number, age: number)
.decl knows(a: number, b: number)
.decl blocked(a: number, b: number)
.decl city(id: number, name: symbol)
.decl friend(a: number, b: number)
.decl same_city(a: number, b: number)
.decl popular(id: number, n: number)
.decl city_stats(name: symbol, people: number, oldest: number, total_age: number)
.decl loner(id: number)
friend(a, b) :- knows(a, b), knows(b, a), !blocked(a, b).
same_city(a, b) :- friend(a, b), person(a, c, _), person(b, c, _).
popular(id, n) :- person(id, _, _), n = count : { knows(_, id) }, n >= 5.
city_stats(name, n, o, t) :- city(c, name), n = count : { person(_, c, _) },
    o = max a : { person(_, c, a) }, t = sum a : { person(_, c, a) }.
loner(id) :- person(id, _, age), age > 30, !friend(id, _).
"""


def chains(n_chains, length):
    return [(c * length + i, c * length + i + 1) for c in range(n_chains) for i in range(length - 1)]


def mixed_facts(seed=1):
    rnd = random.Random(seed)
    n_people, n_knows = 100_000, 400_000
    person = [(i, rnd.randrange(1000), rnd.randrange(18, 90)) for i in range(n_people)]
    knows = set()
    while len(knows) < n_knows:
        a = rnd.randrange(n_people)
        b = a + rnd.randrange(-50, 50) if rnd.random() < 0.7 else rnd.randrange(n_people)
        if 0 <= b < n_people and a != b:
            knows.add((a, b))
            if rnd.random() < 0.4:
                knows.add((b, a))
    knows = sorted(knows)
    blocked = rnd.sample(knows, 50_000)
    city = [(c, f"city{c}") for c in range(1000)]
    return {"person": person, "knows": knows, "blocked": blocked, "city": city}


def many_rules(n_rules=200, n_nodes=20_000, seed=2):
    """A chain of relations r0..rK, each fed by the previous through joins with
    input relations, closed into one recursive stratum; plus negations."""
    rnd = random.Random(seed)
    k = n_rules // 4
    lines = [".decl edge(x: number, y: number)", ".decl kind(x: number, k: number)",
             ".decl seed(x: number, d: number)"]
    for i in range(k):
        lines.append(f".decl r{i}(x: number, d: number)")
        lines.append(f".decl s{i}(x: number, d: number)")
    lines.append("r0(x, d) :- seed(x, d).")
    for i in range(k):
        nxt = (i + 1) % k
        lines.append(f"r{nxt}(y, d) :- r{i}(x, d), edge(x, y), kind(y, {i % 7}).")
        lines.append(f"r{i}(x, d) :- r{nxt}(x, d), kind(x, {(i + 3) % 7}), d < 4.")
        lines.append(f"s{i}(x, d) :- r{i}(x, d), !kind(x, {(i + 1) % 7}).")
        lines.append(f"s{i}(x, d + 1) :- s{i}(x, d), d < 2, r{nxt}(x, _).")
    facts = {
        "edge": sorted({(rnd.randrange(n_nodes), rnd.randrange(n_nodes)) for _ in range(3 * n_nodes)}),
        "kind": sorted({(x, rnd.randrange(7)) for x in range(n_nodes) for _ in range(2)}),
        "seed": [(rnd.randrange(n_nodes), rnd.randrange(4)) for _ in range(2000)],
    }
    return "\n".join(lines) + "\n", facts


def time_engine(name, program, facts, reads, runs):
    """(median load s, median run wall s, median run cpu s, sizes) over `runs` fresh engines."""
    load, wall, cpu = [], [], []
    for _ in range(runs):
        eng = make_engine(program, name)
        t0 = time.perf_counter()
        for rel, rows in facts.items():
            eng.load(rel, rows)
        t1, c1 = time.perf_counter(), time.process_time()
        eng.run()
        t2, c2 = time.perf_counter(), time.process_time()
        sizes = {r: eng.size(r) for r in reads}
        eng.close()
        load.append(t1 - t0)
        wall.append(t2 - t1)
        cpu.append(c2 - c1)
    return statistics.median(load), statistics.median(wall), statistics.median(cpu), sizes


def time_souffle(program, facts, reads):
    from sdylog.datalog.printer import print_program
    from sdylog.datalog.souffle_engine import compiled, run_binary
    io = [f'.input {r}(IO=file, filename="{r}.facts")' for r in facts]
    io += [f'.output {r}(IO=file, filename="{r}.csv")' for r in reads]
    t0 = time.perf_counter()
    binary = compiled(print_program(program, io))
    compile_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        for name, rows in facts.items():
            with open(os.path.join(d, f"{name}.facts"), "w") as f:
                f.writelines("\t".join(map(str, r)) + "\n" for r in rows)
        t1 = time.perf_counter()
        run_binary(binary, d, d)
        run_s = time.perf_counter() - t1
        sizes = {r: sum(1 for _ in open(os.path.join(d, f"{r}.csv"))) for r in reads}
    return compile_s, run_s, sizes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller inputs")
    ap.add_argument("--engine", default="memory", help="comma-separated engines, timed in turn on each case")
    ap.add_argument("-n", "--runs", type=int, default=1, help="runs per engine and case (median)")
    ap.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    args = ap.parse_args()
    q = args.quick
    wanted = set(filter(None, args.cases.split(",")))
    mr_text, mr_facts = many_rules(n_rules=200, n_nodes=5000 if q else 20_000)
    cases = [
        ("tc", TC, {"edge": chains(40 if q else 400, 100)}, ["path"]),
        ("tc-nonlinear", TC_NONLINEAR, {"edge": chains(20 if q else 100, 100)}, ["path"]),
        ("mixed", MIXED, mixed_facts() if not q else {k: v[: len(v) // 10] for k, v in mixed_facts().items()},
         ["friend", "same_city", "popular", "city_stats", "loner"]),
        ("many-rules", mr_text, mr_facts, ["r0", "s0"]),
    ]
    cases = [(n, parse_program(t, f"{n}.dl"), f, r) for n, t, f, r in cases]
    if not wanted or wanted & {"propagation", "reshard"}:
        model = CORPUS / f"transformer_L{8 if q else 48}.mlir"
        flags = ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"]
        # (the first two engines the pipeline makes: propagation's, then the reshard rules')
        for label, (program, facts) in zip(["propagation", "reshard"], captured_engines(str(model), flags)):
            cases.append((label, program, facts, sorted(program.derived)))
    have_souffle = souffle_path() is not None
    print(f"souffle: {souffle_path() or 'not on PATH (no ratio)'}; cores: {os.cpu_count()}; runs: {args.runs}")
    print(f"{'case':<14}{'engine':<8}{'facts':>9}{'load s':>9}{'run s':>9}{'run cpu s':>11}  sizes / souffle")
    print("(run cpu s: CPU time of all the engine's threads; on a busy machine wall time runs higher)")
    for name, program, facts, reads in cases:
        if wanted and name not in wanted:
            continue
        n_facts = sum(len(v) for v in facts.values())
        first = None
        for engine in args.engine.split(","):
            load_s, run_s, cpu_s, sizes = time_engine(engine, program, facts, reads, args.runs)
            shown = sizes if len(sizes) < 6 else f"{len(sizes)} relations, {sum(sizes.values())} tuples"
            line = f"{name:<14}{engine:<8}{n_facts:>9}{load_s:>9.2f}{run_s:>9.2f}{cpu_s:>11.2f}  {shown}"
            first = first or (run_s, sizes)
            if first[1] != sizes:
                line += "  SIZES DIFFER"
            elif first[0] != run_s:
                line += f"  run {run_s / first[0]:.2f}x the first engine's"
            if have_souffle:
                _, s_run, s_sizes = time_souffle(program, facts, reads)
                line += f"  souffle run {s_run:.2f}s, ratio {run_s / s_run:.1f}x" + \
                    ("" if s_sizes == sizes else f"  SIZES DIFFER {s_sizes}")
            print(line, flush=True)


if __name__ == "__main__":
    main()
