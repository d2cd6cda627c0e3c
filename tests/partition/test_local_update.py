"""dynamic_update_slice on a dimension its operand is sharded on and the
update's window cuts (issue 18, r33 F8: refused, "must be replicated by
previous passes"): each device writes the part of the update that falls in
its own block (rules/partition/permutation.dl dus_local,
sdylog/partition/local_update.py), at constant or run-time start indices,
in range or clamped, on dimensions the sharding divides or not, the update
sharded too. Generated programs (hypothesis) partitioned and simulated equal
the unpartitioned run."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdylog.simulate.simulate import simulate_text

MESHES = ['<["x"=4, "y"=2]>', '<["x"=2, "y"=4], device_ids=[7, 6, 5, 4, 3, 2, 1, 0]>']
AXES = [[], ['"x"'], ['"y"'], ['"x"', '"y"'], ['"y"', '"x"']]


def ty(shape, elem="f32"):
    return "tensor<" + "x".join(str(n) for n in shape) + "x" + elem + ">"


def spec(axes_per_dim):
    return "[" + ", ".join("{" + ", ".join(a) + "}" for a in axes_per_dim) + "]"


def dus_program(mesh, shape, window, x_axes, u_axes, starts):
    """x (constrained to x_axes) updated by u (constrained to u_axes) at
    `starts` (an int: a constant; None: an argument), then exp'd."""
    args = [f"%x: {ty(shape)}", f"%u: {ty(window)}"]
    body, indices = [], []
    for d, s in enumerate(starts):
        if s is None:
            args.append(f"%i{d}: tensor<i32>")
            indices.append(f"%i{d}")
        else:
            body.append(f"  %c{d} = stablehlo.constant dense<{s}> : tensor<i32>")
            indices.append(f"%c{d}")
    body.append(f"  %xc = sdy.sharding_constraint %x <@mesh, {spec(x_axes)}> : {ty(shape)}")
    body.append(f"  %uc = sdy.sharding_constraint %u <@mesh, {spec(u_axes)}> : {ty(window)}")
    body.append(f"  %d = stablehlo.dynamic_update_slice %xc, %uc, {', '.join(indices)} : "
                f"({ty(shape)}, {ty(window)}, {', '.join(['tensor<i32>'] * len(shape))}) -> {ty(shape)}")
    body.append(f"  %e = stablehlo.exponential %d : {ty(shape)}")
    return (f"sdy.mesh @mesh = {mesh}\nfunc.func @main({', '.join(args)}) -> {ty(shape)} {{\n"
            + "\n".join(body) + f"\n  return %e : {ty(shape)}\n}}")


def check(text, halo=True):
    report = simulate_text(text, "t.mlir", halo_exchange=halo)
    assert report.partitioned
    assert report.ok, (text, report.difference)


# r33 F8 (jx/dus_const.mlir): lax.dynamic_update_slice_in_dim(x, u, 4, axis=0), x on (data, model).
def test_constant_offset_on_sharded_rows():
    check(dus_program(MESHES[0], (16, 8), (4, 8), [['"x"'], ['"y"']], [[], []], [4, 0]))


# jx/dus_oob.mlir: offset 14 of 16 for 4 rows, clamped to 12.
def test_clamped_offset():
    check(dus_program(MESHES[0], (16, 8), (4, 8), [['"x"'], ['"y"']], [[], []], [14, 0]))


# A run-time offset (rev31's known limit): the same, read from an argument.
def test_runtime_offset_on_padded_rows():
    check(dus_program(MESHES[0], (10, 6), (3, 6), [['"x"', '"y"'], []], [[], []], [None, None]))


# The update sharded on the cut dimension: gathered there first.
def test_update_sharded_on_cut_dim():
    check(dus_program(MESHES[0], (16, 8), (8, 8), [['"x"'], []], [['"x"'], []], [3, 0]))


@st.composite
def dus_cases(draw):
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 11)) for _ in range(rank)]
    window = [draw(st.integers(1, n)) for n in shape]
    used, x_axes = set(), []
    for _ in range(rank):
        axes = draw(st.sampled_from([a for a in AXES if not used & set(a)]))
        used |= set(axes)
        x_axes.append(axes)
    u_axes = [axes if w == n else draw(st.sampled_from([[], axes]))
              for axes, w, n in zip(x_axes, window, shape)]
    starts = [draw(st.one_of(st.none(), st.integers(-3, n + 2))) for n in shape]
    return dus_program(draw(st.sampled_from(MESHES)), shape, window, x_axes, u_axes, starts), draw(st.booleans())


@settings(max_examples=int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(dus_cases())
def test_generated_updates(case):
    text, halo = case
    check(text, halo)
