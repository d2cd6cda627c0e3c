"""`sdylog show FILE VALUE [--svg OUT]`: how a value lies over the devices.

Propagates as `sdylog run` does, then draws the value's pieces: the tensor
cut as its sharding cuts it, each piece labeled with the devices that hold
it (as `jax.debug.visualize_array_sharding` draws), and the mesh's device
grid with each device's piece (index ranges, local shape, bytes, padding).
"""
from __future__ import annotations

import click

from sdylog.cli import reports_errors
from sdylog.ir.diagnostics import SdylogError


def picture(value, meshes: dict, svg: bool = False) -> tuple[str, str | None]:
    """The terminal picture of a ValueSharding (sdylog.api), and its SVG when asked."""
    from sdylog.partition.layout import draw_svg, draw_text, layout

    title = f"{value.name}: {value.element}[{','.join(map(str, value.shape))}]"
    sharding, mesh = value.sharding, value.mesh
    if sharding is None or mesh is None:
        if len(meshes) != 1 or value.shape == ():
            text = f"{title} has no sharding" + (" (a scalar)" if value.shape == () else "") + "\n"
            return text, _svg_note(text) if svg else None
        # unsharded on the module's one mesh: every device holds all of it
        from sdylog.model.sharding import TensorSharding
        (mesh_name, mesh), = meshes.items()
        sharding = TensorSharding.replicated_on(mesh_name, len(value.shape))
        title += " (no sharding: replicated)"
    else:
        title += f" {sharding}"
    if not value.element_bytes:
        raise SdylogError(f"cannot size elements of type {value.element}")
    lay = layout(value.shape, value.element, value.element_bytes, sharding, mesh)
    return draw_text(title, lay), draw_svg(title, lay) if svg else None


def _svg_note(text: str) -> str:
    from html import escape
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="600" height="40" font-family="monospace">'
            f'<text x="10" y="24" font-size="13">{escape(text.strip())}</text></svg>\n')


@click.command()
@click.argument("file")
@click.argument("value")
@click.option("--svg", "svg_out", metavar="OUT", help="Also write the picture as an SVG file.")
@reports_errors
def show(file, value, svg_out):
    """Draw how VALUE of FILE lies over the devices after propagation: the
    tensor cut into its pieces, each labeled with the devices holding it,
    then the mesh's device grid with each device's piece (index ranges,
    local shape, bytes, padding).

    VALUE: as for `sdylog explain` (a JAX name such as `x` or `result[0]`,
    or an MLIR name such as %3, @func:%name, @func:argN, @func:resultN)."""
    from sdylog import outputs
    from sdylog.api import propagate

    if svg_out is not None:
        outputs.plan(svg_out, "--svg")   # (checked before the work)
    result = propagate(file)
    for line in result.diagnostics:
        click.echo(line, err=True)
    click.echo(result.show(value, svg=svg_out), nl=False)
