"""A checked, stratified program: what both engines run."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from sdylog.datalog.ast import KINDS, Clause, Column, IODirective, RelationDecl, Subsumption, TypeDecl
from sdylog.datalog.lexer import Loc, Preprocessor, error, shown_path
from sdylog.datalog.parser import ParsedProgram, parse_tokens
from sdylog.datalog.pickled import PickledItems
from sdylog.datalog.semantics import check_clause, split_binding_disjunctions
from sdylog.datalog.stepped import plan_steps, step_column
from sdylog.datalog.stratify import Stratum, stratify

# The parts of a program only planning, explain, error messages and `sdylog datalog`'s
# files read: the clauses' syntax trees (most of its size), the I/O directives. A program
# pickled (cache.py keeps programs on disk) holds each of their items pickled on its own
# (pickled.py): a run whose plans are all kept (plan.PlanCache) reads none, one that plans
# a stratum again reads that stratum's clauses.
_SOURCE = ("clauses", "clause_kinds", "subsumptions", "subsumption_kinds", "directives")


# Parameters of .input/.output that sdylog understands, with Soufflé's meaning.
_IO_PARAMS = {
    "input": {"IO": {"file"}, "filename": None, "delimiter": None, "headers": {"true", "false"}},
    "output": {"IO": {"file", "stdout"}, "filename": None, "delimiter": None, "headers": {"true", "false"},
               "attributeNames": None},
    "printsize": {},
}


@dataclass(eq=False)   # (one program is equal to itself only: the engines keep them by identity)
class Program:
    relations: dict[str, RelationDecl]
    types: dict[str, TypeDecl]
    clauses: list[Clause]
    clause_kinds: list[dict[str, str]]
    directives: list[IODirective]
    strata: list[Stratum]
    reads: dict[str, set[str]]   # relation -> the relations its clauses and subsumptive rules read
    files: list[str] = field(default_factory=list)
    name: str = "<program>"
    subsumptions: list[Subsumption] = field(default_factory=list)
    subsumption_kinds: list[dict[str, str]] = field(default_factory=list)

    def __getstate__(self):
        return {k: PickledItems.of(v) if k in _SOURCE else v for k, v in self.__dict__.items()}

    def directives_of(self, kind: str) -> list[IODirective]:
        return [d for d in self.directives if d.kind == kind]

    @cached_property
    def inputs(self) -> list[str]:
        return list(dict.fromkeys(d.relation for d in self.directives_of("input")))

    @cached_property
    def outputs(self) -> list[str]:
        return list(dict.fromkeys(d.relation for d in self.directives_of("output")))

    @cached_property
    def derived(self) -> list[str]:
        """Relations with clauses (rules or inline facts), in declaration order."""
        heads = {c.head.relation for c in self.clauses}
        return [r for r in self.relations if r in heads]

    @cached_property
    def run_cache(self) -> dict:
        """What runs work out from the program alone (the relations each
        reads, the strata a run asking for some relations needs, ...), made
        once: engine.py's needed_strata and drop_plan."""
        return {}

    def relation(self, name: str) -> RelationDecl:
        decl = self.relations.get(name)
        if decl is None:
            raise error(None, f"relation '{name}' is not declared in {self.name}")
        return decl


def load_program(path: str, include_dirs: list[str] | None = None) -> Program:
    """Read, check and stratify a program file (with its includes)."""
    pp = Preprocessor(include_dirs)
    display = shown_path(path)
    return _build(pp.tokens_of_file(path, display), pp, display)


def parse_program(text: str, filename: str = "<string>", include_dirs: list[str] | None = None) -> Program:
    """Check and stratify a program given as text (includes resolve from the
    current directory and include_dirs)."""
    pp = Preprocessor(include_dirs)
    return _build(pp.tokens_of_text(text, filename), pp, filename)


def _build(tokens, pp: Preprocessor, name: str) -> Program:
    last = tokens[-1].loc if tokens else Loc(name, 1, 1)
    parsed = parse_tokens(tokens, Loc(last.file, last.line, last.col + 1))
    types = _resolve_types(parsed)
    relations = _declare(parsed, types)
    directives = _directives(parsed, relations)
    clauses, subsumptions = [], []
    for i, rule in enumerate(parsed.rules):
        for head in rule.heads:
            for body in split_binding_disjunctions(rule.bodies, rule.heads[0], rule.dominating):
                if rule.dominating is not None:
                    subsumptions.append(Subsumption(head, rule.dominating, tuple(body), rule.loc, i))
                else:
                    clauses.append(Clause(head, tuple(body), rule.loc, i))
    kinds = [check_clause(c, relations) for c in clauses]
    sub_kinds = [check_clause(s.as_clause(), relations, subsumptive=True) for s in subsumptions]
    for s in subsumptions:
        if not any(c.head.relation == s.relation for c in clauses):
            raise error(s.loc, f"subsumptive rule for '{s.relation}', which no rule derives")
    stepped = {r for r, d in relations.items() if step_column(d) is not None}
    strata, reads = stratify(list(relations), clauses, subsumptions, stepped)
    for s in strata:
        if s.stepped:
            s.step_plan = plan_steps(relations, clauses, s,
                                     lambda decls, cls, what: _sub_program(decls, types, cls, pp.files, what))
    return Program(relations, types, clauses, kinds, directives, strata, reads, pp.files, name,
                   subsumptions, sub_kinds)


def _sub_program(relations, types, clauses, files, name: str) -> Program:
    """The clauses of part of a stratum (a stepped stratum's seeds or step,
    over its auxiliary relations), checked and stratified on their own."""
    kinds = [check_clause(c, relations) for c in clauses]
    strata, reads = stratify(list(relations), clauses)
    return Program(relations, types, clauses, kinds, [], strata, reads, files, name)


def _resolve_types(parsed: ParsedProgram) -> dict[str, TypeDecl]:
    defs = {}
    for t in parsed.types:
        if t.name in defs or t.name in KINDS:
            raise error(t.loc, f"type '{t.name}' is defined twice")
        defs[t.name] = t
    out: dict[str, TypeDecl] = {}

    def kind_of(name: str, loc: Loc, trail: tuple) -> str:
        if name in KINDS:
            return name
        if name in out:
            return out[name].kind
        t = defs.get(name)
        if t is None:
            raise error(loc, f"unknown type '{name}'")
        if name in trail:
            raise error(t.loc, f"type '{name}' is defined in terms of itself")
        ks = {kind_of(b, bl, trail + (name,)) for b, bl in t.bases}
        if len(ks) > 1:
            raise error(t.loc, f"union type '{name}' mixes {' and '.join(sorted(ks))}")
        out[name] = TypeDecl(name, ks.pop(), tuple(b for b, _ in t.bases), t.subset, t.loc)
        return out[name].kind

    for t in parsed.types:
        kind_of(t.name, t.loc, ())
    return {t.name: out[t.name] for t in parsed.types}


def _declare(parsed: ParsedProgram, types: dict[str, TypeDecl]) -> dict[str, RelationDecl]:
    rels: dict[str, RelationDecl] = {}
    shared: dict[Column, Column] = {}   # (equal columns are one object: a cached program holds each once)
    for d in parsed.decls:
        cols = []
        seen = set()
        for cname, tname, tloc in d.columns:
            if cname in seen:
                raise error(tloc, f"column '{cname}' is declared twice")
            seen.add(cname)
            kind = tname if tname in KINDS else types[tname].kind if tname in types else None
            if kind is None:
                raise error(tloc, f"unknown type '{tname}'")
            col = Column(cname, tname, kind)
            cols.append(shared.setdefault(col, col))
        for name, loc in d.names:
            if name in rels:
                raise error(loc, f"relation '{name}' is declared twice (first at {rels[name].loc})")
            rels[name] = RelationDecl(name, tuple(cols), loc)
    return rels


def _directives(parsed: ParsedProgram, rels: dict[str, RelationDecl]) -> list[IODirective]:
    out = []
    for d in parsed.decls:
        for q in d.qualifiers:
            if q in _IO_PARAMS:
                out.extend(IODirective(q, n, {}, loc) for n, loc in d.names)
    for d in parsed.directives:
        allowed = _IO_PARAMS[d.kind]
        for k, v in d.params.items():
            if k not in allowed:
                raise error(d.loc, f"'.{d.kind}' parameter '{k}' is not supported")
            if allowed[k] is not None and v not in allowed[k]:
                raise error(d.loc, f"'.{d.kind}' parameter {k}={v} is not supported "
                            f"(supported: {', '.join(sorted(allowed[k]))})")
        for name, loc in d.names:
            if name not in rels:
                raise error(loc, f"relation '{name}' is not declared")
            out.append(IODirective(d.kind, name, dict(d.params), loc))
    return out
