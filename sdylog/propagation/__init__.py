"""Sharding propagation decided by the Datalog rules of rules/propagation.dl.

    from sdylog.propagation import propagate, PropagationOptions
    result = propagate(module, PropagationOptions(strategies=("aggressive",)), ctx)
    result.engine.named("final_dim_axis")     # every relation stays readable, by column name

Python extracts facts, runs the rules once (every phase in one rank-ordered
evaluation) and writes the derived shardings back into the IR.
"""
from sdylog.propagation.driver import PropagationOptions, PropagationResult, propagate

__all__ = ["PropagationOptions", "PropagationResult", "propagate"]
