"""What provenance numbers: the rules (a (program, clause index) pair gets a
rule id when it first derives something) and the evaluation steps (heights:
a tuple's premises were all derived at smaller heights). Shared by the
engines that record provenance."""
from __future__ import annotations


class DerivationSteps:
    def _init_derivation_steps(self) -> None:
        self._height = 0
        self.rule_ids: dict[tuple[int, int], int] = {}   # (id(program), clause index) -> rule id
        self.rules: list[tuple[object, int]] = []        # rule id -> (program, clause index)

    def _rule_id(self, program, ci: int) -> int:
        key = (id(program), ci)
        rid = self.rule_ids.get(key)
        if rid is None:
            rid = self.rule_ids[key] = len(self.rules)
            self.rules.append((program, ci))
        return rid

    def _next_height(self) -> int:
        self._height += 1
        return self._height


class RankedBackendSteps:
    """The rule ids and heights a rank-ordered stratum (sdylog/datalog/ranked.py)
    asks its engine for: the same for every engine holding DerivationSteps.
    An engine's backend adds how it reads, seeds and stores relations."""

    def __init__(self, engine: DerivationSteps, program):
        self.engine = engine
        self.program = program

    def rule_id(self, ci: int) -> int:
        return self.engine._rule_id(self.program, ci)

    def rule_of(self, rule: int):
        return self.engine.rules[rule]

    def next_height(self) -> int:
        return self.engine._next_height()

    def set_height(self, height: int) -> None:
        self.engine._height = max(self.engine._height, height)
