"""Write a FactSet as Soufflé `.facts` files: one per input relation, tab-separated."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from sdylog.facts.extract import FactSet
from sdylog.facts.schema import schema
from sdylog.ir.diagnostics import SdylogError


def facts_text(facts: FactSet) -> dict[str, str]:
    """File name -> contents, for every relation of the schema (empty ones too)."""
    decls = schema().relations
    unknown = set(facts.relations) - set(decls)
    if unknown:  # an extractor/schema mismatch is our bug, not the user's
        raise AssertionError(f"relations missing from rules/schema.dl: {sorted(unknown)}")
    out = {}
    for name, decl in decls.items():
        rows = facts.rows(name)
        for row in rows[:1]:
            assert len(row) == decl.arity, f"{name}: {len(row)} columns, declared {decl.arity}"
        out[f"{name}.facts"] = "".join("\t".join(map(str, row)) + "\n" for row in rows)
    return out


def write_facts_dir(facts: FactSet, out_dir: str, extra: dict[str, list[tuple]] | None = None) -> list[str]:
    """Write every file, each replaced whole, only once all are rendered.
    `extra`: more relations (name -> rows), e.g. a run's configuration."""
    files = facts_text(facts)
    for name, rows in (extra or {}).items():
        files[f"{name}.facts"] = "".join("\t".join(map(str, row)) + "\n" for row in rows)
    d = Path(out_dir)
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise SdylogError(f"cannot create {out_dir}: {e.strerror}") from None
    for name, text in files.items():
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".sdylog-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, d / name)
    return sorted(files)
