"""Place a JAX value_and_grad export of a layered model in pipeline stages
by layer (for the MPMD benchmarks): the corpus transformers take their
weights as arguments, `per_layer` of them per layer in order (then the
input), and return the loss then the gradients in the same order. JAX
lowers the forward layer by layer, then the backward in reverse: an op
belongs to the layer whose weights the forward reached last before it, or
(after the loss) whose gradients are the next ones produced. Each op gets
`mhlo.sharding = "{maximal device=S}"` for its stage S (layers split evenly);
the SPMD shardings of the arguments are dropped.

    python benchmarks/mpmd_stages.py IN.mlir STAGES [--per-layer 6] > OUT.mlir
"""
from __future__ import annotations

import argparse
import bisect
import sys

from jaxlib.mlir import ir

from sdylog.ir import load_module
from sdylog.ir.walk import func_ops, symbol_name


def place_in_stages(module, stages: int, per_layer: int = 6) -> None:
    """Annotate `module` in place."""
    fn = next(f for f in func_ops(module) if symbol_name(f) == "main")
    block = fn.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    position = {op: i for i, op in enumerate(ops)}
    args = list(block.arguments)
    layers = (len(args) - 1) // per_layer
    # where each layer's forward starts: the first use of one of its weights
    starts = []
    for layer in range(layers):
        uses = [position[_top(u.owner, block)] for a in args[layer * per_layer:(layer + 1) * per_layer]
                for u in a.uses]
        starts.append(min(uses))
    returned = list(ops[-1].operands)
    loss_at = position[returned[0].owner.operation]
    # where each layer's backward ends: its last gradient produced
    ends = [max(position[returned[1 + layer * per_layer + k].owner.operation] for k in range(per_layer))
            for layer in range(layers)]
    per_stage = -(-layers // stages)
    for i, op in enumerate(ops[:-1]):
        if i <= loss_at:
            layer = max(bisect.bisect_right(starts, i) - 1, 0)
        else:
            later = [layer for layer in range(layers) if ends[layer] >= i]
            layer = max(later) if later else 0
        op.attributes["mhlo.sharding"] = ir.StringAttr.get(f"{{maximal device={layer // per_stage}}}")
    if "arg_attrs" in fn.attributes:
        del fn.attributes["arg_attrs"]
    for op in list(module.body.operations):
        if op.operation.name == "sdy.mesh":
            op.operation.erase()
    module.operation.attributes["mhlo.num_partitions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), stages)


def _top(op, block):
    """The op of `block` that holds `op` (itself when it is in the block)."""
    op = op.operation if hasattr(op, "operation") else op
    while op.block != block:
        op = op.parent
    return op


def staged_text(path: str, stages: int, per_layer: int = 6) -> str:
    module = load_module(path)
    with module.context:
        place_in_stages(module, stages, per_layer)
        return module.operation.get_asm()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("stages", type=int)
    p.add_argument("--per-layer", type=int, default=6)
    a = p.parse_args()
    sys.stdout.write(staged_text(a.file, a.stages, a.per_layer))
