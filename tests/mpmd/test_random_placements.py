"""Generated programs with random placements: the partition computes what
the unpartitioned program computes (bitwise) and never deadlocks, with
buffered and with rendezvous channels, whatever the fan-out and the
control-flow mode. A small fixed sample by default; SDYLOG_HYPOTHESIS_EXAMPLES=N
for more."""
import os

from hypothesis import HealthCheck, given, settings

from sdylog.ir.diagnostics import SdylogError
from tests.mpmd.helpers import simulate
from tests.mpmd.strategies import placed_programs

EXAMPLES = int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "25"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _agrees(text: str, modes=("buffered", "rendezvous"), **options):
    for mode in modes:
        r = simulate(text, mode=mode, **options)
        assert r.deadlock is None, f"{r.deadlock}\n{text}"
        assert r.match, f"{r.text()}\n{text}"


@SETTINGS
@given(placed_programs())
def test_random_placements_agree_and_never_deadlock(program):
    text, _ = program
    _agrees(text)


@SETTINGS
@given(placed_programs(control_flow=False))
def test_random_placements_with_chained_fanout_and_bf16(program):
    text, _ = program
    _agrees(text, fanout="chain")
    _agrees(text, bf16_transfers="nearest", max_clones=2)


@SETTINGS
@given(placed_programs())
def test_random_placements_with_lazy_and_windowed_recvs(program):
    text, _ = program
    _agrees(text, modes=("buffered",), recv_policy="lazy")
    _agrees(text, modes=("buffered",), recv_policy="window", recv_window=2)


@SETTINGS
@given(placed_programs())
def test_random_placements_in_atomic_mode_agree_or_are_refused(program):
    text, _ = program
    try:
        _agrees(text, control_flow="atomic")
    except SdylogError as e:   # an op inside a loop placed apart from it
        assert "holding it" in str(e), str(e)


def test_found_atomic_region_reads_values_through_its_yields():
    """(found by the tests above) An atomic case whose branches only yield
    values from outside it reads them: they travel to its device."""
    from tests.mpmd.helpers import module
    text = module("""
  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_0, []>}) -> tensor<8xf32> {
    %v = stablehlo.negate %x {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_1, []>]>} : tensor<8xf32>
    %s = stablehlo.constant dense<1> : tensor<i32>
    %k = "stablehlo.case"(%s) ({
      stablehlo.return %x : tensor<8xf32>
    }, {
      stablehlo.return %v : tensor<8xf32>
    }) : (tensor<i32>) -> tensor<8xf32>
    return %k : tensor<8xf32>
  }""")
    _agrees(text, control_flow="atomic")
    _agrees(text)


def test_found_bf16_there_and_back_is_compared_exactly():
    """(found by the tests above) A value sent as bf16 whose reader's result
    comes back as bf16: the reference rounds both, and is compared bitwise
    (a tolerance fails on the cancellation x - round(x))."""
    from tests.mpmd.helpers import module, simulate
    text = module("""
  func.func @main(%x: tensor<8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_0, []>}) -> tensor<8xf32> {
    %a = stablehlo.negate %x {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : tensor<8xf32>
    %b = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_1, []>]>} : tensor<8xf32>
    %c = stablehlo.subtract %x, %b {sdy.sharding = #sdy.sharding_per_value<[<@maximal_mesh_0, []>]>} : tensor<8xf32>
    return %c : tensor<8xf32>
  }""")
    r = simulate(text, bf16_transfers="nearest")
    assert r.match and not r.approximate and r.max_abs_error > 0
