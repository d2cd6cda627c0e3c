"""How a sharded tensor lies over the devices of its mesh, and pictures of it.

`layout` gives each device's piece of the tensor: its index ranges, the
local shape the device allocates (padded up where the sharding does not
divide a dimension), bytes and padding (shards.py does the arithmetic).
`draw_text` draws the tensor cut into its pieces, each labeled with the
devices that hold it (as `jax.debug.visualize_array_sharding` does), then the
mesh's device grid with each device's piece; `draw_svg` draws both for
documents.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from sdylog.model.mesh import Mesh
from sdylog.model.sharding import TensorSharding
from sdylog.partition.shards import axes_size, local_shape, logical_position, shard_bounds


@dataclass(frozen=True)
class Piece:
    """One device's piece of the tensor."""
    device: int
    coords: tuple[int, ...]                  # along each mesh axis
    bounds: tuple[tuple[int, int], ...]      # [start, stop) per dimension
    local_shape: tuple[int, ...]             # what the device allocates (padded)
    padding: int                             # elements of the local buffer beyond the tensor
    bytes: int                               # of the local buffer


@dataclass(frozen=True)
class Layout:
    shape: tuple[int, ...]
    element: str                             # "f32"
    itemsize: int
    sharding: TensorSharding
    mesh: Mesh
    pieces: tuple[Piece, ...]                # in mesh order

    def tiles(self) -> list[tuple[tuple[tuple[int, int], ...], list[int]]]:
        """The distinct pieces (by bounds, in index order) and the devices holding each."""
        holders: dict = {}
        for p in self.pieces:
            holders.setdefault(p.bounds, []).append(p.device)
        return sorted(holders.items())

    @property
    def local_shape(self) -> tuple[int, ...]:
        return self.pieces[0].local_shape if self.pieces else self.shape


def layout(shape, element: str, itemsize: int, sharding: TensorSharding, mesh: Mesh) -> Layout:
    """Every device's piece of a tensor of `shape` with `sharding` on `mesh`.
    A maximal sharding puts the whole tensor on its one device."""
    shape = tuple(shape)
    pieces = []
    if mesh.is_maximal or not sharding.dims:
        local = shape
        for d in mesh.devices():
            pieces.append(Piece(d, _coords(d, mesh), tuple((0, n) for n in shape), local, 0,
                                math.prod(local) * itemsize))
        return Layout(shape, element, itemsize, sharding, mesh, tuple(pieces))
    local = local_shape(shape, sharding, mesh, allow_uneven=True)
    for d in mesh.devices():
        bounds = shard_bounds(shape, sharding, mesh, d)
        held = math.prod(hi - lo for lo, hi in bounds)
        pieces.append(Piece(d, _coords(d, mesh), bounds, local, math.prod(local) - held,
                            math.prod(local) * itemsize))
    return Layout(shape, element, itemsize, sharding, mesh, tuple(pieces))


def _coords(device: int, mesh: Mesh) -> tuple[int, ...]:
    if not mesh.axes:
        return ()
    pos = logical_position(device, mesh)
    out = []
    for a in reversed(mesh.axes):
        pos, c = divmod(pos, a.size)
        out.append(c)
    return tuple(reversed(out))


# ------------------------------------------------------------------ words
def ranges_text(bounds) -> str:
    """`[0:8, 0:64]`; an empty piece reads `[8:8, ...]`."""
    return "[" + ", ".join(f"{lo}:{hi}" for lo, hi in bounds) + "]"


def bytes_text(n: int) -> str:
    """`1.5 MiB`: bytes in binary units (what the reports and pictures print)."""
    for unit, size in (("EiB", 1 << 60), ("PiB", 1 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20),
                       ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _devices_text(devices: list[int]) -> str:
    """`0,1` (or `0-7` for a run of 4 or more)."""
    ds = sorted(devices)
    if len(ds) >= 4 and ds == list(range(ds[0], ds[-1] + 1)):
        return f"{ds[0]}-{ds[-1]}"
    return ",".join(map(str, ds))


def _type_text(shape, element: str) -> str:
    return f"{element}[{','.join(map(str, shape))}]"


def summary(lay: Layout) -> list[str]:
    """What the pictures show, in words: pieces, local shape, bytes,
    replication and padding."""
    tiles = lay.tiles()
    n = len(lay.pieces)
    copies = n // len(tiles) if tiles else n
    local = "x".join(map(str, lay.local_shape)) or "scalar"
    lines = [f"{len(tiles)} piece{'s' if len(tiles) != 1 else ''} of {_type_text(lay.local_shape, lay.element)} "
             f"({bytes_text(lay.pieces[0].bytes)} per device) over {n} device{'s' if n != 1 else ''}"
             + (f", each piece on {copies} devices" if copies > 1 else "")]
    if lay.mesh.is_maximal:
        lines[0] = f"the whole tensor on device {lay.mesh.device_ids[0]} ({local}, {bytes_text(lay.pieces[0].bytes)})"
    for d, (size, dim) in enumerate(zip(lay.shape, lay.sharding.dims)):
        k = axes_size(dim.axes, lay.mesh)
        if k > 1 and size % k:
            pad = lay.local_shape[d] * k - size
            lines.append(f"dim {d} of size {size} in {k} pieces of {lay.local_shape[d]}: "
                         f"{pad} row{'s' if pad != 1 else ''} of padding at its end")
    return lines


# ------------------------------------------------------------------ the terminal picture
def draw_text(title: str, lay: Layout) -> str:
    lines = [title]
    lines += summary(lay)
    lines.append("")
    lines += _tensor_picture(lay)
    if lay.mesh.axes:
        lines.append("")
        lines += _mesh_picture(lay)
    return "\n".join(lines) + "\n"


def _tensor_grid(lay: Layout):
    """The tensor's pieces as a grid: rows are the pieces of all but the last
    dimension, columns those of the last; each cell the devices holding it."""
    tiles = lay.tiles()
    rank = len(lay.shape)
    if rank == 0:
        return [()], [()], {((), ()): [p.device for p in lay.pieces]}
    rows = sorted({b[:-1] for b, _ in tiles})
    cols = sorted({b[-1:] for b, _ in tiles})
    cells = {(b[:-1], b[-1:]): ds for b, ds in tiles}
    return rows, cols, cells


def _tensor_picture(lay: Layout) -> list[str]:
    rows, cols, cells = _tensor_grid(lay)
    body = [[[_devices_text(cells.get((r, c), []))] for c in cols] for r in rows]
    row_labels = [", ".join(f"{lo}:{hi}" for lo, hi in r) for r in rows]
    col_labels = [", ".join(f"{lo}:{hi}" for lo, hi in c) for c in cols]
    return _box_grid(body, row_labels, col_labels)


def _mesh_picture(lay: Layout) -> list[str]:
    """The device grid: rows along the mesh's first axis, columns along the
    others (row-major); each device's piece in its cell."""
    axes = lay.mesh.axes
    first, rest = axes[0], axes[1:]
    ncols = math.prod(a.size for a in rest)
    grid = [[None] * ncols for _ in range(first.size)]
    for p in lay.pieces:
        col = 0
        for a, c in zip(rest, p.coords[1:]):
            col = col * a.size + c
        grid[p.coords[0]][col] = p
    body = [[_piece_lines(p, lay) for p in row] for row in grid]
    row_labels = [f"{first.name}={i}" for i in range(first.size)]
    col_labels = []
    for col in range(ncols):
        coords, rem = [], col
        for a in reversed(rest):
            rem, c = divmod(rem, a.size)
            coords.append(f"{a.name}={c}")
        col_labels.append(",".join(reversed(coords)))
    return [f"devices of the mesh {lay.mesh} and their pieces:"] + _box_grid(body, row_labels, col_labels)


def _piece_lines(p: Piece, lay: Layout) -> list[str]:
    lines = [f"device {p.device}", ranges_text(p.bounds),
             f"{'x'.join(map(str, p.local_shape)) or 'scalar'} {bytes_text(p.bytes)}"]
    if p.padding:
        lines.append(f"padding {p.padding}")
    return lines


def _box_grid(body: list[list[list[str]]], row_labels: list[str], col_labels: list[str]) -> list[str]:
    """Cells (lists of lines) in boxes, rows labeled on the left, columns on top."""
    ncols = len(body[0]) if body else 0
    width = max([len(line) for row in body for cell in row for line in cell] + [len(c) for c in col_labels] + [3]) + 2
    height = max([len(cell) for row in body for cell in row] + [1])
    lw = max([len(r) for r in row_labels] + [0])
    pad = " " * (lw + 1)
    out = []
    if any(col_labels):
        out.append(pad + " " + " ".join(c.center(width) for c in col_labels).rstrip())
    rule = lambda left, mid, right: pad + left + mid.join("─" * width for _ in range(ncols)) + right  # noqa: E731
    out.append(rule("┌", "┬", "┐"))
    for i, row in enumerate(body):
        for k in range(height):
            label = row_labels[i].rjust(lw) if k == (height - 1) // 2 else " " * lw
            texts = [(cell[k] if k < len(cell) else "").center(width) for cell in row]
            out.append(label + " │" + "│".join(texts) + "│")
        out.append(rule("├", "┼", "┤") if i < len(body) - 1 else rule("└", "┴", "┘"))
    return out


# ------------------------------------------------------------------ the SVG picture
_PALETTE = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
            "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")


def draw_svg(title: str, lay: Layout) -> str:
    """The tensor's pieces (sized as they are, colored per piece, labeled
    with their devices) above the mesh's device grid (each device in its
    piece's color, with its index ranges, local shape and bytes)."""
    rows, cols, cells = _tensor_grid(lay)
    color = {key: _PALETTE[i % len(_PALETTE)] for i, key in enumerate(sorted(cells))}
    parts = []
    y0, width = 40, 480
    row_sizes = [max(1, math.prod(hi - lo for lo, hi in r)) for r in rows]
    col_sizes = [max(1, math.prod(hi - lo for lo, hi in c)) for c in cols]
    height = min(360, max(60 * len(rows), 120))
    total_r, total_c = sum(row_sizes), sum(col_sizes)
    y = y0
    for r, rs in zip(rows, row_sizes):
        h = height * rs / total_r
        x = 60
        for c, cs in zip(cols, col_sizes):
            w = width * cs / total_c
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
                         f'fill="{color[(r, c)]}" stroke="#333"/>')
            parts.append(_svg_text(x + w / 2, y + h / 2 + 5, _devices_text(cells[(r, c)]), 14))
            x += w
        parts.append(_svg_text(30, y + h / 2 + 4, ", ".join(f"{lo}:{hi}" for lo, hi in r), 11))
        y += h
    x = 60
    for c, cs in zip(cols, col_sizes):
        w = width * cs / total_c
        parts.append(_svg_text(x + w / 2, y0 - 6, ", ".join(f"{lo}:{hi}" for lo, hi in c), 11))
        x += w
    y += 30
    if lay.mesh.axes:
        parts.append(_svg_text(60, y, f"devices of the mesh {lay.mesh}", 13, anchor="start"))
        y += 10
        axes = lay.mesh.axes
        ncols = math.prod(a.size for a in axes[1:])
        cw, ch = max(110, width / max(ncols, 1)), 64
        for p in lay.pieces:
            col = 0
            for a, c in zip(axes[1:], p.coords[1:]):
                col = col * a.size + c
            px, py = 60 + col * cw, y + p.coords[0] * ch
            fill = color.get((p.bounds[:-1], p.bounds[-1:]) if lay.shape else ((), ()), "#eee")
            parts.append(f'<rect x="{px:.1f}" y="{py:.1f}" width="{cw:.1f}" height="{ch}" fill="{fill}" stroke="#333"/>')
            for k, line in enumerate(_piece_lines(p, lay)):
                parts.append(_svg_text(px + cw / 2, py + 16 + 14 * k, line, 11))
        y += ch * axes[0].size + 10
    total_w = max(60 + width + 20, 60 + (cw * ncols if lay.mesh.axes else 0) + 20)
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{y + 10:.0f}" '
            f'font-family="monospace">', _svg_text(10, 20, title, 13, anchor="start")]
    return "\n".join(head + parts + ["</svg>"]) + "\n"


def _svg_text(x: float, y: float, text: str, size: int, anchor: str = "middle") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}">{escape(text)}</text>'
