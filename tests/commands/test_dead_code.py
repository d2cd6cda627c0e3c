"""Conflicts and values on dead code: propagation erases the dead ops (as
Shardy's driver does) once the rules have run, so what the commands read of
them (the conflicts' locations, the values' names, explain's derivations)
is read before (run_propagation's `before_erasing`). Reading them after
was an internal error ("the operation has been invalidated")."""
import subprocess
import sys

import pytest

# %0 is dead (only the dead %1 reads it) and conflicts: its result is closed
# unsharded, its operands have "x".
DEAD = """
sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}]>]>} : tensor<8xf32>
  %1 = stablehlo.negate %0 : tensor<8xf32>
  return %arg0 : tensor<8xf32>
}
"""


def sdylog(*args):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def dead(tmp_path):
    p = tmp_path / "d.mlir"
    p.write_text(DEAD)
    return p


def test_conflicts_on_dead_ops_are_located_at_the_op(dead):
    from sdylog.commands.pipeline import run_pipeline
    run = run_pipeline(str(dead))
    assert [(c.location, str(c).split(": ", 1)[1]) for c in run.conflicts] == [
        (f"{dead}:4:8", 'stablehlo.add factor 0 (prefix): operand 0 dim 0 {"x"} vs result 0 dim 0 {}'),
        (f"{dead}:4:8", 'stablehlo.add factor 0 (prefix): operand 1 dim 0 {"x"} vs result 0 dim 0 {}')]
    assert "stablehlo.add" not in str(run.module)   # (the dead ops are gone from the output)


def test_values_of_dead_ops_are_named(dead):
    from sdylog.commands.pipeline import run_pipeline
    from sdylog.progress import Progress
    seen = []

    class Steps(Progress):
        def step(self, name):
            seen.append(name)
    run = run_pipeline(str(dead), progress=Steps(False), keep_values=True, name_ids=True)
    facts = run.result.facts
    assert sorted(run.names.value(v) for v in range(len(facts.values))) == ["%0", "%1", "%arg0"]
    # the ids are named inside the propagation phase (before the dead ops go), timed on their own
    assert seen[:5] == ["parse", "names", "import", "propagation", "ids"]
    assert {"propagation", "ids"} <= set(run.seconds)


@pytest.mark.parametrize("args", [["run", "-q"], ["run", "-v"], ["run", "--partition", "-q"], ["query"]])
def test_commands_on_dead_conflicts(dead, args):
    extra = ["conflict"] if args == ["query"] else []
    r = sdylog(*args, dead, *extra)
    assert r.returncode == 0, r.stderr
    assert "internal error" not in r.stderr
    if args == ["run", "-v"]:
        assert (f'  {dead}:4:8: stablehlo.add factor 0 (prefix): operand 0 dim 0 {{"x"}} vs result 0 dim 0 {{}}'
                in r.stderr.splitlines())
    if args == ["query"]:
        rows = r.stdout.splitlines()[2:4]
        assert all(row.split()[1:3] == ["stablehlo.add", f"{dead}:4:8"] for row in rows), rows


@pytest.mark.parametrize("value", ["@main:arg0", "%0", "%1"])
def test_explain_on_dead_code(dead, value):
    r = sdylog("explain", dead, value)
    assert r.returncode == 0, r.stderr
    if value == "%0":
        assert r.stdout.startswith(f"@main:%0 (stablehlo.add at {dead}:4:8) gets <@mesh, [{{}}]>")


@pytest.mark.parametrize("value", ["%0", "%1"])
def test_explained_after_the_run_as_explain_prints(dead, value):
    """run_with_provenance (the API's explain) explains after the run: the
    dead ops it names are kept, and it prints what `sdylog explain` does."""
    from sdylog.commands.explain import explain_text, run_with_provenance
    ex = run_with_provenance(str(dead))
    assert explain_text(ex, value) == sdylog("explain", dead, value).stdout
