"""-sdy-export-pipeline: the sequence of Shardy's export_pipeline.cc for
each option, the same output as Shardy's own where jaxlib's Shardy has the
passes, module dumps, and passes sdylog does not have yet left out with a
warning."""
from __future__ import annotations

import re
from dataclasses import fields

import pytest

from passes_oracle import ours, same_text, shardy
from sdylog.ir import parse_module
from sdylog.passes import PASSES, PassContext, parse_options
from sdylog.passes.pipelines import ExportOptions, export_pipeline_steps, registered_steps, run_steps


def _jaxlib_expansion(options: str) -> list[str]:
    """The pass names of jaxlib's `sdy-export-pipeline{options}`."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import passmanager
    with jax_mlir.make_ir_context():
        text = str(passmanager.PassManager.parse(f"builtin.module(sdy-export-pipeline{{{options}}})"))
    text = re.sub(r"\{[^{}]*(\{[^{}]*\}[^{}]*)*\}", "", text)
    text = text.replace("builtin.module(", "").replace("func.func(", "").replace(")", "")
    return [n.strip() for n in text.split(",") if n.strip() and n.strip() != "sdy-save-module"]


# jaxlib's Shardy predates sdy-verify-unreduced-axes, sdy-inline-meshes in
# this pipeline and per-instruction partitioning: compared without them.
_NEWER = {"sdy-verify-unreduced-axes", "sdy-inline-meshes"}


@pytest.mark.parametrize("flags", [
    "",
    "enable-insert-explicit-collectives=true",
    "enable-insert-explicit-collectives=true remove-all-gather-reduce-scatter-for-cmv1=true",
    "avoid-export-for-partitioning=true keep-sharding-rules=true dump-sharding-origins=true",
    "update-non-divisible-input-output-shardings=false dump-propagation-edges=true",
])
def test_steps_are_shardys_export_pipeline(flags):
    options = ExportOptions.from_flags(parse_options("sdy-export-pipeline", flags))
    names = [s.name for s in export_pipeline_steps(options) if s.name not in _NEWER]
    assert names == _jaxlib_expansion(flags)


def test_newer_steps_follow_the_conformance_tests_shardy():
    names = [s.name for s in export_pipeline_steps(ExportOptions())]
    assert names.index("sdy-verify-unreduced-axes") == names.index("sdy-insert-explicit-reshards") - 1
    assert names[-1] == "sdy-inline-meshes"
    assert "sdy-inline-meshes" not in [s.name for s in export_pipeline_steps(ExportOptions(inline_meshes=False))]
    per_instruction = export_pipeline_steps(ExportOptions(enable_per_instruction_partitioning=True,
                                                          per_instruction_partitioning_filter="dot", partition_count=4))
    step = next(s for s in per_instruction if s.name == "sdy-per-instruction-partitioning")
    assert step.options == {"filter": "dot", "replica-count": 1, "partition-count": 4}
    insert = next(s for s in per_instruction if s.name == "sdy-insert-explicit-reshards")
    assert insert.options == {"enable-full-version": True}
    assert "sdy-reshard-to-collectives" not in [s.name for s in per_instruction]


def test_every_option_has_its_flag_with_shardys_default():
    flags = PASSES["sdy-export-pipeline"].options
    assert {f.name.replace("_", "-"): f.default for f in fields(ExportOptions)} == flags


RESHARDS = '''sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
sdy.mesh @mesh3d = <["a"=4, "b"=4, "c"=4]>
func.func @all_slice_all_gather(%arg0 : tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>})
    -> (tensor<16x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"x"}]>}) {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{}, {"x"}]> : tensor<16x2xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {"x"}]> : tensor<16x2xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"x"}]> : tensor<16x2xf32>
  return %2 : tensor<16x2xf32>
}
func.func @main(%arg0: tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh3d, [{"a", ?}, {"b"}]>})
    -> (tensor<2x4xf32> {sdy.sharding = #sdy.sharding<@mesh3d, [{"a":(1)2, ?}, {"b", "c"}]>}) {
  return %arg0 : tensor<2x4xf32>
}'''


@pytest.mark.parametrize("flags", ["", "enable-insert-explicit-collectives=true",
                                   "enable-insert-explicit-collectives=true remove-all-gather-reduce-scatter-for-cmv1=true"])
def test_same_output_as_shardy(flags, capsys):
    """(Programs whose reshards Shardy's insert-explicit-reshards leaves
    alone: the output is the same whether or not sdylog has it yet.)"""
    options = parse_options("sdy-export-pipeline", flags + " inline-meshes=false")
    got = ours(RESHARDS, "sdy-export-pipeline", options=options)
    assert same_text(got, shardy(RESHARDS, f"sdy-export-pipeline{{{flags}}}"))


def test_meshes_inlined_by_default():
    got = ours(RESHARDS, "sdy-export-pipeline")
    assert "sdy.mesh" not in got and 'sdy.sharding<mesh<["x"=2, "y"=2, "z"=2]>, [{}, {"x"}]>' in got
    assert 'sdy.sharding<mesh<["a"=4, "b"=4, "c"=4]>, [{}, {"b"}]>' in got


def test_dump_directory_gets_numbered_modules(tmp_path):
    options = parse_options("sdy-export-pipeline", f"dump-directory={tmp_path} enable-insert-explicit-collectives=true")
    ours(RESHARDS, "sdy-export-pipeline", options=options)
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["00.after_propagation.mlir", "01.after_explicit_reshards.mlir",
                     "02.after_partitioner_with_global_shapes.mlir"]
    assert "sdy.all_slice" in (tmp_path / names[-1]).read_text()
    assert "sdy.all_slice" not in (tmp_path / names[1]).read_text()


def test_missing_passes_are_left_out_with_a_warning(capsys, monkeypatch):
    import sdylog.passes.pipelines as pipelines
    monkeypatch.setattr(pipelines, "_WARNED", set())
    ctx = PassContext()
    steps = export_pipeline_steps(ExportOptions())
    monkeypatch.delitem(PASSES, "sdy-reshard-to-collectives")
    kept = registered_steps(export_pipeline_steps(ExportOptions(enable_insert_explicit_collectives=True)), ctx)
    assert "sdy-reshard-to-collectives" not in [s.name for s in kept]
    assert "sdy-reshard-to-collectives" in ctx.report["skipped_steps"]
    err = capsys.readouterr().err
    assert "warning: -sdy-reshard-to-collectives is left out" in err
    registered_steps(steps, ctx)
    assert err.count("-sdy-reshard-to-collectives") == 1   # said once
    module = parse_module(RESHARDS)
    with module.context:
        run_steps(module, PassContext(), kept)   # the rest runs
