"""The on-disk caches (sdylog/datalog/cache.py) stay bounded, keep what was
used last, and never fail a run: corrupt, missing or unwritable, a cache is
worked without."""
import marshal
import os
import time

import pytest

from as_user import as_user
from sdylog.datalog import cache


def _fresh(tmp_path, monkeypatch, limit):
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_MAX_CODES", limit)
    return cache.CodeCache()


def test_saved_codes_are_bounded_most_recent_first(tmp_path, monkeypatch):
    first = _fresh(tmp_path, monkeypatch, 3)
    for i in range(5):
        first.compile(f"x = {i}", "gen")
    first.save()
    second = _fresh(tmp_path, monkeypatch, 3)
    second.compile("x = 0", "gen")        # in the file: used again, kept first
    second.compile("x = 9", "gen")        # new
    second.save()
    third = _fresh(tmp_path, monkeypatch, 3)
    third._load()
    sources = []
    for saved in third.saved.values():
        ns = {}
        exec(marshal.loads(saved), ns)
        sources.append(ns["x"])
    assert sources == [0, 9, 1]


def test_cached_code_runs_like_compiled(tmp_path, monkeypatch):
    c = _fresh(tmp_path, monkeypatch, 10)
    c.compile("y = 2 * 21", "gen")
    c.save()
    again = _fresh(tmp_path, monkeypatch, 10)
    ns = {}
    exec(again.compile("y = 2 * 21", "gen"), ns)
    assert ns["y"] == 42 and again.added == 0


def test_souffle_binaries_live_in_the_sdylog_cache_dir(tmp_path, monkeypatch):
    from sdylog.datalog import souffle_engine
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "sdylog"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert souffle_engine.cache_dir() == str(tmp_path / "sdylog" / "souffle")


def test_parsed_programs_are_bounded_least_recently_used_go(tmp_path, monkeypatch):
    from types import SimpleNamespace
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(cache_dir))
    monkeypatch.setattr(cache, "_MAX_PROGRAMS", 2)
    rules = tmp_path / "rules.dl"

    def load(path):
        return SimpleNamespace(text=rules.read_text(), files=[str(rules)])

    def programs():
        return sorted(p.name for p in cache_dir.glob("program-*.pickle"))

    for version in range(4):   # each edit of the rules: one more parsed program
        rules.write_text(f"// version {version}\n")
        assert cache.load_program_cached(str(rules), load).text == f"// version {version}\n"
        os.utime(rules)
    assert len(programs()) == 2
    kept = programs()
    rules.write_text("// version 3\n")   # the latest, read from the cache
    assert cache.load_program_cached(str(rules), lambda p: None).text == "// version 3\n"
    assert programs() == kept


def test_files_removed_by_another_process_meanwhile_are_passed_over(tmp_path, monkeypatch):
    # another process cleaning the same folder removes a file between listdir and the age read
    for age, name in enumerate(["x-old.pickle", "x-mid.pickle", "x-new.pickle"]):
        (tmp_path / name).write_text(name)
        os.utime(tmp_path / name, (1000 + age, 1000 + age))
    listed = os.listdir
    monkeypatch.setattr(os, "listdir", lambda d: listed(d) + ["x-gone.pickle"])
    cache.drop_least_recent(str(tmp_path), "x-", ".pickle", 2)
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["x-mid.pickle", "x-new.pickle"]


def test_each_program_has_its_own_index(tmp_path, monkeypatch):
    # processes loading other programs into the same folder (other passes,
    # other checkouts) never rewrite this program's index: losing it would
    # mean parsing again
    from types import SimpleNamespace
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    paths = []
    for name in ("a.dl", "b.dl"):
        (tmp_path / name).write_text(f"// {name}\n")
        paths.append(str(tmp_path / name))

    def load(path):
        return SimpleNamespace(text=open(path).read(), files=[path])

    for path in paths:
        cache.load_program_cached(path, load)
    indexes = sorted((tmp_path / "cache").glob("programs-*.idx"))
    assert len(indexes) == 2
    for index in indexes:
        index.unlink()
        break
    unparsed = [path for path in paths if cache.load_program_cached(path, lambda p: None) is not None]
    assert len(unparsed) == 1


def _flip_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) * 2 // 3] ^= 0x55
    path.write_bytes(bytes(data))


def test_a_corrupt_code_cache_is_ignored_and_written_again(tmp_path, monkeypatch):
    first = _fresh(tmp_path, monkeypatch, 10)
    first.compile("z = 6 * 7", "gen")
    first.save()
    (saved,) = tmp_path.glob("codes-*.pickle")
    for corrupt in (_flip_a_byte, lambda p: p.write_bytes(p.read_bytes()[:20]), lambda p: p.write_bytes(b"")):
        corrupt(saved)
        again = _fresh(tmp_path, monkeypatch, 10)
        ns = {}
        exec(again.compile("z = 6 * 7", "gen"), ns)
        assert ns["z"] == 42 and again.added == 1      # (compiled again: nothing read from the broken file)
        again.save()
        intact = _fresh(tmp_path, monkeypatch, 10)
        intact.compile("z = 6 * 7", "gen")
        assert intact.added == 0                       # (written again, whole)


def _counted_loads(tmp_path, monkeypatch):
    """A rules file, a cache folder for it, and load_program counting its calls."""
    from sdylog.datalog import load_program
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "p.dl"
    rules.write_text(".decl e(x: number)\n.decl r(x: number)\nr(x) :- e(x).\n")
    loads = []

    def load(path):
        loads.append(path)
        return load_program(path)
    return rules, load, loads


def test_a_corrupt_program_cache_is_ignored_and_written_again(tmp_path, monkeypatch):
    rules, load, loads = _counted_loads(tmp_path, monkeypatch)
    assert cache.load_program_cached(str(rules), load).relations.keys() == {"e", "r"}
    (pickled,) = (tmp_path / "cache").glob("program-*.pickle")
    (index,) = (tmp_path / "cache").glob("programs-*.idx")
    for broken in (pickled, index):
        _flip_a_byte(broken)
        assert cache.load_program_cached(str(rules), load).relations.keys() == {"e", "r"}
    assert len(loads) == 3                              # parsed again after each corruption
    assert cache.load_program_cached(str(rules), load).relations.keys() == {"e", "r"} and len(loads) == 3


def test_runs_with_a_corrupt_or_unwritable_cache(tmp_path):
    """A whole run, as a user starts it: the cache where SDYLOG_CACHE_DIR says
    (nothing under HOME), and a run still gives the same output with every
    cache file corrupt, with the folder a file, and with a folder it may not
    write (checked as a user: root's override of modes dropped)."""
    import subprocess
    import sys
    from pathlib import Path

    mlp = Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir"
    (tmp_path / "home").mkdir()

    def run(cache_dir, **kwargs):
        env = {**os.environ, "SDYLOG_CACHE_DIR": str(cache_dir), "HOME": str(tmp_path / "home")}
        p = subprocess.run([sys.executable, "-m", "sdylog.cli", "run", str(mlp), "-q"], capture_output=True,
                           text=True, env=env, **kwargs)
        assert p.returncode == 0 and p.stderr == "", p.stderr
        return p.stdout

    cache_dir = tmp_path / "cache"
    expected = run(cache_dir)
    # (a program file per rules program the run loads: propagation's, the reshards')
    names = sorted({p.name.split("-")[0] for p in cache_dir.iterdir()})
    assert names == ["codes", "program", "programs"] and not list((tmp_path / "home").iterdir())
    for f in cache_dir.iterdir():
        _flip_a_byte(f)
    assert run(cache_dir) == expected
    (tmp_path / "a-file").write_text("")
    assert run(tmp_path / "a-file") == expected
    read_only = tmp_path / "read-only"
    read_only.mkdir()
    read_only.chmod(0o555)
    assert run(read_only, **as_user()) == expected
    assert list(read_only.iterdir()) == []



def test_codes_are_saved_where_they_were_read(tmp_path, monkeypatch):
    """(A process whose cache folder changed, as in a test that points
    SDYLOG_CACHE_DIR elsewhere, does not replace the other folder's codes
    with its own few.)"""
    first = _fresh(tmp_path / "a", monkeypatch, 10)
    first.compile("x = 1", "gen")
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "b"))
    first.save()
    assert [p.parent.name for p in tmp_path.glob("*/codes-*.pickle")] == ["a"]


def test_the_same_source_under_another_name_is_its_own_code(tmp_path, monkeypatch):
    """(A runtime error is located at the rules named in its code's name.)"""
    c = _fresh(tmp_path, monkeypatch, 10)
    assert c.compile("x = 1", "<rule 0>").co_filename == "<rule 0>"
    assert c.compile("x = 1", "<rule 2>").co_filename == "<rule 2>"


_RANKED_RULES = (".decl e(x: number, y: number)\n.decl r(x: number, y: number)\n.decl big(x: number)\n"
                 "r(x, y) :- e(x, y).\nr(x, z) :- r(x, y), e(y, z).\nbig(x) :- r(x, y), y > 2.\n.output big\n")


def test_a_saved_program_reads_its_clauses_only_when_asked():
    """(Program.__getstate__: what a run with kept plans reads loads at once, each
    clause when first read; saved again unread, the clauses stay as they were.)"""
    import pickle

    from sdylog.datalog import parse_program
    from sdylog.datalog.printer import print_program
    from sdylog.datalog.pickled import PickledItems
    program = parse_program(_RANKED_RULES)
    again = pickle.loads(pickle.dumps(program))
    assert isinstance(again.clauses, PickledItems) and again.relations == program.relations
    assert [s.relations for s in again.strata] == [s.relations for s in program.strata]
    assert pickle.loads(pickle.dumps(again)).clauses.data == again.clauses.data
    assert again.clauses.read == [False] * len(program.clauses) == [False] * 3
    assert again.clauses[1] == program.clauses[1] and again.clauses.read == [False, True, False]
    assert print_program(again) == print_program(program)
    assert again.clauses[-2:] == program.clauses[-2:] and len(again.subsumptions) == 0


def test_a_saved_program_runs_without_reading_its_clauses(tmp_path, monkeypatch):
    """A program loaded from the cache with the plans of an earlier run reads
    no clause when it runs on data of the same sizes, and its run_cache keys
    stay those of the earlier process (no key made of ids: each process would
    add its own)."""
    from sdylog.datalog import load_program, make_engine
    from sdylog.datalog.pickled import PickledItems
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "p.dl"
    rules.write_text(_RANKED_RULES)

    def run(program):
        engine = make_engine(program)
        engine.load("e", [(i, i + 1) for i in range(5)])
        engine.run(relations=["big"])
        return engine.read("big")

    first = cache.load_program_cached(str(rules), load_program)
    expected = run(first)
    cache._save_plans()
    loaded = cache.load_program_cached(str(rules), lambda p: None)
    keys = set(loaded.run_cache)
    assert run(loaded) == expected and set(loaded.run_cache) == keys
    assert isinstance(loaded.clauses, PickledItems)
    assert not any(loaded.clauses.read)


def test_saved_run_cache_keys_are_the_same_in_every_process(tmp_path, monkeypatch):
    """What runs keep in a program's run_cache is keyed by values (the
    relations asked for, ...), never by an object's id, which would mean
    nothing to another process: a cache file does not grow by an entry per
    process that saves it."""
    from sdylog.datalog import load_program, make_engine
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "_SAVED_WITH_PLANS", [])
    rules = tmp_path / "p.dl"
    rules.write_text(_RANKED_RULES)

    def run(program, n):
        engine = make_engine(program)
        engine.load("e", [(i, i + 1) for i in range(n)])
        engine.run()
        return engine.read("big")

    first = cache.load_program_cached(str(rules), load_program)
    expected = run(first, 5)
    kept = {k for k in first.run_cache if isinstance(k, tuple)}   # (before saving drops any)
    cache._save_plans()
    saved = []
    for n in (5, 5000):   # (the second: other sizes, plans made, the program saved again)
        monkeypatch.setattr(cache, "_SAVED_WITH_PLANS", [])
        loaded = cache.load_program_cached(str(rules), lambda p: None)
        saved.append({k for k in loaded.run_cache if isinstance(k, tuple)})
        got = run(loaded, n)
        assert n != 5 or got == expected
        cache._save_plans()
    loaded = cache.load_program_cached(str(rules), lambda p: None)
    assert {k for k in loaded.run_cache if isinstance(k, tuple)} == saved[0] == saved[1] == kept


_SUBSUMPTIVE_RULES = (".type Rank <: number\n.decl e(x: number, y: number, w: number)\n"
                      ".decl d(x: number, r: Rank)\nd(0, 0).\nd(y, r + w) :- d(x, r), e(x, y, w).\n"
                      "d(x, r1) <= d(x, r2) :- r2 <= r1.\n.output d\n")


def test_a_saved_rank_ordered_stratum_runs_in_c_without_its_python_plans(tmp_path, monkeypatch):
    """(ranked.RankedPlans: a run in C reads only the stratum's lowered
    programs, the Python plans staying pickled; the Python path (explain's
    provenance, SDYLOG_NATIVE=0) runs the Python plans saved with them,
    planning nothing, and gives the same rows.)"""
    import pytest

    from sdylog.datalog import load_program, make_engine
    from sdylog.datalog.native_plan import native_module
    from sdylog.datalog.pickled import Pickled
    from sdylog.datalog.plan import plans_of
    from sdylog.datalog.ranked import PythonPlans
    if native_module() is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "p.dl"
    rules.write_text(_SUBSUMPTIVE_RULES)

    def run(program):
        engine = make_engine(program)
        engine.load("e", [(i, i + 1, 1) for i in range(6)] + [(0, 5, 2)])
        engine.run()
        [(_, plans)] = plans_of(program)._kept[("ranked", ("d",))]
        return sorted(engine.read("d")), plans

    rows, _ = run(cache.load_program_cached(str(rules), load_program))
    assert rows == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 2), (6, 3)]   # (d(5, 5) subsumed)
    cache._save_plans()
    in_c = cache.load_program_cached(str(rules), lambda p: None)
    rows_c, plans = run(in_c)
    assert rows_c == rows and plans_of(in_c).added == 0
    assert plans.lowered is not None and isinstance(plans.python, Pickled) and not plans.python.read
    monkeypatch.setenv("SDYLOG_NATIVE", "0")
    in_python = cache.load_program_cached(str(rules), lambda p: None)
    rows_python, plans = run(in_python)
    assert rows_python == rows and plans_of(in_python).added == 0
    assert plans.python.read and isinstance(plans.python.value, PythonPlans)


def test_a_program_saved_by_other_engine_code_is_parsed_again(tmp_path, monkeypatch):
    rules, load, loads = _counted_loads(tmp_path, monkeypatch)
    cache.load_program_cached(str(rules), load)
    cache.load_program_cached(str(rules), load)
    assert len(loads) == 1
    monkeypatch.setattr(cache, "engine_stamp", lambda: "plan.py 1234 5678")   # (an edit of the planner)
    cache.load_program_cached(str(rules), load)
    assert len(loads) == 2


def test_a_pickled_value_is_saved_compressed_and_read_once():
    """(pickled.Pickled: what a start seldom reads, a rank-ordered stratum's
    Python plans, costs a start its compressed size only.)"""
    import pickle

    from sdylog.datalog.pickled import Pickled
    value = [("plan", i % 7) for i in range(2000)]
    saved = pickle.dumps(Pickled.of(value))
    assert len(saved) < len(pickle.dumps(value)) / 4
    again = pickle.loads(saved)
    assert not again.read and again.value == value and again.read
    assert pickle.loads(pickle.dumps(again)).value == value   # (saved again: the same data)


def test_saved_plans_are_offered_unread():
    """(plan.PlanCache.__getstate__: every plan kept is saved as it is, its
    parts a run seldom reads Pickled: a cold start offers C all of them,
    reading none, and C runs the one whose sizes fit.)"""
    import pickle

    from sdylog.datalog.pickled import Pickled
    from sdylog.datalog.plan import PlanCache
    plans = PlanCache()
    assert plans.get("p", lambda rel: 10_000, lambda size: size("r") and Pickled.of("big")).value == "big"
    assert plans.get("p", lambda rel: 1, lambda size: size("r") and Pickled.of("small")).value == "small"
    again = pickle.loads(pickle.dumps(plans))
    offered = again.kept("p")
    assert [seen for seen, _ in offered] == [{"r": (1, 512)}, {"r": (1250, 80_000)}] and not any(m.read for _, m in offered)
    assert again.get("p", lambda rel: 10_000, lambda size: None).value == "big" and again.added == 0
    assert [made.value for _, made in again.kept("p")] == ["big", "small"]
    # (saved again before it is read, an unread plan stays one)
    twice = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(plans))))
    assert not any(m.read for _, m in twice.kept("p"))
    assert twice.get("p", lambda rel: 10_000, lambda size: None).value == "big"


def _counted_hashes(monkeypatch) -> list:
    """cache._files_key counting its calls (a rule file's contents hashed)."""
    hashed = []
    real_key = cache._files_key
    monkeypatch.setattr(cache, "_files_key", lambda files: hashed.append(1) or real_key(files))
    return hashed


def test_rule_files_are_read_again_only_when_their_stats_change(tmp_path, monkeypatch):
    """(cache._stats: while the stats of the rule files are those the index
    holds, a load reads none of them; an edit that keeps the size and puts
    the modification time back still gives other stats, its change time,
    and the program parsed again.)"""
    rules, load, loads = _counted_loads(tmp_path, monkeypatch)
    monkeypatch.setattr(cache, "_SETTLED_NS", 0)   # (the files written just now: their stats told)
    hashed = _counted_hashes(monkeypatch)
    first = cache.load_program_cached(str(rules), load)
    assert len(loads) == len(hashed) == 1
    assert cache.load_program_cached(str(rules), load).relations == first.relations
    assert len(loads) == len(hashed) == 1             # (found by the stats alone)
    st = rules.stat()
    time.sleep(0.01)
    rules.write_text(rules.read_text().replace("r(x) :- e(x).", "e(x) :- r(x)."))
    os.utime(rules, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert rules.stat().st_size == st.st_size and rules.stat().st_mtime_ns == st.st_mtime_ns
    again = cache.load_program_cached(str(rules), load)
    assert len(loads) == len(hashed) - 1 == 2 and again.clauses[0].head.relation == "e"


def test_rule_files_changed_lately_are_read_whatever_their_stats(tmp_path, monkeypatch):
    """(A file changed within _SETTLED_NS may change again with the same
    stats, on a file system of coarse times: its contents make the key.)"""
    rules, load, loads = _counted_loads(tmp_path, monkeypatch)
    monkeypatch.setattr(cache, "_SETTLED_NS", 3600 * 10**9)
    hashed = _counted_hashes(monkeypatch)
    for _ in range(3):
        cache.load_program_cached(str(rules), load)
    assert len(loads) == 1 and len(hashed) == 3


def _cut_short(plan):
    """A _native.Plan of the words of `plan` (as it is saved) but the last."""
    from sdylog.datalog.native_plan import _native
    words, width = plan.__reduce__()[1]
    return _native.Plan(words[:-width], width)


def _hub_rules(tmp_path, monkeypatch):
    """A rule file of symbols (a recursive stratum, a constant), with the
    cache in tmp_path; skips without the C extension."""
    import pytest

    from sdylog.datalog.native_plan import native_module
    if native_module() is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "p.dl"
    rules.write_text('.decl e(x: symbol, y: symbol)\n.decl r(x: symbol, y: symbol)\n.decl hub(x: symbol)\n'
                     'r(x, y) :- e(x, y).\nr(x, z) :- r(x, y), e(y, z).\nhub(x) :- r(x, "c").\n.output hub\n')
    return rules


def test_a_saved_program_loads_its_bound_plans_without_binding_them(tmp_path, monkeypatch):
    """(native_db.TableLayout, saved with the program: a later process loads
    the plans an earlier one bound (_native.Plan, pickled as its words) with the table
    numbers and symbol ids of the layout's saved symbols, binding none;
    facts naming other symbols first give the same rows.)"""
    from sdylog.datalog import load_program, make_engine, native_db
    rules = _hub_rules(tmp_path, monkeypatch)
    bound = []
    real = native_db._plan_words
    monkeypatch.setattr(native_db, "_plan_words", lambda ndb, s, *rest: bound.append(s.relations) or real(ndb, s, *rest))

    def run(program, names):
        engine = make_engine(program)
        engine.load("e", list(zip(names, names[1:])))
        engine.run(relations=["hub"])
        return sorted(engine.read("hub"))

    first = cache.load_program_cached(str(rules), load_program)
    assert run(first, "abcd") == [("a",), ("b",)] and bound
    cache._save_plans()
    bound.clear()
    loaded = cache.load_program_cached(str(rules), lambda p: None)
    assert run(loaded, "zyxabcd") == [(n,) for n in "abxyz"] and bound == []


def test_a_saved_plan_refused_by_c_is_bound_again_and_saved_again(tmp_path, monkeypatch):
    """(a bound plan whose words C refuses, in a file whose checksum holds:
    as a corrupt file, the run gives the right rows, binding the layout's
    plans again, and the program is saved again: the next run refuses none)"""
    import glob

    from sdylog.datalog import load_program, make_engine, native_db
    rules = _hub_rules(tmp_path, monkeypatch)
    forgotten = []
    real = native_db._forget_saved_plans
    monkeypatch.setattr(native_db, "_forget_saved_plans", lambda ndb: forgotten.append(1) or real(ndb))

    def run(program):
        with make_engine(program) as engine:
            engine.load("e", list(zip("abcd", "bcd")))
            engine.run(relations=["hub"])
            return sorted(engine.read("hub"))

    assert run(cache.load_program_cached(str(rules), load_program)) == [("a",), ("b",)]
    cache._save_plans()
    damaged = cache.load_program_cached(str(rules), lambda p: None)
    (path,) = glob.glob(str(tmp_path / "cache" / "program-*.pickle"))
    cut = 0
    for known in damaged.run_cache["schema"].tables.bound.values():
        for b in known.values():
            b.plan = _cut_short(b.plan)
            cut += 1
    assert cut
    cache._write(path, damaged)
    monkeypatch.setattr(cache, "_SAVED_WITH_PLANS", [])   # (saved again below: by this run only)
    assert run(cache.load_program_cached(str(rules), lambda p: None)) == [("a",), ("b",)] and forgotten == [1]
    cache._save_plans()
    forgotten.clear()
    assert run(cache.load_program_cached(str(rules), lambda p: None)) == [("a",), ("b",)] and forgotten == []


STEPPED_AFTER_A_NEGATION = """
.type Step <: number
.decl i(x: number)
.decl c(k: number, n: number)
.decl a(x: number)
.decl start(k: number, n: number)
.decl alive(k: Step, n: number)
.decl dead(k: Step, n: number)
a(x) :- i(x).
start(k, n) :- c(k, n), !a(n).
alive(k, n) :- start(k, n), c(k, n).
dead(k, n) :- alive(k, n), n > 2.
alive(k + 1, n + 1) :- alive(k, n), !dead(k, n).
.output alive
"""


@pytest.mark.parametrize("refused", ["plain", "stepped"])
def test_a_run_goes_on_from_a_refused_saved_plan_not_from_the_start(tmp_path, monkeypatch, refused):
    """(native_db.run_strata: when C refuses the saved plan of a later
    stratum of a call, the strata before it ran already and freed what no
    later one reads: run again, the negation of the freed `a` would hold
    for every row of `c`. The run goes on from the refused stratum: a plain
    one, or a stepped one whose step program's plans are refused.)"""
    import glob

    from sdylog.datalog import load_program, make_engine
    from sdylog.datalog.native_plan import native_module
    if native_module() is None:
        pytest.skip("the C extension sdylog.datalog._native is not built")
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "p.dl"
    if refused == "stepped":
        rules.write_text(STEPPED_AFTER_A_NEGATION)
        facts, wanted, rows = {"i": [(1,)], "c": [(0, 1), (0, 5)]}, "alive", [(0, 5)]
        kept = {("a",), ("start",)}
    else:
        rules.write_text(".decl i(x: number)\n.decl c(x: number)\n.decl a(x: number)\n.decl b(x: number)\n"
                         ".decl d(x: number)\na(x) :- i(x).\nb(x) :- c(x), !a(x).\nd(x) :- b(x), c(x).\n")
        facts, wanted, rows = {"i": [(1,)], "c": [(1,), (2,)]}, "d", [(2,)]
        kept = {("a",), ("b",)}

    def run(program):
        with make_engine(program) as engine:
            for relation, facts_of in facts.items():
                engine.load(relation, facts_of)
            engine.run(relations=[wanted])
            return sorted(engine.read(wanted))

    assert run(cache.load_program_cached(str(rules), load_program)) == rows
    cache._save_plans()
    damaged = cache.load_program_cached(str(rules), lambda p: None)
    (path,) = glob.glob(str(tmp_path / "cache" / "program-*.pickle"))
    cut = 0
    for relations, known in damaged.run_cache["schema"].tables.bound.items():
        for b in known.values() if relations not in kept else ():
            b.plan = _cut_short(b.plan)
            cut += 1
    assert cut
    cache._write(path, damaged)
    monkeypatch.setattr(cache, "_SAVED_WITH_PLANS", [])
    assert run(cache.load_program_cached(str(rules), lambda p: None)) == rows


def test_a_plan_made_again_the_same_widens_the_one_kept():
    """(plan.PlanCache.get with `same`: a plan made for other sizes that is
    the same as one kept is not kept twice; the one kept serves both sizes
    and those between; one made for another emptiness is kept apart.)"""
    from sdylog.datalog.plan import PlanCache
    plans = PlanCache()

    def same(made):
        return made
    assert plans.get("p", lambda rel: 10, lambda size: size("r") and "scan", same) == "scan"
    assert plans.get("p", lambda rel: 100_000, lambda size: size("r") and "scan", same) == "scan"
    assert plans.kept("p") == [({"r": (1, 800_000)}, "scan")] and plans.added == 2
    assert plans.get("p", lambda rel: 5_000, lambda size: None, same) == "scan" and plans.added == 2
    # (one made for an empty relation is kept apart: emptiness drops clauses)
    assert plans.get("p", lambda rel: 0, lambda size: size("r") or "scan", same) == "scan"
    assert [seen for seen, _ in plans.kept("p")] == [{"r": (0, 0)}, {"r": (1, 800_000)}]
