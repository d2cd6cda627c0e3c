"""Where the benchmarks find the shared corpus of JAX-lowered models: beside
the repository, in ../shared/corpus/jax (SDYLOG_CORPUS overrides it)."""
import os
from pathlib import Path

CORPUS = Path(os.environ.get("SDYLOG_CORPUS") or Path(__file__).resolve().parents[2] / "shared" / "corpus" / "jax")
