"""The reshard phase's fast paths against plain versions of them:

- the non-full version examines only the dots that may get its reshard
  (rules/reshard/dot.dl dot_may_reshard); examining every dot, as the
  plain version does, writes the same on random dots;
- a run on the facts of the run before it, in one pipeline, goes on from
  that run's engine (sdylog/reshard/driver.py); it writes what a fresh
  evaluation writes;
- the writer reads nothing but writes_something when the rules derive no
  row of it (rules/reshard/writes.dl); the plain writer, which reads what
  to visit, writes the same."""
from __future__ import annotations

import random
import shutil
import sys
from pathlib import Path

import pytest

from sdylog import RULES_DIR
from sdylog.datalog import load_program, make_engine
from sdylog.ir import parse_module, print_module
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes import PassContext
from sdylog.passes.pipelines import Step, run_steps
from sdylog.reshard import driver
from sdylog.reshard.driver import KEPT, ReshardOptions, evaluate, first_error, reshard_program, run_facts
from sdylog.reshard.writer import WriteCounts, write_decisions, write_reshards

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
from small_models import small_models  # noqa: E402  (tests/commands' corpus)

MESH = 'sdy.mesh @mesh = <["x"=4, "y"=2, "z"=4]>\n'
# (an axis whole, or one of its halves)
PIECES = {"x": ['"x"', '"x":(1)2', '"x":(2)2'], "y": ['"y"'], "z": ['"z"', '"z":(1)2', '"z":(2)2']}
SCREEN = "dot_may_reshard(o) :- dot_shardings(o, r, s0, s2), shared_contracting_axis(r, s0, s2)."


@pytest.fixture(scope="module")
def plain_program(tmp_path_factory):
    """The reshard rules with the screen replaced by every dot."""
    root = tmp_path_factory.mktemp("rules") / "rules"
    shutil.copytree(RULES_DIR, root)
    dot = root / "reshard" / "dot.dl"
    text = dot.read_text()
    assert SCREEN in text
    dot.write_text(text.replace(SCREEN, "dot_may_reshard(o) :- dot_like(o)."))
    return load_program(str(root / "reshard.dl"))


def _dims(rank: int, rng: random.Random) -> list[list[str]]:
    dims = [[] for _ in range(rank)]
    for pieces in PIECES.values():
        if rng.random() < 0.6:
            dims[rng.randrange(rank)].append(rng.choice(pieces))
    return dims


def _sharding(dims) -> str:
    return "<@mesh, [" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]>"


def random_dot(rng: random.Random) -> str:
    """A dot_general, with a batching dimension or not, its operands and
    result on random shardings; often the result holds the lhs's
    contracting axes on a dimension where the lhs holds others, mostly
    with an rhs that agrees with the lhs (what the reshard needs)."""
    batch = rng.random() < 0.4
    b, bd = ("4x", "batching_dims = [0] x [0], ") if batch else ("", "")
    c = 2 if batch else 1   # (the lhs's contracting dimension)
    lhs, rhs, res = f"tensor<{b}8x32xf32>", f"tensor<{b}32x16xf32>", f"tensor<{b}8x16xf32>"
    d0, d1, d2 = (_dims(c + 1, rng) for _ in range(3))
    held = [d for d in range(c) if d0[d]]   # (the lhs's dimensions of the result holding axes)
    if held and d0[c] and rng.random() < 0.6:
        d2 = [list(d) for d in d0]
        d2[c], d2[rng.choice(held)] = [], d0[c]
        if rng.random() < 0.8:   # (the rhs agreeing with the lhs on the factors they share)
            d1 = [list(d0[0]), [], []] if batch else [[], []]
            d1[c - 1] = list(d0[c])
    s0, s1, s2 = map(_sharding, (d0, d1, d2))
    return MESH + f"""
func.func @main(%arg0: {lhs} {{sdy.sharding = #sdy.sharding{s0}}}, %arg1: {rhs} {{sdy.sharding = #sdy.sharding{s1}}}) -> {res} {{
  %0 = stablehlo.dot_general %arg0, %arg1, {bd}contracting_dims = [{c}] x [{c - 1}] {{sdy.sharding = #sdy.sharding_per_value<[{s2}]>}} : ({lhs}, {rhs}) -> {res}
  return %0 : {res}
}}
"""


# (a size-3 axis; a second mesh of the same axes, its devices reversed)
WIDE_MESHES = {"mesh": 'sdy.mesh @mesh = <["x"=4, "y"=2, "z"=3]>',
               "m2": 'sdy.mesh @m2 = <["x"=4, "y"=2, "z"=3], device_ids=[' + ", ".join(map(str, range(23, -1, -1))) + "]>"}
WIDE_PIECES = {"x": ['"x"', '"x":(1)2', '"x":(2)2'], "y": ['"y"'], "z": ['"z"']}


def wide_random_dot(rng: random.Random) -> str:
    """A dot_general of sizes 2, 3, 6 and 12 (not all divisible by the
    axes), with 0 or 1 batching and 1 or 2 contracting dimensions, a
    tensor sometimes on the second mesh, the result sometimes unreduced
    along an axis; often the result holds the lhs's contracting axes on
    one dimension, mostly with an rhs that agrees with the lhs."""
    while True:
        batch, contracting = rng.choice([0, 0, 1]), rng.choice([1, 1, 2])
        size = lambda: rng.choice([2, 3, 6, 12])
        bs, m, n, ks = [size() for _ in range(batch)], size(), size(), [size() for _ in range(contracting)]
        shapes = (bs + [m] + ks, bs + ks + [n], bs + [m, n])
        d0, d1, d2 = ([[] for _ in shape] for shape in shapes)
        for dims in (d0, d1, d2):
            for pieces in WIDE_PIECES.values():
                if rng.random() < 0.5:
                    dims[rng.randrange(len(dims))].append(rng.choice(pieces))
        held = [a for d in d0[batch + 1:] for a in d]   # (the lhs's contracting axes)
        if held and rng.random() < 0.6:
            d2 = [list(d) for d in d0[:batch + 1]] + [[]]
            d2[rng.randrange(len(d2))] = held
            if rng.random() < 0.8:
                d1 = [list(d) for d in d0[:batch]] + [list(d) for d in d0[batch + 1:]] + [[]]
        if all(len(names) == len(set(names)) for names in
               ([a.split(":")[0] for d in dims for a in d] for dims in (d0, d1, d2))):
            break
    meshes = ["mesh"] * 3
    if rng.random() < 0.15:
        meshes[rng.randrange(3)] = "m2"
    free = [a for a in "xyz" if not any(p.startswith(f'"{a}"') for d in d2 for p in d)]
    unreduced = f', unreduced={{"{rng.choice(free)}"}}' if free and rng.random() < 0.15 else ""
    s0, s1 = (f"<@{mesh}, [" + ", ".join("{" + ", ".join(d) + "}" for d in dims) + "]>"
              for mesh, dims in zip(meshes, (d0, d1)))
    s2 = f"<@{meshes[2]}, [" + ", ".join("{" + ", ".join(d) + "}" for d in d2) + f"]{unreduced}>"
    lhs, rhs, res = ("tensor<" + "x".join(map(str, shape)) + "xf32>" for shape in shapes)
    bd = f"batching_dims = {list(range(batch))} x {list(range(batch))}, " if batch else ""
    cd = f"contracting_dims = {[batch + 1 + i for i in range(contracting)]} x {[batch + i for i in range(contracting)]}"
    return "\n".join(WIDE_MESHES.values()) + f"""
func.func @main(%arg0: {lhs} {{sdy.sharding = #sdy.sharding{s0}}}, %arg1: {rhs} {{sdy.sharding = #sdy.sharding{s1}}}) -> {res} {{
  %0 = stablehlo.dot_general %arg0, %arg1, {bd}{cd} {{sdy.sharding = #sdy.sharding_per_value<[{s2}]>}} : ({lhs}, {rhs}) -> {res}
  return %0 : {res}
}}
"""


def _written(program, text: str, full: bool = False) -> str:
    """The module the reshard rules write, or the error they give."""
    module = parse_module(text)
    try:
        decisions = evaluate(program, module, None, lambda facts: run_facts(ReshardOptions(full_version=full), facts))
        first_error(decisions, decisions.engine.select("reshard_error", "o", "message"), None)
    except Exception as e:   # (an error the rules give: the same both ways)
        return f"error: {e}"
    with module.context:
        write_reshards(module, decisions.engine, decisions.facts)
    return print_module(module)


def test_dot_screen_writes_what_every_dot_examined_writes(plain_program):
    rng = random.Random(28)
    resharded = 0
    for _ in range(40):
        text = random_dot(rng)
        out = _written(reshard_program(), text)
        assert out == _written(plain_program, text), text
        resharded += "sdy.reshard" in out
    assert resharded >= 3   # (the cases reach the reshard the screen lets through)


def test_dot_screen_on_wider_dots(plain_program):
    rng = random.Random(3)
    resharded = second_mesh = unreduced = 0
    for _ in range(40):
        text = wide_random_dot(rng)
        for full in (False, True):
            out = _written(reshard_program(), text, full)
            assert out == _written(plain_program, text, full), text
            resharded += not full and "sdy.reshard" in out
        second_mesh += "<@m2," in text
        unreduced += "unreduced=" in text
    assert resharded >= 3 and second_mesh >= 3 and unreduced >= 3   # (the sample reaches what it is for)


# A user's rule on a dot: the lhs's contracting dimension is factors j
# (pass-through) then k (reduction); the result gets k's axes on i.
COMPOUND_DOT = '''sdy.mesh @mesh = <["x"=4, "y"=2, "z"=2]>
func.func @main(%arg0: tensor<8x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, LHS]>}, %arg1: tensor<32x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [LHS, {}]>}) -> tensor<8x8xf32> {
  %0 = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding = #sdy.sharding_per_value<[<@mesh, RESULT>]>, sdy.sharding_rule = #sdy.op_sharding_rule<([i, jk], [jk, m])->([i, jl]) {i=8, j=2, k=16, l=4, m=8} reduction={k}>} : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
'''


@pytest.mark.parametrize("lhs, result", [
    ('{"z", "x"}', '[{"x"}, {"z"}]'),                 # (k after j in the dimension)
    ('{"x"}', '[{"x":(2)2}, {"x":(1)2}]'),            # (k holds a part of the dimension's axis)
])
def test_dot_screen_on_a_compound_contracting_dimension(plain_program, lhs, result):
    text = COMPOUND_DOT.replace("LHS", lhs).replace("RESULT", result)
    out = _written(reshard_program(), text)
    assert "sdy.reshard" in out and out == _written(plain_program, text)


def _pipeline(text: str, steps: list[Step]) -> tuple[str, int]:
    """The module after `steps` (one scope), and how many engines the
    reshard runs made."""
    module = parse_module(text)
    ctx = PassContext(derive="write-back")
    made = []
    with module.context, pytest.MonkeyPatch.context() as patch:
        patch.setattr(driver, "make_engine", lambda *a, **k: made.append(1) or make_engine(*a, **k))
        for step in steps:   # (one step at a time, the scope left open between them)
            ctx.census = ctx.census if ctx.census is not None else {}
            before = print_module(module)
            run_steps(module, ctx, [step])
            assert (KEPT in ctx.census) == (print_module(module) == before)   # (kept only when nothing written)
        return print_module(module), len(made)


NON_FULL = Step("sdy-insert-explicit-reshards", {"enable-full-version": False})
FULL = Step("sdy-insert-explicit-reshards", {"enable-full-version": True})


def test_a_run_on_the_facts_before_writes_what_a_fresh_one_writes():
    rng = random.Random(18)
    went_on = 0
    for _ in range(30):
        text = random_dot(rng)
        first, _ = _pipeline(text, [NON_FULL])
        both, made = _pipeline(text, [NON_FULL, FULL])
        fresh, _ = _pipeline(first, [FULL])
        assert both == fresh, text
        went_on += made == 1
    assert went_on >= 10   # (the non-full run wrote nothing: the full one went on from its engine)


def _opt(text: str, flags: str) -> str:
    """`sdylog opt`'s output, or the error."""
    from sdylog.passes.driver import optimize_text, parse_flags
    try:
        return optimize_text(text, "t.mlir", parse_flags(flags.split()))
    except SdylogError as e:
        return f"error: {e}"


def _plain_writer(module, engine, facts):
    return write_decisions(engine, facts, WriteCounts())


@pytest.mark.parametrize("flags", ["-sdy-propagation-pipeline -sdy-export-pipeline=enable-insert-explicit-collectives=true",
                                   "-sdy-propagation-pipeline -sdy-partitioner-pipeline"])
def test_writer_that_reads_writes_something_first_writes_what_the_plain_one_writes(flags):
    from sdylog.passes import insert_explicit_reshards
    rng = random.Random(41)
    texts = [p.read_text() for p in small_models()] + [random_dot(rng) for _ in range(15)] + \
        [wide_random_dot(rng) for _ in range(15)]
    wrote = nothing = 0
    for text in texts:
        seen = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(insert_explicit_reshards, "write_reshards",
                          lambda m, e, f: seen.append(e.size("writes_something") > 0) or write_reshards(m, e, f))
            fast = _opt(text, flags)
            patch.setattr(insert_explicit_reshards, "write_reshards", _plain_writer)
            assert _opt(text, flags) == fast
        wrote += any(seen)
        nothing += not all(seen)
    assert wrote >= 5 and nothing >= 5   # (both ways taken)
