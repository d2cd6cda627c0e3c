"""rng_bit_generator: bits that are a function of the initial state alone;
rng: numbers that are a function of the bounds and the shape.

StableHLO leaves the bits of every algorithm (DEFAULT, THREE_FRY, PHILOX)
to the implementation ("output is guaranteed to be a deterministic
function of initial_state, but it is not guaranteed to be deterministic
between implementations"), and so does this one: numpy's Philox4x64
keyed by the state, the bits in row-major order. They are NOT XLA's bits.
What `sdylog simulate` checks does not need them to be: it compares the
partitioned program with the unpartitioned one, both run by this same
implementation, so a per-device program that generates its own bits
instead of its shard of the global ones still differs from the global run.

The output state is the input state with its last word advanced by the
number of 64-bit words drawn (a deterministic function of the state too,
so a chain of generators draws fresh bits each time).
"""
from __future__ import annotations

import numpy as np

from sdylog.simulate.registry import lowering

_ALGORITHMS = {"DEFAULT": 0, "THREE_FRY": 1, "PHILOX": 2}


def generate(state: np.ndarray, algorithm: str, shape, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(output state, bits of `shape` and `dtype`) from `state`, an unsigned
    integer vector of any length."""
    words = np.asarray(state).astype(np.uint64).reshape(-1)
    padded = np.zeros(6, np.uint64)
    padded[:min(len(words), 6)] = words[:6]
    key = np.array([padded[0], np.uint64(_ALGORITHMS[algorithm])], np.uint64)
    counter = np.array([padded[1], padded[2], padded[3], padded[4] ^ padded[5]], np.uint64)
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64))
    n_words = -(-size * dtype.itemsize // 8)
    raw = np.random.Philox(key=key, counter=counter).random_raw(n_words) if n_words else np.zeros(0, np.uint64)
    raw = np.asarray(raw, np.uint64).astype("<u8")   # (little-endian bytes on every host)
    bits = np.frombuffer(raw.tobytes()[:size * dtype.itemsize], dtype=dtype).reshape(shape).copy()
    new_state = np.asarray(state).copy()
    if new_state.size:
        flat = new_state.reshape(-1)
        flat[-1] = (int(flat[-1]) + n_words) % (1 << (8 * flat.dtype.itemsize))
    return new_state, bits


@lowering("stablehlo.rng_bit_generator", alias="fresh")
def lower_rng_bit_generator(ctx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    algorithm = shlo.RngAlgorithmAttr(ctx.attr("rng_algorithm")).value
    if algorithm not in _ALGORITHMS:
        raise ctx.error(f"unknown rng algorithm {algorithm}")
    results = ctx.results
    shape, dtype = ctx.shape(results[1]), ctx.dtype(results[1])
    state_dtype = ctx.dtype(results[0])
    s = ctx.in_slot()
    o_state, o_bits = ctx.out_slot(0), ctx.out_slot(1)

    def step(env, rt):
        new_state, bits = generate(np.asarray(env[s]), algorithm, shape, dtype)
        env[o_state] = new_state.astype(state_dtype)
        env[o_bits] = bits
    return step


def draw(low, high, distribution: str, shape, dtype) -> np.ndarray:
    """stablehlo.rng's numbers: UNIFORM in [low, high) (integers too), NORMAL
    with mean `low` and standard deviation `high`. numpy's generator seeded by
    the bounds, the distribution and the shape: NOT XLA's stream (XLA's rng is
    stateful and its numbers are its own), but the same numbers for the same
    op on every run, which is what `sdylog simulate` needs: it compares the
    partitioned program with the unpartitioned one, both drawn here."""
    low, high = np.asarray(low), np.asarray(high)
    words = [*np.frombuffer(low.tobytes() + high.tobytes(), np.uint8), len(distribution), *shape]
    rng = np.random.default_rng([int(w) for w in words])
    dtype = np.dtype(dtype)
    if distribution == "NORMAL":
        return (low + high * rng.standard_normal(shape)).astype(dtype)
    if dtype.kind in "iu":
        return rng.integers(int(low), int(high), size=shape, dtype=dtype, endpoint=False)
    if dtype.kind == "b":
        return rng.integers(int(low), int(high), size=shape, endpoint=False).astype(dtype)
    return (low + (high - low) * rng.random(shape)).astype(dtype)


@lowering("stablehlo.rng", alias="fresh")
def lower_rng(ctx):
    from jaxlib.mlir.dialects import stablehlo as shlo
    distribution = shlo.RngDistributionAttr(ctx.attr("rng_distribution")).value
    if distribution not in ("UNIFORM", "NORMAL"):
        raise ctx.error(f"unknown rng distribution {distribution}")
    shape, dtype = ctx.shape(ctx.results[0]), ctx.dtype(ctx.results[0])
    a, b = ctx.in_slot(0), ctx.in_slot(1)
    o = ctx.out_slot()

    def step(env, rt):
        env[o] = draw(env[a], env[b], distribution, shape, dtype)
    return step
