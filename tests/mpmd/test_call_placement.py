"""A placed call or named computation places the ops it inlines
(rules/mpmd/placement.dl placement_hint "call", from the call_hint rows
sdylog/mpmd/prepare.py records as it erases the call); an op's own
placement comes first and must agree (rules/mpmd/checks.dl
error_call_device); explain names the call."""
import pytest
from sdylog.ir.diagnostics import SdylogError
from tests.mpmd.helpers import T, module, on, partition


def _stage(inner_attr: str = "", call_attr: str = on(1)) -> str:
    return module(f"""
  func.func @main(%x: {T}) -> {T} {{
    %a = stablehlo.negate %x {{{on(0)}}} : {T}
    %b = func.call @stage(%a) {{{call_attr}}} : ({T}) -> {T}
    return %b : {T}
  }}
  func.func private @stage(%y: {T}) -> {T} {{
    %c = stablehlo.add %y, %y {inner_attr} : {T}
    %d = stablehlo.multiply %c, %c : {T}
    return %d : {T}
  }}""")



def test_a_placed_call_places_what_it_inlines():
    out = partition(_stage()).text()
    dev1 = out.split("@main.dev1")[1]
    assert "stablehlo.add" in dev1 and "stablehlo.multiply" in dev1
    assert "stablehlo.add" not in out.split("@main.dev1")[0]


def test_an_op_placed_like_its_call_is_fine_and_one_placed_apart_is_an_error():
    partition(_stage(f"{{{on(1)}}}"))
    with pytest.raises(SdylogError, match=r"t.mlir:11:10: error: 'stablehlo.add' is placed on device 0 but the "
                                          r"'func.call' of @stage holding it on device 1"):
        partition(_stage(f"{{{on(0)}}}"))


def test_a_call_inside_a_placed_named_computation_takes_its_device():
    text = module(f"""
  func.func @main(%x: {T}) -> {T} {{
    %a = stablehlo.negate %x {{{on(0)}}} : {T}
    %b = sdy.named_computation<"stage">(%a) (%z: {T}) {{
      %c = func.call @inner(%z) : ({T}) -> {T}
      sdy.return %c : {T}
    }} {{{on(1)}}} : ({T}) -> {T}
    return %b : {T}
  }}
  func.func private @inner(%y: {T}) -> {T} {{
    %c = stablehlo.add %y, %y : {T}
    return %c : {T}
  }}""")
    out = partition(text).text()
    assert "stablehlo.add" in out.split("@main.dev1")[1]


def test_explain_names_the_call(tmp_path):
    """(The inlined ops' values have no name in the input's @main: the
    placement lines of one, as explain builds them.)"""
    from sdylog.mpmd.explain import Explainer, mpmd_engine
    from sdylog.mpmd.options import MpmdOptions
    src = tmp_path / "c.mlir"
    src.write_text(_stage())
    explainer = Explainer(*mpmd_engine(str(src), MpmdOptions()))
    (add,) = [o for o, op in enumerate(explainer.facts.ops) if op is not None and op.name == "stablehlo.add"]
    assert explainer.placement(add, "") == [
        "runs on device 1: it comes from the func.call of @stage, placed on device 1"]
