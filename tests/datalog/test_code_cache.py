"""The on-disk caches (sdylog/datalog/cache.py) stay bounded, keep what was
used last, and never fail a run: corrupt, missing or unwritable, a cache is
worked without."""
import os

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
    (saved,) = tmp_path.glob("codes-*.marshal")
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


def test_a_corrupt_program_cache_is_ignored_and_written_again(tmp_path, monkeypatch):
    from sdylog.datalog import load_program
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    rules = tmp_path / "p.dl"
    rules.write_text(".decl e(x: number)\n.decl r(x: number)\nr(x) :- e(x).\n")
    loads = []

    def load(path):
        loads.append(path)
        return load_program(path)

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



def test_the_same_source_under_another_name_is_its_own_code(tmp_path, monkeypatch):
    """(A runtime error is located at the rules named in its code's name.)"""
    c = _fresh(tmp_path, monkeypatch, 10)
    assert c.compile("x = 1", "<rule 0>").co_filename == "<rule 0>"
    assert c.compile("x = 1", "<rule 2>").co_filename == "<rule 2>"
