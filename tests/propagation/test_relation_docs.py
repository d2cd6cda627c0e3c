"""Every relation declared in rules/ says what it means: the comment right
above its .decl, as `sdylog query --list` and the `relations` table of a
`--db` file read it (sdylog/datalog/docs.py)."""
from pathlib import Path

from sdylog import RULES_DIR
from sdylog.datalog import load_program
from sdylog.datalog.docs import relation_docs


def _programs() -> list[Path]:
    """The rule programs sdylog loads: the files at the top of rules/ and
    the partitioner's (rules/partition/NAME.dl, schema.dl aside: each of
    the others reads it)."""
    partition = [p for p in sorted((RULES_DIR / "partition").glob("*.dl")) if p.name != "schema.dl"]
    return sorted(RULES_DIR.glob("*.dl")) + partition


def _undocumented() -> tuple[set[str], set[Path]]:
    """'file name' of each relation with no doc, and the files read."""
    missing, read = set(), set()
    for path in _programs():
        program = load_program(str(path))
        read |= {Path(f).resolve() for f in program.files}
        for doc in relation_docs(program).values():
            if not doc.doc:
                missing.add(f"{doc.where.rsplit(':', 1)[0]} {doc.name}")
    return missing, read


def test_every_declared_relation_has_a_doc():
    missing, read = _undocumented()
    assert sorted(missing) == [], "a relation needs a comment right above its .decl"
    # every rule file is part of a program read above, so none escapes the check
    assert sorted(p for p in RULES_DIR.rglob("*.dl") if p.resolve() not in read) == []
