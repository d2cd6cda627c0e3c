"""Soufflé itself, where installed: the command runs programs as `souffle`
does, and gives the same files as the embedded engine."""
import os

import pytest
from click.testing import CliRunner

from sdylog.cli import main

from conftest import PROGRAMS, needs_souffle, program_cases

pytestmark = needs_souffle


@pytest.mark.parametrize("name", program_cases())
def test_cli_outputs_agree_between_engines(name, tmp_path):
    outs = {}
    for engine in ("duckdb", "souffle"):
        out = tmp_path / engine
        out.mkdir()
        res = CliRunner().invoke(main, ["datalog", str(PROGRAMS / f"{name}.dl"), "-F", str(tmp_path),
                                        "-D", str(out), "--engine", engine])
        assert res.exit_code == 0, res.output
        outs[engine] = {f: sorted((out / f).read_text().splitlines()) for f in os.listdir(out)}
    assert outs["duckdb"] == outs["souffle"]
