"""Device meshes: named axes with sizes, an optional device order, maximal meshes."""
from __future__ import annotations

from dataclasses import dataclass, field

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy


@dataclass(frozen=True)
class MeshAxis:
    name: str
    size: int


@dataclass(frozen=True)
class Mesh:
    """`#sdy.mesh<["x"=4, "y"=2], device_ids=[...]>`.

    `device_ids` empty means iota order. A *maximal* mesh has no axes and one
    device id: the op runs on that one device.
    """
    axes: tuple[MeshAxis, ...] = ()
    device_ids: tuple[int, ...] = field(default=())

    @staticmethod
    def from_attr(attr: ir.Attribute) -> Mesh:
        m = sdy.MeshAttr(attr)
        axes = tuple(MeshAxis(a.name, a.size) for a in map(sdy.MeshAxisAttr, m.axes))
        return Mesh(axes, tuple(m.device_ids))

    def to_attr(self) -> ir.Attribute:
        return sdy.MeshAttr.get([sdy.MeshAxisAttr.get(a.name, a.size) for a in self.axes], list(self.device_ids))

    def __str__(self) -> str:
        """As sdy prints it: `mesh<["x"=4, "y"=2]>`, `mesh<[], device_ids=[3]>`."""
        axes = ", ".join(f'"{a.name}"={a.size}' for a in self.axes)
        ids = f", device_ids=[{', '.join(map(str, self.device_ids))}]" if self.device_ids else ""
        return f"mesh<[{axes}]{ids}>"

    @property
    def axis_sizes(self) -> dict[str, int]:
        return {a.name: a.size for a in self.axes}

    @property
    def num_devices(self) -> int:
        n = 1
        for a in self.axes:
            n *= a.size
        return n

    @property
    def is_maximal(self) -> bool:
        return not self.axes and len(self.device_ids) == 1

    @property
    def is_empty(self) -> bool:
        return not self.axes and not self.device_ids

    def devices(self) -> tuple[int, ...]:
        """Device ids in mesh order (row-major over the axes)."""
        return self.device_ids or tuple(range(self.num_devices))

    def axis_index(self, name: str) -> int:
        for i, a in enumerate(self.axes):
            if a.name == name:
                return i
        raise KeyError(name)


def meshes_of_module(module: ir.Module) -> dict[str, Mesh]:
    """Every `sdy.mesh @name = <...>` symbol of a module."""
    out = {}
    for op in module.body.operations:
        if op.operation.name == "sdy.mesh":
            out[ir.StringAttr(op.attributes["sym_name"]).value] = Mesh.from_attr(op.attributes["mesh"])
    return out
