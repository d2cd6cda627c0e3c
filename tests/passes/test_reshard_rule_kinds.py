"""The reshard rules read the ops of the kinds they start from out of
kind_op (rules/reshard/ops.dl), which holds only the kinds named_kind
lists: a kind a rule names there but named_kind does not list would
silently match no op."""
from __future__ import annotations

import re

from sdylog import RULES_DIR

FILES = sorted((RULES_DIR / "reshard").glob("*.dl")) + [RULES_DIR / "reshard.dl"]


def _code(path) -> str:
    return "\n".join(line.split("//", 1)[0] for line in path.read_text().splitlines())


def test_every_kind_a_rule_names_in_kind_op_is_listed():
    text = "\n".join(_code(p) for p in FILES)
    listed = set(re.findall(r'^named_kind\("([^"]+)"\)\.', text, re.M))
    named = set(re.findall(r'\bkind_op\("([^"]+)"', text))
    # (a kind compared with a variable bound by kind_op: `kind_op(kind, o), (kind = "..." ; ...)`)
    for body in re.findall(r"kind_op\((\w+), \w+\)(.*?)\.\s*$", text, re.M | re.S):
        var, rest = body
        named |= set(re.findall(rf'\b{var} = "([^"]+)"', rest))
    # (data_flow_op: the data-flow kinds, read out of kind_op too)
    named |= set(re.findall(r'^data_flow_kind\("([^"]+)"\)\.', text, re.M))
    assert named, "no rule reads kind_op"
    assert named <= listed, f"named in kind_op but not listed in named_kind: {sorted(named - listed)}"


def test_kind_op_rows_are_the_listed_kinds_ops():
    from sdylog.datalog import load_program, make_engine
    program = load_program(str(RULES_DIR / "reshard.dl"))
    engine = make_engine(program, "memory")
    kinds = ["stablehlo.while", "stablehlo.add", "sdy.return", "func.return", "stablehlo.dot_general"]
    engine.load_all({"op": [(i, k, "main", 0) for i, k in enumerate(kinds)]})
    engine.run(relations=["kind_op", "dot_like"])
    assert sorted(engine.select("kind_op", "k", "o")) == [("func.return", 3), ("sdy.return", 2),
                                                          ("stablehlo.while", 0)]
