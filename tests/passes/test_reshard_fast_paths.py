"""The reshard phase's fast paths against plain versions of them:

- the non-full version examines only the dots that may get its reshard
  (rules/reshard/dot.dl dot_may_reshard); examining every dot, as the
  plain version does, writes the same on random dots;
- a run on the facts of the run before it, in one pipeline, goes on from
  that run's engine (sdylog/reshard/driver.py); it writes what a fresh
  evaluation writes."""
from __future__ import annotations

import random
import shutil

import pytest

from sdylog import RULES_DIR
from sdylog.datalog import load_program, make_engine
from sdylog.ir import parse_module, print_module
from sdylog.passes import PassContext
from sdylog.passes.pipelines import Step, run_steps
from sdylog.reshard import driver
from sdylog.reshard.driver import KEPT, ReshardOptions, evaluate, reshard_program, run_facts
from sdylog.reshard.writer import write_reshards

MESH = 'sdy.mesh @mesh = <["x"=4, "y"=2, "z"=4]>\n'
# (an axis whole, or one of its halves)
PIECES = {"x": ['"x"', '"x":(1)2', '"x":(2)2'], "y": ['"y"'], "z": ['"z"', '"z":(1)2', '"z":(2)2']}
SCREEN = "dot_may_reshard(o) :- dot_shardings(o, r, s0, s2), shared_contracting_ref(r, s0, s2)."


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


def _written(program, text: str) -> str:
    module = parse_module(text)
    decisions = evaluate(program, module, None, lambda facts: run_facts(ReshardOptions(full_version=False), facts))
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
