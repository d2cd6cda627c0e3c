"""`sdylog simulate` and `run --partition` on values inside regions: a while
loop's carry reshuffled by a collective_permute."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir.module import parse_module
from sdylog.partition import ir_shardings as irs

WHILE_PERMUTE = """sdy.mesh @mesh = <["y"=4]>
func.func @main(%arg0: tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> (tensor<16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %w:2 = stablehlo.while(%i = %c0, %it = %arg0) : tensor<i32>, tensor<16xf32>
  cond {
    %p = stablehlo.compare LT, %i, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %r = sdy.reshard %it <@mesh, [{"y":(2)2, "y":(1)2}]> : tensor<16xf32>
    %e = stablehlo.exponential %r : tensor<16xf32>
    %i2 = stablehlo.add %i, %c1 : tensor<i32>
    stablehlo.return %i2, %e : tensor<i32>, tensor<16xf32>
  }
  return %w#1 : tensor<16xf32>
}"""

def invoke(args, tmp_path, text, name="t.mlir"):
    path = tmp_path / name
    path.write_text(text)
    return CliRunner().invoke(main, [args[0], str(path), *args[1:]])


def test_while_carry_sharding_is_the_while_results():
    from jaxlib.mlir import ir
    module = parse_module(WHILE_PERMUTE, "t.mlir")
    with module.context:
        func = module.body.operations[1]
        while_op = next(op for op in func.regions[0].blocks[0].operations if op.operation.name == "stablehlo.while")
        while_op.operation.attributes["sdy.sharding"] = ir.Attribute.parse(
            '#sdy.sharding_per_value<[<@mesh, []>, <@mesh, [{"y"}]>]>')
        for region in while_op.regions:
            i, it = region.blocks[0].arguments
            assert irs.sharding_of(i).dims == ()
            assert [a.name for a in irs.sharding_of(it).dims[0].axes] == ["y"]


def test_partition_a_collective_permute_of_a_while_carry(tmp_path):
    r = invoke(["run", "--partition"], tmp_path, WHILE_PERMUTE)
    assert r.exit_code == 0, r.output + r.stderr
    assert r.output.count('"stablehlo.collective_permute"') == 2
    assert "tensor<4xf32>" in r.output and "tensor<16xf32>" not in r.output


@pytest.mark.parametrize("text", [WHILE_PERMUTE], ids=["while_permute"])
def test_simulate_matches(tmp_path, text):
    r = invoke(["simulate", "--json"], tmp_path, text)
    assert r.exit_code == 0, r.output + r.stderr
    report = json.loads(r.output)
    assert report["match"], report
    assert r.stderr == ""
