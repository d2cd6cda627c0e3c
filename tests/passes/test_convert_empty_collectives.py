"""Collectives on tensors with no elements move nothing.

JAX makes zero-size tensors in ordinary code (`jnp.pad(..., mode="edge")`
with a 0 side, `lax.associative_scan`'s odd/even split along a sharded
axis), and Shardy reshards them like any other. -sdy-convert-global-to-local
makes each such collective a plain value of its local type (an all_gather of
a 0-size dimension does not even verify), and the report counts 0 bytes.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.simulate.simulate import simulate_text

DATA = Path(__file__).parent / "data"
IR_DATA = Path(__file__).parent.parent / "ir" / "data"
MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'


def sh(*dims):
    return "#sdy.sharding<@mesh, [" + ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims) + "]>"


def pv(*dims):
    return "{sdy.sharding = #sdy.sharding_per_value<[" + sh(*dims)[len("#sdy.sharding"):] + "]>}"


def one(arg_type, arg_sharding, body, result_type, result_sharding):
    return MESH + f"""
func.func @main(%a: {arg_type} {{sdy.sharding = {sh(*arg_sharding)}}}) -> ({result_type} {{sdy.sharding = {sh(*result_sharding)}}}) {{
{body}
}}"""


def dot(contracting, out_type, body, result_sharding):
    """A 0x8 by 8x4 dot contracting over `contracting` axes, its partial
    sums then `body`'s collective."""
    return MESH + f"""
func.func @main(%a: tensor<0x8xf32> {{sdy.sharding = {sh([], contracting)}}}, %b: tensor<8x4xf32> {{sdy.sharding = {sh(contracting, [])}}})
    -> ({out_type} {{sdy.sharding = {sh(*result_sharding)}}}) {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] {pv([], [])} : (tensor<0x8xf32>, tensor<8x4xf32>) -> tensor<0x4xf32>
{body}
}}"""


MODULES = {
    "all-gather": one("tensor<8x0xf32>", ([], ["x"]), """
  %0 = sdy.all_gather [{}, {"x"}] %a out_sharding=<@mesh, [{}, {}]> : tensor<8x0xf32>
  return %0 : tensor<8x0xf32>""", "tensor<8x0xf32>", ([], [])),
    "all-gather-two-dims": one("tensor<8x0xf32>", (["x"], ["y"]), """
  %0 = sdy.all_gather [{"x"}, {"y"}] %a out_sharding=<@mesh, [{}, {}]> : tensor<8x0xf32>
  return %0 : tensor<8x0xf32>""", "tensor<8x0xf32>", ([], [])),
    "all-slice": one("tensor<8x0xf32>", ([], []), """
  %0 = sdy.all_slice [{"x"}, {"y"}] %a out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x0xf32>
  return %0 : tensor<8x0xf32>""", "tensor<8x0xf32>", (["x"], ["y"])),
    "all-to-all": one("tensor<8x0xf32>", (["x"], []), """
  %0 = sdy.all_to_all [{"x"}: 0->1] %a out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x0xf32>
  return %0 : tensor<8x0xf32>""", "tensor<8x0xf32>", ([], ["x"])),
    "all-to-all-two-dims": one("tensor<4x0x4x4xf32>", (["x"], [], ["y"], []), """
  %0 = sdy.all_to_all [{"x"}: 0->1, {"y"}: 2->3] %a out_sharding=<@mesh, [{}, {"x"}, {}, {"y"}]> : tensor<4x0x4x4xf32>
  return %0 : tensor<4x0x4x4xf32>""", "tensor<4x0x4x4xf32>", ([], ["x"], [], ["y"])),
    "collective-permute": one("tensor<8x0xf32>", (["x", "y"], []), """
  %0 = sdy.collective_permute %a out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<8x0xf32>
  return %0 : tensor<8x0xf32>""", "tensor<8x0xf32>", (["y", "x"], [])),
    "all-reduce": dot(["x"], "tensor<0x4xf32>", """
  %1 = sdy.all_reduce {"x"} %0 out_sharding=<@mesh, [{}, {}]> : tensor<0x4xf32>
  return %1 : tensor<0x4xf32>""", ([], [])),
    "reduce-scatter": dot(["x"], "tensor<0x4xf32>", """
  %1 = sdy.reduce_scatter [{}, {"x"}] %0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<0x4xf32>
  return %1 : tensor<0x4xf32>""", ([], ["x"])),
    "reduce-scatter-two-dims": dot(["x", "y"], "tensor<0x4xf32>", """
  %1 = sdy.reduce_scatter [{"x"}, {"y"}] %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<0x4xf32>
  return %1 : tensor<0x4xf32>""", (["x"], ["y"])),
}


@pytest.mark.parametrize("name", sorted(MODULES))
@pytest.mark.parametrize("options", [None, "per-dim-all-gather=true combine-multi-dimension-reduce-scatter=true"])
def test_collective_on_empty_tensor_simulates(name, options):
    report = simulate_text(MODULES[name], f"{name}.mlir", seed=3, pass_options=options, explicit=True)
    assert report.ok, report.text()
    assert report.outputs


@pytest.mark.parametrize("name", sorted(MODULES))
def test_collective_on_empty_tensor_is_no_collective(name):
    """The per-device program has no collective left (and verifies: optimize_text checks)."""
    out = optimize_text(MODULES[name], f"{name}.mlir", parse_flags(["-sdy-convert-global-to-local"]))
    for c in ("all_gather", "all_to_all", "all_reduce", "reduce_scatter", "collective_permute"):
        assert f"stablehlo.{c}" not in out, out


@pytest.mark.parametrize("path", [DATA / "zero_size_all_gather.mlir", IR_DATA / "jax_pad_edge.mlir",
                                  DATA / "jax_associative_scan.mlir"], ids=lambda p: p.stem)
def test_reshard_of_empty_tensor_simulates_with_no_bytes(tmp_path, path):
    """A reshard of a zero-size tensor (written by hand; from jnp.pad's edge
    mode; from associative_scan) was an all_gather of a 0-size dimension:
    "the per-device program does not verify"."""
    r = CliRunner().invoke(main, ["simulate", str(path)])
    assert r.exit_code == 0, r.output
    assert "PASS: sharded and unsharded results agree" in r.output
    report = tmp_path / "report.json"
    r = CliRunner().invoke(main, ["run", str(path), "--partition", "--report", str(report), "-o", str(tmp_path / "out.mlir")])
    assert r.exit_code == 0, r.output
    collectives = json.loads(report.read_text())["collectives"]
    empty = [c for c in collectives if c["bytes_per_device"] == 0]   # (the JAX programs move real data too)
    assert empty and (not path.stem.startswith("zero_size") or empty == collectives), collectives
