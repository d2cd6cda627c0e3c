"""A sharded rng_bit_generator (r34's review, G5; JAX's
`jax.random.key(0, impl="rbg")`): each device keeps its shard of the bits
the whole program generates, so the numbers do not depend on the mesh. A
generator of the local shape would hand every device the same first bits.

The simulator's bits are its own (sdylog/simulate/ops/rng.py: StableHLO
leaves them to the implementation), the same in the global and the
per-device runs `simulate_text` compares."""
from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.ops.rng import generate
from tests.simulate.generated_simulations import MESHES, SETTINGS, simulated

# r34's minimal repro
RBG = """module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=4]>
  func.func public @main(%arg0: tensor<8x4xui32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xui32> {
    %s = stablehlo.constant dense<[1, 2]> : tensor<2xui64>
    %st, %bits = stablehlo.rng_bit_generator %s, algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<8x4xui32>)
    %0 = stablehlo.xor %arg0, %bits : tensor<8x4xui32>
    return %0 : tensor<8x4xui32>
  }
}"""


def test_each_device_keeps_its_shard_of_the_whole_bits():
    simulated(RBG, "rbg_sharded.mlir")
    out = optimize_text(RBG, "t.mlir", parse_flags(["-sdy-partitioner-pipeline"]))
    # the whole 8x4 generated, this device's 2x4 rows sliced out of it
    assert "-> (tensor<2xui64>, tensor<8x4xui32>)" in out, out
    assert "stablehlo.dynamic_slice %output_state" not in out
    assert "sizes = [2, 4] : (tensor<8x4xui32>" in out, out


def test_simulated_bits_depend_on_the_state_alone():
    state = np.array([1, 2], np.uint64)
    s1, a = generate(state, "DEFAULT", (8, 4), np.uint32)
    s2, b = generate(state, "DEFAULT", (8, 4), np.uint32)
    assert (a == b).all() and (s1 == s2).all()
    _, c = generate(s1, "DEFAULT", (8, 4), np.uint32)
    assert not (a == c).all()            # the output state draws other bits
    _, whole = generate(state, "DEFAULT", (32,), np.uint32)
    assert (whole.reshape(8, 4) == a).all()   # row-major: a shape's bits are a prefix of the stream
    _, other = generate(state, "PHILOX", (8, 4), np.uint32)
    assert not (a == other).all()


def _module(mesh: str, shape, dims, etype: str, algorithm: str, chained: bool) -> str:
    t = "x".join(map(str, shape))
    axes = ", ".join("{" + (f'"{a}"' if a else "") + "}" for a in dims)
    second = ""
    use = "%bits"
    if chained:   # (a second generator from the first one's output state, as a loop of draws does)
        second = (f"    %st2, %bits2 = stablehlo.rng_bit_generator %st, algorithm = {algorithm} : "
                  f"(tensor<2xui64>) -> (tensor<2xui64>, tensor<{t}x{etype}>)\n"
                  f"    %both = stablehlo.xor %bits, %bits2 : tensor<{t}x{etype}>\n")
        use = "%both"
    return mesh + f"""func.func public @main(%arg0: tensor<{t}x{etype}> {{sdy.sharding = #sdy.sharding<@mesh, [{axes}]>}}) -> (tensor<{t}x{etype}>, tensor<2xui64>) {{
    %s = stablehlo.constant dense<[7, 3]> : tensor<2xui64>
    %st, %bits = stablehlo.rng_bit_generator %s, algorithm = {algorithm} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<{t}x{etype}>)
{second}    %0 = stablehlo.xor %arg0, {use} : tensor<{t}x{etype}>
    return %0, %st : tensor<{t}x{etype}>, tensor<2xui64>
}}"""


@st.composite
def _cases(draw):
    mesh = draw(st.sampled_from(sorted(MESHES)))
    axes = ["x", "y"] if "y" in mesh else ["x"]
    rank = draw(st.integers(1, 3))
    shape = [draw(st.sampled_from([1, 2, 3, 4, 6, 8])) for _ in range(rank)]
    dims = [None] * rank
    for a in axes:
        d = draw(st.integers(-1, rank - 1))
        if d >= 0 and dims[d] is None:
            dims[d] = a
    return MESHES[mesh], shape, dims


@SETTINGS
@given(_cases(), st.sampled_from(["ui8", "ui32", "ui64"]), st.sampled_from(["DEFAULT", "THREE_FRY", "PHILOX"]),
       st.booleans())
def test_sharded_bits_match_the_global_run(case, etype, algorithm, chained):
    mesh, shape, dims = case
    simulated(_module(mesh, shape, dims, etype, algorithm, chained), "rbg.mlir")
