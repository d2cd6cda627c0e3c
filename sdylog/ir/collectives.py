"""Building Shardy's collective ops (`sdy.all_gather`, `sdy.all_slice`,
`sdy.all_to_all`, `sdy.collective_permute`, `sdy.all_reduce`,
`sdy.reduce_scatter`) with jaxlib's bindings, which verify and print them.

The bindings have no builders for the collectives' axis-list attributes
(`#sdy<list_of_axis_ref_lists[...]>`, `#sdy<axis_ref_list{...}>`,
`#sdy<all_to_all_param_list[...]>`): they are parsed from their text.
(sdylog/partition/ir_shardings.py reads them back the same way.)
"""
from __future__ import annotations

import json
import re

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from sdylog.ir.rewrite import create_op
from sdylog.model.axis import AxisRef

# Each collective's attribute holding its axes.
AXES_ATTRIBUTE = {
    "sdy.all_gather": "gathering_axes",
    "sdy.all_slice": "slicing_axes",
    "sdy.all_to_all": "params",
    "sdy.all_reduce": "reduction_axes",
    "sdy.reduce_scatter": "reduce_scatter_axes",
    "sdy.sharded_to_unreduced": "axes",
    "sdy.replicated_to_unreduced": "axes",
}


def axis_text(axis: AxisRef) -> str:
    name = json.dumps(axis.name, ensure_ascii=False)
    return name if axis.sub is None else f"{name}:({axis.sub.pre_size}){axis.sub.size}"


def _braced(axes) -> str:
    return "{" + ", ".join(axis_text(a) for a in axes) + "}"


def axis_lists_attr(axes_per_dim) -> ir.Attribute:
    """`#sdy<list_of_axis_ref_lists[{...}, ...]>` for lists of AxisRef per dimension."""
    return ir.Attribute.parse("#sdy<list_of_axis_ref_lists[" + ", ".join(map(_braced, axes_per_dim)) + "]>")


def axis_list_attr(axes) -> ir.Attribute:
    """`#sdy<axis_ref_list{...}>`."""
    return ir.Attribute.parse("#sdy<axis_ref_list" + _braced(axes) + ">")


def all_to_all_params_attr(params) -> ir.Attribute:
    """`#sdy<all_to_all_param_list[{...}: src->tgt, ...]>` for (axes, src, tgt) triples."""
    body = ", ".join(f"{_braced(axes)}: {src}->{tgt}" for axes, src, tgt in params)
    return ir.Attribute.parse("#sdy<all_to_all_param_list[" + body + "]>")


def closed_sharding(mesh_or_ref, axes_per_dim, unreduced=()) -> ir.Attribute:
    """`<mesh, [{...}, ...], unreduced={...}>` with closed dimensions and no
    replicated axes (what Shardy gives its collectives); `unreduced` holds
    AxisRefAttr attributes."""
    dims = [sdy.DimensionShardingAttr.get([a.to_attr() for a in axes], True) for axes in axes_per_dim]
    return sdy.TensorShardingAttr.get(mesh_or_ref, dims, [], list(unreduced))


def create_collective(name: str, operand, out_sharding, axes=None, loc=None, ip=None) -> ir.Operation:
    """A collective op `name` on `operand` with `out_sharding`; `axes` is its
    axes attribute (see AXES_ATTRIBUTE), none for sdy.collective_permute."""
    attrs = {"out_sharding": out_sharding}
    if axes is not None:
        attrs[AXES_ATTRIBUTE[name]] = axes
    return create_op(name, results=[operand.type], operands=[operand], attributes=attrs, loc=loc, ip=ip)


def create_reshard(value, sharding: ir.Attribute, loc=None, ip=None, attributes=None) -> ir.Operation:
    """`sdy.reshard` of `value` to `sharding` at `ip` (with any further
    discardable `attributes`); its result has the value's type."""
    return create_op("sdy.reshard", results=[value.type], operands=[value],
                     attributes={"sharding": sharding, **(attributes or {})}, loc=loc, ip=ip)


_ATTRIBUTE_TEXT = re.compile(r"^#sdy<[a-z_]+(.*)>$", re.S)


def axes_text(op) -> str:
    """The collective's axes as sdy prints them (`[{"x"}, {}]`, `{"x", "y"}`,
    `[{"x"}: 0->1]`); "" for sdy.collective_permute."""
    name = AXES_ATTRIBUTE.get(op.name)
    if name is None:
        return ""
    text = str(op.attributes[name])
    m = _ATTRIBUTE_TEXT.match(text)
    return m.group(1) if m else text
