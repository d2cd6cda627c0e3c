"""The Soufflé backend's plumbing without Soufflé: a fake `souffle` on PATH
whose "compiled program" runs the printed program on the memory engine, so
that the command lines, the facts files written and the CSV files read
back are checked here (Soufflé's own results: test_souffle.py, where installed)."""
import os
import sys

from click.testing import CliRunner

from sdylog.cli import main
from sdylog.datalog import make_engine, parse_program

FAKE = f"""#!{sys.executable}
import os, sys
with open(os.environ["FAKE_SOUFFLE_LOG"], "a") as log:
    log.write(" ".join(["souffle"] + sys.argv[1:]) + "\\n")
if sys.argv[1:] == ["--version"]:
    print("Version: fake\\nWord size: 64 bits")
    sys.exit(0)
out, src = sys.argv[2], sys.argv[3]
with open(out, "w") as f:
    f.write(f'''#!{sys.executable}
import os, sys
with open(os.environ["FAKE_SOUFFLE_LOG"], "a") as log:
    log.write(" ".join(["program"] + sys.argv[1:]) + "\\\\n")
from sdylog.cli import main
main(["datalog", {{src!r}}, "-F", sys.argv[2], "-D", sys.argv[4], "--engine", "memory"])
''')
os.chmod(out, 0o755)
"""

PROGRAM = """
.decl edge(x: number, name: symbol, y: number)
.decl path(x: number, y: number)
.decl named(name: symbol, n: number)
.decl some_path()
path(x, y) :- edge(x, _, y).
path(x, z) :- path(x, y), edge(y, _, z).
named(name, n) :- edge(_, name, _), n = count : { edge(_, name, _) }.
some_path() :- path(_, _).
"""


def fake_souffle(tmp_path, monkeypatch):
    """The fake on PATH; the file it logs its command lines to."""
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "souffle"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SOUFFLE_LOG", str(tmp_path / "log"))
    monkeypatch.setenv("SDYLOG_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "log"


def test_datalog_command_on_souffle_writes_what_the_program_wrote(tmp_path, monkeypatch):
    log = fake_souffle(tmp_path, monkeypatch)
    (tmp_path / "p.dl").write_text(PROGRAM + ".input edge\n.output path\n.output named(IO=stdout)\n")
    (tmp_path / "edge.facts").write_text("1\ta b\t2\n2\tc\t3\n")
    outs = {}
    for name in ("souffle", "memory"):
        (tmp_path / name).mkdir()
        res = CliRunner().invoke(main, ["datalog", str(tmp_path / "p.dl"), "-F", str(tmp_path),
                                        "-D", str(tmp_path / name), "--engine", name])
        assert res.exit_code == 0, res.output
        outs[name] = (res.output, (tmp_path / name / "path.csv").read_text())
    assert outs["souffle"] == outs["memory"] and outs["memory"][1] == "1\t2\n1\t3\n2\t3\n"
    lines = log.read_text().splitlines()
    compiled = tmp_path / "cache" / "souffle"
    assert lines[0] == "souffle --version"
    assert lines[1].startswith(f"souffle -o {compiled}/") and lines[1].endswith("/program.dl")
    assert lines[2] == f"program -F {tmp_path} -D {lines[2].split(' -D ')[1].split()[0]} -j {os.cpu_count()}"


def test_other_commands_refuse_souffle(tmp_path, monkeypatch):
    """Soufflé cross-checks `sdylog datalog` only: an engine asked for
    elsewhere gets an error naming where it runs."""
    import pytest

    from sdylog.errors import SdylogError
    fake_souffle(tmp_path, monkeypatch)
    with pytest.raises(SdylogError, match=r"runs only in `sdylog datalog PROGRAM.dl --engine souffle`"):
        make_engine(parse_program(PROGRAM, "p.dl"), "souffle")
