"""`sdylog explain` says where the reshards the export writes at calls come
from (issue 18).

A function called with other shardings is copied by the export
(sdy-unflatten-call-graph: @bar_0 of @bar), and each call's operand is
resharded to its callee's argument sharding (sdy-insert-explicit-reshards
does so for every call). Before, explain listed such a reshard ("written
by the export step") with nothing saying what it was for; it now names the
call, the callee (and which function it copies) and the sharding it takes.
A reshard that is the input's own sharding constraint says so."""
from __future__ import annotations

from tests.commands.test_explain import partitioning, run_explain, write

MESH = 'sdy.mesh @mesh = <["a"=2, "b"=2]>\n'

# @bar is called twice with %arg0; the second result must end sharded on "b"
# along dim 1, which propagation carries back into that call: the export
# copies @bar as @bar_0 for it and reshards %arg0 for that call.
COPIED = MESH + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}, tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"b"}]>}) {
  %0 = call @bar(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @bar(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0, %1 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @bar(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""

CONSTRAINED = MESH + """func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>})
    -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %0 = call @bar(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = call @bar(%arg0) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %2 = sdy.sharding_constraint %1 <@mesh, [{}, {"a"}]> : tensor<8x8xf32>
  return %0, %2 : tensor<8x8xf32>, tensor<8x8xf32>
}
func.func private @bar(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = stablehlo.negate %arg0 : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
"""


def test_a_reshard_for_a_call_to_a_function_copy_names_the_call_and_the_copy(tmp_path):
    path = write(tmp_path, COPIED)
    code, out, _ = run_explain(path, "%arg0")
    assert code == 0
    assert partitioning(out)[1:] == [
        f'  {path}:2:17: written by the export step: reshard [{{"a"}}, {{}}] -> [{{"a"}}, {{"b"}}], 0 B per device',
        f"  the reshard at {path}:2:17 is for the call at {path}:5:8: it passes the value to @bar_0 (the export's "
        'copy of @bar for this call\'s shardings) as argument 0, which takes <@mesh, [{"a"}, {"b"}]> (a call\'s '
        "operands go to its callee's argument shardings: sdy-insert-explicit-reshards)"]


def test_a_reshard_from_a_sharding_constraint_says_so(tmp_path):
    path = write(tmp_path, CONSTRAINED)
    code, out, _ = run_explain(path, "%1")
    assert code == 0
    assert partitioning(out)[1:] == [
        f'  {path}:6:8: written by the export step: reshard [{{"a"}}, {{}}] -> [{{}}, {{"a"}}], 64 B per device',
        f"  the reshard at {path}:6:8 is the input's sdy.sharding_constraint there (sdy-sharding-constraint-to-reshard)"]


def test_the_reshard_rules_derive_where_the_written_reshards_come_from(tmp_path):
    """The lines above print rules/reshard/why.dl's why_written and
    why_written_call (explain loads the facts they read into the reshard
    rules' evaluation): the relations, after explain's partitioning part."""
    from sdylog.commands.explain import partitioning_text
    from sdylog.commands.pipeline import run_pipeline

    def relations(text, value):
        run = run_pipeline(write(tmp_path, text), keep_values=True)
        assert "the reshard at" in partitioning_text(value, run)
        engine, facts = run.needed.inventory.engine, run.needed.inventory.facts
        kinds = {o: k for o, k, *_ in facts.rows("op")}
        written = sorted((kinds[r], why) for r, why in engine.select("why_written", "r", "why"))
        calls = sorted((kinds[u], i, f, origin) for u, i, f, origin in engine.select("why_written_call", "u", "i", "f",
                                                                                      "origin"))
        takes = [str(facts.shardings[s]) for (s,) in engine.select("why_written_call_takes", "s")]
        return written, calls, takes

    assert relations(COPIED, "%arg0") == ([("sdy.reshard", "call")], [("func.call", 0, "bar_0", "bar")],
                                          ['<@mesh, [{"a"}, {"b"}]>'])
    assert relations(CONSTRAINED, "%1") == ([("sdy.reshard", "constraint")], [], [])


def test_query_reads_where_the_written_reshards_come_from(tmp_path):
    """`sdylog query` loads the same facts explain does: why_written* hold
    the rows explain prints (they were empty outside explain)."""
    import json
    import subprocess
    import sys

    def query(text, relation):
        p = subprocess.run([sys.executable, "-m", "sdylog.cli", "query", write(tmp_path, text), relation,
                            "--format", "json"], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    path = write(tmp_path, COPIED)
    (call,) = query(COPIED, "why_written_call")
    assert (call["r_kind"], call["r_loc"], call["u_kind"], call["u_loc"], call["i"], call["f"], call["origin"]) == (
        "sdy.reshard", f"{path}:2:17", "func.call", f"{path}:5:8", 0, "bar_0", "bar")
    assert [(r["v_name"], r["why"]) for r in query(COPIED, "why_written")] == [("%arg0", "call")]
    assert len(query(COPIED, "why_written_call_takes")) == 1
    (constraint,) = query(CONSTRAINED, "why_written")
    assert (constraint["r_loc"], constraint["why"]) == (f"{write(tmp_path, CONSTRAINED)}:6:8", "constraint")
