"""How the command line reports what goes wrong: an internal error is one
line and exit 3 (the traceback only with --debug or SDYLOG_DEBUG=1); only
`sdylog datalog` offers --engine (Soufflé is its cross-check)."""
import re

import pytest
from click.testing import CliRunner

from sdylog.cli import COMMANDS, main

SMALL = """sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.tanh %a : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


@pytest.fixture
def broken_pipeline(monkeypatch):
    import sdylog.commands.pipeline as pipeline

    def fails(*args, **kwargs):
        raise RuntimeError("something\nunexpected")
    monkeypatch.setattr(pipeline, "run_pipeline", fails)


@pytest.mark.parametrize("debug", [[], ["--debug"], "SDYLOG_DEBUG"])
def test_an_internal_error_is_one_line_and_exit_3(tmp_path, broken_pipeline, monkeypatch, debug):
    (tmp_path / "m.mlir").write_text(SMALL)
    monkeypatch.delenv("SDYLOG_DEBUG", raising=False)
    env = {"SDYLOG_DEBUG": "1"} if debug == "SDYLOG_DEBUG" else {}
    r = CliRunner().invoke(main, [*(debug if isinstance(debug, list) else []), "run", str(tmp_path / "m.mlir"),
                                  "-o", str(tmp_path / "out.mlir")], env=env)
    assert r.exit_code == 3 and r.stdout == ""
    last = r.stderr.splitlines()[-1]
    assert last.startswith("internal error: RuntimeError: something unexpected, please report")
    if debug:
        assert "Traceback (most recent call last)" in r.stderr and "in fails" in r.stderr
    else:
        assert r.stderr == last + "\n" and "--debug" in last
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.mlir"]


def test_out_of_memory_is_the_machines_limit_not_a_bug(tmp_path, monkeypatch):
    import sdylog.commands.pipeline as pipeline

    def fails(*args, **kwargs):
        raise MemoryError("Unable to allocate 32.0 GiB")
    monkeypatch.setattr(pipeline, "run_pipeline", fails)
    (tmp_path / "m.mlir").write_text(SMALL)
    r = CliRunner().invoke(main, ["run", str(tmp_path / "m.mlir")])
    assert r.exit_code == 1 and r.stderr == "error: out of memory: Unable to allocate 32.0 GiB\n"


def test_datalog_offers_the_engines_and_their_default():
    r = CliRunner().invoke(main, ["datalog", "--help"], terminal_width=200)
    assert r.exit_code == 0
    assert re.search(r"--engine \[memory\|souffle\]\s+Datalog engine \(default: \$SDYLOG_ENGINE, else\s+"
                     r"memory\)", r.stdout), r.stdout


@pytest.mark.parametrize("command", sorted(set(COMMANDS) - {"datalog"}))
def test_no_other_command_offers_an_engine(command):
    r = CliRunner().invoke(main, [command, "--help"], terminal_width=200)
    assert r.exit_code == 0 and "--engine" not in r.stdout and "souffle" not in r.stdout.lower(), r.stdout


def test_opt_help_lists_every_pass():
    from sdylog.passes import PASSES, options_text
    r = CliRunner().invoke(main, ["opt", "--help"], terminal_width=100)
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    for name, info in PASSES.items():
        assert f"-{name} {' '.join(info.summary.split())}" in text, name
        if info.options:
            assert f"options: {options_text(info)}" in text, name
