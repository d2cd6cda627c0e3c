"""Soufflé itself, where installed: the command runs programs as `souffle`
does, and gives the same files as the memory engine."""
import os

import pytest
from click.testing import CliRunner

from sdylog.cli import main

from conftest import PROGRAMS, needs_souffle, program_cases

pytestmark = needs_souffle


@pytest.mark.parametrize("name", program_cases())
def test_cli_outputs_agree_between_engines(name, tmp_path):
    outs = {}
    for engine in ("memory", "souffle"):
        out = tmp_path / engine
        out.mkdir()
        res = CliRunner().invoke(main, ["datalog", str(PROGRAMS / f"{name}.dl"), "-F", str(tmp_path),
                                        "-D", str(out), "--engine", engine])
        assert res.exit_code == 0, res.output
        outs[engine] = {f: sorted((out / f).read_text().splitlines()) for f in os.listdir(out)}
    assert outs["memory"] == outs["souffle"]


def test_propagation_on_souffle_equals_the_embedded_engine(tmp_path):
    """The propagation rules are valid Soufflé (types, subsumption) and
    derive the same relations from a module's facts as `run` does; they need
    64-bit numbers (ranks)."""
    import shutil
    from sdylog.datalog.souffle_engine import souffle_version, word_bits
    if word_bits(souffle_version(shutil.which("souffle"))) < 64:
        pytest.skip("this souffle has 32-bit numbers; the propagation rules need -DSOUFFLE_DOMAIN_64BIT=ON")
    from pathlib import Path
    mlp = Path(__file__).resolve().parents[2] / "examples" / "mlp.mlir"
    facts = tmp_path / "facts"
    res = CliRunner().invoke(main, ["facts", str(mlp), "-o", str(facts)])
    assert res.exit_code == 0, res.output
    outs = {}
    for engine in ("memory", "souffle"):
        out = tmp_path / engine
        out.mkdir()
        res = CliRunner().invoke(main, ["datalog", "rules/propagation.dl", "-F", str(facts), "-D", str(out),
                                        "--engine", engine])
        assert res.exit_code == 0, res.output
        outs[engine] = {f: sorted((out / f).read_text().splitlines()) for f in os.listdir(out)}
    assert outs["memory"]["final_dim_axis.csv"] and outs["memory"] == outs["souffle"]
