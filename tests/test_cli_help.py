"""`sdylog --help` lists the commands without importing them (nor MLIR)."""
import subprocess
import sys

from sdylog.cli import COMMANDS, SUMMARIES


def test_every_command_has_a_summary():
    assert sorted(SUMMARIES) == sorted(COMMANDS)
    assert all(s.endswith(".") and len(s) < 70 for s in SUMMARIES.values())


def test_help_imports_no_command_and_no_mlir():
    code = ("import sys\nfrom sdylog.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('jaxlib', 'jax', 'sdylog.commands', "
            "'sdylog.ir', 'numpy', 'duckdb'))))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    *help_lines, imported = p.stdout.splitlines()
    assert imported == "[]"
    listed = [line.split()[0] for line in help_lines[help_lines.index("Commands:") + 1:] if line.strip()]
    assert listed == sorted(COMMANDS)
    assert "  run        Propagate shardings: the module, and a report." in help_lines
