"""The passes `sdylog opt` runs, by their `sdy_opt` flag names.

One table: flag name -> where the pass lives and which options it takes (with
defaults). A pass is a function `run(module, options, ctx)` that rewrites
the module in place; it raises SdylogError on bad input. It may return
census.PRESERVED when it left the module as it was, or census.Invalidated
with the names of the ops it created, erased or moved (None: it may have
done anything) so that a pipeline keeps its census of the module, and may
ask census.census(module, ctx) which ops the module holds to find that out
cheaply. A pass that verifies its result
itself (to say more than MLIR's verifier would) returns VERIFIED: `sdylog
opt` does not verify it again.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field
from functools import cache

from sdylog.ir.diagnostics import UsageError
from sdylog.suggest import did_you_mean


@dataclass(frozen=True)
class PassInfo:
    target: str                      # "module.path:function"
    options: dict = field(default_factory=dict)  # option name -> default value
    summary: str = ""

    def load(self):
        """The pass's function, its module imported on the first call."""
        return _load(self.target)


@cache
def _load(target: str):
    # (found once per process: import_module costs more than a pass with
    # nothing to do, and a pipeline loads a pass for each of its steps)
    module, fn = target.split(":")
    return getattr(importlib.import_module(module), fn)


@dataclass
class PassContext:
    """What a pass may need beyond the module: names for diagnostics, settings."""
    filename: str = "-"
    report: dict = field(default_factory=dict)  # passes add numbers for the run report
    census: dict | None = None       # a pipeline's shared census (sdylog/passes/census.py)
    provenance: bool = False         # propagation records how each tuple was derived (explain)
    # Which relations propagation derives: "all", or "write-back" (only what the
    # write-back reads: `sdylog opt` prints the module and nothing else)
    derive: str = "all"
    # insert-explicit-reshards' finding of an op without a common mesh, for
    # convert-global-to-local (sdylog/reshard/driver.py: NoCommonMesh, hand_over)
    no_common_mesh_hand_over: object | None = None
    # Whether passes time their phases for `report` (CPU time). `sdylog opt`
    # reads no report and turns it off: each reading of the process' CPU
    # time is a system call, the only ones of a warm run.
    timed: bool = True


def phase_clock(ctx):
    """The clock a pass times its phases with (in ctx.report): CPU time,
    or, when ctx.timed is off, one that always reads 0.0 (no ctx: CPU time)."""
    return time.process_time if getattr(ctx, "timed", True) else _untimed


def _untimed() -> float:
    return 0.0


# A pass's result: it changed the module and verified what it made.
VERIFIED = "verified"

_P = "sdylog.passes."

# The propagation passes' options (Shardy's PropagationOptions, per pass).
_BASIC_OPTIONS = {"keep-sharding-rules": False, "module-dump-directory": "", "conservative-propagation": False,
                  "debug-sharding-origins": False, "debug-propagation-edge-sharding": False}
_AGGRESSIVE_OPTIONS = {**_BASIC_OPTIONS, "propagation-strategy": "aggressive"}
_OP_PRIORITY_OPTIONS = {**_AGGRESSIVE_OPTIONS, "run-op-priority-propagation": True}

# flag name -> PassInfo. Keep alphabetical.
PASSES: dict[str, PassInfo] = {
    "canonicalize": PassInfo(
        _P + "canonicalize:run",
        {"enable-patterns": (), "disable-patterns": (), "top-down": True, "max-iterations": 10,
         "region-simplify": "normal", "max-num-rewrites": -1, "test-convergence": False},
        "MLIR's canonicalizer with Shardy's sdy-reshard and sdy-collective patterns."),
    "sdy-add-data-flow-edges": PassInfo(
        _P + "add_data_flow_edges:run", {},
        "Insert sdy.data_flow_edge on every data-flow edge owner."),
    "sdy-add-func-data-flow-edges": PassInfo(
        _P + "add_func_data_flow_edges:run", {},
        "Insert sdy.func_data_flow_edge on non-main func arguments and call results."),
    "sdy-aggressive-propagate": PassInfo(
        _P + "aggressive_propagate:run", dict(_AGGRESSIVE_OPTIONS),
        "Propagate shardings with the aggressive factor strategy (Datalog rules)."),
    "sdy-apply-sharding-constraints": PassInfo(
        _P + "apply_sharding_constraints:run",
        {"debug-sharding-origins": False, "debug-propagation-edge-sharding": False},
        "Copy fully closed sharding constraints to inputs that have no sharding."),
    "sdy-basic-propagate": PassInfo(
        _P + "basic_propagate:run", dict(_BASIC_OPTIONS),
        "Propagate shardings with the basic factor strategy (Datalog rules)."),
    "sdy-close-shardings": PassInfo(
        _P + "close_shardings:run", {},
        "Close every dimension sharding and drop replicated axes."),
    "sdy-constant-or-scalar-merger": PassInfo(
        _P + "constant_or_scalar_merger:run", {},
        "Merge identical constants and scalar broadcasts within a region."),
    "sdy-constant-or-scalar-splitter": PassInfo(
        _P + "constant_or_scalar_splitter:run", {},
        "Give each use of a constant sub-computation or scalar broadcast its own copy."),
    "sdy-convert-global-to-local": PassInfo(
        _P + "convert_global_to_local:run",
        {"per-dim-all-gather": False, "combine-multi-dimension-reduce-scatter": False,
         "enable-rgv3": False, "replica-count": 1, "partition-count": 1},
        "Turn a global program with explicit collectives into the per-device program."),
    "sdy-drop-sharding-and-mesh": PassInfo(
        _P + "drop_sharding_and_mesh:run", {},
        "Remove every sdy.sharding and sdy.mesh."),
    "sdy-drop-sharding-rules": PassInfo(
        _P + "drop_sharding_rules:run", {},
        "Remove non-custom sdy.sharding_rule attributes."),
    "sdy-explicit-gather-scatter-batching": PassInfo(
        _P + "explicit_gather_scatter_batching:run", {},
        "Make the implicit (iota-indexed) batch dimension of gathers/scatters explicit."),
    "sdy-export-named-computations": PassInfo(
        _P + "export_named_computations:run", {},
        "Outline every sdy.named_computation into a private func and a call."),
    "sdy-export-pipeline": PassInfo(
        _P + "export_pipeline:run",
        {"replica-count": 1, "partition-count": 1, "dump-directory": "", "avoid-export-for-partitioning": False,
         "enable-insert-explicit-collectives": False, "remove-all-gather-reduce-scatter-for-cmv1": False,
         "enable-per-instruction-partitioning": False, "per-instruction-partitioning-filter": "",
         "keep-sharding-rules": False, "dump-sharding-origins": False, "dump-propagation-edges": False,
         "avoid-reshards-on-calls": False, "update-non-divisible-input-output-shardings": True,
         "inline-meshes": True},
        "The export passes after propagation: reshards, optionally collectives (see passes/pipelines.py)."),
    "sdy-flatten-call-graph": PassInfo(
        _P + "flatten_call_graph:run", {},
        "Clone functions so that each has at most one call site."),
    "sdy-import-func-calls": PassInfo(
        _P + "import_func_calls:run", {"add-data-flow-edges-on-named-computations": True},
        "Inline calls as sdy.named_computation ops (cloning bodies of functions called twice)."),
    "sdy-import-pipeline": PassInfo(
        _P + "pipelines:run", {"dedup-functions-fully": False},
        "The import passes Shardy runs before propagation (see passes/pipelines.py)."),
    "sdy-import-mhlo-shardings": PassInfo(
        _P + "import_mhlo_shardings:run", {},
        "sdylog's own: read GSPMD mhlo.sharding attributes into sdy meshes and shardings."),
    "sdy-inline-meshes": PassInfo(
        _P + "inline_meshes:run", {},
        "Inline mesh symbols into shardings and erase the sdy.mesh ops."),
    "sdy-insert-explicit-reshards": PassInfo(
        _P + "insert_explicit_reshards:run", {"enable-full-version": False},
        "Insert reshards and all-reduces that make every op's shardings work (Datalog rules)."),
    "sdy-insert-func-call-reshards": PassInfo(
        _P + "insert_func_call_reshards:run", {},
        "Give calls their callee result shardings, resharding results where they differed."),
    "sdy-lift-inlined-meshes": PassInfo(
        _P + "lift_inlined_meshes:run", {},
        "Replace meshes inlined in shardings by (deduplicated) sdy.mesh symbols."),
    "sdy-manual-axes-cleanup": PassInfo(
        _P + "manual_axes_cleanup:run", {},
        "Sort manual axes and add unused ones to the replicated axes of in/out shardings."),
    "sdy-op-priority-propagate": PassInfo(
        _P + "op_priority_propagate:run", dict(_OP_PRIORITY_OPTIONS),
        "Aggressive propagation in op-priority steps (Datalog rules)."),
    "sdy-pad-for-divisibility": PassInfo(
        _P + "pad_for_divisibility:run", {},
        "Pad dimensions their shardings do not divide to the next multiple of their shard count."),
    "sdy-partitioner-pipeline": PassInfo(
        _P + "partitioner_pipeline:run",
        {"enable-halo-exchange": True, "replica-count": 1, "partition-count": 1},
        "sdylog's: a propagated global program to the per-device program (Shardy's executable tests' passes)."),
    "sdy-per-instruction-partitioning": PassInfo(
        _P + "per_instruction_partitioning:run",
        {"filter": "", "enable-halo-exchange": True, "replica-count": 1, "partition-count": 1},
        "Partition chosen ops alone, each into an sdy.manual_computation of per-device code."),
    "sdy-populate-op-sharding-rules": PassInfo(
        _P + "populate_op_sharding_rules:run", {"conservative-propagation": False},
        "Attach sdy.sharding_rule to every op that has a registered rule."),
    "sdy-pre-order-funcs": PassInfo(
        _P + "pre_order_funcs:run", {},
        "Reorder functions in pre order of the call graph (callers first)."),
    "sdy-propagate-sharding-from-func-to-call": PassInfo(
        _P + "propagate_sharding_from_func_to_call:run", {},
        "Give calls without result shardings their callee's result shardings."),
    "sdy-propagate-to-func-results": PassInfo(
        _P + "propagate_to_func_results:run", {},
        "Set non-main func result shardings from the returned values."),
    "sdy-propagation-pipeline": PassInfo(
        _P + "propagation_pipeline:run", {"dedup-functions-fully": False},
        "Import passes, user-priority propagation, export passes."),
    "sdy-remove-all-gather-reduce-scatter-for-cmv1": PassInfo(
        _P + "remove_all_gather_reduce_scatter_for_cmv1:run", {},
        "Drop all_gathers feeding dots and reduce_scatters of dots (collective matmul v1)."),
    "sdy-remove-propagation-debug-info": PassInfo(
        _P + "remove_propagation_debug_info:run", {},
        "Remove propagation debug attributes (origins, edges)."),
    "sdy-remove-sharding-groups": PassInfo(
        _P + "remove_sharding_groups:run", {},
        "Erase every sdy.sharding_group."),
    "sdy-remove-size-one-axes": PassInfo(
        _P + "remove_size_one_axes:run", {},
        "Drop axes of size 1 from every sharding."),
    "sdy-remove-sub-axes-in-input-output-shardings": PassInfo(
        _P + "remove_sub_axes_in_input_output_shardings:run", {},
        "Cut open main-func input/output dimension shardings at their first sub-axis."),
    "sdy-reshard-to-collectives": PassInfo(
        _P + "reshard_to_collectives:run", {"keep-redundant-reshards": False},
        "Turn every sdy.reshard into all_slice / collective_permute / all_to_all / all_gather."),
    "sdy-resolve-permutation-factors": PassInfo(
        _P + "resolve_permutation_factors:run",
        {"enable-halo-exchange": True, "replica-count": 1, "partition-count": 1},
        "Replicate (or halo-exchange) permutation factors that would need data exchange."),
    "sdy-resolve-single-device-sharding": PassInfo(
        _P + "resolve_single_device_sharding:run", {"replica-count": 1, "partition-count": 1},
        "Run ops placed on one device under stablehlo.if and broadcast their results."),
    "sdy-save-module": PassInfo(
        _P + "save_module:run", {"dump-directory": "", "file-name": "module", "dump-index": -1},
        "Write the module to dump-directory/NN.file-name.mlir (for debugging pipelines)."),
    "sdy-sharding-constraint-to-reshard": PassInfo(
        _P + "sharding_constraint_to_reshard:run", {},
        "Turn every sdy.sharding_constraint into a sdy.reshard."),
    "sdy-sharding-group-import": PassInfo(
        _P + "sharding_group_import:run", {},
        "Validate sharding groups, merge overlapping ones and renumber them."),
    "sdy-sink-data-flow-edges": PassInfo(
        _P + "sink_data_flow_edges:run",
        {"sink-debug-sharding-origins": False, "sink-debug-propagation-edge-sharding": False},
        "Move the shardings of sdy.data_flow_edge ops onto their data-flow ops; remove the edges."),
    "sdy-sink-func-data-flow-edges": PassInfo(
        _P + "sink_func_data_flow_edges:run", {},
        "Move sdy.func_data_flow_edge shardings onto their operands; remove the edges."),
    "sdy-unflatten-call-graph": PassInfo(
        _P + "unflatten_call_graph:run", {"dedup-functions-fully": False},
        "Point calls to copies of one function with equal shardings back at one copy."),
    "sdy-update-non-divisible-input-output-shardings": PassInfo(
        _P + "update_non_divisible_input_output_shardings:run", {},
        "Shrink func input/output shardings to evenly dividing prefixes."),
    "sdy-user-priority-propagate": PassInfo(
        _P + "user_priority_propagate:run", dict(_OP_PRIORITY_OPTIONS),
        "Op-priority propagation in rounds of user priorities (Datalog rules)."),
    "sdy-verify-unreduced-axes": PassInfo(
        _P + "verify_unreduced_axes:run", {},
        "Check that unreduced axes only change through blessed ops (diagnostics only; Datalog rules)."),
}


def parse_options(name: str, text: str | None) -> dict:
    """Options of one flag, `k=v` pairs separated by spaces or commas, typed
    after the defaults (bool, int, str; a tuple default takes a list,
    `k=a,b`). A value may be quoted ('...' or "..."); a string or list
    value goes on over commas and spaces up to the next `k=` of an option
    the pass has (`filter=dot,pad`, `filter='selectLow=0, selectHigh=3'`)."""
    info = lookup(name)
    opts = dict(info.options)
    if not text:
        return opts
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1]
    key = None                 # the option whose value is being read
    for sep, item in _option_items(text):
        k, eq, value = item.partition("=")
        if k in info.options and (eq or isinstance(info.options[k], bool)):
            key = k
            opts[key] = _typed_option(name, key, info.options[key], _unquoted(value))
        elif key is not None and isinstance(info.options[key], (str, tuple)):
            if isinstance(info.options[key], tuple):
                opts[key] += (_unquoted(item),)
            else:
                opts[key] += sep + _unquoted(item)
        else:
            raise UsageError(f"pass '{name}' has no option '{k}'{did_you_mean(k, info.options)}"
                             f" (known: {', '.join(sorted(info.options)) or 'none'})")
    return opts


def _option_items(text: str) -> list[tuple[str, str]]:
    """(separator before it, item) for the items of `text` split at spaces
    and commas outside quotes."""
    items, cur, sep, quote = [], "", "", None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
            cur += ch
        elif ch in "'\"":
            quote = ch
            cur += ch
        elif ch in " ,":
            if cur:
                items.append((sep, cur))
                cur, sep = "", ""
            sep = "," if ch == "," or sep == "," else " "
        else:
            cur += ch
    if cur:
        items.append((sep, cur))
    return items


def _unquoted(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _typed_option(name: str, key: str, default, value: str):
    if isinstance(default, tuple):
        return (value,) if value else ()
    if isinstance(default, bool):
        value = value or "true"
        if value not in ("true", "false", "1", "0"):
            raise UsageError(f"option '{key}' of '{name}' takes true or false, not '{value}'")
        return value in ("true", "1")
    if isinstance(default, int):
        try:
            return int(value)
        except ValueError:
            raise UsageError(f"option '{key}' of '{name}' takes an integer, not '{value}'") from None
    return value


def lookup(name: str) -> PassInfo:
    try:
        return PASSES[name]
    except KeyError:
        raise UsageError(f"unknown pass '-{name}'{did_you_mean('-' + name, ['-' + p for p in PASSES])}"
                         " (sdylog opt --help lists the passes)") from None


def options_text(info: PassInfo) -> str:
    """`k=default k2=default` of a pass's options, as a flag would give them."""
    def shown(v):
        if isinstance(v, bool):
            return str(v).lower()
        if isinstance(v, tuple):            # (a list option: `k=a,b`)
            v = ",".join(v)
        return f"'{v}'" if v == "" else str(v)
    return " ".join(f"{k}={shown(v)}" for k, v in info.options.items())
