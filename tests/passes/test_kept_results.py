"""Functions of attributes whose results a process keeps (lru_cache: attributes
are uniqued per context, and the passes, and every run of a process, ask the
same few questions again) give what their plain versions (`__wrapped__`)
compute afresh, on every call the passes make: the lit inputs of the passes
that use them, and the corpus through the propagation and export pipelines,
each run twice so that the second run's calls are answered from what the
first kept."""
import sys
from pathlib import Path

import pytest

from sdylog.ir import shardings, symbols
from sdylog.passes import inline_meshes, manual_axes_cleanup
from sdylog.passes import update_non_divisible_input_output_shardings as update_non_divisible
from sdylog.passes.driver import optimize_text, parse_flags
from sdylog.propagation import writeback

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "conformance"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "commands"))
from conformance_cases import shared_dir, tests_dir as lit_dir  # noqa: E402
from small_models import corpus_dir  # noqa: E402

# (module, name) of each kept function, as the passes call it
KEPT = [(shardings, "_dict_with"), (shardings, "mesh_model"), (symbols, "refs_in_attr"),
        (inline_meshes, "on_mesh"), (manual_axes_cleanup, "with_unused_manual_axes"),
        (update_non_divisible, "evenly_sharded"), (writeback, "sharding_attr")]

# lit file -> the flags its cases run with (those of its RUN line)
LIT = {
    "export/inline_meshes.mlir": ["-sdy-inline-meshes"],
    "import/manual_axes_cleanup.mlir": ["-sdy-manual-axes-cleanup"],
    "export/update_non_divisible_input_output_shardings.mlir":
        ["-sdy-update-non-divisible-input-output-shardings"],
    "export/unflatten_call_graph.mlir": ["-sdy-unflatten-call-graph"],
    "import/import_pipeline.mlir": ["-sdy-import-pipeline=dedup-functions-fully=true"],
}
PIPELINE = ["-sdy-propagation-pipeline", "-sdy-export-pipeline=enable-insert-explicit-collectives=true"]


@pytest.fixture
def checked_kept(monkeypatch):
    """Every kept function replaced by one that also computes afresh and
    checks the two agree; returns the count of calls checked per function."""
    calls = {name: 0 for _, name in KEPT}
    for module, name in KEPT:
        kept = getattr(module, name)
        assert kept.__wrapped__ is not None

        def checked(*args, _kept=kept, _name=name):
            calls[_name] += 1
            got, fresh = _kept(*args), _kept.__wrapped__(*args)
            assert got == fresh, f"{_name}{args}: kept {got}, computed {fresh}"
            return got
        monkeypatch.setattr(module, name, checked)
    return calls


def _cases(text: str) -> list[str]:
    return [c for c in text.split("\n// -----\n") if "expected-error" not in c]


@pytest.mark.skipif(shared_dir() is None, reason="no conformance suites")
def test_kept_results_agree_with_fresh_ones(checked_kept):
    from sdylog.errors import SdylogError

    runs = []
    for rel, flags in LIT.items():
        for case in _cases((lit_dir() / rel).read_text()):
            runs.append((case, rel, flags))
    for path in sorted(corpus_dir().glob("*.mlir"))[:8]:
        if "transformer_L" in path.name and path.name != "transformer_L2.mlir":
            continue
        runs.append((path.read_text(), path.name, PIPELINE))
    for text, name, flags in runs:
        inv = parse_flags(flags)
        try:
            first = optimize_text(text, name, inv)
        except SdylogError:
            continue   # (a case whose diagnostics the lit test checks)
        assert optimize_text(text, name, inv) == first, name
    # (each kept function was called, by the passes as they use it)
    assert all(checked_kept.values()), checked_kept
