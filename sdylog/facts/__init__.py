"""A module as Datalog relations (the schema is rules/schema.dl)."""
from sdylog.facts.extract import FactSet, extract_facts

__all__ = ["FactSet", "extract_facts"]
