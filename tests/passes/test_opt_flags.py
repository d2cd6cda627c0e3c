"""`sdylog opt`'s flags: sdy_opt's `-pass='k=v'`, mlir-opt's `-pass{k=v}` and
`--pass-pipeline='builtin.module(...)'` name the same passes and options."""
import re
from pathlib import Path

import pytest

from sdylog.ir.diagnostics import UsageError
from sdylog.passes import PASSES, parse_options
from sdylog.passes.driver import optimize_text, parse_flags, parse_pipeline

MLP = (Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir").read_text()


def test_braced_options_are_the_flag_options():
    braced = parse_flags(["-sdy-basic-propagate{conservative-propagation=true keep-sharding-rules=true}"])
    flag = parse_flags(["-sdy-basic-propagate='conservative-propagation=true keep-sharding-rules=true'"])
    assert braced.passes == flag.passes
    assert braced.passes[0][1]["conservative-propagation"] is True


# (valid for MLIR too: a pass restricted to func.func nested under it; we
# accept either placement, since every pass of ours runs on the whole module)
PIPELINES = [
    ("builtin.module(sdy-close-shardings,sdy-basic-propagate{conservative-propagation=true})",
     [("sdy-close-shardings", None), ("sdy-basic-propagate", "conservative-propagation=true")]),
    ("'builtin.module( func.func(sdy-constant-or-scalar-merger, sdy-drop-sharding-rules) , sdy-add-data-flow-edges )'",
     [("sdy-constant-or-scalar-merger", None), ("sdy-drop-sharding-rules", None), ("sdy-add-data-flow-edges", None)]),
    ("builtin.module(sdy-convert-global-to-local{per-dim-all-gather=true enable-rgv3=true},"
     "sdy-unflatten-call-graph{dedup-functions-fully=true})",
     [("sdy-convert-global-to-local", "per-dim-all-gather=true enable-rgv3=true"),
      ("sdy-unflatten-call-graph", "dedup-functions-fully=true")]),
    ("sdy-close-shardings", [("sdy-close-shardings", None)]),
    ("builtin.module(func.func(sdy-close-shardings))", [("sdy-close-shardings", None)]),
]


@pytest.mark.parametrize("text, passes", PIPELINES)
def test_pipeline_text(text, passes):
    assert parse_pipeline(text) == passes


@pytest.mark.parametrize("text", [t for t, _ in PIPELINES[:3]])
def test_pipelines_name_what_mlirs_own_parser_reads(text):
    """MLIR's pass manager (jaxlib's, as an oracle) parses the same text to
    the same passes, in order, with the same option values."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import passmanager

    with jax_mlir.make_ir_context():
        printed = str(passmanager.PassManager.parse(text.strip("'")))
    theirs = re.findall(r"(sdy-[\w-]+)(?:\{([^{}]*)\})?", printed)
    ours = parse_pipeline(text)
    assert [n for n, _ in theirs] == [n for n, _ in ours]
    for (name, their_opts), (_, our_opts) in zip(theirs, ours):
        mlir_values = parse_options(name, their_opts)   # (MLIR prints every option, defaults too)
        assert {k: mlir_values[k] for k in parse_options(name, our_opts)} == parse_options(name, our_opts)


def test_a_pipeline_runs_as_its_flags():
    by_pipeline = optimize_text(MLP, "mlp.mlir", parse_flags(
        ["--pass-pipeline=builtin.module(sdy-import-pipeline,func.func(sdy-constant-or-scalar-merger),"
         "sdy-close-shardings)"]))
    by_flags = optimize_text(MLP, "mlp.mlir", parse_flags(
        ["-sdy-import-pipeline", "-sdy-constant-or-scalar-merger", "-sdy-close-shardings"]))
    assert by_pipeline == by_flags


@pytest.mark.parametrize("flag, message", [
    ("-sdy-basic-propgate", "unknown pass '-sdy-basic-propgate': did you mean one of '-sdy-basic-propagate'"),
    ("-split-inptu-file", "unknown flag '-split-inptu-file': did you mean '-split-input-file'?"),
    ("-sdy-basic-propagate{conservativ-propagation=1}",
     "has no option 'conservativ-propagation': did you mean 'conservative-propagation'?"),
    ("--pass-pipeline=builtin.module(sdy-close-shardngs)", "did you mean one of '-sdy-close-shardings'"),
    ("-sdy-zzzz", "unknown pass '-sdy-zzzz' (sdylog opt --help"),
])
def test_unknown_names_get_suggestions(flag, message):
    with pytest.raises(UsageError) as e:
        parse_flags([flag])
    assert message in str(e.value)


def test_every_pass_flag_parses():
    for name in PASSES:
        assert parse_flags([f"-{name}"]).passes == [(name, dict(PASSES[name].options))]


def test_the_first_run_imports_nothing():
    """The passes a flag names load when it is parsed, with everything their
    runs use (cold start: `sdylog opt` pays for its imports once, at start)."""
    import subprocess
    import sys
    code = ("import sys\nfrom sdylog.passes.driver import optimize_text, parse_flags\n"
            f"inv = parse_flags(['-sdy-propagation-pipeline'])\nbefore = set(sys.modules)\n"
            f"optimize_text(open({str(Path(__file__).resolve().parents[2] / 'examples' / 'mlp.mlir')!r}).read(), "
            "'mlp.mlir', inv)\nprint(sorted(set(sys.modules) - before))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"


def test_untimed_context_times_no_phase():
    """`sdylog opt` reads no report, so it does not time the phases
    (PassContext.timed off: no reading of the CPU clock); a default context
    does, with the same phases and the same printed module."""
    from sdylog.ir import parse_module, print_module
    from sdylog.passes import PassContext
    from sdylog.passes.driver import run_passes
    inv = parse_flags(["-sdy-propagation-pipeline",
                       "-sdy-export-pipeline=enable-insert-explicit-collectives=true"])
    reports, printed = [], []
    for timed in (True, False):
        module = parse_module(MLP, "mlp.mlir")
        ctx = PassContext(filename="mlp.mlir", derive="write-back", timed=timed)
        with module.context:
            run_passes(module, inv, ctx)
            printed.append(print_module(module))
        reports.append(ctx.report)
    timed_report, untimed_report = reports
    assert printed[0] == printed[1]
    for phase in ("propagation", "reshards"):
        assert [e.keys() for e in timed_report[phase]] == [e.keys() for e in untimed_report[phase]]
        assert all(e["facts"] == e["load"] == e["rules"] == 0.0 for e in untimed_report[phase])
    assert timed_report["propagation"][0]["rules"] > 0.0
    assert optimize_text(MLP, "mlp.mlir", inv) == printed[1]
