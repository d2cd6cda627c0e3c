"""Our own small programs, each with its expected output relations, on every
available engine (and on the embedded engine with provenance recording)."""
import pytest

from sdylog.datalog import load_program, make_engine

from conftest import PROGRAMS, HAVE_SOUFFLE, as_text, program_cases, read_expected

ENGINE_MODES = [("duckdb", False), ("duckdb", True), ("memory", False), ("memory", True)] + [pytest.param(
    ("souffle", False), marks=pytest.mark.skipif(not HAVE_SOUFFLE, reason="souffle is not on PATH"))]


@pytest.mark.parametrize("mode", ENGINE_MODES, ids=lambda m: f"{m[0]}{'-provenance' if m[1] else ''}")
@pytest.mark.parametrize("name", program_cases())
def test_program_gives_expected_relations(name, mode):
    engine_name, provenance = mode
    program = load_program(str(PROGRAMS / f"{name}.dl"))
    expected = read_expected(name)
    assert set(expected) == set(program.outputs)
    with make_engine(program, engine_name, provenance=provenance) as engine:
        engine.run()
        for rel, rows in expected.items():
            got = as_text(engine.read(rel), program.relations[rel].kinds)
            assert got == rows, rel
