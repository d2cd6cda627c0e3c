"""Every consumer of derived relations (sdylog/ outside sdylog/datalog) reads
them by the column names their `.decl` gives, checked statically against the
rule programs: renaming a column a consumer reads fails here, naming the
consumer's file and line. What is checked (sdylog/datalog/named_rows.py):

- `X.select("rel", "col", ...)`, `X.read_columns(...)`, `X.row_matrix(...)`:
  the relation is declared and has every column named;
- `X.named("rel")` and a Lookup's `X.where/first/exists("rel", col=value, ...)`:
  the relation has the columns given as keywords, and every attribute read
  on a row they hand out (`row.col`, through loops, comprehensions and
  assignments in the same function) is a column; a row is not indexed or
  unpacked by position;
- no `X.read("rel")` / `X.scan("rel")`: those hand out rows by position;
- no derived relation's name handed to another call (a wrapper around a
  positional read), but to the GENERIC ones below.

A read whose relation is not a literal (a generic reader: `sdylog query`,
saving every relation) must name no columns.
"""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

from sdylog import RULES_DIR
from sdylog.datalog import load_program
from sdylog.datalog.named_rows import field_name

SDYLOG = Path(__file__).resolve().parents[2] / "sdylog"

# The programs sdylog loads (every other .dl file is included by one of them).
PROGRAMS = ["schema.dl", "propagation.dl", "reshard.dl", "reshard_costs.dl", "collectives.dl", "mpmd.dl",
            "verify_unreduced_axes.dl", "partition/padding.dl", "partition/permutation.dl",
            "partition/single_device.dl", "partition/reduction_kind.dl"]

COLUMN_READS = {"select", "read_columns", "row_matrix"}   # (relation, *columns)
ROW_READS = {"named", "where"}                           # -> named rows
ONE_ROW = {"first", "row"}                               # -> a named row or None
LOOKUPS = {"where", "first", "exists"}                   # (relation, **columns)
POSITIONAL = {"read", "scan"}
# Calls that take a relation's name and read no column by position: the
# derivation of a tuple (explain --tree), a relation's size.
GENERIC = {"explain", "derive", "premise", "size", "decl",
           "load", "add", "setdefault", "fromkeys", "attr", "get"}   # (and rows given to a program)


def declarations(rules: Path) -> tuple[dict, set, set]:
    """relation -> the field names of each of its declarations (programs may
    declare one name differently); the relations rules derive; the .dl
    files the programs read."""
    decls: dict[str, set] = {}
    derived: set = set()
    files: set = set()
    for name in PROGRAMS:
        program = load_program(str(rules / name))
        files.update(Path(f).resolve() for f in program.files)
        derived.update(program.derived)
        for d in program.relations.values():
            decls.setdefault(d.name, set()).add(tuple(field_name(c.name) for c in d.columns))
    return decls, derived, files


def _literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Checker(ast.NodeVisitor):
    def __init__(self, path: str, decls: dict, derived: set):
        self.path, self.decls, self.derived = path, decls, derived
        self.problems: list[str] = []
        self.reads = 0
        self.rows_of: dict = {}   # variable -> relations whose rows (a list) it holds
        self.row_of: dict = {}    # variable -> relations whose row it holds
        self.constants: dict = {}  # module constant -> the column names it holds

    def problem(self, node, text: str) -> None:
        self.problems.append(f"{self.path}:{node.lineno}: {text}")

    def check_columns(self, node, relation: str, columns) -> None:
        variants = self.decls.get(relation)
        if variants is None:
            self.problem(node, f"relation '{relation}' is declared in no rule program")
            return
        if not any(all(field_name(c) in fields for c in columns) for fields in variants):
            fields = sorted(variants)[0]
            bad = [c for c in columns if field_name(c) not in fields]
            self.problem(node, f"'{relation}' has no column '{bad[0]}' (its columns: {', '.join(fields)})")

    # ---- reads
    def read_call(self, node) -> tuple[str, str] | None:
        """(method, relation) of a read this test knows; problems noted."""
        if not isinstance(node, ast.Call):
            return None
        if isinstance(node.func, ast.Name) and node.func.id == "select":
            method = "select"   # (a method taken once: `select = engine.select`)
        elif isinstance(node.func, ast.Attribute):
            method = node.func.attr
        else:
            return None
        relation = _literal(node.args[0]) if node.args else None
        if method in POSITIONAL and relation is not None:
            self.problem(node, f"reads '{relation}' by position ({method}): name its columns (select, named)")
            return None
        if method in COLUMN_READS:
            columns = [c for a in node.args[1:] for c in self.names(a)]
            if relation is None:
                if any(columns):
                    self.problem(node, f"{method} of a relation that is not a literal names columns")
                return None
            if not columns or None in columns:
                self.problem(node, f"{method}('{relation}', ...): columns must be literal names")
                return method, relation
            self.reads += 1
            self.check_columns(node, relation, columns)
            return method, relation
        if method in ROW_READS | ONE_ROW | LOOKUPS and relation is not None:
            self.reads += 1
            self.check_columns(node, relation, [k.arg for k in node.keywords if k.arg and k.arg != "ordered"])
            if method in LOOKUPS and len(node.args) > 1:
                self.problem(node, f"{method}('{relation}', ...): give the columns as keywords")
            return method, relation
        return None

    def rows_expr(self, node) -> set:
        """Relations whose named rows (a list) NODE is."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("sorted", "list") \
                and node.args:
            return self.rows_expr(node.args[0])
        if isinstance(node, ast.Name):
            return self.rows_of.get(node.id, set())
        read = self.read_call(node) if isinstance(node, ast.Call) else None
        return {read[1]} if read and read[0] in ROW_READS else set()

    def row_expr(self, node) -> set:
        """Relations whose named row NODE is."""
        if isinstance(node, ast.Name):
            return self.row_of.get(node.id, set())
        if isinstance(node, ast.Subscript):
            return self.rows_expr(node.value)
        read = self.read_call(node) if isinstance(node, ast.Call) else None
        return {read[1]} if read and read[0] in ONE_ROW else set()

    def names(self, arg) -> list:
        """The column names an argument gives: a literal, or a module's
        constant tuple of them unpacked (`*_AXIS`); None for anything else."""
        if isinstance(arg, ast.Starred) and isinstance(arg.value, ast.Name):
            return list(self.constants.get(arg.value.id, [None]))
        return [_literal(arg)]

    def visit_Module(self, node) -> None:
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and isinstance(stmt.value, ast.Tuple):
                names = [_literal(e) for e in stmt.value.elts]
                if names and None not in names:
                    self.constants[stmt.targets[0].id] = names
        self.generic_visit(node)

    # ---- binding rows to names
    def bind(self, target, rows: set, node) -> None:
        if not rows:
            return
        if isinstance(target, ast.Name):
            self.row_of.setdefault(target.id, set()).update(rows)
        else:
            self.problem(node, f"unpacks rows of {', '.join(sorted(rows))} by position: read them by name")

    def visit_FunctionDef(self, node) -> None:
        outer = self.rows_of, self.row_of
        self.rows_of, self.row_of = {}, {}
        # bindings first (a function's names, whatever their order), then the uses
        for sub in ast.walk(node):
            if isinstance(sub, (ast.For, ast.comprehension)):
                self.bind(sub.target, self._quiet(self.rows_expr, sub.iter), sub.iter)
            elif isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                name = sub.targets[0].id
                rows = self._quiet(self.rows_expr, sub.value)
                if rows:
                    self.rows_of.setdefault(name, set()).update(rows)
                row = self._quiet(self.row_expr, sub.value)
                if row:
                    self.row_of.setdefault(name, set()).update(row)
            elif isinstance(sub, ast.Assign) and isinstance(sub.targets[0], ast.Tuple):
                self.bind(sub.targets[0], self._quiet(self.row_expr, sub.value), sub)
        self.generic_visit(node)
        self.rows_of, self.row_of = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def _quiet(self, f, node):
        """f(node) without noting problems (the walk notes each once)."""
        problems, reads = list(self.problems), self.reads
        try:
            return f(node)
        finally:
            self.problems, self.reads = problems, reads

    # ---- uses
    def visit_Call(self, node) -> None:
        if self.read_call(node) is None:
            self.passed_on(node)
        self.generic_visit(node)

    def passed_on(self, node) -> None:
        """A derived relation's name given to another call (a reader this test cannot see)."""
        method = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if method in GENERIC or (isinstance(node.func, ast.Attribute) and method in COLUMN_READS | LOOKUPS | POSITIONAL):
            return
        for arg in node.args:
            relation = _literal(arg)
            if relation in self.derived:
                self.problem(node, f"passes '{relation}' to {method}(): read it with select, named or a Lookup")

    def visit_Attribute(self, node) -> None:
        rows = self._quiet(self.row_expr, node.value)
        if rows and not node.attr.startswith("_") \
                and not any(node.attr in fields for r in rows for fields in self.decls.get(r, ())):
            # (a name may hold rows of several relations in one function: a column of one of them)
            self.check_columns(node, sorted(rows)[0], [node.attr])
        self.generic_visit(node)

    def visit_Subscript(self, node) -> None:
        rows = self._quiet(self.row_expr, node.value)
        if rows and isinstance(node.slice, (ast.Constant, ast.Slice)):
            self.problem(node, f"indexes a row of {', '.join(sorted(rows))} by position: read it by name")
        self.generic_visit(node)


def check_consumers(rules: Path = RULES_DIR, root: Path = SDYLOG, decls: dict | None = None) -> tuple[list[str], int]:
    """(problems, reads checked) over every module of `root` outside its
    datalog package, against the declarations of `rules` (or `decls`)."""
    found, derived, _ = declarations(Path(rules))
    decls = found if decls is None else decls
    problems, reads = [], 0
    for path in sorted(root.rglob("*.py")):
        if "datalog" in path.relative_to(root).parts:
            continue
        checker = _Checker(str(path.relative_to(root.parent)), decls, derived)
        checker.visit(ast.parse(path.read_text(), str(path)))
        problems += checker.problems
        reads += checker.reads
    return problems, reads


def test_every_consumer_reads_declared_columns_by_name():
    problems, reads = check_consumers()
    assert not problems, "\n".join(problems)
    assert reads > 200   # (the consumers are found: explain, write-back, reports, partitioner, MPMD)


def test_the_programs_read_every_rule_file():
    _, _, files = declarations(Path(RULES_DIR))
    rule_files = {p.resolve() for p in Path(RULES_DIR).rglob("*.dl")}
    assert rule_files <= files, sorted(map(str, rule_files - files))


def _copy_rules(tmp_path: Path) -> Path:
    rules = tmp_path / "rules"
    shutil.copytree(RULES_DIR, rules)
    return rules


def test_a_renamed_column_fails_naming_its_consumers(tmp_path):
    rules = _copy_rules(tmp_path)
    result = rules / "propagation" / "result.dl"
    text = result.read_text()
    old = ".decl final_dim_axis(t: Tensor, d: number, pos: number, axis: symbol,"
    assert old in text
    result.write_text(text.replace(old, old.replace("axis: symbol", "mesh_axis: symbol")))
    new = check_consumers(rules)[0]
    assert new and all("'final_dim_axis' has no column 'axis'" in p for p in new), new
    for consumer in ("sdylog/propagation/writeback.py:", "sdylog/commands/pipeline.py:",
                     "sdylog/commands/explain.py:"):
        assert any(p.startswith(consumer) for p in new), (consumer, new)


def test_an_added_or_moved_column_breaks_no_consumer():
    # final_dim_axis with its columns reversed and one more: every consumer
    # names the columns it reads, so none reads another one
    decls, _, _ = declarations(Path(RULES_DIR))
    (fields,) = decls["final_dim_axis"]
    moved = dict(decls, final_dim_axis={tuple(reversed(fields)) + ("extra",)})
    assert check_consumers(decls=moved)[0] == check_consumers()[0]


def test_the_checker_sees_positional_reads(tmp_path):
    pkg = tmp_path / "sdylog"
    pkg.mkdir()
    (pkg / "consumer.py").write_text(
        "def f(engine, look):\n"
        "    for t, m in engine.read('final_mesh'):\n"
        "        pass\n"
        "    for row in engine.named('final_mesh'):\n"
        "        print(row[1], row.mesh, row.meshes)\n"
        "    vt = look.first('final_dim', t=1)\n"
        "    return vt.closed, vt.d, vt.prio, engine.select('final_dim', 't', 'dim')\n")
    problems, _ = check_consumers(RULES_DIR, pkg)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "reads 'final_mesh' by position (read): name its columns (select, named)",
        "indexes a row of final_mesh by position: read it by name",
        "'final_mesh' has no column 'meshes' (its columns: t, mesh)",
        "'final_dim' has no column 'prio' (its columns: t, d, closed)",
        "'final_dim' has no column 'dim' (its columns: t, d, closed)",
    ], problems
