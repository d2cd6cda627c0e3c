"""The small models the command tests run: the corpus' small ones (the
shared corpus of JAX models, in `shared/corpus/jax` beside the repository or
above it, or $SDYLOG_CORPUS), else the repository's own examples."""
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def corpus_dir() -> Path | None:
    if os.environ.get("SDYLOG_CORPUS"):
        return Path(os.environ["SDYLOG_CORPUS"])
    for folder in ROOT.parents:           # (a worktree may sit one level deeper than a checkout)
        if (folder / "shared" / "corpus" / "jax").is_dir():
            return folder / "shared" / "corpus" / "jax"
    return None


def small_models(limit_bytes: int = 10_000) -> list[Path]:
    """The corpus models under `limit_bytes` (the large ones take seconds a
    run), else examples/mlp.mlir and a few golden inputs."""
    corpus = corpus_dir()
    found = sorted(p for p in corpus.glob("*.mlir") if p.stat().st_size < limit_bytes) if corpus else []
    return found or [ROOT / "examples" / "mlp.mlir", *sorted((ROOT / "golden").glob("*.in.mlir"))[:6]]
