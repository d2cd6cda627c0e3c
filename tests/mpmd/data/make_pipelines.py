"""Writes the two-stage pipelined MLP of mpmd.md's S19 (2 microbatches, as
JAX lowers it: each stage a jitted function, i.e. a func.call to place with
--assign), in 1F1B and GPipe order:

    python tests/mpmd/data/make_pipelines.py     # -> tests/mpmd/data/pipeline_{1f1b,gpipe}.mlir

Place with `--assign stage0_fwd@0,stage0_bwd@0,stage1_fwd@1,stage1_bwd@1`."""
import os

import jax
import jax.numpy as jnp


@jax.jit
def stage0_fwd(w0, x):
    return jnp.tanh(x @ w0)


@jax.jit
def stage0_bwd(w0, x, gh):
    _, vjp = jax.vjp(lambda w: stage0_fwd(w, x), w0)
    return vjp(gh)[0]


def _loss(w1, h, y):
    return jnp.sum((jnp.tanh(h @ w1) - y) ** 2)


@jax.jit
def stage1_fwd(w1, h, y):
    return _loss(w1, h, y)


@jax.jit
def stage1_bwd(w1, h, y):
    return jax.grad(_loss, argnums=(0, 1))(w1, h, y)


def one_f_one_b(w0, w1, x0, x1, y0, y1):
    # device 0 runs F0 F1 B0 B1, device 1 runs F0 B0 F1 B1
    h0 = stage0_fwd(w0, x0)
    h1 = stage0_fwd(w0, x1)
    l0 = stage1_fwd(w1, h0, y0)
    g1_0, gh0 = stage1_bwd(w1, h0, y0)
    g0_0 = stage0_bwd(w0, x0, gh0)
    l1 = stage1_fwd(w1, h1, y1)
    g1_1, gh1 = stage1_bwd(w1, h1, y1)
    g0_1 = stage0_bwd(w0, x1, gh1)
    return l0 + l1, g0_0 + g0_1, g1_0 + g1_1


def gpipe(w0, w1, x0, x1, y0, y1):
    # every device runs all forwards, then all backwards
    h0 = stage0_fwd(w0, x0)
    h1 = stage0_fwd(w0, x1)
    l0 = stage1_fwd(w1, h0, y0)
    l1 = stage1_fwd(w1, h1, y1)
    g1_0, gh0 = stage1_bwd(w1, h0, y0)
    g1_1, gh1 = stage1_bwd(w1, h1, y1)
    g0_0 = stage0_bwd(w0, x0, gh0)
    g0_1 = stage0_bwd(w0, x1, gh1)
    return l0 + l1, g0_0 + g0_1, g1_0 + g1_1


if __name__ == "__main__":
    f32 = jnp.float32
    shapes = [jax.ShapeDtypeStruct(s, f32) for s in ((64, 128), (128, 64), (8, 64), (8, 64), (8, 64), (8, 64))]
    here = os.path.dirname(os.path.abspath(__file__))
    for name, fn in (("1f1b", one_f_one_b), ("gpipe", gpipe)):
        text = jax.jit(fn).lower(*shapes).as_text()
        with open(os.path.join(here, f"pipeline_{name}.mlir"), "w") as f:
            f.write(text)
