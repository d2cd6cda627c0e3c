"""sdylog's product code never runs Shardy's or XLA's passes: they are
oracles for tests and benchmarks only. Checked statically (no module under
sdylog/ imports MLIR's pass manager, the oracles or XLA's compiler) and at
run time (`sdylog opt` with a textual pass pipeline of sdy-* names, and the
whole partitioner pipeline, with MLIR's PassManager made to fail)."""
import ast
import subprocess
import sys
from pathlib import Path

import sdylog

PRODUCT = Path(sdylog.__file__).parent
# What running a Shardy/XLA pass or an oracle would need.
FORBIDDEN_MODULES = ("jaxlib.mlir.passmanager", "shardy_ref_opt", "stablehlo_ref_interpret",
                     "jax._src.interpreters.mlir", "jax._src.compiler", "jaxlib.xla_client")
FORBIDDEN_NAMES = ("PassManager", "passmanager")


def _imports_and_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""
            yield from (f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.Name):
            yield node.id


def test_no_product_module_imports_a_pass_manager_or_an_oracle():
    found = []
    for path in sorted(PRODUCT.rglob("*.py")):
        for name in _imports_and_names(ast.parse(path.read_text(), str(path))):
            if name in FORBIDDEN_NAMES or any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES):
                found.append(f"{path.relative_to(PRODUCT.parent)}: {name}")
    assert not found, "\n".join(found)


_RUN_WITHOUT_PASS_MANAGER = """
import sys
from jaxlib.mlir import passmanager
class _NoPassManager:
    def __init__(self, *a, **k):
        raise AssertionError("product code made an MLIR PassManager")
    parse = staticmethod(__init__)
passmanager.PassManager = _NoPassManager
from sdylog.cli import main
sys.argv = ["sdylog", *sys.argv[1:]]
main()
"""


def _sdylog_without_pass_manager(*args):
    return subprocess.run([sys.executable, "-c", _RUN_WITHOUT_PASS_MANAGER, *args], capture_output=True, text=True)


def test_a_pass_pipeline_of_sdy_names_runs_sdylogs_own_passes():
    mlp = str(PRODUCT.parent / "examples" / "mlp.mlir")
    p = _sdylog_without_pass_manager(
        "opt", mlp, "--pass-pipeline=builtin.module(sdy-import-pipeline,func.func(sdy-close-shardings))")
    assert p.returncode == 0, p.stderr
    assert "sdy.sharding" in p.stdout
    p = _sdylog_without_pass_manager("opt", mlp, "-sdy-propagation-pipeline",
                                     "-sdy-export-pipeline=enable-insert-explicit-collectives=true")
    assert p.returncode == 0, p.stderr
