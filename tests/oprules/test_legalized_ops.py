"""Ops Shardy's registry has no rule for, though JAX emits them: chlo's
element-wise ops (chlo.square for jnp.square and jnp.var, chlo.erf for exact
GELU), chlo.top_k (lax.top_k) and stablehlo.einsum. jaxlib's Shardy warns and
leaves them alone (no propagation through them, no reshard around them: the
per-device program of a sharded one is wrong). In a JAX compilation XLA
rewrites them before Shardy runs (square: multiply; erf: custom call
@mhlo.erf; top_k: custom call @mhlo.topk; einsum: dot_general), and those
have rules: sdylog gives each op the rule of its rewrite. Checked here rule
for rule, and through the pipeline: the chlo/einsum module propagates and
reshards as its rewrite does (which is what Shardy does with the rewrite:
compare_shardings/compare_collectives against jaxlib on the r31 repros)."""
import re
import subprocess
import sys

import pytest

from oprules_helpers import rule_str, rule_text

MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'


def module(args: str, body: str, result: str) -> str:
    return f"{MESH}func.func @main({args}) -> {result} {{\n{body}\n}}\n"


X = '%x: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}'
A = '%a: tensor<8x6x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}, {"y"}]>}'
B = '%b: tensor<8x4x10xf32>'

# name -> (module with the op, the same module with XLA's rewrite of it, op of each)
PAIRS = {
    "square": (module(X, """  %0 = chlo.square %x : tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>""", "tensor<8x4xf32>"), module(X, """  %0 = stablehlo.multiply %x, %x : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>""", "tensor<8x4xf32>"), "chlo.square", "stablehlo.multiply"),
    "erf": (module(X, """  %0 = chlo.erf %x : tensor<8x4xf32> -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>""", "tensor<8x4xf32>"), module(X, """  %0 = stablehlo.custom_call @mhlo.erf(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>""", "tensor<8x4xf32>"), "chlo.erf", "stablehlo.custom_call"),
    "top_k": (module(X, """  %v, %i = chlo.top_k(%x, k = 3) : tensor<8x4xf32> -> (tensor<8x3xf32>, tensor<8x3xi32>)
  return %v : tensor<8x3xf32>""", "tensor<8x3xf32>"), module(X, """  %v, %i = stablehlo.custom_call @mhlo.topk(%x) : (tensor<8x4xf32>) -> (tensor<8x3xf32>, tensor<8x3xi32>)
  return %v : tensor<8x3xf32>""", "tensor<8x3xf32>"), "chlo.top_k", "stablehlo.custom_call"),
    "einsum": (module(f"{A}, {B}", """  %0 = stablehlo.einsum %a, %b, config = "bij,bjk->bik" : (tensor<8x6x4xf32>, tensor<8x4x10xf32>) -> tensor<8x6x10xf32>
  return %0 : tensor<8x6x10xf32>""", "tensor<8x6x10xf32>"), module(f"{A}, {B}", """  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<8x6x4xf32>, tensor<8x4x10xf32>) -> tensor<8x6x10xf32>
  return %0 : tensor<8x6x10xf32>""", "tensor<8x6x10xf32>"), "stablehlo.einsum", "stablehlo.dot_general"),
}


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_rule_is_the_rule_of_the_rewrite(name):
    text, rewritten, op, rewritten_op = PAIRS[name]
    rule = rule_text(text, op)
    if name == "square":   # (x * x: the same factors on one operand less)
        assert rule == rule_str("([i, j])->([i, j]) {i=8, j=4}")
        assert rule_text(rewritten, rewritten_op) == rule_str("([i, j], [i, j])->([i, j]) {i=8, j=4}")
    else:
        assert rule is not None and rule == rule_text(rewritten, rewritten_op)


def test_einsum_rules():
    def einsum(config, operands, result):
        types = ", ".join(f"tensor<{t}>" for t in operands)
        args = ", ".join(f"%a{i}: tensor<{t}>" for i, t in enumerate(operands))
        names = ", ".join(f"%a{i}" for i in range(len(operands)))
        op = "stablehlo.einsum" if len(operands) == 2 else "stablehlo.unary_einsum"
        text = (f"func.func @f({args}) -> tensor<{result}> {{\n  %0 = {op} {names}, config = \"{config}\""
                f" : ({types}) -> tensor<{result}>\n  return %0 : tensor<{result}>\n}}")
        return rule_text(text, op)
    # result letters pass through, summed letters are reductions
    assert einsum("ij,jk->ik", ["2x3xf32", "3x4xf32"], "2x4xf32") == rule_str(
        "([i, k], [k, j])->([i, j]) {i=2, j=4, k=3} reduction={k}")
    assert einsum("i,i->i", ["8xf32", "8xf32"], "8xf32") == rule_str("([i], [i])->([i]) {i=8}")
    assert einsum("ab->ba", ["2x3xf32"], "3x2xf32") == rule_str("([j, i])->([i, j]) {i=3, j=2}")
    assert einsum("ab->a", ["2x3xf32"], "2xf32") == rule_str("([i, j])->([i]) {i=2, j=3} reduction={j}")
    # a diagonal names one dimension twice, "..." several: every dimension
    # a factor of its own, needing replication (the op runs on whole tensors)
    assert einsum("ii->i", ["3x3xf32"], "3xf32") == rule_str(
        "([i, j])->([k]) {i=3, j=3, k=3} need_replication={i, j, k}")
    assert einsum("...i,...i->...", ["2x3xf32", "2x3xf32"], "2xf32") == rule_str(
        "([i, j], [k, l])->([m]) {i=2, j=3, k=2, l=3, m=2} need_replication={i, j, k, l, m}")


# Configs the rule cannot follow: the operands are replicated before the op.
UNFOLLOWED = {
    "ellipsis": module(
        '%a: tensor<4x6x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}, '
        '%b: tensor<4x8x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}, {"x"}]>}',
        """  %0 = stablehlo.einsum %a, %b, config = "...ij,...jk->...ik" : (tensor<4x6x8xf32>, tensor<4x8x2xf32>) -> tensor<4x6x2xf32>
  return %0 : tensor<4x6x2xf32>""", "tensor<4x6x2xf32>"),
    "diagonal": module(
        '%a: tensor<4x8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}, {}]>}',
        """  %0 = stablehlo.unary_einsum %a, config = "bii->bi" : (tensor<4x8x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>""", "tensor<4x8xf32>"),
}


@pytest.mark.parametrize("name", sorted(UNFOLLOWED))
def test_unfollowed_einsum_partitions_correctly(tmp_path, name):
    src = tmp_path / "m.mlir"
    src.write_text(UNFOLLOWED[name])
    p = sdylog("simulate", str(src))
    assert p.returncode == 0 and "PASS: sharded and unsharded results agree" in p.stdout, p.stdout + p.stderr


def sdylog(*args):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *args], capture_output=True, text=True)


def shardings_and_collectives(text: str) -> list[str]:
    """The module's shardings and sdy collectives (with their axes), in order."""
    return re.findall(r"sdy\.(?:reshard|all_gather|all_slice|all_to_all|collective_permute|reduce_scatter)\b"
                      r"|sdy\.all_reduce \{[^}]*\}|<@mesh, \[[^\]]*\]", text)


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_pipeline_as_on_the_rewrite(tmp_path, name):
    text, rewritten, _, _ = PAIRS[name]
    outs = []
    for i, t in enumerate((text, rewritten)):
        src = tmp_path / f"m{i}.mlir"
        src.write_text(t)
        p = sdylog("opt", str(src), "-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true")
        assert p.returncode == 0, p.stderr
        outs.append(shardings_and_collectives(p.stdout))
    assert outs[0] == outs[1] and len(outs[0]) > 2


@pytest.mark.parametrize("name", sorted(PAIRS))
def test_simulate_agrees(tmp_path, name):
    src = tmp_path / "m.mlir"
    src.write_text(PAIRS[name][0])
    p = sdylog("simulate", str(src))
    assert p.returncode == 0 and "PASS: sharded and unsharded results agree" in p.stdout, p.stdout + p.stderr
