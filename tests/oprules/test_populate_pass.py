"""-sdy-populate-op-sharding-rules end to end: printing, options, errors, real models."""
import glob
import os
import subprocess
import sys

import pytest

from oprules_cases import CASES
from oprules_helpers import rule_text
from sdylog.ir import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags

# ../shared beside the repository, as on every machine and in CI
CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "corpus", "jax", "*.mlir")))

MODULE = """func.func @f(%x: tensor<8x6xf32>, %y: tensor<6x4xf32>) -> tensor<8x4xf32> {
  %0 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] : (tensor<8x6xf32>, tensor<6x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.custom_call @foo(%0) {sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}, custom>} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
"""


def populate(text, flag="-sdy-populate-op-sharding-rules", filename="in.mlir"):
    return optimize_text(text, filename, parse_flags([flag]))


def test_rules_are_printed_as_attributes():
    out = populate(MODULE)
    assert ("stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0] {sdy.sharding_rule = "
            "#sdy.op_sharding_rule<([i, k], [k, j])->([i, j]) {i=8, j=4, k=6} reduction={k}>}") in out
    # an existing rule is kept as it is
    assert "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=8, j=4}, custom>" in out
    assert "func.return" not in out and "sharding_rule" not in out.split("return")[-1]


def test_conservative_option():
    text = CASES["slice_strided"]
    assert "blocked_propagation" not in populate(text)
    assert "blocked_propagation={i, k}" in populate(text, "-sdy-populate-op-sharding-rules=conservative-propagation=true")


def test_pass_is_idempotent():
    once = populate(MODULE)
    assert populate(once) == once


@pytest.mark.parametrize("text, where, message", [
    (CASES["cc_unknown"], "in.mlir:2:8", "custom call @my_kernel is unknown to SDY sharding rule registry"),
    (CASES["unknown_stablehlo_op"], "in.mlir:2:10",
     "op 'stablehlo.batch_norm_training' is unknown to SDY sharding rule registry"),
])
def test_unknown_ops_are_located_errors(text, where, message):
    with pytest.raises(SdylogError) as e:
        populate(text)
    assert str(e.value) == f"{where}: error: {message}"


def test_rules_are_verified_against_their_ops():
    # the sdy dialect rejects a rule on a dynamically shaped op, as after Shardy's pass
    text = """func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = stablehlo.add %x, %x : tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}"""
    with pytest.raises(SdylogError) as e:
        populate(text)
    assert str(e.value) == ("in.mlir:2:8: error: 'stablehlo.add' op operand 0 - expected a ranked tensor "
                            "with a static shape. type: 'tensor<?x4xf32>'")


def test_unknown_ops_have_no_rule_outside_the_pass():
    # other passes (propagation) go on without a rule, as Shardy does after its warning
    assert rule_text(CASES["cc_unknown"], "stablehlo.custom_call") is None


def test_cli_error_exit_and_no_output(tmp_path):
    src = tmp_path / "bad.mlir"
    src.write_text(CASES["dot_mm"] + "\n" + CASES["cc_unknown"])
    out = tmp_path / "out.mlir"
    r = subprocess.run([sys.executable, "-m", "sdylog.cli", "opt", str(src), "-sdy-populate-op-sharding-rules",
                        "-o", str(out)], capture_output=True, text=True)
    assert r.returncode == 1
    assert f"{src}:6:8: error: custom call @my_kernel is unknown to SDY sharding rule registry" in r.stderr
    assert not out.exists() and r.stdout == ""


@pytest.mark.parametrize("path", CORPUS, ids=os.path.basename)
def test_corpus_models(path):
    text = open(path).read()
    out = populate(text, filename=path)
    assert out.count("sdy.sharding_rule") > 0
