"""`run --db` and `PropagationResult.to_duckdb` hold rules/reshard/why.dl's
why_written* as `sdylog query` does (the facts they read loaded into the
reshard rules' evaluation: load_written_origins); they were empty there."""
from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from tests.commands.test_explain_call_copies import CONSTRAINED, COPIED
from tests.commands.test_explain import write

RELATIONS = ("why_written", "why_written_call", "why_written_call_takes")


def _query(path, relation):
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "query", path, relation, "--format", "json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _db_rows(db, relation):
    with duckdb.connect(str(db), read_only=True) as con:
        cur = con.execute(f"select * from {relation}")
        columns = [d[0] for d in cur.description]
        return [dict(zip(columns, row)) for row in cur.fetchall()]


def _same(path, db):
    for relation in RELATIONS:
        from_db = _db_rows(db, relation)
        expected = [{k: row[k] for k in from_db[0]} for row in _query(path, relation)] if from_db else []
        assert sorted(map(repr, from_db)) == sorted(map(repr, expected)), relation
    return {relation: len(_db_rows(db, relation)) for relation in RELATIONS}


@pytest.mark.parametrize("text,rows", [(COPIED, {"why_written": 1, "why_written_call": 1,
                                                 "why_written_call_takes": 1}),
                                       (CONSTRAINED, {"why_written": 1, "why_written_call": 0,
                                                      "why_written_call_takes": 0})])
def test_run_db_and_to_duckdb_hold_what_query_reads(tmp_path, text, rows):
    path = write(tmp_path, text)
    db = tmp_path / "run.duckdb"
    p = subprocess.run([sys.executable, "-m", "sdylog.cli", "run", path, "--db", str(db), "-o", "/dev/null", "-q"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert _same(path, db) == rows

    import sdylog
    api_db = tmp_path / "api.duckdb"
    sdylog.propagate(path).to_duckdb(str(api_db))
    assert _same(path, api_db) == rows
