"""The on-disk code cache stays bounded and keeps what was used last."""
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
    for code in third.codes.values():
        ns = {}
        exec(code, ns)
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
    import os
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
