"""`--assign` of the ops of a function called inside a loop or conditional
is never dropped: with --control-flow replicate the loop runs on each
device taking part; with --control-flow atomic the region op goes where the
assignments inside it say, and an op assigned elsewhere than the region
op's device is a located error naming the option that would honour it
(rules/mpmd/placement.dl name_hint, "inside-name"; rules/mpmd/checks.dl
error_assign_apart_from_region), as a maximal sharding there is. An
--assign of a function the condition of a spanning loop calls names the
loop's leader (rules/mpmd/control_flow.dl cond_hint)."""
import pytest
from sdylog.ir.diagnostics import SdylogError
from tests.mpmd.helpers import T, functions, module, partition, simulate

I = "tensor<i32>"


def _loop(cond_call: bool = False) -> str:
    pred = (f"%p = func.call @c(%i) : ({I}) -> tensor<i1>" if cond_call else
            f"%p = stablehlo.compare LT, %i, %n : ({I}, {I}) -> tensor<i1>")
    return module(f"""
  func.func @main(%x: {T}) -> {T} {{
    %z = stablehlo.constant dense<0> : {I}
    %r:2 = stablehlo.while(%i = %z, %v = %x) : {I}, {T}
    cond {{
      %n = stablehlo.constant dense<3> : {I}
      {pred}
      stablehlo.return %p : tensor<i1>
    }} do {{
      %a = func.call @st0(%v) : ({T}) -> {T}
      %b = func.call @st1(%a) : ({T}) -> {T}
      %one = stablehlo.constant dense<1> : {I}
      %j = stablehlo.add %i, %one : {I}
      stablehlo.return %j, %b : {I}, {T}
    }}
    return %r#1 : {T}
  }}
  func.func private @st0(%y: {T}) -> {T} {{
    %c = stablehlo.sine %y : {T}
    return %c : {T}
  }}
  func.func private @st1(%y: {T}) -> {T} {{
    %c = stablehlo.cosine %y : {T}
    return %c : {T}
  }}
  func.func private @c(%i: {I}) -> tensor<i1> {{
    %n = stablehlo.constant dense<3> : {I}
    %p = stablehlo.compare LT, %i, %n : ({I}, {I}) -> tensor<i1>
    return %p : tensor<i1>
  }}""")


def test_atomic_loop_with_stages_assigned_apart_is_a_located_error():
    with pytest.raises(SdylogError) as e:
        partition(_loop(), control_flow="atomic", assign=(("st0", 0), ("st1", 1)))
    text = str(e.value)
    assert text.startswith("t.mlir:26:10: error: --assign st1@1 places this 'stablehlo.cosine' (from @st1) on "
                           "device 1, but the 'stablehlo.while' holding it (t.mlir:7:12) runs on device 0 "
                           "(--assign st0@0 of an op inside it)"), text
    assert "--control-flow replicate" in text


def test_atomic_loop_goes_where_the_assignment_inside_it_says():
    for d in (0, 1):
        out = functions(partition(_loop(), control_flow="atomic", assign=(("st1", d),)).text())
        assert "stablehlo.while" in out[d] and "stablehlo.cosine" in out[d] and "stablehlo.sine" in out[d]
        assert "stablehlo.while" not in out[1 - d]
    assert simulate(_loop(), control_flow="atomic", assign=(("st1", 1),)).match


def test_replicated_loop_honours_the_stages():
    out = functions(partition(_loop(), assign=(("st0", 0), ("st1", 1))).text())
    assert "stablehlo.sine" in out[0] and "stablehlo.cosine" not in out[0]
    assert "stablehlo.cosine" in out[1] and "stablehlo.sine" not in out[1]
    assert simulate(_loop(), mode="rendezvous", assign=(("st0", 0), ("st1", 1))).match


def test_an_assigned_condition_names_the_leader():
    for d in (0, 1):
        plan = partition(_loop(cond_call=True), assign=(("st0", 0), ("st1", 1), ("c", d))).plan
        leaders = [x for w, x in plan.engine.select("leader", "w", "d")]
        assert leaders == [d]
    with pytest.raises(SdylogError, match=r"--assign c@1 places this 'stablehlo.constant' \(from @c\) on device 1, "
                                         r"but the 'stablehlo.while' holding it"):
        # (atomic: the condition's ops are inside the while, on its device)
        partition(_loop(cond_call=True), control_flow="atomic", assign=(("st0", 0), ("c", 1)))


def test_explain_says_which_assignment_placed_the_loop(tmp_path):
    from click.testing import CliRunner
    from sdylog.cli import main
    src = tmp_path / "loop.mlir"
    src.write_text(_loop())
    r = CliRunner().invoke(main, ["explain", str(src), "%0#1", "--control-flow", "atomic", "--assign", "st1@1"])
    assert r.exit_code == 0, r.output
    assert ("runs on device 1: an op inside it, stablehlo.cosine (" in r.output
            and "comes from @st1: --assign st1@1" in r.output), r.output
