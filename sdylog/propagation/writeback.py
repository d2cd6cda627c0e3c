"""Write the shardings the rules derived (relations final_*) into the IR."""
from __future__ import annotations

from collections import defaultdict

from jaxlib.mlir import ir

from sdylog.ir.shardings import SHARDING, get_sharding, set_sharding
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
    """Set every derived sharding where its value keeps it; function argument
    and result attributes are rewritten once per function."""
    shardings = final_shardings(engine, facts)
    attrs: dict[int, ir.Attribute] = {}

    def attr(t):
        a = attrs.get(t)
        if a is None:
            a = attrs[t] = shardings[t].to_attr()
        return a

    args = defaultdict(dict)      # func op -> argument index -> sharding
    for v, t in engine.read("final_value"):
        if v in facts.func_args:
            func, i = facts.func_args[v]
            args[func][i] = attr(t)
            continue
        value = facts.values[v]
        new = attr(t)
        old = get_sharding(value)
        if old is None or old != new:
            set_sharding(value, new)
    results = defaultdict(dict)
    for _, _, t in engine.read("final_func_result"):
        func, i = facts.func_results[t]
        results[func][i] = attr(t)
    for key, updates in (("arg_attrs", args), ("res_attrs", results)):
        for func, by_index in updates.items():
            _set_func_shardings(func, key, by_index)


def _set_func_shardings(func, key: str, by_index: dict) -> None:
    count = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs
                if key == "arg_attrs" else
                ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results)
    old = list(ir.ArrayAttr(func.attributes[key])) if key in func.attributes else [ir.DictAttr.get({})] * count
    new, changed = [], False
    for i, d in enumerate(old):
        if i in by_index:
            entries = {n.name: n.attr for n in ir.DictAttr(d)}
            if SHARDING not in entries or entries[SHARDING] != by_index[i]:
                entries[SHARDING] = by_index[i]
                d = ir.DictAttr.get(entries)
                changed = True
        new.append(d)
    if changed:
        func.attributes[key] = ir.ArrayAttr.get(new)
