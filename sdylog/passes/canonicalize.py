"""-canonicalize: MLIR's canonicalizer with the patterns sdylog has, those of
Shardy's ops that its export pipeline runs, by label (sdylog/ir/canonicalization.py):
`sdy-reshard` and `sdy-collective`.

Options as MLIR's: `enable-patterns` / `disable-patterns` (labels or pattern
names, comma separated), `top-down` (the command line's default; Shardy's
pipelines build the pass with MLIR's default config, bottom-up:
`{"top-down": False}`), `max-iterations`. The greedy driver
(sdylog/ir/greedy.py) also erases trivially dead ops and deduplicates and
hoists constants, as MLIR's does, whatever the patterns.

Left out, and said on stderr when `enable-patterns` does not restrict the
run to the labels above: ops' folders, the patterns of other dialects, and
Shardy's unlabelled ones (reshard common-subexpression elimination, the
manual computation patterns).
"""
from __future__ import annotations

import sys

from jaxlib.mlir import ir

from sdylog.ir.canonicalization import PATTERNS
from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.greedy import apply_greedily
from sdylog.ir.shardings import Meshes
from sdylog.passes.census import PRESERVED, census, changes

# The census scope's key for the module a canonicalize run left as it found
# it, and how many steps had changed it then (census.changes): a run on it
# finds no dead op and every constant in place.
_SETTLED = "canonicalized"

def selected_patterns(enable, disable) -> dict[str, list]:
    """op name -> the pattern functions to try on it, in MLIR's order."""
    known = set(PATTERNS) | {name for pats in PATTERNS.values() for name, _, _ in pats}
    for name in (*enable, *disable):
        if name not in known:
            raise SdylogError(f"canonicalize: no pattern or label '{name}' (sdylog has: "
                              f"{', '.join(sorted(PATTERNS))})")
    by_op: dict[str, list] = {}
    for label, patterns in PATTERNS.items():
        for name, op_name, fn in patterns:
            if enable and label not in enable and name not in enable:
                continue
            if label in disable or name in disable:
                continue
            by_op.setdefault(op_name, []).append(fn)
    return by_op


def run(module: ir.Module, options: dict, ctx):
    enable, disable = tuple(options["enable-patterns"]), tuple(options["disable-patterns"])
    if not enable:
        sys.stderr.write("note: canonicalize: sdylog applies only the sdy-reshard and sdy-collective "
                         "patterns (no folders, no other patterns)\n")
    patterns = selected_patterns(enable, disable)
    ops_and_names = census(module, ctx).all_ops_and_names()
    scope = ctx.census
    settled = scope is not None and scope.get(_SETTLED) == (module, changes(ctx))
    with module.context:
        changed = apply_greedily(module.operation, patterns, top_down=options["top-down"],
                                 max_iterations=options["max-iterations"], meshes=Meshes(module),
                                 ops_and_names=ops_and_names, settled=settled)
    if changed:
        return None
    if scope is not None and options["max-iterations"] > 0:   # (it looked)
        scope[_SETTLED] = (module, changes(ctx))
    return PRESERVED
