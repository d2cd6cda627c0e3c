"""sdylog against Shardy on the same text and flags (tests and hand runs only).

The oracle and the comparisons are the shared conformance scripts
(`shardy_ref_opt.py`, `compare_shardings.py`, `compare_collectives.py` in
$SDYLOG_SHARED/conformance, else ../shared/conformance beside the
repository), loaded as modules and run in-process.

Reshards: sdylog's `-sdy-propagation-pipeline` skips
`sdy-insert-explicit-reshards` until the partitioner registers it. Until then
the reference for that flag is Shardy's pipeline without that step, and only
values are compared; once the step exists the reference is the whole
pipeline and reshards are compared too (`compare_reshards`: the default
follows the step's presence; SDYLOG_COMPARE_RESHARDS=1/0 forces it).
"""
from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

PIPELINE = "-sdy-propagation-pipeline"
RESHARD_STEP = "sdy-insert-explicit-reshards"


def shared_dir() -> Path:
    """The shared folder the conformance tests use (conformance_cases:
    $SDYLOG_SHARED, else a `shared` folder beside the repository or one of
    its parents)."""
    from conformance.conformance_cases import SHARED_ENV, shared_dir as found
    return found() or Path(os.environ.get(SHARED_ENV) or "../shared")


def missing_reason() -> str | None:
    """Why the oracle cannot run here (None: it can)."""
    conf = shared_dir() / "conformance"
    for script in ("shardy_ref_opt.py", "compare_shardings.py", "compare_collectives.py"):
        if not (conf / script).exists():
            return f"{conf / script} is missing (set SDYLOG_SHARED to the shared directory)"
    return None


@lru_cache(maxsize=None)
def script(name: str):
    """conformance/NAME.py as a module."""
    path = shared_dir() / "conformance" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"conformance_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reshard_step_available() -> bool:
    from sdylog.passes import PASSES
    return RESHARD_STEP in PASSES


def compare_reshards_default() -> bool:
    forced = os.environ.get("SDYLOG_COMPARE_RESHARDS")
    return forced == "1" if forced in ("0", "1") else reshard_step_available()


class OracleError(Exception):
    """Shardy rejected the input or failed."""


@lru_cache(maxsize=1)
def _pipeline_without_reshards() -> str:
    """jaxlib's expanded -sdy-propagation-pipeline without the reshard step."""
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import passmanager
    with jmlir.make_ir_context():
        text = str(passmanager.PassManager.parse("builtin.module(sdy-propagation-pipeline)"))
    cut = re.sub(r"func\.func\(" + RESHARD_STEP + r"(\{[^{}]*\})?\),", "", text)
    assert cut != text, f"{RESHARD_STEP} not found in {text}"
    return cut.replace("sdy-save-module,", "")   # (a debugging dump, not registered as a pass)


def shardy(text: str, flags: list[str], with_reshards: bool) -> str:
    """What Shardy prints for `text` after `flags` (the pipeline without its
    reshard step unless `with_reshards`)."""
    if flags == [PIPELINE] and not with_reshards:
        from jax._src.interpreters import mlir as jmlir
        from jaxlib.mlir import ir, passmanager
        with jmlir.make_ir_context() as ctx:
            ctx.allow_unregistered_dialects = True
            try:
                module = ir.Module.parse(text)
                passmanager.PassManager.parse(_pipeline_without_reshards()).run(module.operation)
            except Exception as e:   # MLIRError: the diagnostics
                raise OracleError(str(e)) from None
            return str(module)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(text)
        f.flush()
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = script("shardy_ref_opt").main([f.name, *flags])
        if code:
            raise OracleError(err.getvalue())
        return out.getvalue()


def sdylog(text: str, flags: list[str], with_reshards: bool = True) -> str:
    """What `sdylog opt` prints for `text` after `flags` (in-process); the
    pipeline without its reshard step unless `with_reshards`."""
    from sdylog.passes.driver import optimize_text, parse_flags
    if flags == [PIPELINE] and not with_reshards:
        return _sdylog_pipeline_without_reshards(text)
    return optimize_text(text, "generated.mlir", parse_flags(flags))


def _sdylog_pipeline_without_reshards(text: str) -> str:
    from sdylog.ir import parse_module, print_module
    from sdylog.ir.module import verify_module
    from sdylog.passes import PassContext
    from sdylog.passes.census import shared_census
    from sdylog.passes.pipelines import post_propagation_steps, run_steps, run_import_pipeline
    from sdylog.passes.propagation_pipeline import propagation_phase
    module = parse_module(text, "generated.mlir")
    with module.context:
        ctx = PassContext(filename="generated.mlir", derive="write-back")
        with shared_census(ctx):
            run_import_pipeline(module, ctx)
            propagation_phase(module, ctx)
            run_steps(module, ctx, [s for s in post_propagation_steps() if s.name != RESHARD_STEP])
        verify_module(module, ctx.filename)
        return print_module(module)


@dataclass
class Comparison:
    values: int
    agree: int
    mismatches: list[str] = field(default_factory=list)
    reshards: tuple[int, int] | None = None     # (agree, total) when compared

    @property
    def full(self) -> bool:
        return self.agree == self.values and (self.reshards is None or self.reshards[0] == self.reshards[1])


def compare_texts(expected: str, actual: str, reshards: bool) -> Comparison:
    """compare_shardings.py (and compare_collectives.py with `reshards`) on two module texts."""
    with tempfile.TemporaryDirectory() as d:
        exp_path, act_path = Path(d) / "expected.mlir", Path(d) / "actual.mlir"
        exp_path.write_text(expected)
        act_path.write_text(actual)
        cs = script("compare_shardings")
        result = Comparison(0, 0)
        for key, e, a in cs.flatten(cs.collect(str(exp_path)), cs.collect(str(act_path))):
            result.values += 1
            if e == a:
                result.agree += 1
            else:
                result.mismatches.append(f"{key[0]} {key[1]}[{key[2]}]: expected {e}, got {a}")
        if reshards:
            from jax._src.interpreters import mlir as jmlir
            from jaxlib.mlir import ir
            cc = script("compare_collectives")
            ctx = jmlir.make_ir_context()
            ctx.allow_unregistered_dialects = True
            exp, act = cc.keys(str(exp_path), ctx, ir), cc.keys(str(act_path), ctx, ir)
            result.reshards = (sum((exp & act).values()), max(sum(exp.values()), sum(act.values())))
            result.mismatches += [f"reshard missing x{c}: {k}" for k, c in (exp - act).items()]
            result.mismatches += [f"reshard extra x{c}: {k}" for k, c in (act - exp).items()]
        return result


def compare(text: str, flags: list[str], reshards: bool | None = None) -> Comparison:
    """sdylog against Shardy on `text` with `flags`. Raises OracleError when
    Shardy fails (the input is not one to compare on); an error of sdylog's
    propagates."""
    reshards = compare_reshards_default() if reshards is None else reshards
    expected = shardy(text, flags, with_reshards=reshards)
    return compare_texts(expected, sdylog(text, flags, with_reshards=reshards), reshards)


# ---------------------------------------------------------------- regression cases
# A case is NAME.mlir, whose first line is `// FLAGS: <sdy_opt flags>` (and
# whose next comment lines say what it shows), with Shardy's output beside it
# in NAME.expected.mlir (for the pipeline: without its reshard step).
FLAGS_PREFIX = "// FLAGS:"


def case_flags(text: str) -> list[str]:
    first = text.splitlines()[0] if text else ""
    if not first.startswith(FLAGS_PREFIX):
        raise ValueError(f"a regression case starts with '{FLAGS_PREFIX} ...'")
    return first[len(FLAGS_PREFIX):].split()


def save_case(directory: Path, name: str, module_text: str, flags: list[str], comment: str) -> Path:
    """Write regression case `name` (its expected output from Shardy)."""
    lines = [f"{FLAGS_PREFIX} {' '.join(flags)}"] + [f"// {l}".rstrip() for l in comment.strip().splitlines()]
    text = "\n".join(lines) + "\n" + module_text.strip() + "\n"
    path = Path(directory) / f"{name}.mlir"
    path.write_text(text)
    (Path(directory) / f"{name}.expected.mlir").write_text(shardy(text, flags, with_reshards=False))
    return path
