"""`sdylog opt`: parse sdy_opt-style flags, run the passes, print the module."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from sdylog import outputs
from sdylog.datalog.gc_pause import gc_paused
from sdylog.ir import parse_module, print_module, split_input
from sdylog.ir.context import shared_context
from sdylog.ir.diagnostics import UsageError
from sdylog.ir.module import display_name, read_source, verify_module
from sdylog.passes import PASSES, VERIFIED, PassContext, lookup, parse_options
from sdylog.passes.census import PRESERVED, follow_step, shared_census
from sdylog.suggest import did_you_mean

# A pass flag: -NAME, -NAME=OPTIONS (sdy_opt) or -NAME{OPTIONS} (mlir-opt)
_FLAG = re.compile(r"^--?(?P<name>[A-Za-z][\w.-]*)(?:\{(?P<braced>.*)\}|=(?P<value>.*))?$", re.S)

# Flags of sdy_opt / mlir-opt that change nothing in what we print.
_IGNORED = {"verify-diagnostics", "mlir-print-debuginfo", "mlir-disable-threading"}
FLAGS = ("split-input-file", "allow-unregistered-dialect", "pass-pipeline", *_IGNORED)

# The ops a textual pipeline may nest passes under (`builtin.module(func.func(p))`):
# our passes run on the whole module, which is what a pass nested under
# func.func does in mlir-opt (it runs on every function).
_ANCHORS = ("builtin.module", "func.func")
_PIPELINE_NAME = re.compile(r"\s*([A-Za-z][\w.-]*)\s*")


@dataclass
class OptInvocation:
    passes: list[tuple[str, dict]] = field(default_factory=list)
    split_input_file: bool = False
    allow_unregistered: bool = False


def parse_flags(flags: list[str]) -> OptInvocation:
    """sdy_opt / mlir-opt flags: passes (-NAME, -NAME='k=v ...', -NAME{k=v ...},
    --pass-pipeline='builtin.module(NAME{k=v},func.func(NAME))'), and the
    flags of FLAGS. Raises UsageError, with the closest names, for what it
    does not know."""
    inv = OptInvocation()
    for flag in flags:
        m = _FLAG.match(flag)
        name = m["name"] if m else None
        if name in PASSES:
            inv.passes.append((name, parse_options(name, m["braced"] if m["braced"] is not None else m["value"])))
        elif name == "pass-pipeline" and m["value"] is not None:
            inv.passes += [(n, parse_options(n, text)) for n, text in parse_pipeline(m["value"])]
        elif name == "split-input-file" and m["value"] is None:
            inv.split_input_file = True
        elif name == "allow-unregistered-dialect" and m["value"] is None:
            inv.allow_unregistered = True
        elif name and name.startswith("sdy-"):
            lookup(name)                  # (an unknown pass: its error names the closest ones)
        elif name not in _IGNORED:
            known = [f"-{n}" for n in (*PASSES, *FLAGS)]
            raise UsageError(f"unknown flag '{flag}'{did_you_mean('-' + (name or flag.lstrip('-')), known)}"
                             " (sdylog opt --help lists the passes)")
    # (what the flags ask for is made now, not in the first run: the passes' modules, the context)
    for name, _ in inv.passes:
        PASSES[name].load()
    shared_context(inv.allow_unregistered)
    return inv


def parse_pipeline(text: str) -> list[tuple[str, str | None]]:
    """The passes of a textual pass pipeline (mlir-opt's --pass-pipeline),
    in order: (name, options text or None)."""
    text = text.strip().strip("'\"")
    passes: list[tuple[str, str | None]] = []
    pos = _pipeline(text, 0, passes, depth=0)
    if pos != len(text):
        raise UsageError(f"--pass-pipeline: unexpected '{text[pos:]}' at character {pos + 1} of '{text}'")
    return passes


def _pipeline(text: str, pos: int, out: list, depth: int) -> int:
    """Parse `element (',' element)*` from pos; return where it stopped."""
    while True:
        m = _PIPELINE_NAME.match(text, pos)
        if not m:
            raise UsageError(f"--pass-pipeline: expected a pass name at character {pos + 1} of '{text}'")
        name, pos = m.group(1), m.end()
        if text.startswith("(", pos):
            if name not in _ANCHORS:
                raise UsageError(f"--pass-pipeline: cannot nest passes under '{name}' "
                                 f"(anchors: {', '.join(_ANCHORS)})")
            pos = _pipeline(text, pos + 1, out, depth + 1)
            if not text.startswith(")", pos):
                raise UsageError(f"--pass-pipeline: missing ')' at character {pos + 1} of '{text}'")
            pos += 1
        elif text.startswith("{", pos):
            end = _closing_brace(text, pos)
            out.append((name, text[pos + 1:end]))
            pos = end + 1
        else:
            out.append((name, None))
        pos = len(text) - len(text[pos:].lstrip())
        if not text.startswith(",", pos):
            return pos
        pos += 1


def _closing_brace(text: str, start: int) -> int:
    depth, quote = 0, None
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
    raise UsageError(f"--pass-pipeline: missing '}}' in '{text}'")


def parse_args(args: list[str]) -> tuple[str, str | None, OptInvocation]:
    """`sdylog opt`'s arguments: (input, -o, the passes and flags)."""
    path, output, flags, second = None, None, [], None
    it = iter(args)
    for a in it:
        if a == "-o" or a.startswith("-o="):
            output = a[3:] if a.startswith("-o=") else next(it, None)
            if not output:
                raise UsageError("-o needs a file name")
        elif path is None and (a == "-" or not a.startswith("-")):
            path = a
        elif not a.startswith("-"):
            second = second or a
        else:
            flags.append(a)
    if path is None:
        raise UsageError("no input file (use '-' for stdin)")
    inv = parse_flags(flags)   # (first: in `--engine memory`, an unknown flag is what went wrong)
    if second is not None:
        raise UsageError(f"one input file only: '{path}' and '{second}'")
    return path, output, inv


def run_passes(module, inv: OptInvocation, ctx: PassContext) -> None:
    """Each pass, then MLIR's verifier, as sdy_opt's pass manager does: not
    after a pass that left the module as it was (census.PRESERVED; MLIR's
    skips the verifier after a pass that preserved all analyses) or verified
    it itself (VERIFIED). Verifying only the result would accept a list
    whose later pass hides an invalid module an earlier one made, or report
    the later pass's error instead of the verifier's. (A pipeline is one
    pass: its steps are not verified, sdylog/passes/pipelines.py.) The
    passes share one census of the module (sdylog/passes/census.py).
    Python's cyclic collector is paused meanwhile: passes allocate many
    small objects (the bindings' handles of ops and values, fact rows) and
    few cycles, and on a large module its collections cost as much as the
    passes' own work."""
    with shared_census(ctx), gc_paused(promote_survivors=True):
        for name, options in inv.passes:
            result = lookup(name).load()(module, options, ctx)
            follow_step(ctx, result)
            if result is not PRESERVED and result is not VERIFIED:
                verify_module(module, ctx.filename)


def optimize_text(text: str, filename: str, inv: OptInvocation) -> str:
    """The printed result for one input text (all of its chunks)."""
    chunks = split_input(text) if inv.split_input_file else [text]
    outputs = []
    for chunk in chunks:
        module = parse_module(chunk, filename, allow_unregistered=inv.allow_unregistered)
        with module.context:
            run_passes(module, inv, PassContext(filename=filename, derive="write-back", timed=False))
            outputs.append(print_module(module, verified=True))   # (parsed, then each pass, verified)
    return "\n// -----\n".join(o.rstrip("\n") for o in outputs) + "\n"


def opt_main(args: list[str]) -> None:
    path, output, inv = parse_args(args)
    out = outputs.plan(output or "-", "-o")
    text = optimize_text(read_source(path), display_name(path), inv)
    outputs.write_all([(out, text)])
