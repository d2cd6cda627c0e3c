"""An op's place in errors and reports: its own file location, else the
nearest enclosing op's (JAX gives the ops of its private helpers such as
`@log_softmax` or `@_pad` only a name, `loc("reduce_max")`; their function
carries the call site), else none (sdylog.ir.locations.op_source)."""
import json
from pathlib import Path

from click.testing import CliRunner
from jaxlib.mlir import ir

from sdylog.cli import main
from sdylog.ir.diagnostics import error_at, failing_op, format_location, verifier_location
from sdylog.ir.locations import op_source, op_where_text, where, with_source
from sdylog.ir.module import parse_module
from sdylog.ir.walk import walk_ops

DATA = Path(__file__).parent / "data"
XENT = DATA / "jax_log_softmax_grad.mlir"   # jax.grad of a cross entropy: jax.nn.log_softmax's @log_softmax
PAD = DATA / "jax_pad_edge.mlir"            # jnp.pad(x, ((1, 2), (3, 0)), mode="edge"): jnp's @_pad
# lax.scan of two carries x, y (entry arguments) that the loop reshards (cases37.py:51)
SCAN = DATA / "jax_scan_two_carries.mlir"
# jax.grad through a nested jax.jit with in_shardings: its calls take the entry arguments (cases37d.py:11)
NESTED_JIT = DATA / "jax_grad_nested_jit_sh.mlir"


def _ops(module, name):
    return [op for op in walk_ops(module.operation) if op.name == name]


def test_an_op_of_a_private_helper_has_its_call_site():
    module = parse_module(PAD.read_text(), str(PAD))
    reshape = _ops(module, "stablehlo.reshape")[0]
    assert str(reshape.location) == 'loc("reshape")'          # JAX's: a name, no file
    assert format_location(reshape.location, str(PAD)) is None     # the location alone has no place
    assert format_location(reshape, str(PAD)) == "cases35.py:136:29"   # @_pad's call site
    assert str(error_at(reshape, "no", str(PAD))) == "cases35.py:136:29: error: no"
    assert str(where(reshape, str(PAD))) == "cases35.py:136:29 (reshape)"
    assert op_where_text(reshape, str(PAD)) == "cases35.py:136:29 (reshape)"


def test_an_op_with_its_own_file_location_keeps_it():
    module = parse_module(PAD.read_text(), str(PAD))
    call = _ops(module, "func.call")[0]
    assert format_location(call, str(PAD)) == "cases35.py:136:29"
    assert op_where_text(call, str(PAD)) == "cases35.py:136:29 (jit(<lambda>)/jit(_pad))"
    plain = parse_module("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
                         "  %0 = stablehlo.negate %x : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
    (neg,) = _ops(plain, "stablehlo.negate")
    assert format_location(neg, "f.mlir") == "f.mlir:2:8"       # the op's position in FILE
    assert op_where_text(neg, "f.mlir") == "f.mlir:2:8"


NESTED = """module {
  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = call @outer(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("jit(outer)")
    return %0 : tensor<2xf32> loc(unknown)
  } loc(unknown)
  func.func private @outer(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = call @inner(%x) : (tensor<2xf32>) -> tensor<2xf32> loc("jit(inner)")
    return %0 : tensor<2xf32> loc(unknown)
  } loc("jit:"(callsite("f"("m.py":3:4) at "<module>"("m.py":9:1))))
  func.func private @inner(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.negate %x : tensor<2xf32> loc("neg")
    return %0 : tensor<2xf32> loc(unknown)
  } loc("jit:"("jit"))
} loc(unknown)
"""


def test_a_helper_called_by_a_helper_has_its_callers_place():
    # (jnp.linalg.inv: @inv calls @solve, which JAX gives no file; @inv's function has its call site)
    module = parse_module(NESTED, "n.mlir")
    (neg,) = _ops(module, "stablehlo.negate")
    assert format_location(neg, "n.mlir") == "m.py:3:4"
    main = _ops(module, "func.func")[0]
    assert format_location(main, "n.mlir") is None      # called by none: no place


def test_no_enclosing_place_is_none():
    text = ('func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n'
            '  %0 = stablehlo.negate %x : tensor<2xf32> loc("neg")\n'
            '  return %0 : tensor<2xf32> loc(unknown)\n} loc(unknown)\n')
    text = "module {\n" + text.replace("\n", "\n  ") + "} loc(unknown)\n"
    (neg,) = _ops(parse_module(text, "f.mlir"), "stablehlo.negate")
    assert op_source(neg) is None and format_location(neg, "f.mlir") is None
    assert str(error_at(neg, "no", "f.mlir")) == "error: no"
    assert str(where(neg, "f.mlir")) == "neg"


def test_a_verifier_error_inside_a_private_helper_is_placed():
    module = parse_module(PAD.read_text(), str(PAD))
    assert failing_op(module) is None
    with module.context, ir.Location.unknown():
        bad = _ops(module, "stablehlo.reshape")[2]
        bad.results[0].set_type(ir.RankedTensorType.get([11, 1], ir.F32Type.get()))   # 0 elements -> 11
        try:
            module.operation.verify()
            raise AssertionError("verifies")
        except ir.MLIRError as e:
            diag = e.error_diagnostics[0]
    assert str(diag.location) == 'loc("reshape")'
    assert failing_op(module) == bad
    assert verifier_location(module, diag.location, str(PAD)) == "cases35.py:136:29"


def test_the_partition_report_places_every_collective(tmp_path):
    report = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["run", str(XENT), "--partition", "--report", str(report), "-v",
                                  "-o", str(tmp_path / "out.mlir")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    collectives = json.loads(report.read_text())["collectives"]
    # the data all_reduce of the user's dot, and the three model all_reduces of log_softmax's reduces
    assert [(c["axes"], c["location"]) for c in collectives] == \
        [('{"data"}', "cases35.py:125:50")] + [('{"model"}', "cases35.py:122:9")] * 3
    assert r.output.count('cases35.py:122:9: all_reduce {"model"}: 16 bytes') == 3
    # every value has a place but the entry function's arguments (JAX names them only) and result
    values = json.loads(report.read_text())["values"]
    unplaced = [(v["name"], v["location"]) for v in values if ".py:" not in v["location"]]
    assert unplaced == [("w", "w"), ("x", "x"), ("l", "l"), ("result", "result 0 of @main")]
    softmax_arg = next(v for v in values if v["name"] == "@log_softmax:%arg0")
    assert softmax_arg["location"] == "cases35.py:122:9"      # a block argument: its function's call site


def test_with_source_keeps_a_file_location_else_takes_the_fallback():
    with ir.Context():
        here = ir.Location.file("m.py", 3, 4)
        user = ir.Location.name("jit(f)/while", childLoc=here)
        assert with_source(user, ir.Location.unknown()) == user
        assert with_source(ir.Location.name("x"), user) == user
        assert with_source(ir.Location.unknown(), user) == user


def _report(tmp_path, path, *flags):
    report = tmp_path / "r.json"
    r = CliRunner().invoke(main, ["run", str(path), *flags, "--report", str(report), "-v",
                                  "-o", str(tmp_path / "out.mlir")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return json.loads(report.read_text()), r.output


def test_the_collectives_of_a_loops_entry_arguments_have_the_loops_place(tmp_path):
    # The reshards of x and y before the while take its place, not x's and
    # y's (JAX's names only: `loc("x")`), as do the collectives made of them.
    report, output = _report(tmp_path, SCAN, "--partition")
    assert [c["location"] for c in report["collectives"]] == ["cases37.py:56:11"] * 4 + ["cases37.py:55:42"] * 2
    assert "\n  all_gather" not in output and "\n  collective_permute" not in output


def test_the_reshards_at_a_nested_jits_call_have_the_calls_place(tmp_path):
    report, output = _report(tmp_path, NESTED_JIT)
    assert all(i["location"] is not None for i in report["reshards"] + report["collectives"])
    assert output.count("cases37d.py:12:30: written by the export step") == 8


def test_a_reshard_of_an_entry_argument_is_located_at_its_user():
    from sdylog.passes.driver import parse_flags, run_passes
    from sdylog.passes import PassContext
    module = parse_module(SCAN.read_text(), str(SCAN))
    with module.context:
        flags = ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"]
        run_passes(module, parse_flags(flags), PassContext(filename=str(SCAN), timed=False))
        (loop,) = _ops(module, "stablehlo.while")
        at_loop = [op for op in _ops(module, "sdy.reshard") if op.results[0] in list(loop.operands)]
        assert len(at_loop) == 2
        for op in at_loop:
            assert isinstance(op.operands[0], ir.BlockArgument)           # an entry argument...
            assert str(op.location) == str(loop.location)               # ...resharded at the while
            assert format_location(op, str(SCAN)) == "cases37.py:56:11"
