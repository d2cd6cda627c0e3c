"""MPMD or SPMD (rules/mpmd/kind.dl, read by sdylog.mpmd.hints.places_on_devices,
which `simulate` and `explain` dispatch on): a module is MPMD when the user
places an op, a function, or an argument or result of one on a device; JAX's
own device-0 placement of a host callback does not count. One case per way
of placing, each checked through the rules' relations too."""
from __future__ import annotations

import pytest

from sdylog.ir import parse_module
from sdylog.mpmd.hints import placement_kind, places_on_devices

MESHES = """sdy.mesh @mesh = <["x"=2]>
sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>
"""
T = "tensor<8xf32>"
MAXIMAL = "#sdy.sharding_per_value<[<@maximal_mesh_1, []>]>"
CALLBACK = (f'%c = stablehlo.custom_call @xla_ffi_python_cpu_callback(%a) {{has_side_effect = true, '
            f'sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[0]>, []>]>}} : ({T}) -> {T}')


def spmd(arg: str = '{sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}', res: str = "", body: str = "",
         op: str = "", func: str = "", callee: str = "") -> str:
    """An SPMD module, with a placement put in one of its places."""
    return MESHES + f"""func.func @main(%arg0: {T} {arg}) -> ({T} {res}) {func} {{
  %a = stablehlo.negate %arg0 {op} : {T}
  {body}
  %r = call @g(%a) : ({T}) -> {T}
  return %r : {T}
}}
func.func private @g(%x: {T}) -> {T} {{
  %y = stablehlo.abs %x {callee} : {T}
  return %y : {T}
}}
"""


def kind(text: str) -> tuple[bool, list, list]:
    module = parse_module(text)
    engine = placement_kind(module)
    assert places_on_devices(module) is (engine.size("mpmd_module") > 0)
    return (engine.size("mpmd_module") > 0, sorted(d for _op, d in engine.select("user_op_placement", "op", "d")),
            sorted(engine.select("user_func_placement", "func", "what", "index", "d")))


@pytest.mark.parametrize("text", [
    spmd(),
    spmd(arg=""),
    # a host callback placed on device 0 by JAX, also a pure one whose result is used
    spmd(body=CALLBACK),
    spmd(body=CALLBACK.replace("has_side_effect = true, ", "")),
    # an mhlo.sharding over devices is SPMD
    spmd(op='{mhlo.sharding = "{devices=[2]<=[2]}"}'),
])
def test_spmd(text):
    assert kind(text) == (False, [], [])


@pytest.mark.parametrize("text, ops", [
    (spmd(op=f"{{sdy.sharding = {MAXIMAL}}}"), [1]),
    (spmd(op="{sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[3]>, []>]>}"), [3]),
    (spmd(op='{mhlo.sharding = "{maximal device=2}"}'), [2]),
    (spmd(op="{sdylog.device = 1 : i64}"), [1]),
    # an op of a called function
    (spmd(callee=f"{{sdy.sharding = {MAXIMAL}}}"), [1]),
    # a sharding constraint asking for the value on a device
    (spmd(body=f"%b = sdy.sharding_constraint %a <@maximal_mesh_1, []> : {T}"), [1]),
    # a host callback beside an op the user placed
    (spmd(body=CALLBACK, op='{mhlo.sharding = "{maximal device=1}"}'), [1]),
    # a custom_call that is no host callback, placed on device 0
    (spmd(body=CALLBACK.replace("xla_ffi_python_cpu_callback", "my_kernel")), [0]),
])
def test_mpmd_by_an_op(text, ops):
    assert kind(text) == (True, ops, [])


@pytest.mark.parametrize("text, placed", [
    (spmd(arg="{sdy.sharding = #sdy.sharding<@maximal_mesh_1, []>}"), [("main", "argument", 0, 1)]),
    (spmd(arg='{mhlo.sharding = "{maximal device=1}"}'), [("main", "argument", 0, 1)]),
    (spmd(res="{sdy.sharding = #sdy.sharding<@maximal_mesh_1, []>}"), [("main", "result", 0, 1)]),
    # a per-device function, as `sdylog mpmd` writes them
    (spmd(func="attributes {sdylog.device = 1 : i64}"), [("main", "function", -1, 1)]),
])
def test_mpmd_by_a_function(text, placed):
    assert kind(text) == (True, [], placed)
