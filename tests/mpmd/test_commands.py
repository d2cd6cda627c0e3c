"""`sdylog mpmd`, and `simulate`, `query`, `explain` on modules with device placements."""
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sdylog.cli import main
from tests.mpmd import test_scenarios as s


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_mpmd_writes_the_module_and_the_manifest(tmp_path):
    src, out, man = tmp_path / "s02.mlir", tmp_path / "out.mlir", tmp_path / "m.json"
    src.write_text(s.S02)
    r = run("mpmd", src, "-o", out, "--json", man, "--bf16-transfers", "nearest")
    assert r.exit_code == 0, r.output
    assert "@main.dev0" in out.read_text() and "@main.dev1" in out.read_text()
    m = json.loads(man.read_text())
    assert m["devices"] == [{"device": 0, "function": "main.dev0"}, {"device": 1, "function": "main.dev1"}]
    assert m["arguments"] == [[{"device": 0, "position": 0}], [{"device": 1, "position": 0}]]
    assert m["results"] == [{"device": 1, "position": 0}]
    (ch,) = m["channels"]
    assert {k: ch[k] for k in ("id", "src", "dst", "kind", "dtype", "shape", "bytes")} == \
        {"id": 1, "src": 0, "dst": 1, "kind": "data", "dtype": "bf16", "shape": [1024], "bytes": 2048}


def test_mpmd_bad_input_is_located_exits_1_and_writes_nothing(tmp_path):
    src, out, man = tmp_path / "bad.mlir", tmp_path / "out.mlir", tmp_path / "m.json"
    src.write_text(s.module(f"""  func.func @main(%x: {s.T}) -> {s.T} {{
    %a = stablehlo.negate %x {{sdy.sharding = #sdy.sharding_per_value<[<mesh<[], device_ids=[5]>, []>]>}} : {s.T}
    return %a : {s.T}
  }}"""))
    r = CliRunner().invoke(main, ["mpmd", str(src), "-o", str(out), "--json", str(man)])
    assert r.exit_code == 1
    assert f"{src}:5:10: error: device 5 is beyond the module's 2 devices" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.mlir"]


def test_simulate_json_and_deadlock_exit(tmp_path):
    src = tmp_path / "s09.mlir"
    src.write_text(s.S09)
    r = run("simulate", src, "--json", "--bf16-transfers", "truncate", "--channel-mode", "rendezvous")
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["match"] is True and report["max_abs_error"] > 0
    assert sorted(c["bytes"] for c in report["channels"]) == [2048, 4096]
    assert report["total_bytes"] == 6144
    assert report["bytes_per_device"] == {"0": {"sent": 6144, "received": 0}, "1": {"sent": 0, "received": 6144}}
    dl = tmp_path / "dl.mlir"
    dl.write_text(s.S20_CYCLE)
    r = CliRunner().invoke(main, ["simulate", str(dl)])
    assert r.exit_code == 1 and "wait-for cycle: d0 -> d1 -> d0" in r.output


def test_query_reads_the_mpmd_relations(tmp_path):
    src = tmp_path / "s15.mlir"
    src.write_text(s.S15)
    r = run("query", src, "channel")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == "channel: 1 tuple"
    r = run("query", src, "placed_core", "--where", "why=used")
    assert "placed_core: 2 tuples (filtered)" in r.output
    r = run("query", src, "error_conflicting_operands", "--infer-transfers", "off")
    assert "error_conflicting_operands: 2 tuples" in r.output   # u, and v through u


def test_explain_says_why_a_value_is_placed_and_sent(tmp_path):
    src = tmp_path / "s15.mlir"
    src.write_text(s.S15)
    r = run("explain", src, "%0")
    assert r.exit_code == 0, r.output
    assert "runs on device 1: the rules place it where its results are used" in r.output
    assert "placed on device 1 by sdy.sharding" in r.output
    r = run("explain", src, "%arg0")
    assert "sent 0 -> 1 on channel 1: as f32, 4096 bytes a message" in r.output
    assert f"read there by stablehlo.multiply ({src}:7:10)" in r.output
    r = run("explain", src, "%cst")
    assert "computed from constants only" in r.output
    r = run("explain", src, "%0", "--tree")
    assert "placed_core(" in r.output and "[rule " in r.output


def test_explain_says_why_a_result_is_delivered_where_it_is(tmp_path):
    """rules/mpmd/availability.dl's result_loc_why: the result's own
    placement, where its value is, or (an argument nobody places, fed by the
    caller) the first device."""
    from tests.mpmd.helpers import T, arg_on, module, on
    src = tmp_path / "results.mlir"
    src.write_text(module(f"""  func.func @main(%x: {T}, %y: {T} {{{arg_on(1)}}}) -> ({T}, {T} {{{arg_on(0)}}}, {T}) {{
    %a = stablehlo.add %y, %y {{{on(1)}}} : {T}
    return %a, %a, %x : {T}, {T}, {T}
  }}"""))
    for i, why in enumerate(("delivered on device 1: where its value naturally is (the smallest such device)",
                             "delivered on device 0: its sharding places it there",
                             "delivered on device 0: no device has its value without a transfer: the first device")):
        r = run("explain", src, f"@main:result{i}")
        assert r.exit_code == 0, r.output
        assert why in r.output.splitlines()[0]


PIPELINE = Path(__file__).parent / "data" / "pipeline_gpipe.mlir"


@pytest.mark.parametrize("command", ["mpmd", "simulate"])
def test_an_assign_name_matching_nothing_is_a_usage_error(command):
    r = CliRunner().invoke(main, [command, str(PIPELINE), "--assign", "stage0_fwdd@0", "--devices", "2"])
    assert r.exit_code == 2, r.output
    assert ("error: --assign stage0_fwdd@0: no op comes from a function or named computation 'stage0_fwdd': "
            "did you mean one of 'stage0_fwd'") in r.output
    r = CliRunner().invoke(main, ["query", str(PIPELINE), "placed", "--assign", "zzz@1", "--devices", "2"])
    assert r.exit_code == 2 and "(the ones there are: stage0_bwd, stage0_fwd," in r.output, r.output


@pytest.mark.parametrize("command", ["mpmd", "simulate"])
@pytest.mark.parametrize("option,value", [("--max-clones", "-1"), ("--max-clones", "0"), ("--devices", "0"),
                                          ("--devices", "-2"), ("--recv-policy", "window:-1"),
                                          ("--assign", "stage0_fwd@-1")])
def test_bad_numbers_are_usage_errors(command, option, value):
    devices = [] if option == "--devices" else ["--devices", "2"]
    r = CliRunner().invoke(main, [command, str(PIPELINE), option, value, *devices])
    assert r.exit_code == 2, r.output


@pytest.mark.parametrize("policy", ["lazy", "window:2"])
def test_a_recv_policy_rendezvous_cannot_run_is_a_usage_error(policy):
    r = CliRunner().invoke(main, ["simulate", str(PIPELINE), "--assign", "stage0_fwd@0", "--devices", "2",
                                  "--recv-policy", policy, "--channel-mode", "rendezvous"])
    assert r.exit_code == 2, r.output
    assert f"error: --recv-policy {policy} and --channel-mode rendezvous do not go together" in r.output


@pytest.mark.parametrize("command", ["mpmd", "simulate", "query"])
@pytest.mark.parametrize("devices,why", [(["--devices", "2"], "(--devices 2)"),
                                         ([], "(from its mhlo.num_partitions and num_replicas; --devices N sets")])
def test_an_assign_beyond_the_devices_is_a_usage_error(command, devices, why):
    """(query too: it shows the rules' error relations of a bad input, but
    refuses the options `sdylog mpmd` refuses)"""
    more = {"mpmd": ["-o", "/dev/null"], "simulate": [], "query": ["placed"]}[command]
    r = CliRunner().invoke(main, [command, str(PIPELINE), *more, "--assign", "stage0_fwd@3", *devices])
    assert r.exit_code == 2, r.output
    assert "error: --assign stage0_fwd@3: device 3 is beyond the module's" in r.output and why in r.output


def test_mpmd_manifest_and_module_both_on_stdout_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(main, ["mpmd", str(PIPELINE), "--devices", "2", "--json", "-"])
    assert r.exit_code == 2 and "--json -" in r.output and "-o FILE" in r.output, r.output
    r = CliRunner().invoke(main, ["mpmd", str(PIPELINE), "--devices", "2", "--json", "-", "-o", "-"])
    assert r.exit_code == 2, r.output
    r = CliRunner().invoke(main, ["mpmd", str(PIPELINE), "--devices", "2", "--json", "-", "-o", tmp_path / "p.mlir"])
    assert r.exit_code == 0 and json.loads(r.stdout)["devices"], r.output


@pytest.mark.parametrize("outputs", [["-o", "same", "--json", "same"], ["-o", "same", "--db", "./same"]])
def test_mpmd_outputs_naming_one_file_is_a_usage_error(tmp_path, outputs):
    args = [str(tmp_path / a) if a.endswith("same") else a for a in outputs]
    r = CliRunner().invoke(main, ["mpmd", str(PIPELINE), "--devices", "2", "--assign", "stage0_fwd@0", *args])
    assert r.exit_code == 2, r.output
    assert f"error: {outputs[0]} '{args[1]}' and {outputs[2]} '{args[3]}' name the same file" in r.output
    assert list(tmp_path.iterdir()) == []


def test_query_and_explain_read_the_regrouped_sums_with_reduce_locally(tmp_path):
    """With --reduce-locally, `sdylog mpmd` partitions the program whose sums
    reduce.py regrouped (rules evaluated again): query and explain read that
    evaluation too. They read the first before: four channels where the
    partition has two, and explain sent a leaf that is added on its own
    device."""
    src = tmp_path / "s17.mlir"
    src.write_text(s.S17)
    r = run("query", src, "channel", "--reduce-locally")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == "channel: 2 tuples"
    assert run("query", src, "channel").output.splitlines()[-1] == "channel: 4 tuples"
    r = run("explain", src, "%0", "--reduce-locally")
    assert r.exit_code == 0, r.output
    assert "is on device 0 without a transfer" in r.output and "sent" not in r.output
    assert "sent 0 -> 2 on channel 1" in run("explain", src, "%0").output


def test_mpmd_db_holds_what_query_reads(tmp_path):
    """`sdylog mpmd --db`: every relation of the MPMD rules as a view, with
    the names `sdylog query` prints beside the ids, documented in the table
    `relations` as `query --list` documents them."""
    import duckdb

    from sdylog.mpmd.driver import mpmd_program
    src, db = tmp_path / "s15.mlir", tmp_path / "m.duckdb"
    src.write_text(s.S15)
    r = run("mpmd", src, "-o", tmp_path / "o.mlir", "--db", db, "-q")
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(db), read_only=True)
    assert {n for (n,) in con.execute("SELECT name FROM relations").fetchall()} == set(mpmd_program().relations)
    for relation in ("placed", "channel", "op", "placed_core"):
        q = json.loads(run("query", src, relation, "--format", "json").output)
        cols = list(q[0]) if q else []
        quoted = ", ".join('"' + c + '"' for c in cols)   # (a column `order`)
        got = con.execute(f"SELECT {quoted} FROM {relation} ORDER BY ALL").fetchall()
        assert got == sorted(tuple(row[c] for c in cols) for row in q), relation
    listed = {x["relation"]: x["doc"] for x in json.loads(run("query", "--list", "--format", "json").output)}
    assert con.execute("SELECT doc FROM relations WHERE name = 'placed'").fetchone()[0] == listed["placed"]
    r = run("mpmd", src, "--db", "-")
    assert r.exit_code == 2
