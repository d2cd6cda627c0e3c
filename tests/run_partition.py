"""The per-device program `sdylog run --partition` prints for a module,
run through the command line as a user runs it."""
from __future__ import annotations

from click.testing import CliRunner

from sdylog.cli import main
from sdylog.ir import parse_module


def partitioned(tmp_path, name: str, text: str):
    """`text` written to tmp_path/NAME.mlir, partitioned; the printed module, parsed."""
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    r = CliRunner().invoke(main, ["run", "--partition", "-q", str(path)])
    assert r.exit_code == 0, r.output
    return parse_module(r.stdout)
