"""`sdylog opt`: parse sdy_opt-style flags, run the passes, print the module."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sdylog import outputs
from sdylog.ir import SdylogError, parse_module, print_module, split_input
from sdylog.ir.module import display_name, read_source, verify_module
from sdylog.passes import PassContext, lookup, parse_options

_PASS_FLAG = re.compile(r"^--?(sdy-[a-z0-9-]+|canonicalize)(?:=(.*))?$", re.S)

# Flags of sdy_opt / mlir-opt that change nothing in what we print.
_IGNORED = {"verify-diagnostics", "mlir-print-debuginfo", "mlir-disable-threading"}


@dataclass
class OptInvocation:
    passes: list[tuple[str, dict]] = field(default_factory=list)
    split_input_file: bool = False
    allow_unregistered: bool = False


def parse_flags(flags: list[str]) -> OptInvocation:
    inv = OptInvocation()
    for flag in flags:
        m = _PASS_FLAG.match(flag)
        if m:
            name = m.group(1)
            inv.passes.append((name, parse_options(name, m.group(2))))
            continue
        bare = flag.lstrip("-")
        if bare == "split-input-file":
            inv.split_input_file = True
        elif bare == "allow-unregistered-dialect":
            inv.allow_unregistered = True
        elif bare in _IGNORED:
            pass
        else:
            raise SdylogError(f"unknown flag '{flag}'")
    for name, _ in inv.passes:
        lookup(name)
    return inv


def run_passes(module, inv: OptInvocation, ctx: PassContext) -> None:
    """Each pass, then MLIR's verifier, as sdy_opt's pass manager does."""
    for name, options in inv.passes:
        lookup(name).load()(module, options, ctx)
        verify_module(module, ctx.filename)


def optimize_text(text: str, filename: str, inv: OptInvocation, engine: str | None = None) -> str:
    """The printed result for one input text (all of its chunks)."""
    chunks = split_input(text) if inv.split_input_file else [text]
    outputs = []
    for chunk in chunks:
        module = parse_module(chunk, filename, allow_unregistered=inv.allow_unregistered)
        with module.context:
            run_passes(module, inv, PassContext(filename=filename, engine=engine, derive="write-back"))
            outputs.append(print_module(module, verified=True))   # (parsed, then each pass, verified)
    return "\n// -----\n".join(o.rstrip("\n") for o in outputs) + "\n"


def opt_main(path: str, flags: list[str], output: str | None, engine: str | None = None) -> None:
    inv = parse_flags(flags)
    out = outputs.plan(output or "-", "-o")
    text = optimize_text(read_source(path), display_name(path), inv, engine)
    outputs.write_all([(out, text)])
