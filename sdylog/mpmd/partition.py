"""The whole MPMD run on a module's text: prepare, plan, emit, verify."""
from __future__ import annotations

from dataclasses import dataclass

from sdylog.ir.module import parse_module, print_module, verify_module
from sdylog.mpmd.options import MpmdOptions
from sdylog.mpmd.plan import Plan


@dataclass
class Partition:
    plan: Plan
    source: object      # the prepared input module (the plan's ids point into it)
    module: object      # the per-device functions

    def text(self) -> str:
        return print_module(self.module, verified=True)

    def manifest(self) -> dict:
        from sdylog.mpmd.manifest import manifest
        return manifest(self.plan)


def partition_text(text: str, filename: str, options: MpmdOptions = MpmdOptions(),
                   provenance: bool = False) -> Partition:
    from sdylog.mpmd.driver import plan as make_plan
    from sdylog.mpmd.emit import emit
    from sdylog.mpmd.prepare import prepare

    source = parse_module(text, filename)
    entry = prepare(source, filename, options.entry)
    plan = make_plan(source, entry, filename, options, provenance)
    with source.context:
        name = source.operation.attributes["sym_name"].value if "sym_name" in source.operation.attributes else None
        module = emit(plan, name)
    verify_module(module, filename)
    return Partition(plan, source, module)
