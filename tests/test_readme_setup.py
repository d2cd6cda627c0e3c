"""The README's two set-up commands are the ones CI runs."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _commands(text):
    return [l.strip() for l in text.splitlines() if l.strip().startswith(("pip install", "python -m pytest"))]


def test_ci_runs_the_readme_commands():
    readme = _commands((ROOT / "README.md").read_text())
    ci = _commands((ROOT / ".ci" / "run").read_text())
    assert readme == ["pip install -e '.[test]'", "python -m pytest"]
    assert ci == readme
