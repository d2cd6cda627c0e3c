"""`sdylog show` and the layout it draws (sdylog.partition.layout). Pieces
against jax's own placement: tests/api/jax_functions.py (8 devices)."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET

from sdylog.model.axis import AxisRef
from sdylog.model.mesh import Mesh, MeshAxis
from sdylog.model.sharding import DimSharding, TensorSharding
from sdylog.partition.layout import draw_text, layout

MESH = Mesh((MeshAxis("x", 4), MeshAxis("y", 2)))


def sh(*dims, mesh="m"):
    return TensorSharding(mesh, tuple(DimSharding(tuple(AxisRef(a) for a in d)) for d in dims))


def test_pieces_bytes_and_replicas():
    lay = layout((16, 6), "f32", 4, sh(["x"], []), MESH)
    assert [p.bounds for p in lay.pieces[:3]] == [((0, 4), (0, 6)), ((0, 4), (0, 6)), ((4, 8), (0, 6))]
    assert lay.local_shape == (4, 6) and lay.pieces[0].bytes == 96 and lay.pieces[0].padding == 0
    assert [devices for _, devices in lay.tiles()] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    text = draw_text("t", lay)
    assert "4 pieces of f32[4,6] (96 B per device) over 8 devices, each piece on 2 devices" in text
    assert "│ 0,1 │" in text and "device 7" in text and "[12:16, 0:6]" in text


def test_uneven_dimensions_are_padded_at_their_end():
    lay = layout((10, 3), "bf16", 2, sh(["x"], ["y"]), MESH)
    assert lay.local_shape == (3, 2)
    last = [p for p in lay.pieces if p.coords == (3, 1)][0]
    assert last.bounds == ((9, 10), (2, 3)) and last.padding == 5 and last.bytes == 12
    text = draw_text("t", lay)
    assert "dim 0 of size 10 in 4 pieces of 3: 2 rows of padding at its end" in text
    assert "dim 1 of size 3 in 2 pieces of 2: 1 row of padding at its end" in text
    assert "padding 5" in text


def test_sub_axes_and_device_order():
    from sdylog.model.axis import SubAxis
    mesh = Mesh((MeshAxis("x", 4),), (3, 2, 1, 0))
    s = TensorSharding("m", (DimSharding((AxisRef("x", SubAxis(2, 2)),)),))
    lay = layout((8,), "f32", 4, s, mesh)
    # "x":(2)2 is x's minor half: logical positions 0,2 hold piece 0; devices 3,1 sit there
    assert dict((b, ds) for b, ds in lay.tiles()) == {((0, 4),): [3, 1], ((4, 8),): [2, 0]}


def test_a_maximal_sharding_is_one_device():
    lay = layout((4, 4), "f32", 4, TensorSharding("mm"), Mesh((), (5,)))
    assert [(p.device, p.bounds) for p in lay.pieces] == [(5, ((0, 4), (0, 4)))]
    assert "the whole tensor on device 5" in draw_text("t", lay)


MODULE = '''
sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.negate %a : tensor<8x16xf32>
  %c = stablehlo.constant dense<1.0> : tensor<f32>
  return %0 : tensor<8x16xf32>
}
'''


def sdylog(*args):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *args], capture_output=True, text=True)


def test_show_command(tmp_path):
    p = tmp_path / "m.mlir"
    p.write_text(MODULE)
    svg = tmp_path / "out.svg"
    r = sdylog("show", str(p), "%0", "--svg", str(svg))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('%0: f32[8,16] <@mesh, [{"x", ?}, {?}]>\n4 pieces of f32[2,16]')
    assert "devices of the mesh mesh<[\"x\"=4, \"y\"=2]> and their pieces:" in r.stdout
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg") and len(root.findall("{http://www.w3.org/2000/svg}rect")) == 4 + 8
    r = sdylog("show", str(p), "%cst")
    assert r.returncode == 0 and "has no sharding (a scalar)" in r.stdout
    r = sdylog("show", str(p), "%nope")
    assert r.returncode == 1 and "no value %nope in @main" in r.stderr
