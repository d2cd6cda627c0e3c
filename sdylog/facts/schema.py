"""The input relations' declarations, read from rules/schema.dl by the Datalog front end."""
from functools import lru_cache

from sdylog import RULES_DIR

SCHEMA_FILE = RULES_DIR / "schema.dl"


@lru_cache(maxsize=1)
def schema():
    """The parsed schema program: `.relations` maps each input relation to its decl."""
    from sdylog.datalog import load_program
    return load_program(str(SCHEMA_FILE))
