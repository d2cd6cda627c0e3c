"""The benchmarks' fact capture (benchmarks/propagation_rules_bench.py)
records each load once: load goes through load_all, so a load() must not be
counted by both."""
import os
import sys

from sdylog.datalog import parse_program
from sdylog.datalog.memory_engine import MemoryEngine

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import propagation_rules_bench  # noqa: E402

PROGRAM = parse_program("""
.decl edge(a: number, b: number)
.decl node(a: number)
.decl path(a: number, b: number)
path(a, b) :- edge(a, b).
""")


def test_each_load_is_recorded_once(monkeypatch):
    from sdylog.passes import driver

    def pipeline(text, path, options):
        # (as reshard/costs.py and partition/facts.py load: one relation, then several)
        engine = MemoryEngine(PROGRAM)
        engine.load("edge", [(1, 2), (2, 3)])
        engine.load_all({"node": [(1,)], "edge": [(3, 4)]})
        engine.run()

    monkeypatch.setattr(driver, "optimize_text", pipeline)
    monkeypatch.setattr(driver, "parse_flags", lambda flags: None)
    [(program, facts)] = propagation_rules_bench.captured_engines(os.devnull, [])
    assert program is PROGRAM
    assert facts == {"edge": [(1, 2), (2, 3), (3, 4)], "node": [(1,)]}
