"""Write the shardings the rules derived (relations final_*) into the IR."""
from __future__ import annotations

from collections import defaultdict

from sdylog.ir.shardings import get_sharding, set_func_result_sharding, set_sharding
from sdylog.model.axis import AxisRef
from sdylog.model.sharding import DimSharding, TensorSharding


def final_shardings(engine, facts) -> dict[int, TensorSharding]:
    """Tensor id -> its derived sharding, from the final_* relations."""
    mesh_of = dict(engine.read("final_mesh"))
    dims = defaultdict(dict)
    for t, d, closed, prio in engine.read("final_dim"):
        dims[t][d] = (closed, None if prio < 0 else prio)
    axes = defaultdict(list)
    for t, d, pos, axis, pre, size in engine.read("final_dim_axis"):
        axes[(t, d)].append((pos, axis, pre, size))
    replicated, unreduced = defaultdict(list), defaultdict(list)
    for t, a, pre, size in engine.read("final_replicated"):
        replicated[t].append((a, pre, size))
    for t, a, pre, size in engine.read("final_unreduced"):
        unreduced[t].append((a, pre, size))
    out = {}
    for t, mesh_name in mesh_of.items():
        mesh = facts.meshes[mesh_name]
        sizes = mesh.axis_sizes
        ref_mesh = mesh if mesh_name.startswith("@inline.") else mesh_name

        def ref(a, pre, size):
            return AxisRef.of_interval(a, pre, pre * size, sizes.get(a, pre * size))

        dim_list = []
        for d in sorted(dims[t]):
            closed, prio = dims[t][d]
            dim_axes = tuple(ref(a, pre, size) for _, a, pre, size in sorted(axes.get((t, d), ())))
            dim_list.append(DimSharding(dim_axes, bool(closed), prio))
        out[t] = TensorSharding(ref_mesh, tuple(dim_list),
                                tuple(ref(*x) for x in replicated.get(t, ())),
                                tuple(ref(*x) for x in unreduced.get(t, ())))
    return out


def write_back(module, engine, facts, options) -> None:
    shardings = final_shardings(engine, facts)
    for v, t in engine.read("final_value"):
        _set_if_changed(facts.values[v], shardings[t])
    slots = {t: facts.func_results[t] for _, _, t in engine.read("final_func_result")}
    for t, (func, index) in slots.items():
        from sdylog.ir.shardings import func_result_sharding
        new = shardings[t]
        old = func_result_sharding(func, index)
        if old is None or TensorSharding.from_attr(old) != new:
            set_func_result_sharding(func, index, new.to_attr())


def _set_if_changed(value, new: TensorSharding) -> None:
    old = get_sharding(value)
    if old is not None and TensorSharding.from_attr(old) == new:
        return
    set_sharding(value, new.to_attr())
