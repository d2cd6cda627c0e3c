"""A regular (non-editable) install works: the wheel carries the rules as
package data, and `sdylog run` runs from it, outside the source tree."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MLP = ROOT / "examples" / "mlp.mlir"


def test_a_wheel_installs_and_runs_outside_the_source_tree(tmp_path):
    # A copy of the sources to build from (the worktree is left as it is; what
    # the wheel needs only, no build products)
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".*", "build", "*.egg-info", "__pycache__", "*.so", "tests", "golden", "benchmarks", "docs", "examples"))
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    subprocess.run([*pip, "wheel", "--no-deps", "-w", wheels, src], check=True, capture_output=True)
    (wheel,) = wheels.glob("sdylog-*.whl")
    subprocess.run([*pip, "install", "--no-deps", "--target", site, wheel], check=True, capture_output=True)
    shutil.rmtree(src)                        # nothing may come from the copy either

    # The installed copy, found first on the path (before the editable
    # install's finder, which only answers what the path does not); this
    # venv's packages for the dependencies.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site), "SDYLOG_CACHE_DIR": str(tmp_path / "cache")}
    where = subprocess.run([sys.executable, "-c", "import sdylog, sdylog.datalog._native as n, sdylog.facts.schema as s;"
                            "print(sdylog.__file__, n.__file__, s.SCHEMA_FILE, sep='\\n')"],
                           cwd=elsewhere, env=env, capture_output=True, text=True)
    assert where.returncode == 0, where.stderr
    assert all(line.startswith(str(site)) for line in where.stdout.splitlines()), where.stdout

    run = subprocess.run([site / "bin" / "sdylog", "run", MLP, "-q"], cwd=elsewhere, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    here = subprocess.run([sys.executable, "-m", "sdylog.cli", "run", MLP, "-q"], capture_output=True, text=True)
    assert run.stdout == here.stdout and "sdy.sharding" in run.stdout
