"""Shapes and ranks of values and types (sdylog/ir/types.py) and the walk orders."""
from __future__ import annotations

import pytest
from jaxlib.mlir import ir

from sdylog.ir import make_context, parse_module
from sdylog.ir.rewrite import post_order_ops
from sdylog.ir.types import (is_scalar, is_shaped, is_static_shaped, is_tensor, rank_of, shape_of,
                             static_shape)
from sdylog.ir.walk import op_list, walk_ops

DYN = -9223372036854775808   # MLIR's dynamic size


@pytest.mark.parametrize("text, rank, shape, static, tensor, scalar, shaped", [
    ("tensor<2x3xf32>", 2, (2, 3), (2, 3), True, False, True),
    ("tensor<f32>", 0, (), (), True, True, True),
    ("tensor<2x?xf32>", 2, (2, DYN), None, True, False, True),
    ("tensor<*xf32>", 0, (), None, False, False, True),
    ("!stablehlo.token", 0, (), None, False, False, False),
    ("tuple<tensor<2xf32>>", 0, (), None, False, False, False),
])
def test_shapes_of_types(text, rank, shape, static, tensor, scalar, shaped):
    with make_context():
        t = ir.Type.parse(text)
        assert (rank_of(t), shape_of(t), static_shape(t)) == (rank, shape, static)
        assert (is_tensor(t), is_scalar(t), is_shaped(t), is_static_shaped(t)) == \
            (tensor, scalar, shaped, static is not None)


def test_values_answer_like_their_types():
    module = parse_module('''func.func @main(%a: tensor<4x2xf32>, %t: !stablehlo.token) -> tensor<4x2xf32> {
      return %a : tensor<4x2xf32>
    }''')
    with module.context:
        a, t = list(module.body.operations)[0].regions[0].blocks[0].arguments
        assert (rank_of(a), shape_of(a), static_shape(a), is_tensor(a)) == (2, (4, 2), (4, 2), True)
        assert (rank_of(t), shape_of(t), static_shape(t), is_tensor(t)) == (0, (), None, False)


NESTED = '''func.func @main(%a: tensor<4xf32>, %z: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.reduce(%a init: %z) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    reducer(%x: tensor<f32>, %y: tensor<f32>) {
      %s = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }
  %1 = stablehlo.negate %0 : tensor<f32>
  return %1 : tensor<f32>
}'''


def test_walk_orders():
    module = parse_module(NESTED)
    with module.context:
        pre = [op.name for op in walk_ops(module.operation)]
        assert pre == ["builtin.module", "func.func", "stablehlo.reduce", "stablehlo.add", "stablehlo.return",
                       "stablehlo.negate", "func.return"]
        assert [op.name for op in op_list(module.operation)] == pre
        post = [op.name for op in post_order_ops(module.operation)]
        assert post == ["stablehlo.add", "stablehlo.return", "stablehlo.reduce", "stablehlo.negate",
                        "func.return", "func.func", "builtin.module"]


def test_walk_is_a_snapshot():
    """Ops added while iterating are not visited."""
    module = parse_module(NESTED)
    with module.context:
        seen = []
        for op in walk_ops(module.operation):
            seen.append(op.name)
            if op.name == "stablehlo.negate":
                # after the negate, where a live walk would reach it
                op.clone(ip=ir.InsertionPoint.at_block_terminator(op.operation.block))
        assert seen.count("stablehlo.negate") == 1
        assert str(module).count("stablehlo.negate") == 2
