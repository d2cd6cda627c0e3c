"""Shardings and collective axes as the IR states them.

`sharding_of(value)` answers "which sharding does this value carry?": the
`sdy.sharding` of its defining op (or the `out_sharding` of a collective),
the argument attribute of a function, the in-shardings of a manual or
named computation (manual axes removed, for the body's local view), or, for
a while loop's carry (an argument of its condition or body), the sharding
of the while's result of the same index.

jaxlib's sdy bindings have no accessors for the axis-list attributes of the
collectives (`#sdy<list_of_axis_ref_lists[...]>`, `#sdy<axis_ref_list{...}>`,
`#sdy<manual_axes{...}>`, `#sdy<all_to_all_param_list[...]>`); their axis
lists are read by handing the printed list to MLIR's own sharding parser
(as the dimension list of a `#sdy.sharding`), which the bindings do expose.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError
from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding, sharding_per_value, sharding_per_value_attr

_COLLECTIVES_WITH_OUT = {"sdy.all_gather", "sdy.all_slice", "sdy.all_reduce", "sdy.all_to_all",
                         "sdy.collective_permute", "sdy.reduce_scatter", "sdy.replicated_to_unreduced",
                         "sdy.sharded_to_unreduced"}
# The ops whose results' shardings are in an attribute of their own, and its name.
_OWN_SHARDING = {**{name: "out_sharding" for name in _COLLECTIVES_WITH_OUT},
                 "sdy.sharding_constraint": "sharding", "sdy.reshard": "sharding",
                 "sdy.manual_computation": "out_shardings", "sdy.named_computation": "out_shardings"}


def _dims_text_to_axes(dims_text: str) -> list[list[AxisRef]]:
    attr = ir.Attribute.parse(f"#sdy.sharding<@__axes, {dims_text}>")
    return [list(d.axes) for d in TensorSharding.from_attr(attr).dims]


def axis_ref_lists(attr) -> list[list[AxisRef]]:
    """`#sdy<list_of_axis_ref_lists[{"x"}, {}]>` -> [[x], []]."""
    text = str(attr)
    return _dims_text_to_axes(text[text.index("["):text.rindex("]") + 1])


def axis_ref_list(attr) -> list[AxisRef]:
    """`#sdy<axis_ref_list{"x", "y"}>` (or `manual_axes{...}`) -> [x, y]."""
    text = str(attr)
    body = text[text.index("{"):text.rindex("}") + 1]
    return _dims_text_to_axes(f"[{body}]")[0]


def manual_axes(attr) -> list[str]:
    return [a.name for a in axis_ref_list(attr)]


@dataclass(frozen=True)
class AllToAllParam:
    axes: tuple[AxisRef, ...]
    src_dim: int
    tgt_dim: int


_PARAM = re.compile(r"(\{[^{}]*\})\s*:\s*(\d+)\s*->\s*(\d+)")


def all_to_all_params(attr) -> list[AllToAllParam]:
    """`#sdy<all_to_all_param_list[{"x"}: 0->1, ...]>`."""
    out = []
    for axes_text, src, tgt in _PARAM.findall(str(attr)):
        axes = _dims_text_to_axes(f"[{axes_text}]")[0]
        out.append(AllToAllParam(tuple(axes), int(src), int(tgt)))
    return out


def result_sharding_attr(name: str, attrs) -> tuple[ir.Attribute | None, bool]:
    """The attribute that holds the shardings of the results of an op named
    `name` with attributes `attrs` (None: they have none), and whether it is
    one `#sdy.sharding` (else a `#sdy.sharding_per_value`)."""
    # (each read of `attrs` goes through the bindings: one get each)
    own = _OWN_SHARDING.get(name)
    if own is not None:
        attr = attrs.get(own)
        if attr is not None:
            return attr, own != "out_shardings"
    return attrs.get("sdy.sharding"), False


class ShardingReader:
    """Which sharding a value, op result or function argument carries.

    This one parses the attribute at each call; a CachedShardingReader
    parses each distinct attribute once."""

    def tensor(self, attr) -> TensorSharding:
        """A `#sdy.sharding`."""
        return TensorSharding.from_attr(attr)

    def per_value(self, attr) -> list[TensorSharding]:
        """A `#sdy.sharding_per_value`."""
        return sharding_per_value(attr)

    def axes(self, attr) -> tuple[AxisRef, ...]:
        """A collective's `#sdy<axis_ref_list{...}>`."""
        return tuple(axis_ref_list(attr))

    def op_result_sharding(self, op, index: int) -> TensorSharding | None:
        op = op.operation if hasattr(op, "operation") else op
        shardings = self.result_shardings(*result_sharding_attr(op.name, op.attributes))
        return shardings[index] if index < len(shardings) else None

    def result_shardings(self, attr, one: bool) -> Sequence[TensorSharding]:
        """The result shardings that result_sharding_attr's answer names."""
        if attr is None:
            return ()
        return (self.tensor(attr),) if one else self.per_value(attr)

    def func_arg_sharding(self, func_op, index: int) -> TensorSharding | None:
        return self._dict_sharding(func_op, "arg_attrs", index)

    def func_result_sharding(self, func_op, index: int) -> TensorSharding | None:
        return self._dict_sharding(func_op, "res_attrs", index)

    def _dict_sharding(self, func_op, key: str, index: int) -> TensorSharding | None:
        attrs = func_op.attributes
        if key not in attrs:
            return None
        arr = ir.ArrayAttr(attrs[key])
        if index >= len(arr):
            return None
        d = ir.DictAttr(arr[index])
        if "sdy.sharding" not in d:
            return None
        return self.tensor(d["sdy.sharding"])

    def block_arg_sharding(self, arg) -> TensorSharding | None:
        owner = arg.owner.owner  # block -> op
        owner = owner.operation if hasattr(owner, "operation") else owner
        i = arg.arg_number
        if owner.name == "func.func":
            return self.func_arg_sharding(owner, i)
        if owner.name == "sdy.manual_computation":
            s = self.per_value(owner.attributes["in_shardings"])[i]
            return without_axes(s, manual_axes(owner.attributes["manual_axes"]))
        if owner.name == "sdy.named_computation" and "in_shardings" in owner.attributes:
            return self.per_value(owner.attributes["in_shardings"])[i]
        if owner.name == "stablehlo.while":
            # (the carry: both regions' argument i is the while's result i,
            # whose sharding the while holds)
            return self.op_result_sharding(owner, i)
        return None

    def sharding_of(self, value) -> TensorSharding | None:
        value = value.maybe_downcast() if type(value) is ir.Value else value
        if isinstance(value, ir.BlockArgument):
            return self.block_arg_sharding(value)
        return self.op_result_sharding(value.owner, value.result_number)


class CachedShardingReader(ShardingReader):
    """A ShardingReader that parses each distinct attribute once: a module
    repeats a few dozen shardings over thousands of values, and MLIR
    uniques attributes, so equal ones are one key. It holds the attributes
    (and so their context): one reader per pass run."""

    def __init__(self):
        self._tensors: dict = {}
        self._lists: dict = {}
        self._axes: dict = {}

    def axes(self, attr) -> tuple[AxisRef, ...]:
        axes = self._axes.get(attr)
        if axes is None:
            axes = self._axes[attr] = super().axes(attr)
        return axes

    def tensor(self, attr) -> TensorSharding:
        s = self._tensors.get(attr)
        if s is None:
            s = self._tensors[attr] = TensorSharding.from_attr(attr)
        return s

    def per_value(self, attr) -> tuple[TensorSharding, ...]:
        lst = self._lists.get(attr)
        if lst is None:
            lst = self._lists[attr] = tuple(sharding_per_value(attr))
        return lst


_PLAIN = ShardingReader()


def op_result_sharding(op, index: int) -> TensorSharding | None:
    return _PLAIN.op_result_sharding(op, index)


def func_arg_sharding(func_op, index: int) -> TensorSharding | None:
    return _PLAIN.func_arg_sharding(func_op, index)


def func_result_sharding(func_op, index: int) -> TensorSharding | None:
    return _PLAIN.func_result_sharding(func_op, index)


def without_axes(sharding: TensorSharding, names) -> TensorSharding:
    """The sharding with every reference to the named axes removed."""
    names = set(names)
    dims = tuple(replace(d, axes=tuple(a for a in d.axes if a.name not in names)) for d in sharding.dims)
    return replace(sharding, dims=dims,
                   replicated=tuple(a for a in sharding.replicated if a.name not in names),
                   unreduced=tuple(a for a in sharding.unreduced if a.name not in names))


def only_axes(sharding: TensorSharding, names) -> TensorSharding:
    names = set(names)
    dims = tuple(replace(d, axes=tuple(a for a in d.axes if a.name in names)) for d in sharding.dims)
    return replace(sharding, dims=dims, replicated=(), unreduced=())


def block_arg_sharding(arg) -> TensorSharding | None:
    return _PLAIN.block_arg_sharding(arg)


def sharding_of(value) -> TensorSharding | None:
    """The sharding `value` carries (see the module docstring)."""
    return _PLAIN.sharding_of(value)


def set_result_sharding(value, sharding: TensorSharding | None) -> None:
    """`value`'s op (of one result) carries `sharding` (nothing for None)."""
    if sharding is not None:
        value.owner.attributes["sdy.sharding"] = sharding_per_value_attr([sharding])


def resolve_mesh(sharding: TensorSharding, meshes: dict[str, Mesh]) -> Mesh:
    if isinstance(sharding.mesh, Mesh):
        return sharding.mesh
    try:
        return meshes[sharding.mesh]
    except KeyError:
        raise SdylogError(f"unknown mesh @{sharding.mesh}") from None


def is_replicated(sharding: TensorSharding | None) -> bool:
    return sharding is None or all(not d.axes for d in sharding.dims)
