"""The program generator builds modules jaxlib accepts, with every op kind,
the same program for the same seed, and no user priority on dead ops."""
from __future__ import annotations

import re

import pytest
from hypothesis import given, settings

from generators.stablehlo_programs import (DEFAULT_WEIGHTS, OP_KINDS, ProgramConfig, check_text, programs,
                                           random_program)


def test_op_kinds_and_weights_agree():
    assert set(OP_KINDS) == set(DEFAULT_WEIGHTS)


@pytest.mark.parametrize("kind", sorted(OP_KINDS))
def test_each_op_kind_alone_builds_valid_modules(kind):
    only = ProgramConfig(ops=8).with_weights(**{k: (1 if k == kind else 0) for k in OP_KINDS})
    for seed in range(6):
        random_program(seed, only)   # (check_text inside: jaxlib parses and verifies)


@pytest.mark.parametrize("ops", [1, 30, 120])
def test_mixed_programs_are_valid(ops):
    for seed in range(8):
        program = random_program(seed, ProgramConfig(ops=ops))
        assert program.op_count >= ops // 2


def test_the_same_seed_gives_the_same_program():
    assert random_program(3, ProgramConfig(ops=40)).text == random_program(3, ProgramConfig(ops=40)).text
    assert random_program(3, ProgramConfig(ops=40)).text != random_program(4, ProgramConfig(ops=40)).text


def test_programs_have_the_features_asked_for():
    texts = "\n".join(random_program(seed, ProgramConfig(ops=60)).text for seed in range(6))
    for feature in ("stablehlo.while", "func.call", "sdy.sharding_constraint", "stablehlo.dot_general",
                    "stablehlo.reshape", "stablehlo.concatenate", "stablehlo.reduce", '":(', "}p", "replicated=",
                    "sdy.mesh @mesh_1"):
        assert feature in texts, feature


def test_dead_ops_carry_no_priorities():
    # (Shardy erases them in the first run, then a priority round writes into freed memory)
    for seed in range(10):
        text = random_program(seed, ProgramConfig(ops=60, p_dead=0.5, p_op_sharding=0.5)).text
        returned = set()
        for line in text.splitlines():
            if line.strip().startswith(("return", "stablehlo.return")):
                returned |= set(re.findall(r"%[\w#]+", line))
        for line in text.splitlines():
            m = re.match(r"\s*(%\w+)(?::\d+)? = (stablehlo\.\w+)", line)
            if m and "sdy.sharding_per_value" in line and re.search(r"\}p\d", line):
                name = m.group(1)
                used = any(name in other.split("=", 1)[-1] for other in text.splitlines() if other is not line)
                assert used or name in returned, line


def test_check_text_rejects_invalid_modules():
    from generators.stablehlo_programs import GeneratorError
    with pytest.raises(GeneratorError):
        check_text("func.func @main(%a: tensor<2xf32>) -> tensor<4xf32> {\n  return %a : tensor<2xf32>\n}\n")


@settings(max_examples=10, deadline=None, derandomize=True)
@given(programs(ProgramConfig(ops=10)))
def test_the_hypothesis_strategy_builds_programs(program):
    assert program.text.startswith("sdy.mesh @mesh")
    assert "func.func @main" in program.text
