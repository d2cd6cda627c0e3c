"""The reshard planner on its own: sub-axis alignment, the steps' order, and
the all-gather step as Shardy's compiled code behaves."""
from sdylog.model.axis import AXIS_ORDER, AxisRef, SubAxis
from sdylog.partition.reshard_steps import (ALL_GATHER, ALL_SLICE, ALL_TO_ALL, COLLECTIVE_PERMUTE, _Planner,
                                            align_sub_axes, plan_reshard)

X, Y, Z = AxisRef("x"), AxisRef("y"), AxisRef("z")


def sub(name, pre, size):
    return AxisRef(name, SubAxis(pre, size))


def test_align_cuts_partly_overlapping_axes():
    sizes = {"x": 8, "y": 2}
    axes = [X, Y]
    align_sub_axes(axes, sorted([sub("x", 2, 2)], key=AXIS_ORDER), sizes)
    assert axes == [sub("x", 1, 2), sub("x", 2, 2), sub("x", 4, 2), Y]
    # an axis inside the other one is left whole
    axes = [sub("x", 2, 2)]
    align_sub_axes(axes, [X], sizes)
    assert axes == [sub("x", 2, 2)]
    # the suffix is cut again by the next overlapping axis
    axes = [X]
    align_sub_axes(axes, sorted([sub("x", 1, 2), sub("x", 4, 2)], key=AXIS_ORDER), sizes)
    assert axes == [sub("x", 1, 2), sub("x", 2, 2), sub("x", 4, 2)]


def test_common_prefix_needs_no_collective():
    assert plan_reshard([[X, Y]], [[X, Y]], [8], {"x": 2, "y": 2}) == []
    (gather,) = plan_reshard([[X, Y]], [[X]], [8], {"x": 2, "y": 2})
    assert gather.kind == ALL_GATHER and gather.axes == ((Y,),) and gather.result == ((X,),)


def test_slice_on_the_source_dimension_then_all_to_all_then_gather():
    # [{x, y}, {}] -> [{}, {y, z}]: z is sliced on dimension 0, behind y, so
    # that one all_to_all takes both to dimension 1 in order; x is gathered last
    slice_, a2a, gather = plan_reshard([[X, Y], []], [[], [Y, Z]], [8, 8], {"x": 2, "y": 2, "z": 2})
    assert (slice_.kind, slice_.axes, slice_.result) == (ALL_SLICE, ((Z,), ()), ((X, Y, Z), ()))
    assert (a2a.kind, a2a.axes, a2a.src_dim, a2a.tgt_dim) == (ALL_TO_ALL, ((Y, Z),), 0, 1)
    assert (gather.kind, gather.axes, gather.result) == (ALL_GATHER, ((X,), ()), ((), (Y, Z)))


def test_permute_swaps_axes_of_equal_size():
    cp, gather = plan_reshard([[X, Y], [Z]], [[Y], [X]], [8, 8], {"x": 2, "y": 2, "z": 2})
    assert (cp.kind, cp.result) == (COLLECTIVE_PERMUTE, ((Y, Z), (X,)))
    assert (gather.kind, gather.axes) == (ALL_GATHER, ((Z,), ()))


def test_device_order_alone_is_one_collective_permute():
    (cp,) = plan_reshard([[X]], [[X]], [8], {"x": 2}, reorders_devices=True)
    assert cp.kind == COLLECTIVE_PERMUTE and cp.on_target_mesh and cp.result == ((X,),)


def test_all_gather_as_compiled_takes_the_whole_dimension():
    # Moving axes [x, z] on dimension 0 where x still has a place in the target
    # and z has none: Shardy's source means to gather z only, its compiled
    # loop gathers both (and forgets z alone among the moving axes).
    planner = _Planner([[X, Z], []], [[], [X]], [8, 8], {"x": 2, "z": 2}, False)
    planner.all_gather()
    (gather,) = planner.collectives
    assert gather.axes == ((X, Z), ()) and gather.result == ((), ())
    assert X in planner.moving_set and Z not in planner.moving_set
