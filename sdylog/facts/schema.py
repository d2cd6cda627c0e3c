"""The input relations' declarations, read from rules/schema.dl by the Datalog front end."""
from sdylog import RULES_DIR

SCHEMA_FILE = RULES_DIR / "schema.dl"


def schema():
    """The parsed schema program: `.relations` maps each input relation to its
    decl (parsed once per process, and remembered on disk as every rule
    program is: a parse costs ~0.1 s, a start reads it in ~1 ms)."""
    from sdylog.datalog.cache import rule_program
    return rule_program(str(SCHEMA_FILE))
