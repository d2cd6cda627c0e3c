"""The module's devices (rules/mpmd/devices.dl): --devices, else
mhlo.num_partitions x mhlo.num_replicas, else one past the largest device
a placement or --assign names; the plan and the errors read them."""
import pytest

from sdylog.ir.diagnostics import SdylogError
from tests.mpmd.helpers import T, module, on, partition

BODY = f"""
  func.func @main(%x: {T}) -> {T} {{
    %a = stablehlo.negate %x {{{on(1)}}} : {T}
    %b = func.call @stage(%a) : ({T}) -> {T}
    return %b : {T}
  }}
  func.func private @stage(%y: {T}) -> {T} {{
    %c = stablehlo.add %y, %y : {T}
    return %c : {T}
  }}"""


def _with(attrs: str) -> str:
    return module(BODY).replace("attributes {mhlo.num_partitions = 2 : i32}", attrs)


@pytest.mark.parametrize("attrs,options,devices", [
    ("attributes {mhlo.num_partitions = 2 : i32}", {}, (0, 1)),
    ("attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 2 : i32}", {}, (0, 1, 2, 3)),
    ("attributes {mhlo.num_partitions = 3 : i32}", {"devices": 4}, (0, 1, 2, 3)),
    ("", {}, (0, 1)),                                   # one past the largest device named
    ("attributes {mhlo.num_replicas = 4 : i32}", {}, (0, 1)),   # (replicas alone: not a count)
    ("", {"assign": (("stage", 3),)}, (0, 1, 2, 3)),     # --assign names devices too
])
def test_the_rules_count_the_devices(attrs, options, devices):
    assert partition(_with(attrs), **options).plan.devices == devices


def test_a_device_beyond_the_count_is_an_error():
    with pytest.raises(SdylogError, match="device 1 is beyond the module's 1 device "):
        partition(_with("attributes {mhlo.num_partitions = 1 : i32}"))
