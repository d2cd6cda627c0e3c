"""Census.calls_in without the pre-order lists: the calls of each top-level
function found from the census' list of calls (each call's function through
its parents) are those a fresh walk finds, in the same order."""
import pytest

from sdylog.ir import parse_module
from sdylog.passes.census import Census, Invalidated

MODULE = """
module {
  func.func public @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @f(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %1:2 = stablehlo.while(%iterArg = %0, %i = %c) : tensor<8xf32>, tensor<i32>
      cond {
        %p = stablehlo.compare LT, %i, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
        stablehlo.return %p : tensor<i1>
      } do {
        %2 = func.call @g(%iterArg) : (tensor<8xf32>) -> tensor<8xf32>
        %3 = func.call @f(%2) : (tensor<8xf32>) -> tensor<8xf32>
        stablehlo.return %3, %i : tensor<8xf32>, tensor<i32>
      }
    %4 = call @g(%1#0) : (tensor<8xf32>) -> tensor<8xf32>
    return %4 : tensor<8xf32>
  }
  func.func private @f(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    %0 = call @g(%arg0) : (tensor<8xf32>) -> tensor<8xf32>
    return %0 : tensor<8xf32>
  }
  func.func private @g(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
"""


@pytest.mark.parametrize("stale", [frozenset({"stablehlo.constant"}), frozenset({"stablehlo.while", "func.return"})])
def test_calls_in_without_the_lists_agrees_with_a_walk(stale):
    module = parse_module(MODULE)
    with module.context:
        funcs = [op.operation for op in module.body.operations]
        walked = Census.of(module)
        expected = [walked.calls_in(f) for f in funcs]
        assert [len(c) for c in expected] == [4, 1, 0]
        kept = Census.of(module)
        kept.follow(Invalidated(stale))   # (names other than func.call changed: no lists)
        assert kept.tops is None
        got = [kept.calls_in(f) for f in funcs]
        assert kept.tops is None   # (found without walking again)
        assert [[c.name for c in g] for g in got] == [[c.name for c in e] for e in expected]
        assert all(a == b for g, e in zip(got, expected) for a, b in zip(g, e, strict=True))


def test_calls_in_walks_again_when_calls_changed():
    module = parse_module(MODULE)
    with module.context:
        funcs = [op.operation for op in module.body.operations]
        kept = Census.of(module)
        kept.follow(Invalidated(frozenset({"func.call"})))
        assert [len(kept.calls_in(f)) for f in funcs] == [4, 1, 0]
