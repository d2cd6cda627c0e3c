"""A FactSet as Soufflé `.facts` files: one per input relation, tab-separated."""
from __future__ import annotations

from sdylog.facts.extract import FactSet
from sdylog.facts.schema import schema


def rows_text(rows) -> str:
    return "".join("\t".join(map(str, row)) + "\n" for row in rows)


def input_relations() -> list[str]:
    """The schema's input relations (rule_tensor, which it derives, aside)."""
    return schema().inputs


def facts_text(facts: FactSet) -> dict[str, str]:
    """File name -> contents, for every input relation of the schema (empty ones too)."""
    decls = schema().relations
    unknown = set(facts.relations) - set(input_relations())
    if unknown:  # an extractor/schema mismatch is our bug, not the user's
        raise AssertionError(f"input relations missing from rules/schema.dl: {sorted(unknown)}")
    out = {}
    for name in input_relations():
        decl = decls[name]
        rows = facts.rows(name)
        for row in rows[:1]:
            assert len(row) == decl.arity, f"{name}: {len(row)} columns, declared {decl.arity}"
        out[f"{name}.facts"] = rows_text(rows)
    return out


def facts_file_names(extra_relations=()) -> list[str]:
    """The files of `facts_text` (every input relation of the schema) and of `extra_relations`."""
    return [f"{name}.facts" for name in [*input_relations(), *extra_relations]]
