"""Complex constants (r34 G4): JAX writes `x * 1j` as a complex splat constant,
`stablehlo.constant dense<(0.0,1.0)> : tensor<complex<f32>>`, and jaxlib's
bindings raised TypeError ("Can't cast unknown element type") wherever such an
attribute was read, which crashed every command (exit 3). sdylog.ir.context
registers a caster that hands those attributes out as DenseElementsAttr, and
rewrite.splat_of_type resizes a complex splat (get_splat takes none)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from jaxlib.mlir import ir

from sdylog.cli import main
from sdylog.ir import parse_module
from sdylog.ir.rewrite import attributes_of, splat_of_type

DATA = Path(__file__).parent / "data"

MESH = 'sdy.mesh @mesh = <["x"=2]>\n'
ARG = '%arg0: tensor<{n}x{t}> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}]>}}'

# A splat broadcast from a scalar (what JAX writes), a splat of the value's
# shape (resized by global-to-local), one that pads (3 rows on 2 devices), and
# a non-splat one (sliced per device), in complex<f32> and complex<f64>.
MODULES = {
    "scalar_splat": (4, "complex<f32>", """
    %c = stablehlo.constant dense<(0.000000e+00,1.000000e+00)> : tensor<complex<f32>>
    %b = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
    %0 = stablehlo.multiply %arg0, %b : tensor<4xcomplex<f32>>"""),
    "shaped_splat": (4, "complex<f64>", """
    %c = stablehlo.constant dense<(1.5,-2.0)> : tensor<4xcomplex<f64>>
    %0 = stablehlo.multiply %arg0, %c : tensor<4xcomplex<f64>>"""),
    "padded_splat": (3, "complex<f32>", """
    %c = stablehlo.constant dense<(1.0,2.0)> : tensor<3xcomplex<f32>>
    %1 = stablehlo.multiply %arg0, %c : tensor<3xcomplex<f32>>
    %0 = stablehlo.add %1, %c : tensor<3xcomplex<f32>>"""),
    "non_splat": (4, "complex<f64>", """
    %c = stablehlo.constant dense<[(1.0,2.0), (3.0,-4.0), (0.5,0.0), (0.0,-1.5)]> : tensor<4xcomplex<f64>>
    %0 = stablehlo.multiply %arg0, %c : tensor<4xcomplex<f64>>"""),
}


def module_text(name: str) -> str:
    n, t, body = MODULES[name]
    return (MESH + f"func.func public @main({ARG.format(n=n, t=t)}) -> tensor<{n}x{t}> {{{body}\n"
            f"    return %0 : tensor<{n}x{t}>\n}}\n")


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(params=[*MODULES, "jax_times_1j", "jax_exp_1j"])
def program(request, tmp_path):
    if request.param.startswith("jax_"):   # jax.jit(f).lower(x).as_text(), x 16x8 on ("data", "model")
        return DATA / f"{request.param}.mlir"
    path = tmp_path / f"{request.param}.mlir"
    path.write_text(module_text(request.param))
    return path


def test_run_opt_explain(program):
    r = invoke("run", program)
    assert r.exit_code == 0, r.output
    assert "complex" in r.stdout
    r = invoke("opt", program, "-sdy-propagation-pipeline")
    assert r.exit_code == 0, r.output
    assert "dense<(" in r.stdout or "dense<[(" in r.stdout
    r = invoke("explain", program, "%0")
    assert r.exit_code == 0, r.output


def test_partition_and_simulate(program):
    r = invoke("run", program, "--partition")
    assert r.exit_code == 0, r.output
    assert "dense<(" in r.stdout or "dense<[(" in r.stdout
    r = invoke("simulate", program, "--json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["match"] and report["partitioned"], report


def test_attributes_of_a_complex_constant():
    module = parse_module(module_text("non_splat"))
    with module.context:
        op = next(op for op in module.body.operations[1].regions[0].blocks[0].operations
                  if op.operation.name == "stablehlo.constant")
        value = attributes_of(op)["value"]
        assert isinstance(value, ir.DenseElementsAttr)
        assert str(value).startswith("dense<[(1.000000e+00,2.000000e+00)")
        assert op.operation.attributes[0].attr == value   # by index too (it aborted the process)


@pytest.mark.parametrize("text, t, printed", [
    ("dense<(1.5,-2.0)> : tensor<4xcomplex<f32>>", "tensor<2xcomplex<f32>>", "dense<(1.500000e+00,-2.000000e+00)>"),
    ("dense<(0.1,3.0)> : tensor<complex<f64>>", "tensor<3x2xcomplex<f64>>", "dense<(1.000000e-01,3.000000e+00)>"),
    ("dense<7> : tensor<4xi32>", "tensor<2xi32>", "dense<7>"),
    ("dense<2.5> : tensor<4xbf16>", "tensor<1xbf16>", "dense<2.500000e+00>"),
])
def test_splat_of_type(text, t, printed):
    module = parse_module("")
    with module.context:
        attr = splat_of_type(ir.DenseElementsAttr(ir.Attribute.parse(text)), ir.RankedTensorType.parse(t))
        assert attr.is_splat and str(attr) == f"{printed} : {t}"
