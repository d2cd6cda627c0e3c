"""The full pipeline on one module (`-sdy-propagation-pipeline`), timed step by
step, keeping the Datalog engine with every input and derived relation."""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from sdylog.ir import load_module, print_module
from sdylog.ir.module import display_name
from sdylog.passes import PassContext, lookup


@dataclass
class PipelineRun:
    module: object
    result: object                  # sdylog.propagation.driver.PropagationResult
    ctx: PassContext
    seconds: dict = field(default_factory=dict)  # step -> wall seconds

    def text(self) -> str:
        return print_module(self.module)


class Progress:
    """One line per step on stderr, only when stderr is a terminal."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def step(self, name: str) -> None:
        if self.enabled:
            sys.stderr.write(f"\r\x1b[K[sdylog] {name}...")
            sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def run_pipeline(path: str, engine: str | None = None, provenance: bool = False,
                 progress: Progress | None = None) -> PipelineRun:
    progress = progress or Progress(False)
    seconds = {}
    t = time.perf_counter()
    progress.step("parse")
    module = load_module(path)
    seconds["parse"] = time.perf_counter() - t
    ctx = PassContext(filename=display_name(path), engine=engine)
    ctx.provenance = provenance  # read by the propagation driver
    progress.step("propagate")
    t = time.perf_counter()
    with module.context:
        result = lookup("sdy-propagation-pipeline").load()(module, {"dedup-functions-fully": False}, ctx)
    seconds["pipeline"] = time.perf_counter() - t
    progress.done()
    return PipelineRun(module, result, ctx, seconds)


def report(run: PipelineRun) -> str:
    """The short report `sdylog run` prints on stderr."""
    engine = run.result.engine
    sharded = {v for v, _t in engine.read("final_value")}
    values = len(run.result.facts.values)
    lines = [f"values sharded: {len(sharded)} of {values}"]
    if "conflict" in engine.relations:
        lines.append(f"conflicts: {engine.size('conflict')}")
    steps = dict(run.seconds)
    for timing in run.ctx.report.get("propagation", []):
        for k, v in timing.items():
            steps[f"propagation.{k} (cpu)"] = v
    lines.append("time: " + ", ".join(f"{k} {v:.3f}s" for k, v in steps.items()))
    return "\n".join(lines)
