"""`sdylog query FILE RELATION` of an MPMD relation (rules/mpmd/*.dl): its
ids are the MPMD run's, which numbers the module with its calls inlined, not
propagation's; its id columns are named from that run (`op_kind`, `op_loc`,
`v_name`). They had no names, and looking an id up in propagation's relations
(`query FILE op`) named another op: in tests/mpmd/data/pipeline_gpipe.mlir
op 11 is propagation's `stablehlo.dot_general` of @stage0_fwd but the MPMD
run's `stablehlo.add` of a reduce body (rev35 H3b)."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sdylog.cli import main

PIPELINE = Path(__file__).parents[1] / "mpmd" / "data" / "pipeline_gpipe.mlir"


def query(*args) -> list[dict]:
    r = CliRunner().invoke(main, ["query", str(PIPELINE), *args, "--devices", "2", "--format", "json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_mpmd_op_ids_are_named_from_the_mpmd_run():
    # the adds of the two inlined reduce bodies (line 27), each anchored in its reduce
    loc = f"{PIPELINE}:27:26"
    rows = query("anchor")
    assert [(r["op_kind"], r["op_loc"], r["q_kind"], r["q_loc"]) for r in rows] == \
        [("stablehlo.add", loc, "stablehlo.reduce", loc)] * 2, rows
    assert all(r["q"] < r["op"] for r in rows)   # (pre-order: the reduce before its body)


def test_every_mpmd_op_id_is_the_mpmd_facts_op():
    from sdylog.commands.values import loc_text
    from sdylog.mpmd.command import options_from
    from sdylog.mpmd.explain import mpmd_engine
    options = options_from((), "off", "star", "on", "on", "replicate", 1, 2)
    _, facts, _, _, filename = mpmd_engine(str(PIPELINE), options)
    placed = query("placed")
    assert placed
    with facts.module.context:
        for r in placed:
            op = facts.ops[r["op"]]
            assert (r["op_kind"], r["op_loc"]) == (op.operation.name, loc_text(op, filename)), r


def test_mpmd_values_keep_the_input_names_of_those_left():
    """The calls of @main are inlined: of its values only its arguments and
    the adds %8, %9, %10 are left; an inlined copy is named by what makes it
    (never by the name of a call result it may take the address of)."""
    avail = query("avail")
    named = {r["v_name"] for r in avail if not r["v_name"].startswith("<")}
    assert named == {f"%arg{i}" for i in range(6)} | {"%8", "%9", "%10"}, sorted(named)
    assert any(r["v_name"] == "<block argument 0 of stablehlo.reduce>" for r in avail)
    assert any(r["v_name"] == "<stablehlo.dot_general result 0>" for r in avail)
