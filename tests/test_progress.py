"""sdylog.progress: one rewritten line on a terminal, nothing elsewhere."""
import io

from sdylog.progress import Progress


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_sees_each_step_then_a_clear_line():
    tty = _Tty()
    p = Progress(stream=tty)
    p.step("parse")
    p.step("propagation")
    p.done()
    out = tty.getvalue()
    assert out.count("\r\x1b[K") == 3 and "] parse..." in out and "] propagation..." in out
    assert out.endswith("\r\x1b[K")


def test_a_pipe_sees_nothing():
    pipe = io.StringIO()
    p = Progress(stream=pipe)
    p.step("parse")
    p.done()
    assert pipe.getvalue() == ""


def test_commands_print_no_progress_into_a_pipe(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    mlp = Path(__file__).resolve().parents[1] / "examples" / "mlp.mlir"
    for args in (["run", str(mlp), "--db", str(tmp_path / "r.duckdb")], ["explain", str(mlp), "%0"],
                 ["query", str(mlp), "final_mesh"]):
        p = subprocess.run([sys.executable, "-m", "sdylog.cli", *args], capture_output=True, text=True)
        assert p.returncode == 0 and "\x1b[K" not in p.stderr, p.stderr
