"""What a program saved on disk (cache.py) brings back to another process:
its strata and declarations as they were (unpickled by __init__), and the
frees of its runs asking for some relations (native_db.frees), which that
process's first run then does not make again."""
import pickle

import pytest

from sdylog.datalog import cache, load_program, make_engine, parse_program
from sdylog.datalog.native_plan import _native
from test_kept_relations import FACTS   # (pytest puts this directory on sys.path)
from test_native_db import PROGRAM
from test_stepped import GREEDY


@pytest.mark.parametrize("text", [PROGRAM, GREEDY])
def test_strata_and_declarations_come_back_equal(text):
    program = parse_program(text, "p.dl")
    assert any(s.stepped for s in program.strata) == (text is GREEDY)
    back = pickle.loads(pickle.dumps(program))
    assert back.relations == program.relations and len(back.strata) == len(program.strata)
    for s, t in zip(program.strata, back.strata):
        assert {**vars(s), "step_plan": None} == {**vars(t), "step_plan": None}
        if s.stepped:   # (its step plan's programs, equal to themselves only, by their strata)
            for part in ("seeds", "step"):
                assert getattr(t.step_plan, part).strata == getattr(s.step_plan, part).strata
        else:
            assert t.step_plan is None
    for name, decl in program.relations.items():
        assert vars(back.relations[name]) == vars(decl) and back.relations[name].loc == decl.loc


def _run(program):
    engine = make_engine(program, "memory")
    for name, rows in FACTS.items():
        engine.load(name, rows)
    engine.run(relations=["tagged"])
    return engine, engine.read("tagged")


@pytest.mark.skipif(_native is None, reason="the C extension sdylog.datalog._native is not built")
def test_a_saved_program_brings_back_the_frees_of_its_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SDYLOG_NATIVE", "1")
    rules = tmp_path / "kept.dl"
    rules.write_text(PROGRAM)
    runs = []
    for process in range(3):   # (the second makes the batches the first could not save: plans were made)
        monkeypatch.setattr(cache, "_SAVED_WITH_PLANS", [])
        program = cache.load_program_cached(str(rules), load_program)
        schema = program.run_cache.get("schema")   # (none before a first run)
        saved = list(schema.tables.frees.values()) if schema is not None else []
        engine, got = _run(program)
        layout = program.run_cache["schema"].tables
        runs.append(got)
        ((plan, made),) = layout.frees.values()
        assert any(plan is v for v in program.run_cache.values())   # (the run's own DropPlan)
        if process == 0:
            assert saved == [] and layout.added
        else:   # (read from disk, not made again)
            assert saved == [(plan, made)] and saved[0][1] is made
        cache._save_plans()
    assert layout.added == 0   # (the third: nothing new, not saved again)
    assert runs[0] == runs[1] == runs[2] != []
