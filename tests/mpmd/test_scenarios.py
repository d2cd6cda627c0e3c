"""The scenarios of ../shared/design/mpmd.md section 5 (S01..S25): the
partition each should give, its verification by jaxlib (partition_text
verifies), its simulation against the unpartitioned program (bitwise
without casts) in both channel modes, and the reference interpreter
running the emitted programs (tests/mpmd/test_reference_interpreter.py
runs every scenario there)."""
import re

import numpy as np
import pytest

from sdylog.ir.diagnostics import SdylogError, UsageError
from tests.mpmd.helpers import T, arg_on, functions, module, on, partition, simulate

MODES = ("buffered", "rendezvous")


def check_runs(text: str, **options):
    """The simulation agrees with the unpartitioned program in both modes; the buffered report."""
    reports = [simulate(text, mode=m, **options) for m in MODES]
    for r in reports:
        assert r.deadlock is None, r.deadlock
        assert r.match, r.text()
    return reports[0]


def channels(part):
    return [(c.src, c.dst, c.kind, c.bytes) for c in part.plan.channels]


# ---------------------------------------------------------------- S01..S03: straight line
S01 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}) -> {T} {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %b = stablehlo.add %a, %a {{{on(0)}}} : {T}
    return %b : {T}
  }}""", devices=1)


def test_s01_single_device_is_the_input_without_annotations():
    part = partition(S01)
    assert part.plan.channels == []
    text = part.text()
    assert "sdy." not in text and "send" not in text and "after_all" not in text
    assert text.count("func.func") == 1 and "@main.dev0" in text
    assert "stablehlo.multiply %arg0, %arg0" in text and "stablehlo.add %0, %0" in text
    assert check_runs(S01).total_bytes == 0


S02 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> {T} {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %b = stablehlo.add %a, %y {{{on(1)}}} : {T}
    return %b : {T}
  }}""")


def test_s02_cross_device_data():
    part = partition(S02)
    assert channels(part) == [(0, 1, "data", 4096)]
    f = functions(part.text())
    assert '"stablehlo.send"' in f[0] and "return\n" in f[0] + "\n" and "recv" not in f[0]
    assert "source_target_pairs = dense<[[0, 1]]>" in f[0] and "handle = 1, type = 1" in f[0]
    assert '"stablehlo.recv"' in f[1] and "stablehlo.add" in f[1] and "multiply" not in f[1]
    r = check_runs(S02)
    assert r.total_bytes == 4096 and r.bytes_per_device == {0: {"sent": 4096, "received": 0},
                                                            1: {"sent": 0, "received": 4096}}


S03 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T}) {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %b = stablehlo.add %a, %y {{{on(1)}}} : {T}
    %c = stablehlo.multiply %a, %a {{{on(1)}}} : {T}
    return %b, %c : {T}, {T}
  }}""")


def test_s03_one_transfer_for_three_cross_edges():
    part = partition(S03)
    assert channels(part) == [(0, 1, "data", 4096)]
    assert part.plan.stats["cross_edges"] == 3 and part.plan.stats["transfers"] == 1
    f1 = functions(part.text())[1]
    recv = re.search(r"(%\d+):2 = \"stablehlo.recv\"", f1)[1]
    assert f"stablehlo.add {recv}#0, %arg0" in f1 and f"stablehlo.multiply {recv}#0, {recv}#0" in f1
    check_runs(S03)


# An argument of the entry function moving between devices: its transfer is
# keyed by the function's own op (rules/mpmd/order.dl xfer_event), which comes
# before every op of the body, so it fires at the start on both devices, before
# the transfer of a value computed in the body. (The same per-device programs
# as at 5c10583, where the key was -1.)
S03_ARG = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T}) {{
    %a = stablehlo.multiply %y, %y {{{on(1)}}} : {T}
    %c = stablehlo.negate %x {{{on(0)}}} : {T}
    %b = stablehlo.add %a, %x {{{on(1)}}} : {T}
    %d = stablehlo.add %b, %c {{{on(1)}}} : {T}
    return %d, %c : {T}, {T}
  }}""")


def test_s03_a_function_argument_moves_at_the_start():
    part = partition(S03_ARG)
    plan = part.plan
    func_op = next(o for o, kind, f, _ in plan.facts.rows("op") if kind == "func.func" and f == plan.entry)
    x, c = (ch for ch in plan.channels)
    assert (x.id, x.src, x.dst, x.after) == (1, 0, 1, func_op)
    assert (c.id, c.src, c.dst) == (2, 0, 1) and c.after != func_op
    assert plan.events[("after", func_op)] == [(x, "send"), (x, "recv")]
    f = functions(part.text())
    # device 0 sends its argument before its first op, then %c after the negate
    body0 = [line.strip() for line in f[0].splitlines()[1:]]
    assert body0[1].startswith('%1 = "stablehlo.send"(%arg0, %0)') and "handle = 1," in body0[1]
    assert body0[2] == "%2 = stablehlo.negate %arg0 : tensor<1024xf32>"
    assert body0[3].startswith('%3 = "stablehlo.send"(%2, %1)') and "handle = 2," in body0[3]
    # device 1 receives it before its first op and uses it in the add
    body1 = [line.strip() for line in f[1].splitlines()[1:]]
    assert body1[1].startswith('%1:2 = "stablehlo.recv"(%0)') and "handle = 1," in body1[1]
    assert body1[2] == "%2 = stablehlo.multiply %arg0, %arg0 : tensor<1024xf32>"
    assert body1[3].startswith('%3:2 = "stablehlo.recv"(%1#1)') and "handle = 2," in body1[3]
    assert body1[4] == "%4 = stablehlo.add %2, %1#0 : tensor<1024xf32>"
    check_runs(S03_ARG)


# ---------------------------------------------------------------- S04: fan-out
S04 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}) -> ({T}, {T}, {T}) {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %b = stablehlo.negate %a {{{on(1)}}} : {T}
    %c = stablehlo.abs %a {{{on(2)}}} : {T}
    %d = stablehlo.exponential %a {{{on(3)}}} : {T}
    return %b, %c, %d : {T}, {T}, {T}
  }}""", devices=4)


def test_s04_star_and_chain_fanout():
    star = partition(S04)
    assert [(c.src, c.dst) for c in star.plan.channels] == [(0, 1), (0, 2), (0, 3)]
    chain = partition(S04, fanout="chain")
    assert [(c.src, c.dst, c.hop) for c in chain.plan.channels] == [(0, 1, 0), (1, 2, 1), (2, 3, 2)]
    f = functions(chain.text())
    # a forwarding device sends what it received, right after its recv
    assert f[1].index('"stablehlo.recv"') < f[1].index('"stablehlo.send"')
    for opts in ({}, {"fanout": "chain"}):
        r = check_runs(S04, **opts)
    assert r.bytes_per_device[0]["sent"] == 4096 and r.total_bytes == 3 * 4096


# ---------------------------------------------------------------- S05, S06: control
def trace(label: str, operands: str, types: str, result: str, d: int) -> str:
    return (f'stablehlo.custom_call @sdylog.trace({operands}) {{backend_config = "{label}", has_side_effect = true, '
            f"{on(d)}}} : ({types}) -> {result}")


S05 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T}) {{
    %t = {trace("log", "%x", T, "!stablehlo.token", 0)}
    %u = {trace("log2", "%y, %t", T + ", !stablehlo.token", T, 1)}
    %w = {trace("log3", "%y, %t", T + ", !stablehlo.token", T, 1)}
    return %u, %w : {T}, {T}
  }}""")


def test_s05_control_dependency_travels_as_an_empty_message():
    part = partition(S05)
    assert channels(part) == [(0, 1, "control", 0)]
    f = functions(part.text())
    assert "dense<> : tensor<0xf32>" in f[0] and "after_all" in f[0]
    for mode in MODES:
        r = simulate(S05, mode=mode)
        assert r.match and r.total_bytes == 0
        effects = [(d, what) for d, kind, what in r.trace if kind == "effect"]
        assert effects.index((0, "log")) < effects.index((1, "log2"))
        assert effects.index((0, "log")) < effects.index((1, "log3"))


S06 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T}) {{
    %r:2 = stablehlo.custom_call @sdylog.trace(%x) {{backend_config = "cb", has_side_effect = true,
        sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>, <@maximal_mesh_0, []>]>}}
        : ({T}) -> ({T}, !stablehlo.token)
    %s = stablehlo.add %r#0, %y {{{on(1)}}} : {T}
    %e = {trace("eff", "%y, %r#1", T + ", !stablehlo.token", T, 1)}
    return %s, %e : {T}, {T}
  }}""")


def test_s06_token_rides_with_data_of_the_same_op():
    merged = partition(S06)
    assert channels(merged) == [(0, 1, "data", 4096)]
    assert merged.plan.channels[0].riders
    apart = partition(S06, merge_control=False)
    assert sorted(channels(apart)) == [(0, 1, "control", 0), (0, 1, "data", 4096)]
    for opts in ({}, {"merge_control": False}):
        for mode in MODES:
            r = simulate(S06, mode=mode, **opts)
            assert r.match
            effects = [(d, what) for d, kind, what in r.trace if kind == "effect"]
            assert effects.index((0, "cb")) < effects.index((1, "eff"))


# ---------------------------------------------------------------- S07, S08: memory kinds
S07 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}, mhlo.memory_kind = "pinned_host"}}) -> ({T}, {T}) {{
    %a = stablehlo.add %x, %x {{{on(0)}}} : {T}
    %b = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    return %a, %b : {T}, {T}
  }}""", devices=1)


def test_s07_one_move_to_device_shared_by_two_uses():
    part = partition(S07)
    assert part.plan.channels == []
    text = part.text()
    assert text.count("annotate_device_placement") == 1 and '_xla_buffer_placement = "device"' in text
    assert part.plan.stats["moves"] == {"device:0": 4096}
    check_runs(S07)


def s08(host_arg: bool) -> str:
    kind = ', mhlo.memory_kind = "pinned_host"' if host_arg else ""
    make_a = ("" if host_arg else f"    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}\n")
    a = "%x" if host_arg else "%a"
    return module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}{kind}}}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T}) {{
{make_a}    %b = stablehlo.add {a}, %y {{{on(1)}}} : {T}
    %c = stablehlo.exponential {a} {{{on(1)}, mhlo.frontend_attributes = {{_xla_compute_type = "host"}}}} : {T}
    return %b, %c : {T}, {T}
  }}""")


def test_s08_one_network_transfer_and_a_local_move_to_host():
    part = partition(s08(False))
    assert channels(part) == [(0, 1, "data", 4096)]
    f = functions(part.text())
    assert f[1].count("annotate_device_placement") == 1 and '"pinned_host"' in f[1]
    assert part.plan.stats["moves"] == {"pinned_host:1": 4096}
    check_runs(s08(False))
    staged = partition(s08(True))
    f = functions(staged.text())
    # the host copy is moved to device memory before the send
    assert f[0].index("annotate_device_placement") < f[0].index('"stablehlo.send"')
    assert staged.plan.stats["moves"] == {"device:0": 4096, "pinned_host:1": 4096}
    check_runs(s08(True))


# ---------------------------------------------------------------- S09: bf16 transfers
S09 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %k: tensor<1024xi32> {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}})
      -> ({T}, tensor<1024xi32>) {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %j = stablehlo.add %k, %k {{{on(0)}}} : tensor<1024xi32>
    %b = stablehlo.negate %a {{{on(1)}}} : {T}
    %m = stablehlo.multiply %j, %j {{{on(1)}}} : tensor<1024xi32>
    return %b, %m : {T}, tensor<1024xi32>
  }}""")


@pytest.mark.parametrize("mode", ["nearest", "truncate"])
def test_s09_bf16_halves_f32_channels(mode):
    plain = partition(S09)
    cast = partition(S09, bf16_transfers=mode)
    by_type = {c.elem_type: c for c in cast.plan.channels}
    assert by_type["f32"].wire_type == "bf16" and by_type["f32"].bytes == 2048
    assert by_type["i32"].wire_type == "i32" and by_type["i32"].bytes == 4096
    assert sum(c.bytes for c in plain.plan.channels) == 8192
    r = check_runs(S09, bf16_transfers=mode)
    a = r.inputs[0] * r.inputs[0]
    got = -r.results[0]
    rel = np.max(np.abs(got - a) / np.maximum(np.abs(a), 1e-30))
    assert rel <= (2.0 ** -8 if mode == "nearest" else 2.0 ** -7)
    if mode == "truncate":   # the top 16 bits of each f32
        assert np.array_equal(got.view(np.uint32), a.view(np.uint32) & 0xFFFF0000)
    assert np.array_equal(r.results[1], (2 * r.inputs[1]) ** 2)


def test_s09_moves_are_not_cast():
    r = partition(s08(True), bf16_transfers="nearest")
    assert "bitcast_convert" not in r.text()
    assert [c.wire_type for c in r.plan.channels] == ["bf16"]


# ---------------------------------------------------------------- S10: results and arguments
S10 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %w: {T}) -> ({T} {{{arg_on(1)}}}, {T} {{{arg_on(0)}}}, {T}, {T}) {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %p = stablehlo.add %w, %a {{{on(0)}}} : {T}
    %q = stablehlo.multiply %w, %w {{{on(1)}}} : {T}
    return %a, %a, %p, %q : {T}, {T}, {T}, {T}
  }}""")


def test_s10_same_value_to_two_results_and_an_argument_fed_twice():
    part = partition(S10)
    m = part.manifest()
    assert channels(part) == [(0, 1, "data", 4096)]
    assert m["results"][0]["device"] == 1 and m["results"][1]["device"] == 0
    assert [a["device"] for a in m["arguments"][1]] == [0, 1]
    check_runs(S10)


# ---------------------------------------------------------------- S15, S16: placing unplaced ops
S15 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T}) -> {T} {{
    %c = stablehlo.constant dense<2.0> : {T}
    %u = stablehlo.multiply %x, %c : {T}
    %v = stablehlo.add %u, %y : {T}
    %w = stablehlo.exponential %v {{{on(1)}}} : {T}
    return %w : {T}
  }}""")


def test_s15_unplaced_ops_go_where_used_constants_are_cloned():
    part = partition(S15)
    plan = part.plan
    names = {part.plan.facts.ops[o].name: ds for o, ds in plan.placed.items()}
    assert names["stablehlo.multiply"] == (1,) and names["stablehlo.add"] == (1,)
    assert names["stablehlo.constant"] == (1,)
    assert channels(part) == [(0, 1, "data", 4096)]
    assert [a["device"] for a in part.manifest()["arguments"][1]] == [1]
    f = functions(part.text())
    assert "stablehlo.constant" not in f[0]
    check_runs(S15)
    with pytest.raises(SdylogError, match="t.mlir:7:10: error: operands on conflicting devices"):
        partition(S15, infer_transfers=False)


S16 = module(f"""
  func.func @main(%a: {T} {{{arg_on(0)}}}, %b: {T} {{{arg_on(1)}}}) -> {T} {{
    %d = stablehlo.divide %a, %b : {T}
    return %d : {T}
  }}""")


def test_s16_no_use_goes_to_the_lowest_operand_device():
    part = partition(S16)
    assert list(part.plan.placed.values()) == [(0,)]
    assert channels(part) == [(1, 0, "data", 4096)]
    assert part.manifest()["results"][0]["device"] == 0
    check_runs(S16)
    with pytest.raises(SdylogError, match="operands on conflicting devices"):
        partition(S16, infer_transfers=False)


# ---------------------------------------------------------------- S21: requests
S21 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}) -> ({T}, {T}) {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %c = sdy.sharding_constraint %a <@maximal_mesh_1, []> : {T}
    %b = stablehlo.negate %c {{{on(1)}}} : {T}
    %e = stablehlo.abs %c {{{on(0)}}} : {T}
    return %b, %e : {T}, {T}
  }}""")


def test_s21_constraint_asks_for_a_copy_without_a_cycle():
    part = partition(S21)
    assert channels(part) == [(0, 1, "data", 4096)]
    f0 = functions(part.text())[0]
    assert "stablehlo.abs %" in f0 and "recv" not in f0
    check_runs(S21)


# ---------------------------------------------------------------- S23: functions
S23 = module(f"""
  func.func private @f(%v: {T}) -> {T} {{
    %r = stablehlo.negate %v : {T}
    return %r : {T}
  }}
  func.func private @g(%v: {T}) -> {T} {{
    %r = stablehlo.abs %v : {T}
    return %r : {T}
  }}
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T}, {T}) {{
    %a = func.call @f(%y) {{{on(1)}}} : ({T}) -> {T}
    %b = func.call @g(%x) {{{on(0)}}} : ({T}) -> {T}
    %c = func.call @g(%y) {{{on(1)}}} : ({T}) -> {T}
    return %a, %b, %c : {T}, {T}, {T}
  }}""")


def test_s23_functions_are_inlined_where_called():
    part = partition(S23, assign=(("f", 1), ("g", 1)))
    text = part.text()
    assert "func.call" not in text and "@f" not in text and "@g" not in text
    f = functions(text)
    assert "stablehlo.negate" in f[1] and "stablehlo.negate" not in f[0]
    assert "stablehlo.abs" in f[0] and "stablehlo.abs" in f[1]
    check_runs(S23)


# ---------------------------------------------------------------- S24: existing host transfers
S24 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> {T} {{
    %t = stablehlo.after_all {{{on(1)}}} : !stablehlo.token
    %s = "stablehlo.send"(%y, %t) {{channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>,
        is_host_transfer = true, mhlo.frontend_attributes = {{_xla_host_transfer_handler_name = "cb"}}, {on(1)}}}
        : ({T}, !stablehlo.token) -> !stablehlo.token
    %r:2 = "stablehlo.recv"(%s) {{channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>,
        is_host_transfer = true, sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_1, []>, <@maximal_mesh_1, []>]>}}
        : (!stablehlo.token) -> ({T}, !stablehlo.token)
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %b = stablehlo.add %a, %r#0 {{{on(1)}}} : {T}
    return %b : {T}
  }}""")


def test_s24_host_transfers_kept_new_channel_after_their_handles():
    part = partition(S24)
    assert [c.id for c in part.plan.channels] == [3]
    f1 = functions(part.text())[1]
    assert "handle = 1, type = 2" in f1 and "handle = 2, type = 3" in f1
    assert "_xla_host_transfer_handler_name" in f1
    assert part.text() == partition(S24).text()   # deterministic
    check_runs(S24)


def test_s24_sends_and_recvs_carry_the_producer_location():
    from sdylog.ir.walk import walk_ops
    part = partition(S24)
    with part.module.context:
        ops = list(walk_ops(part.module.operation))
        multiply = next(str(op.location) for op in ops if op.name == "stablehlo.multiply")
        p2p = [str(op.location) for op in ops if op.name in ("stablehlo.send", "stablehlo.recv")
               and "type = 1" in str(op.attributes["channel_handle"])]
    assert len(p2p) == 2 and set(p2p) == {multiply} and ":13:10" in multiply


# ---------------------------------------------------------------- S25: errors
@pytest.mark.parametrize("body, message", [
    (f"""  func.func @main(%x: {T}) -> ({T}, {T}) {{
    %r:2 = stablehlo.custom_call @sdylog.trace(%x) {{has_side_effect = true,
        sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>, <@maximal_mesh_1, []>]>}} : ({T}) -> ({T}, {T})
    return %r#0, %r#1 : {T}, {T}
  }}""", "t.mlir:5:12: error: 'stablehlo.custom_call' has results placed on two devices (0 and 1)"),
    (f"""  sdy.mesh @maximal_mesh_7 = <[], device_ids=[7]>
  func.func @main(%x: {T}) -> {T} {{
    %a = stablehlo.negate %x {{{on(7)}}} : {T}
    return %a : {T}
  }}""", "t.mlir:6:10: error: device 7 is beyond the module's 2 devices"),
    (f"""  func.func @main(%x: {T} {{{arg_on(0)}, mhlo.memory_kind = "pinned_host",
                  mhlo.frontend_attributes = {{_xla_buffer_placement = "device"}}}}) -> {T} {{
    %a = stablehlo.negate %x {{{on(0)}}} : {T}
    return %a : {T}
  }}""", "error: argument 0 of @main is given two memory kinds"),
    (f"""  func.func @main(%x: tensor<?xf32> {{{arg_on(0)}}}) -> tensor<?xf32> {{
    %a = stablehlo.negate %x {{{on(0)}}} : tensor<?xf32>
    %b = stablehlo.abs %a {{{on(1)}}} : tensor<?xf32>
    return %b : tensor<?xf32>
  }}""", "t.mlir:5:10: error: a tensor of dynamic shape"),
])
def test_s25_impossible_inputs(body, message):
    with pytest.raises(SdylogError) as e:
        partition(module(body))
    assert message in str(e.value)


def test_s25_a_device_beyond_the_devices_given():
    with pytest.raises(SdylogError, match="t.mlir:10:10: error: device 2 is beyond the module's 2 devices"):
        partition(S04, devices=2)
    assert len(partition(S04, devices=6).text().split("func.func")) == 7


# ---------------------------------------------------------------- S11..S14: control flow across devices
I32 = "tensor<i32>"
S11 = module(f"""
  func.func @main(%w: {T} {{{arg_on(1)}}}) -> {T} {{
    %c0 = stablehlo.constant dense<0> : {I32}
    %z = stablehlo.constant dense<0.0> : {T}
    %r:2 = stablehlo.while(%i = %c0, %acc = %z) : {I32}, {T}
     cond {{
      %c10 = stablehlo.constant dense<10> : {I32}
      %p = stablehlo.compare LT, %i, %c10 {{{on(0)}}} : ({I32}, {I32}) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : {I32}
      %i2 = stablehlo.add %i, %one {{{on(0)}}} : {I32}
      %a2 = stablehlo.add %acc, %w {{{on(1)}}} : {T}
      stablehlo.return %i2, %a2 : {I32}, {T}
    }}
    return %r#1 : {T}
  }}""")


def test_s11_loop_spanning_devices_sends_its_predicate():
    part = partition(S11)
    assert [(c.src, c.dst, c.kind) for c in part.plan.channels] == [(0, 1, "predicate")]
    f = functions(part.text())
    assert "stablehlo.while" in f[0] and "stablehlo.while" in f[1]
    assert "stablehlo.compare" not in f[1]       # dev1's condition returns the carried predicate
    r = check_runs(S11)
    assert r.channels[0]["messages"] == 11 and r.total_bytes == 11
    with pytest.raises(SdylogError, match="is placed on device 1 but the 'stablehlo.while' holding it"):
        partition(S11, control_flow="atomic")


S12 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}) -> {T} {{
    %c0 = stablehlo.constant dense<0> : {I32}
    %z = stablehlo.constant dense<0.0> : {T}
    %w = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %r:2 = stablehlo.while(%i = %c0, %acc = %z) : {I32}, {T}
     cond {{
      %c10 = stablehlo.constant dense<10> : {I32}
      %p = stablehlo.compare LT, %i, %c10 : ({I32}, {I32}) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : {I32}
      %i2 = stablehlo.add %i, %one {{{on(0)}}} : {I32}
      %f0 = stablehlo.convert %i2 : ({I32}) -> tensor<f32>
      %f = stablehlo.broadcast_in_dim %f0, dims = [] : (tensor<f32>) -> {T}
      %t = stablehlo.multiply %f, %x {{{on(0)}}} : {T}
      %tw = stablehlo.multiply %t, %w {{{on(1)}}} : {T}
      %a2 = stablehlo.add %acc, %tw {{{on(1)}}} : {T}
      stablehlo.return %i2, %a2 : {I32}, {T}
    }}
    return %r#1 : {T}
  }}""")


def test_s12_loop_invariant_sent_once_body_value_each_iteration():
    part = partition(S12)
    kinds = sorted((c.src, c.dst, c.kind) for c in part.plan.channels)
    assert kinds == [(0, 1, "data"), (0, 1, "data"), (0, 1, "predicate")]
    r = check_runs(S12)
    by_value = sorted(c["messages"] for c in r.channels)
    assert by_value == [1, 10, 11]       # w once, t each iteration, the predicate


S13 = module(f"""
  func.func @main(%w: {T} {{{arg_on(1)}}}) -> {T} {{
    %c0 = stablehlo.constant dense<0> : {I32}
    %z = stablehlo.constant dense<0.0> : {T}
    %r:2 = stablehlo.while(%i = %c0, %acc = %z) : {I32}, {T}
     cond {{
      %c3 = stablehlo.constant dense<3> : {I32}
      %p = stablehlo.compare LT, %i, %c3 {{{on(0)}}} : ({I32}, {I32}) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : {I32}
      %i2 = stablehlo.add %i, %one {{{on(0)}}} : {I32}
      %q:2 = stablehlo.while(%j = %c0, %b = %acc) : {I32}, {T}
       cond {{
        %c4 = stablehlo.constant dense<4> : {I32}
        %pj = stablehlo.compare LT, %j, %c4 {{{on(1)}}} : ({I32}, {I32}) -> tensor<i1>
        stablehlo.return %pj : tensor<i1>
      }} do {{
        %j2 = stablehlo.add %j, %one {{{on(1)}}} : {I32}
        %b2 = stablehlo.add %b, %w {{{on(1)}}} : {T}
        stablehlo.return %j2, %b2 : {I32}, {T}
      }}
      stablehlo.return %i2, %q#1 : {I32}, {T}
    }}
    return %r#1 : {T}
  }}""")


def test_s13_nested_loop_on_one_device_inside_a_spanning_one():
    part = partition(S13)
    assert [(c.src, c.dst, c.kind) for c in part.plan.channels] == [(0, 1, "predicate")]
    f = functions(part.text())
    assert f[0].count("stablehlo.while") == 1 and f[1].count("stablehlo.while") == 2
    r = check_runs(S13)
    assert r.channels[0]["messages"] == 4


S14 = module(f"""
  func.func @main(%idx: {I32} {{{arg_on(0)}}}, %x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> ({T} {{{arg_on(1)}}}) {{
    %b = "stablehlo.case"(%idx) ({{
      %two = stablehlo.constant dense<2.0> : {T}
      %a = stablehlo.multiply %x, %two {{{on(0)}}} : {T}
      %s = stablehlo.add %a, %y {{{on(1)}}} : {T}
      stablehlo.return %s : {T}
    }}, {{
      %three = stablehlo.constant dense<3.0> : {T}
      %s = stablehlo.multiply %y, %three {{{on(1)}}} : {T}
      stablehlo.return %s : {T}
    }}) : ({I32}) -> {T}
    return %b : {T}
  }}""")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_s14_case_spanning_devices_gets_its_selector(seed):
    part = partition(S14)
    assert sorted((c.src, c.dst, c.kind) for c in part.plan.channels) == [(0, 1, "data"), (0, 1, "data")]
    f = functions(part.text())
    assert '"stablehlo.case"' in f[0] and '"stablehlo.case"' in f[1]
    for mode in MODES:
        r = simulate(S14, mode=mode, seed=seed)
        assert r.match, r.text()
        taken = int(np.asarray(r.inputs[0]).clip(0, 1)) if int(r.inputs[0]) in (0, 1) else 1
        assert sum(c["messages"] for c in r.channels) == 1 + (taken == 0)


# ---------------------------------------------------------------- S20: deadlocks
def channel(op: str, handle: int, src: int, dst: int, operands: str) -> str:
    attrs = (f"{{channel_handle = #stablehlo.channel_handle<handle = {handle}, type = 1>, is_host_transfer = false, "
             f"source_target_pairs = dense<[[{src}, {dst}]]> : tensor<1x2xi64>}}")
    if op == "send":
        return f'"stablehlo.send"({operands}) {attrs} : ({T}, !stablehlo.token) -> !stablehlo.token'
    return f'"stablehlo.recv"({operands}) {attrs} : (!stablehlo.token) -> ({T}, !stablehlo.token)'


def two_devices(dev0: list, dev1: list) -> str:
    """Per-device functions of the form `sdylog mpmd` writes, from lists of (op, handle, src, dst)."""
    def body(events):
        lines, tok, n = ["    %t0 = stablehlo.after_all : !stablehlo.token"], "%t0", 0
        for op, handle, src, dst in events:
            n += 1
            if op == "send":
                lines.append(f"    %t{n} = {channel('send', handle, src, dst, f'%x, {tok}')}")
                tok = f"%t{n}"
            else:
                lines.append(f"    %r{n}:2 = {channel('recv', handle, src, dst, tok)}")
                tok = f"%r{n}#1"
        return "\n".join(lines)
    return f"""module @s20 {{
  func.func @main.dev0(%x: {T}) attributes {{sdylog.device = 0 : i64}} {{
{body(dev0)}
    return
  }}
  func.func @main.dev1(%x: {T}) attributes {{sdylog.device = 1 : i64}} {{
{body(dev1)}
    return
  }}
}}
"""


S20_CYCLE = two_devices([("recv", 2, 1, 0), ("send", 1, 0, 1)], [("recv", 1, 0, 1), ("send", 2, 1, 0)])
S20_CROSSED = two_devices([("send", 1, 0, 1), ("send", 2, 0, 1)], [("recv", 2, 0, 1), ("recv", 1, 0, 1)])


def test_s20_deadlocks_are_reported_with_devices_ops_and_locations():
    from sdylog.simulate.mpmd import simulate_emitted_text
    for mode in MODES:
        r = simulate_emitted_text(S20_CYCLE, "s20.mlir", mode=mode)
        assert not r.match and r.deadlock is not None
        assert "device 0: stablehlo.recv at s20.mlir:4:" in r.deadlock
        assert "device 1: stablehlo.recv at s20.mlir:10:" in r.deadlock
        assert "wait-for cycle: d0 -> d1 -> d0" in r.deadlock
    assert simulate_emitted_text(S20_CROSSED, "s20.mlir", mode="buffered").match
    r = simulate_emitted_text(S20_CROSSED, "s20.mlir", mode="rendezvous")
    assert "device 0: stablehlo.send at s20.mlir:4:" in r.deadlock and "on channel 1 sends to device 1" in r.deadlock
    assert "device 1: stablehlo.recv at s20.mlir:10:" in r.deadlock


def test_s20_a_device_waiting_on_a_finished_one():
    from sdylog.simulate.mpmd import simulate_emitted_text
    r = simulate_emitted_text(two_devices([], [("recv", 1, 0, 1)]), "s20.mlir")
    assert "device 1: stablehlo.recv" in r.deadlock and "device 0 finished without sending it" in r.deadlock
    r = simulate_emitted_text(two_devices([("send", 1, 0, 1)], []), "s20.mlir")
    assert not r.match and "channel 1: 1 message sent by device 0 never received" in r.errors[0]


# ---------------------------------------------------------------- S19: pipelines
DATA = __import__("pathlib").Path(__file__).parent / "data"
STAGES = (("stage0_fwd", 0), ("stage0_bwd", 0), ("stage1_fwd", 1), ("stage1_bwd", 1))


@pytest.mark.parametrize("order, dev1_events", [
    ("1f1b", ["reduce", "send", "reduce", "send"]),     # device 1: F0 B0 F1 B1
    ("gpipe", ["reduce", "reduce", "send", "send"]),    # device 1: F0 F1 B0 B1
])
def test_s19_two_stage_pipeline_in_1f1b_and_gpipe_order(order, dev1_events):
    text = (DATA / f"pipeline_{order}.mlir").read_text()
    part = partition(text, assign=STAGES, devices=2)
    assert sorted((c.src, c.dst) for c in part.plan.channels) == [(0, 1), (0, 1), (1, 0), (1, 0)]
    # each activation crosses once whatever the number of its uses on device 1
    assert part.plan.stats["cross_edges"] > part.plan.stats["transfers"] == 4
    dev1 = functions(part.text())[1]
    events = re.findall(r"stablehlo\.reduce\(|\"stablehlo\.send\"", dev1)
    assert [("reduce" if "reduce" in e else "send") for e in events] == dev1_events
    check_runs(text, assign=STAGES, devices=2)


# ---------------------------------------------------------------- S18: where recvs go
def s18() -> str:
    chain = "\n".join(f"    %n{k} = stablehlo.negate %n{k - 1} {{{on(1)}}} : {T}" for k in range(1, 51))
    return module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %y: {T} {{{arg_on(1)}}}) -> {T} {{
    %a = stablehlo.multiply %x, %x {{{on(0)}}} : {T}
    %n0 = stablehlo.abs %y {{{on(1)}}} : {T}
{chain}
    %b = stablehlo.add %a, %n50 {{{on(1)}}} : {T}
    return %b : {T}
  }}""")


@pytest.mark.parametrize("policy, window, ops_before_recv", [("eager", 0, 0), ("lazy", 0, 51), ("window", 10, 41)])
def test_s18_recv_policies(policy, window, ops_before_recv):
    text = s18()
    part = partition(text, recv_policy=policy, recv_window=window)
    f1 = functions(part.text())[1]
    body = [line for line in f1.splitlines()[1:] if "after_all" not in line and "=" in line]
    at = next(i for i, line in enumerate(body) if '"stablehlo.recv"' in line)
    assert at == ops_before_recv
    assert simulate(text, recv_policy=policy, recv_window=window).match
    if policy != "eager":
        with pytest.raises(UsageError, match=f"--recv-policy {policy}.* and --channel-mode rendezvous do not go "
                                             "together"):
            simulate(text, mode="rendezvous", recv_policy=policy, recv_window=window)


# ---------------------------------------------------------------- S22: small transfers merged
S22 = module(f"""
  func.func @main(%x: {T} {{{arg_on(0)}}}, %k: tensor<i32> {{{arg_on(0)}}}) -> (tensor<f32>, {T}, tensor<i32>) {{
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] {{{on(0)}}}
        : ({T}, tensor<f32>) -> tensor<f32>
    %s1 = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [0] {{{on(0)}}}
        : ({T}, tensor<f32>) -> tensor<f32>
    %s2 = stablehlo.reduce(%x init: %z) applies stablehlo.minimum across dimensions = [0] {{{on(0)}}}
        : ({T}, tensor<f32>) -> tensor<f32>
    %s3 = stablehlo.multiply %s0, %s1 {{{on(0)}}} : tensor<f32>
    %big = stablehlo.negate %x {{{on(0)}}} : {T}
    %k2 = stablehlo.add %k, %k {{{on(0)}}} : tensor<i32>
    %a = stablehlo.add %s0, %s1 {{{on(1)}}} : tensor<f32>
    %b = stablehlo.add %s2, %s3 {{{on(1)}}} : tensor<f32>
    %c = stablehlo.add %a, %b {{{on(1)}}} : tensor<f32>
    %d = stablehlo.abs %big {{{on(1)}}} : {T}
    %m = stablehlo.multiply %k2, %k2 {{{on(1)}}} : tensor<i32>
    return %c, %d, %m : tensor<f32>, {T}, tensor<i32>
  }}""")


def test_s22_small_transfers_travel_together():
    assert len(partition(S22).plan.channels) == 6
    part = partition(S22, merge_small=True)
    chans = sorted((c.elem_type, c.shape, c.bytes, len(c.members)) for c in part.plan.channels)
    # the four f32 scalars in one tensor<4xf32>; the big tensor and the i32 scalar alone
    assert chans == [("f32", (4,), 16, 4), ("f32", (1024,), 4096, 0), ("i32", (), 4, 0)]
    check_runs(S22, merge_small=True)
    check_runs(S22, merge_small=True, bf16_transfers="nearest")


# ---------------------------------------------------------------- S17: sums reduced locally
IT = "tensor<1024xi32>"
S17 = module(f"""
  func.func @main(%a: {IT} {{{arg_on(0)}}}, %b: {IT} {{{arg_on(1)}}}, %c: {IT} {{{arg_on(0)}}},
                  %e: {IT} {{{arg_on(1)}}}) -> {IT} {{
    %a2 = stablehlo.multiply %a, %a {{{on(0)}}} : {IT}
    %b2 = stablehlo.multiply %b, %b {{{on(1)}}} : {IT}
    %c2 = stablehlo.multiply %c, %c {{{on(0)}}} : {IT}
    %e2 = stablehlo.multiply %e, %e {{{on(1)}}} : {IT}
    %t1 = stablehlo.add %a2, %b2 : {IT}
    %t2 = stablehlo.add %t1, %c2 : {IT}
    %s = stablehlo.add %t2, %e2 : {IT}
    %w = stablehlo.negate %s {{{on(2)}}} : {IT}
    return %w : {IT}
  }}""", devices=3)


def test_s17_sums_reduced_on_each_device_first():
    plain = partition(S17)
    assert sorted((c.src, c.dst) for c in plain.plan.channels) == [(0, 2), (0, 2), (1, 2), (1, 2)]
    part = partition(S17, reduce_locally=True)
    assert sorted((c.src, c.dst) for c in part.plan.channels) == [(0, 2), (1, 2)]
    assert part.plan.stats["sums_regrouped"] == 1
    f = functions(part.text())
    assert f[0].count("stablehlo.add") == 1 and f[1].count("stablehlo.add") == 1 and f[2].count("stablehlo.add") == 1
    check_runs(S17, reduce_locally=True)
    check_runs(S17)


def test_s25_an_op_placed_apart_from_its_region_op():
    body = f"""  func.func @main(%x: {T} {{{arg_on(0)}}}) -> tensor<f32> {{
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %s = stablehlo.reduce(%x init: %z) across dimensions = [0] {{{on(0)}}} : ({T}, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>) {{
      %c = stablehlo.add %a, %b {{{on(1)}}} : tensor<f32>
      stablehlo.return %c : tensor<f32>
    }}
    return %s : tensor<f32>
  }}"""
    with pytest.raises(SdylogError, match="t.mlir:8:12: error: 'stablehlo.add' is placed on device 1 but the "
                                          "'stablehlo.reduce' holding it .* runs on device 0"):
        partition(module(body))


def test_s25_a_condition_on_two_devices():
    text = S11.replace("%c10 = stablehlo.constant dense<10> : tensor<i32>",
                       f"%c10 = stablehlo.constant {{{on(1)}}} dense<10> : tensor<i32>")
    with pytest.raises(SdylogError, match="the condition of this while is placed on devices 0 and 1"):
        partition(text)
