"""Check golden cases against Shardy itself before accepting them (a manual
step, not a test: it needs the oracle in /work/shared/conformance).

    python tests/golden/compare_with_shardy.py [CASE ...]

For each case (golden/CASE.in.mlir; all by default): Shardy's
`-sdy-propagation-pipeline` output (shardy_ref_opt.py) against the expected
output golden/CASE.out.mlir (`sdylog run`'s when there is none yet), with
compare_shardings.py; then the reshards and collectives of both with
-sdy-insert-explicit-reshards=enable-full-version=true after the pipeline
(what the report lists), with compare_collectives.py. Prints their closing
"agree: K/N ..." lines (and the mismatches above them when not all agree).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

CONFORMANCE = Path(os.environ.get("SDYLOG_CONFORMANCE", "/work/shared/conformance"))
GOLDEN = Path(__file__).resolve().parents[2] / "golden"


def compare(case: str) -> str:
    src = GOLDEN / f"{case}.in.mlir"
    with tempfile.TemporaryDirectory() as d:
        ref, ours = Path(d) / "ref.mlir", Path(d) / "ours.mlir"
        r = subprocess.run([sys.executable, str(CONFORMANCE / "shardy_ref_opt.py"), str(src),
                            "-sdy-propagation-pipeline"], capture_output=True, text=True)
        if r.returncode:
            return f"Shardy failed: {r.stderr.strip()}"
        ref.write_text(r.stdout)
        expected = GOLDEN / f"{case}.out.mlir"
        if expected.exists():
            ours = expected
        else:
            o = subprocess.run([sys.executable, "-m", "sdylog.cli", "run", "-q", str(src), "-o", str(ours)],
                               capture_output=True, text=True)
            if o.returncode:
                return f"sdylog failed: {o.stderr.strip()}"
        shardings = _agreement("compare_shardings.py", ref, ours)
        full = ["-sdy-propagation-pipeline", "-sdy-insert-explicit-reshards=enable-full-version=true"]
        ref_full, ours_full = Path(d) / "ref_full.mlir", Path(d) / "ours_full.mlir"
        r = subprocess.run([sys.executable, str(CONFORMANCE / "shardy_ref_opt.py"), str(src), *full],
                           capture_output=True, text=True)
        o = subprocess.run([sys.executable, "-m", "sdylog.cli", "opt", str(src), *full],
                           capture_output=True, text=True)
        if r.returncode or o.returncode:
            return f"{shardings}\nthe full version failed: {(r.stderr or o.stderr).strip()}"
        ref_full.write_text(r.stdout)
        ours_full.write_text(o.stdout)
        return f"{shardings}\n{_agreement('compare_collectives.py', ref_full, ours_full)}"


def _agreement(script: str, ref: Path, ours: Path) -> str:
    c = subprocess.run([sys.executable, str(CONFORMANCE / script), str(ref), str(ours)],
                       capture_output=True, text=True)
    lines = c.stdout.strip().splitlines()
    return "\n".join(lines[-6:]) if lines and "(100.0%)" not in lines[-1] else lines[-1]


def main(argv: list[str]) -> int:
    cases = argv or sorted(p.name[:-len(".in.mlir")] for p in GOLDEN.glob("*.in.mlir"))
    for case in cases:
        print(f"{case}: {compare(case)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
