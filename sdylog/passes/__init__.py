"""The passes `sdylog opt` runs, by their `sdy_opt` flag names.

One table: flag name -> where the pass lives and which options it takes (with
defaults). A pass is a function `run(module, options, ctx) -> None` that
rewrites the module in place; it raises SdylogError on bad input.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from sdylog.ir.diagnostics import SdylogError


@dataclass(frozen=True)
class PassInfo:
    target: str                      # "module.path:function"
    options: dict = field(default_factory=dict)  # option name -> default value
    summary: str = ""

    def load(self):
        module, fn = self.target.split(":")
        return getattr(importlib.import_module(module), fn)


@dataclass
class PassContext:
    """What a pass may need beyond the module: names for diagnostics, settings."""
    filename: str = "-"
    engine: str | None = None        # Datalog engine for rule-driven passes
    report: dict = field(default_factory=dict)  # passes add numbers for the run report


_P = "sdylog.passes."

# flag name -> PassInfo. Keep alphabetical.
PASSES: dict[str, PassInfo] = {
    "sdy-add-data-flow-edges": PassInfo(
        _P + "add_data_flow_edges:run", {},
        "Insert sdy.data_flow_edge on every data-flow edge owner."),
    "sdy-add-func-data-flow-edges": PassInfo(
        _P + "add_func_data_flow_edges:run", {},
        "Insert sdy.func_data_flow_edge on non-main func arguments and call results."),
    "sdy-apply-sharding-constraints": PassInfo(
        _P + "apply_sharding_constraints:run",
        {"debug-sharding-origins": False, "debug-propagation-edge-sharding": False},
        "Copy fully closed sharding constraints to inputs that have no sharding."),
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
    "sdy-flatten-call-graph": PassInfo(
        _P + "flatten_call_graph:run", {},
        "Clone functions so that each has at most one call site."),
    "sdy-import-func-calls": PassInfo(
        _P + "import_func_calls:run", {"add-data-flow-edges-on-named-computations": True},
        "Inline calls as sdy.named_computation ops (cloning bodies of functions called twice)."),
    "sdy-lift-inlined-meshes": PassInfo(
        _P + "lift_inlined_meshes:run", {},
        "Replace meshes inlined in shardings by (deduplicated) sdy.mesh symbols."),
    "sdy-manual-axes-cleanup": PassInfo(
        _P + "manual_axes_cleanup:run", {},
        "Sort manual axes and add unused ones to the replicated axes of in/out shardings."),
    "sdy-populate-op-sharding-rules": PassInfo(
        _P + "populate_op_sharding_rules:run", {"conservative-propagation": False},
        "Attach sdy.sharding_rule to every op that has a registered rule."),
    "sdy-pre-order-funcs": PassInfo(
        _P + "pre_order_funcs:run", {},
        "Reorder functions in pre order of the call graph (callers first)."),
    "sdy-propagate-sharding-from-func-to-call": PassInfo(
        _P + "propagate_sharding_from_func_to_call:run", {},
        "Give calls without result shardings their callee's result shardings."),
    "sdy-remove-size-one-axes": PassInfo(
        _P + "remove_size_one_axes:run", {},
        "Drop axes of size 1 from every sharding."),
    "sdy-sharding-group-import": PassInfo(
        _P + "sharding_group_import:run", {},
        "Validate sharding groups, merge overlapping ones and renumber them."),
}


def parse_options(name: str, text: str | None) -> dict:
    """Options of one flag, `k=v` pairs separated by spaces or commas, typed
    after the defaults (bool, int, str)."""
    info = lookup(name)
    opts = dict(info.options)
    if not text:
        return opts
    text = text.strip().strip("'\"")
    for item in text.replace(",", " ").split():
        key, sep, value = item.partition("=")
        if key not in info.options:
            raise SdylogError(f"pass '{name}' has no option '{key}' (known: {', '.join(sorted(info.options)) or 'none'})")
        default = info.options[key]
        if isinstance(default, bool):
            if not sep:
                value = "true"
            if value not in ("true", "false", "1", "0"):
                raise SdylogError(f"option '{key}' of '{name}' takes true or false, not '{value}'")
            opts[key] = value in ("true", "1")
        elif isinstance(default, int):
            try:
                opts[key] = int(value)
            except ValueError:
                raise SdylogError(f"option '{key}' of '{name}' takes an integer, not '{value}'") from None
        else:
            opts[key] = value
    return opts


def lookup(name: str) -> PassInfo:
    try:
        return PASSES[name]
    except KeyError:
        raise SdylogError(f"unknown pass '-{name}'") from None
