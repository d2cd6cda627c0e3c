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
