"""Explicit reshards: the facts of a propagated module, the reshard rules
(rules/reshard.dl) run once, their decisions written into the module
(Shardy's -sdy-insert-explicit-reshards)."""
