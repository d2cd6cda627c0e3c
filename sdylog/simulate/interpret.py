"""`sdylog interpret FILE`: run @main as `stablehlo-translate --interpret` does.

@main takes no arguments; `interpreter.run_parallel` runs programs on
simulated devices and `check.*` ops assert on values. A failed check (or any
error) is reported with its location and makes the run fail. A host
callback without results (jax.debug.print) is not run: a note on stderr
says so; one with results is an error.
"""
from __future__ import annotations

import sys

from sdylog.ir.module import display_name, parse_module, read_source
from sdylog.simulate.mesh import CollectiveStats
from sdylog.simulate.program import DeviceRuntime, Program


def interpret_text(text: str, filename: str, entry: str = "main") -> tuple[list, CollectiveStats]:
    module = parse_module(text, filename, allow_unregistered=True)
    with module.context:
        program = Program(module, filename)
        fn = program.function(entry)
        if fn.arg_types:
            from sdylog.ir.diagnostics import SdylogError
            raise SdylogError(f"@{entry} takes {len(fn.arg_types)} arguments; interpret runs functions without any")
        stats = CollectiveStats()
        results = fn([], DeviceRuntime(stats=stats))
    for op in program.skipped:
        sys.stderr.write(f"note: {op.text()}\n")
    return results, stats


def interpret_main(path: str, entry: str = "main") -> tuple[list, CollectiveStats]:
    return interpret_text(read_source(path), display_name(path), entry)
