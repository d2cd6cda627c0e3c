"""Our own small programs, each with its expected output relations, on every
available engine: in memory with relations in C, in Python, with provenance
recording (Soufflé where installed: test_souffle.py)."""
import pytest

from sdylog.datalog import load_program, make_engine

from conftest import PROGRAMS, as_text, program_cases, read_expected

ENGINE_MODES = ["c", "python", "provenance"]


@pytest.mark.parametrize("mode", ENGINE_MODES)
@pytest.mark.parametrize("name", program_cases())
def test_program_gives_expected_relations(name, mode, monkeypatch):
    monkeypatch.setenv("SDYLOG_NATIVE", "0" if mode == "python" else "1")
    program = load_program(str(PROGRAMS / f"{name}.dl"))
    expected = read_expected(name)
    assert set(expected) == set(program.outputs)
    with make_engine(program, provenance=mode == "provenance") as engine:
        engine.run()
        for rel, rows in expected.items():
            got = as_text(engine.read(rel), program.relations[rel].kinds)
            assert got == rows, rel
