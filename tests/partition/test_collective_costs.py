"""rules/collectives.dl: the chain of shardings through a reshard's
collectives, local blocks, group sizes and ring-model bytes, reshards given
as rows by another program."""
from __future__ import annotations

import pytest

from sdylog.datalog import make_engine, parse_program
from sdylog.model.axis import AxisRef, SubAxis
from sdylog.partition.collective_costs import (RULES_FILE, Reshard, decomposition_facts, evaluate,
                                               reshard_facts, reshards_of_facts)

X, Y = AxisRef("x"), AxisRef("y")
SIZES = (("x", 4), ("y", 3))


def reshard(id_, source, target, shape=(8, 6), elem_bytes=4, target_mesh=None):
    return Reshard(id_, "m", SIZES, shape, elem_bytes, source, target, target_mesh)


def rows_of(reshards):
    rows = reshard_facts(reshards)
    rows.update(decomposition_facts(rows))
    return rows


def test_rows_round_trip():
    rs = [reshard(3, ((X,), ()), ((), (Y,))), reshard(5, ((AxisRef("x", SubAxis(1, 2)),), (Y,)), ((), ()),
                                                           target_mesh="m2")]
    assert reshards_of_facts(reshard_facts(rs)) == rs


@pytest.mark.parametrize("held_in", ["c", "python"])
def test_bytes_of_a_gather_and_a_slice(held_in, monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if held_in == "python" else "1")
    # [{x}, {}] -> [{}, {y}] on 8x6 f32: slice y (free), then gather x of the
    # 2x2 block (16 bytes): 3 * 16
    engine = evaluate(rows_of([reshard(7, ((X,), ()), ((), (Y,)))]))
    steps = sorted(engine.read("reshard_step"))
    kinds = dict(engine.read("collective"))
    assert [kinds[c] for _, _, c in steps] == ["all_slice", "all_gather"]
    bytes_of = dict(engine.read("collective_bytes"))
    block = dict(engine.read("collective_block_bytes"))
    assert [block[c] for _, _, c in steps] == [2 * 6 * 4, 2 * 2 * 4]
    assert [bytes_of[c] for _, _, c in steps] == [0, 3 * 16]
    assert engine.read("reshard_bytes") == [(7, 48)]
    assert engine.read("reshard_collective_count") == [(7, 2)]
    assert engine.read("reshard_incomplete") == []


def test_padded_blocks_and_all_to_all():
    # 10x6 on x=4: blocks of ceil(10/4) = 3 rows; x moves to dimension 1 (6
    # on 4: 2 columns after): an all_to_all over 4 sends 3/4 of 3x6x4 bytes
    engine = evaluate(rows_of([reshard(0, ((X,), ()), ((), (X,)), shape=(10, 6))]))
    (c,) = [c for c, kind in engine.read("collective") if kind == "all_to_all"]
    assert dict(engine.read("collective_block_bytes"))[c] == 3 * 6 * 4
    assert dict(engine.read("collective_group_size"))[c] == 4
    assert dict(engine.read("collective_bytes"))[c] == 3 * 3 * 6 * 4 // 4


def test_nothing_to_move_costs_nothing():
    engine = evaluate(rows_of([reshard(1, ((X,), ()), ((X,), ()))]))
    assert engine.read("reshard_bytes") == [(1, 0)]
    assert engine.read("reshard_collective_count") == [(1, 0)]
    assert engine.read("collectives_total_bytes") == [(0,)]


def test_collectives_on_their_own():
    # an all_reduce over {x, y} of a 4x6 i8 tensor sharded [{}, {y}]: S = 4*2,
    # 2 * (12 - 1) / 12 * S; a reduce_scatter over x; a collective_permute
    rows = {
        "collective": [(0, "all_reduce"), (1, "reduce_scatter"), (2, "collective_permute")],
        "collective_group_axis": [(0, 0, "x", 1, 4), (0, 1, "y", 1, 3)],
        "collective_axis": [(1, 0, 0, "x", 1, 4)],
        "collective_tensor": [(0, 1), (1, 1), (2, 1)],
        "collective_dim": [(c, d, n) for c in range(3) for d, n in enumerate((4, 6))],
        "collective_operand_axis": [(0, 1, 0, "y", 1, 3), (1, 1, 0, "y", 1, 3), (2, 0, 0, "x", 1, 4)],
    }
    engine = evaluate(rows)
    assert dict(engine.read("collective_group_size")) == {0: 12, 1: 4, 2: 1}
    assert dict(engine.read("collective_bytes")) == {0: 2 * 11 * 8 // 12, 1: 3 * 8 // 4, 2: 6}
    assert engine.read("collectives_total_bytes") == [(2 * 11 * 8 // 12 + 3 * 8 // 4 + 6,)]


def test_incomplete_reshard_is_flagged():
    rows = reshard_facts([reshard(0, ((X,), ()), ((), (X,)))])
    rows.update({"reshard_step": [(0, 0, 0)], "collective": [(0, "all_gather")],
                 "collective_axis": [(0, 0, 0, "x", 1, 4)]})   # gathers, never slices dim 1
    engine = evaluate(rows)
    assert engine.read("reshard_incomplete") == [(0,)]


def test_reshards_derived_by_another_program_on_the_same_engine():
    # What insert-explicit-reshards does: its own program (including the input
    # declarations) derives the reshard rows; the decomposition reads them and
    # the collectives program runs on the same engine.
    first = parse_program(f'''
#include "{RULES_FILE.parent}/collectives/inputs.dl"
.decl wants(r: number, dim: number)
.input wants
reshard(r, "m", 4) :- wants(r, _).
reshard_dim(r, 0, 8) :- wants(r, _).
reshard_dim(r, 1, 6) :- wants(r, _).
reshard_from_axis(r, 0, 0, "x", 1, 4) :- wants(r, _).
reshard_to_axis(r, d, 0, "x", 1, 4) :- wants(r, d).
''')
    engine = make_engine(first, "memory")
    engine.load("wants", [(0, 1), (1, 0)])
    engine.run()
    rows = {name: engine.read(name) for name in ("reshard", "reshard_dim", "reshard_from_axis",
                                                 "reshard_to_axis", "reshard_target_mesh")}
    rows["mesh_axis"] = [("m", "x", 0, 4), ("m", "y", 1, 3)]
    from sdylog.partition.collective_costs import collectives_program
    for name, data in decomposition_facts(rows).items():
        engine.load(name, data)
    engine.run(collectives_program())
    # reshard 0 moves x to dimension 1 (an all_to_all of 2x6 f32 blocks over 4); reshard 1 stays
    assert sorted(engine.read("reshard_bytes")) == [(0, 3 * 2 * 6 * 4 // 4), (1, 0)]


MODULE = '''sdy.mesh @m = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"y"}, {"x"}]>}) -> tensor<16x8xf32> {
  %0 = sdy.all_gather [{}, {"x"}] %arg0 out_sharding=<@m, [{"y"}, {}]> : tensor<16x8xf32>
  %1 = sdy.all_to_all [{"y"}: 0->1] %0 out_sharding=<@m, [{}, {"y"}]> : tensor<16x8xf32>
  %2 = sdy.all_reduce {"x"} %1 out_sharding=<@m, [{}, {"y"}]> : tensor<16x8xf32>
  %3 = sdy.reduce_scatter [{"x"}, {}] %2 out_sharding=<@m, [{"x"}, {"y"}]> : tensor<16x8xf32>
  %4 = sdy.collective_permute %3 out_sharding=<@m, [{"y"}, {"x"}]> : tensor<16x8xf32>
  %5 = sdy.all_slice [{}, {"x"}] %0 out_sharding=<@m, [{"y"}, {"x"}]> : tensor<16x8xf32>
  return %4 : tensor<16x8xf32>
}
'''


def test_every_collective_of_a_module():
    from sdylog.ir import parse_module
    from sdylog.partition.collective_costs import module_collectives
    module = parse_module(MODULE, "m.mlir")
    with module.context:
        got = [(c["kind"], c["axes"], c["location"], c["bytes_per_device"]) for c in module_collectives(module, "m.mlir")]
    # blocks: %arg0 8x4 f32 = 128 bytes, %0 8x8 = 256, %1 and %2 16x4 = 256, %3 8x4 = 128
    assert got == [("all_gather", '[{}, {"x"}]', "m.mlir:3:8", 128),
                   ("all_to_all", '[{"y"}: 0->1]', "m.mlir:4:8", 128),
                   ("all_reduce", '{"x"}', "m.mlir:5:8", 256),
                   ("reduce_scatter", '[{"x"}, {}]', "m.mlir:6:8", 128),
                   ("collective_permute", "", "m.mlir:7:8", 128),
                   ("all_slice", '[{}, {"x"}]', "m.mlir:8:8", 0)]

