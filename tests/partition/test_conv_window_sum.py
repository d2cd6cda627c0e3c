"""The weight gradient of a convolution whose image is sharded on a spatial
dimension (issue 18; was refused: "dimension 1 is sharded but is not a
pass-through dimension", or a per-device program that does not verify):
Shardy's rule gives the image's and the kernel's spatial dimensions a
reduction factor, sharded alike. Each device sums over its block of the
window, its input rows taken from its block and its neighbours'
(rules/partition/permutation.dl conv_sum, sdylog/partition/conv_window_sum.py);
the all_reduce after the convolution adds the partial sums up. Generated
convolutions (hypothesis: sizes, strides, padding, kernel dilation, one or
two spatial dimensions, shardings dividing them or not) partitioned and
simulated equal the unpartitioned run; so do those of dilated images (a
transposed convolution's) and of grouped convolutions with their groups
sharded (both were refused). Forward convolutions whose image and result
are sharded alike on a spatial dimension (the image was gathered) trade
only the rows each device reads of its neighbours' blocks. Grouped
convolutions whose groups' dimensions their shards do not divide are
gathered there; those whose result holds an operand's axis in parts (sub-
axes on two dimensions) or a part of it are summed in blocks (both were
wrong or refused)."""
from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from sdylog.simulate.simulate import simulate_text
from tests.partition.xy_specs import axes_per_dim, spec, ty

MESH = 'sdy.mesh @mesh = <["x"=4, "y"=2]>\n'


def weight_gradient(n, image, grad, c, o, strides, pads, dilations, lhs_axes, rhs_axes, batch_groups=1,
                    lhs_dilations=None):
    """conv(image [n, *image, c], grad [n, *grad, o]) -> [*windows, c, o] as
    jax.grad of a convolution exports it: the batch summed over (the
    input feature), the output gradient as the kernel; each operand
    constrained to its axes per dimension first (batch_groups: a grouped
    convolution's, c of them a depthwise one's; lhs_dilations: the image
    dilated, a transposed convolution's)."""
    k = len(image)
    lhs_dilations = lhs_dilations or [1] * k
    windows = [((h - 1) * d + 1 + lo + hi - ((w - 1) * r + 1)) // s + 1
               for h, w, s, (lo, hi), r, d in zip(image, grad, strides, pads, dilations, lhs_dilations)]
    lhs, rhs, out = [n, *image, c], [n, *grad, o], [*windows, c // batch_groups, o]
    sp = ", ".join(str(i) for i in range(k))
    window = (f"stride = [{', '.join(map(str, strides))}], pad = [{', '.join(f'[{lo}, {hi}]' for lo, hi in pads)}], "
              f"lhs_dilate = [{', '.join(map(str, lhs_dilations))}], rhs_dilate = [{', '.join(map(str, dilations))}]")
    return MESH + f'''func.func @main(%a: {ty(lhs)}, %b: {ty(rhs)}) -> {ty(out)} {{
  %l = sdy.sharding_constraint %a <@mesh, {spec(lhs_axes)}> : {ty(lhs)}
  %g = sdy.sharding_constraint %b <@mesh, {spec(rhs_axes)}> : {ty(rhs)}
  %r = stablehlo.convolution(%l, %g) dim_numbers = [f, {sp}, b]x[i, {sp}, o]->[{sp}, b, f], window = {{{window}}} {{batch_group_count = {batch_groups} : i64, feature_group_count = 1 : i64}} : ({ty(lhs)}, {ty(rhs)}) -> {ty(out)}
  return %r : {ty(out)}
}}''', windows


def check(text, halo=True):
    report = simulate_text(text, "t.mlir", halo_exchange=halo)
    assert report.partitioned
    assert report.ok, (text, report.difference)
    return report


# jax.grad of a 'SAME' 3-wide convolution, the image's rows on "x".
def test_same_padding_rows_sharded():
    text, _ = weight_gradient(2, [16], [16], 4, 8, [1], [(1, 1)], [1], [(), ["x"], ()], [(), ["x"], ()])
    report = check(text)
    kinds = sorted({c["kind"] for c in report.collectives})
    assert kinds == ["all_reduce", "collective_permute"], kinds   # halos, no gather of the image


# A stride-2 convolution's: the kernel dilated by 2, blocks of 2 kernel rows per 4 image rows.
def test_strided_forward():
    check(weight_gradient(2, [16], [8], 4, 8, [1], [(0, 1)], [2], [(), ["x"], ()], [(), ["x"], ()])[0])


# 10 rows on 4 devices (padded to 12), both spatial dimensions sharded.
def test_padded_rows_two_spatial_dims():
    check(weight_gradient(2, [10, 6], [10, 6], 3, 4, [1, 1], [(1, 1), (1, 1)], [1, 1],
                          [(), ["x"], ["y"], ()], [(), ["x"], ["y"], ()])[0])


# A depthwise convolution's (batch_group_count 8: the groups unsharded).
def test_depthwise():
    check(weight_gradient(2, [16], [16], 8, 8, [1], [(1, 1)], [1], [(), ["x"], ()], [(), ["x"], ()], 8)[0])


# A grouped convolution's (batch_group_count 2) with the groups on "y": each device's block
# convolution has one group (was refused: not a pass-through dimension).
def test_groups_sharded():
    check(weight_gradient(2, [16], [16], 4, 4, [1], [(1, 1)], [1], [(), ["x"], ("y",)], [(), ["x"], ("y",)], 2)[0])


# A transposed convolution's (the image dilated by 2): each device's rows spread out in its
# buffer (was refused: not a pass-through dimension).
def test_image_dilated():
    check(weight_gradient(2, [8], [16], 4, 4, [1], [(1, 1)], [1], [(), ["x"], ()], [(), ["x"], ()],
                          lhs_dilations=[2])[0])


# The image not sharded where the gradient is: each device's window cut from the whole image.
def test_image_gathered():
    check(weight_gradient(3, [12], [12], 2, 2, [1], [(2, 0)], [1], [("y",), (), ()], [(), ("x",), ()])[0])


# Grouped convolutions whose input holds "model" whole on the dimension its groups split while
# the result holds it in parts: 2 batch groups on the input's batch ("model":(1)2 the groups',
# "model":(2)2 the batch per group's, on the result's feature and batch), and 2 feature groups on
# its feature ("model":(2)2 the features per group's, summed over: the result holds only the
# groups'). Each device sums its block of the sharded kernel window (were refused:
# conv_sum_blocked looked at one result (sub-)axis at a time; not a pass-through dimension).
MODEL_MESH = 'sdy.mesh @mesh = <["data"=2, "model"=4]>\n'


def grouped(lhs_dims, rhs_dims, out_dims, lhs, rhs, out, axes, groups, stride):
    (la, ra, oa), (bg, fg) = axes, groups
    return MODEL_MESH + f'''func.func @main(%a: {ty(lhs)}, %b: {ty(rhs)}) -> {ty(out)} {{
  %l = sdy.sharding_constraint %a <@mesh, {la}> : {ty(lhs)}
  %k = sdy.sharding_constraint %b <@mesh, {ra}> : {ty(rhs)}
  %r = stablehlo.convolution(%l, %k) dim_numbers = {lhs_dims}x{rhs_dims}->{out_dims}, window = {{stride = [{stride}], pad = [[2, 3]], lhs_dilate = [1], rhs_dilate = [1]}} {{batch_group_count = {bg} : i64, feature_group_count = {fg} : i64}} : ({ty(lhs)}, {ty(rhs)}) -> {ty(out)}
  %o = sdy.sharding_constraint %r <@mesh, {oa}> : {ty(out)}
  return %o : {ty(out)}
}}'''


def test_batch_groups_axis_in_result_parts():
    check(grouped("[b, 0, f]", "[0, i, o]", "[b, 0, f]", [4, 4, 4], [6, 4, 4], [2, 4, 4],
                  ('[{"model"}, {"data"}, {}]', '[{"data"}, {}, {"model":(1)2}]',
                   '[{"model":(2)2}, {}, {"model":(1)2}]'), (2, 1), 1))


def test_feature_groups_axis_partly_in_result():
    check(grouped("[b, 0, f]", "[0, i, o]", "[b, 0, f]", [1, 4, 4], [6, 2, 4], [1, 2, 4],
                  ('[{}, {"data"}, {"model"}]', '[{"data"}, {"model":(2)2}, {"model":(1)2}]',
                   '[{}, {}, {"model":(1)2}]'), (1, 2), 3))


@st.composite
def convolutions(draw):
    k = draw(st.integers(1, 2))
    image, grad, strides, pads, dilations, lhs_dilations = [], [], [], [], [], []
    for _ in range(k):
        h = draw(st.integers(2, 17))
        r, d = draw(st.integers(1, 3)), draw(st.sampled_from([1, 1, 2, 3]))
        lo, hi = draw(st.integers(0, 3)), draw(st.integers(0, 3))
        w = draw(st.integers(1, max(1, ((h - 1) * d + lo + hi) // r + 1)))
        image.append(h), grad.append(w), strides.append(draw(st.integers(1, 2)))
        pads.append((lo, hi)), dilations.append(r), lhs_dilations.append(d)
    lhs_axes = draw(axes_per_dim(k + 2))
    # (mostly the gradient sharded as the image is, the case jax.grad makes)
    rhs_axes = draw(st.one_of(st.just(lhs_axes), axes_per_dim(k + 2)))
    groups = draw(st.sampled_from([1, 1, 2, 4]))
    text, windows = weight_gradient(draw(st.integers(1, 3)), image, grad, 4, 4, strides, pads, dilations,
                                    lhs_axes, rhs_axes, groups, lhs_dilations)
    assume(all(m >= 1 for m in windows))
    return text, draw(st.booleans())


def _uneven_groups(groups):
    """A grouped convolution's groups (the input's batch, 2 or 4 groups of
    4 elements; the kernel's output feature) on 8 devices, which do not
    divide it: padded at its end, the devices' blocks are no blocks of the
    groups (were a mismatch, 2 groups, and a per-device convolution that
    does not verify, 4; rules/partition/permutation.dl conv_uneven_group)."""
    return weight_gradient(1, [2], [1], 4, 4, [1], [(0, 0)], [1], [(), (), ("x", "y")], [(), (), ("x", "y")],
                           groups)[0], False


@settings(max_examples=int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(convolutions())
@example(_uneven_groups(2))
@example(_uneven_groups(4))
def test_generated_weight_gradients(case):
    text, halo = case
    check(text, halo)


def forward(n, image, kernel, c, o, strides, pads, dilations, lhs_dilations, axes, halo=True):
    """conv(image [n, *image, c], kernel [*kernel, c, o]) -> [n, *windows, o],
    the image and the result constrained to `axes` per dimension (the
    forward convolution or input gradient of an image sharded on H or W:
    each device makes its block of the result from its block of the image
    and its neighbours' rows; the replication path gathered the image)."""
    k = len(image)
    windows = [((h - 1) * d + 1 + lo + hi - ((w - 1) * r + 1)) // s + 1
               for h, w, s, (lo, hi), r, d in zip(image, kernel, strides, pads, dilations, lhs_dilations)]
    lhs, rhs, out = [n, *image, c], [*kernel, c, o], [n, *windows, o]
    sp = ", ".join(str(i) for i in range(k))
    window = (f"stride = [{', '.join(map(str, strides))}], pad = [{', '.join(f'[{lo}, {hi}]' for lo, hi in pads)}], "
              f"lhs_dilate = [{', '.join(map(str, lhs_dilations))}], rhs_dilate = [{', '.join(map(str, dilations))}]")
    return MESH + f'''func.func @main(%a: {ty(lhs)}, %b: {ty(rhs)}) -> {ty(out)} {{
  %l = sdy.sharding_constraint %a <@mesh, {spec(axes)}> : {ty(lhs)}
  %r = stablehlo.convolution(%l, %b) dim_numbers = [b, {sp}, f]x[{sp}, i, o]->[b, {sp}, f], window = {{{window}}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({ty(lhs)}, {ty(rhs)}) -> {ty(out)}
  %o = sdy.sharding_constraint %r <@mesh, {spec(axes)}> : {ty(out)}
  return %o : {ty(out)}
}}''', windows


# A 'SAME' 3-wide stride-2 convolution of 16 rows on 4 devices: each device
# needs one row of its left neighbour (the padding above device 0), so one
# collective_permute of one row of 2 x 4 x 4 bytes, no gather of the image.
def test_forward_rows_halo():
    text, _ = forward(2, [16], [3], 4, 4, [2], [(0, 1)], [1], [1], [(), ["x"], ()])
    report = check(text)
    assert [(c["kind"], c["bytes_per_device"]) for c in report.collectives] == [("collective_permute", 32)]


@st.composite
def forward_convolutions(draw):
    k = draw(st.integers(1, 2))
    image, kernel, strides, pads, dilations, lhs_dilations = [], [], [], [], [], []
    for _ in range(k):
        h = draw(st.integers(2, 17))
        r, d = draw(st.integers(1, 2)), draw(st.sampled_from([1, 1, 2]))
        lo, hi = draw(st.integers(0, 3)), draw(st.integers(0, 3))
        w = draw(st.integers(1, max(1, min(5, ((h - 1) * d + lo + hi) // r + 1))))
        image.append(h), kernel.append(w), strides.append(draw(st.integers(1, 3)))
        pads.append((lo, hi)), dilations.append(r), lhs_dilations.append(d)
    text, windows = forward(draw(st.integers(1, 3)), image, kernel, 2, 3, strides, pads, dilations, lhs_dilations,
                            draw(axes_per_dim(k + 2)))
    # (at least as many windows as the kernel has rows, and two: fewer make
    # the window's factor the kernel's, a weight gradient's, or none; still
    # refused)
    assume(all(m >= max(w, 2) for m, w in zip(windows, kernel)))
    return text, draw(st.booleans())


@settings(max_examples=int(os.environ.get("SDYLOG_HYPOTHESIS_EXAMPLES", "25")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(forward_convolutions())
def test_generated_forward_convolutions(case):
    text, halo = case
    check(text, halo)
