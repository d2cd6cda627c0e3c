"""The bad-input suite: every case a command given bad input (a file, a
flag, an option, the environment) must answer with a diagnostic, located
(`file:line:col: error: ...`) where a location exists, exit 1 (2 for bad
usage), print nothing on stdout and write no file. No case may print a
traceback or an internal error. The issue's causes each have their case
(marked `# cause`).

(The commands run in one worker process: tests/commands/cli_worker.py.)
"""
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cli_worker import CliWorker

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.mlir").read_bytes()

SMALL = b"""sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @main(%a: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x16xf32> {
  %0 = stablehlo.tanh %a : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
"""


def func(body: str, args="%a: tensor<8xf32>", results="tensor<8xf32>", extra="") -> bytes:
    return (f"{extra}func.func @main({args}) -> {results} {{\n{body}\n}}\n").encode()


SELF_CALL = b"""func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
MUTUAL_CALLS = b"""func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @g(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func private @g(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = func.call @f(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
HUGE_DIMS = b"""sdy.mesh @mesh = <["x"=4]>
func.func @main(%a: tensor<4294967296x4294967296xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<4294967296x4294967296xf32> {
  %0 = stablehlo.tanh %a : tensor<4294967296x4294967296xf32>
  return %0 : tensor<4294967296x4294967296xf32>
}
"""

DL_HEAD = ".decl e(x: number)\n.input e\n.decl r(x: number)\n.output r\n"


@dataclass(frozen=True)
class Case:
    id: str
    args: list
    files: dict = field(default_factory=dict)
    stdin: bytes | None = None
    env: dict = field(default_factory=dict)
    exit: int = 1
    error: str = ""      # a regex the first line of stderr must match (after the generic checks)


LOCATED = r"^[^\s:]+:\d+:\d+: error: "
USAGE = r"^(Usage: |error: )"

CASES = [
    # ---- the input file
    Case("missing-file", ["run", "nope.mlir"], error=r"^error: cannot read nope.mlir: No such file"),
    Case("folder-as-input", ["run", "d"], files={"d/x": b""}, error=r"^error: cannot read d: Is a directory"),
    Case("empty-file", ["run", "m.mlir"], files={"m.mlir": b""}, error=r"error: "),
    Case("non-utf8-in-comment", ["run", "m.mlir"], files={"m.mlir": b"// caf\xe9\n" + SMALL},   # cause
         error=r"^m.mlir:1:7: error: byte 0xe9 is not UTF-8"),
    Case("non-utf8-in-body", ["opt", "m.mlir", "-sdy-close-shardings"],
         files={"m.mlir": SMALL.replace(b'"y"=2', b'"\xff"=2')}, error=r"^m.mlir:1:28: error: byte 0xff is not UTF-8"),
    Case("garbage-on-stdin", ["run", "-"], stdin=bytes(range(256)) * 3,                          # cause
         error=r"^<stdin>:2:118: error: byte 0x80 is not UTF-8"),  # (line 2: byte 10 is a newline)
    Case("utf8-garbage-on-stdin", ["run", "-"], stdin="ß∂ƒ©˙∆˚¬…æ".encode() * 20, error=LOCATED),
    Case("nul-bytes", ["run", "m.mlir"], files={"m.mlir": SMALL[:40] + b"\0\0\0" + SMALL[40:]}, error=LOCATED),
    Case("truncated", ["run", "m.mlir"], files={"m.mlir": SMALL[:len(SMALL) // 2]}, error=LOCATED),
    Case("unbalanced-brace", ["run", "m.mlir"], files={"m.mlir": SMALL + b"}\n"}, error=LOCATED),
    Case("unknown-op", ["run", "m.mlir"], files={"m.mlir": func("  %0 = stablehlo.foo %a : tensor<8xf32>\n"
                                                                "  return %0 : tensor<8xf32>")},
         error=r"^m.mlir:2:8: error: "),
    Case("type-mismatch", ["run", "m.mlir"],
         files={"m.mlir": func("  %0 = stablehlo.tanh %a : tensor<4xf32>\n  return %0 : tensor<4xf32>")}, error=LOCATED),
    Case("unknown-mesh", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b"sharding<@mesh", b"sharding<@nomesh", 1)},
         error=LOCATED),
    Case("unknown-axis", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b'[{"x"}, {}]', b'[{"z"}, {}]', 1)},
         error=LOCATED),
    Case("axis-twice", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b'[{"x"}, {}]', b'[{"x"}, {"x"}]', 1)},
         error=LOCATED),
    Case("sharding-rank", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b'[{"x"}, {}]', b'[{"x"}]', 1)},
         error=LOCATED),
    Case("zero-size-axis", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b'"y"=2', b'"y"=0')}, error=LOCATED),
    Case("no-main", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b"@main", b"@f") + SMALL.replace(
        b"@main", b"@g").replace(b'sdy.mesh @mesh = <["x"=4, "y"=2]>\n', b"")}, error=r"error: "),
    Case("self-call", ["run", "m.mlir"], files={"m.mlir": SELF_CALL},                           # cause
         error=r"^m.mlir:6:8: error: recursive call \(@f -> @f\)"),
    Case("mutual-calls", ["opt", "m.mlir", "-sdy-import-func-calls"], files={"m.mlir": MUTUAL_CALLS},
         error=r"^m.mlir:10:8: error: recursive call \(@f -> @g -> @f\)"),
    Case("self-call-flatten", ["opt", "m.mlir", "-sdy-flatten-call-graph"], files={"m.mlir": SELF_CALL},
         error=r"^m.mlir:6:8: error: recursive call"),
    Case("call-undefined", ["run", "m.mlir"], files={"m.mlir": func(
        "  %0 = func.call @nope(%a) : (tensor<8xf32>) -> tensor<8xf32>\n  return %0 : tensor<8xf32>")}, error=LOCATED),
    Case("too-many-devices", ["run", "m.mlir"], files={"m.mlir": SMALL.replace(b'"x"=4', b'"x"=9223372036854775807')},
         error=r"^m.mlir:1:1: error: mesh @mesh has 18446744073709551614 devices: at most 2147483647"),
    Case("prime-axis", ["run", "m.mlir", "-q"],         # (its units took 2^31 steps to find: a hang)
         files={"m.mlir": SMALL.replace(b'"x"=4, "y"=2', b'"x"=2147483647').replace(b'"y"', b'"x"')}, exit=0),
    Case("two-prime-axes", ["run", "m.mlir", "-q"],
         files={"m.mlir": SMALL.replace(b'"x"=4, "y"=2', b'"x"=46337, "y"=46327')}, exit=0),
    Case("dynamic-shape", ["run", "m.mlir"], files={"m.mlir": func("  %0 = stablehlo.tanh %a : tensor<?xf32>\n"
                                                                   "  return %0 : tensor<?xf32>", "%a: tensor<?xf32>",
                                                                   "tensor<?xf32>")}, error=LOCATED),
    Case("stdin-empty", ["opt", "-", "-sdy-close-shardings"], stdin=b"\n\n", exit=0),
    # ---- outputs
    Case("o-missing-folder", ["run", "m.mlir", "-o", "no/out.mlir"], files={"m.mlir": SMALL},     # cause
         error=r"^error: cannot write -o 'no/out.mlir': folder '.*/no' does not exist"),
    Case("db-missing-folder", ["run", "m.mlir", "--db", "no/x.duckdb"], files={"m.mlir": SMALL},  # cause
         error=r"^error: cannot write --db 'no/x.duckdb': folder"),
    Case("D-missing-folder", ["datalog", "p.dl", "-D", "no"],                                     # cause
         files={"p.dl": (DL_HEAD + "r(x) :- e(x).\n").encode(), "e.facts": b"1\n"},
         error=r"^p.dl:4:9: error: cannot write relation 'r' to '.*no/r.csv': folder .* does not exist"),
    Case("o-is-folder", ["run", "m.mlir", "-o", "d"], files={"m.mlir": SMALL, "d/keep": b""},     # cause
         error=r"^error: cannot write -o 'd': it is a folder"),
    Case("db-is-folder", ["run", "m.mlir", "--db", "d"], files={"m.mlir": SMALL, "d/keep": b""},
         error=r"^error: cannot write --db 'd': it is a folder"),
    Case("o-under-a-file", ["opt", "m.mlir", "-sdy-close-shardings", "-o", "m.mlir/x"], files={"m.mlir": SMALL},
         error=r"^error: cannot write -o 'm.mlir/x': '.*m.mlir' is not a folder"),
    Case("facts-o-under-a-file", ["facts", "m.mlir", "-o", "m.mlir/f"], files={"m.mlir": SMALL},
         error=r"^error: cannot write -o .* is not a folder"),
    Case("facts-o-is-a-file", ["facts", "m.mlir", "-o", "m.mlir"], files={"m.mlir": SMALL},
         error=r"^error: cannot write -o .* is not a folder"),
    Case("o-and-db-same", ["run", "m.mlir", "-o", "x", "--db", "x"], files={"m.mlir": SMALL}, exit=2,
         error=r"^error: -o 'x' and --db 'x' name the same file"),
    Case("o-and-report-same", ["run", "m.mlir", "-o", "x", "--report", "./x"], files={"m.mlir": SMALL}, exit=2,
         error=r"^error: -o 'x' and --report './x' name the same file"),
    # (said before the module is read: bad usage needs no wait for the pipeline)
    Case("o-and-report-same-bad-module", ["run", "m.mlir", "-o", "x", "--report", "x"], files={"m.mlir": b"}"},
         exit=2, error=r"^error: -o 'x' and --report 'x' name the same file"),
    Case("mpmd-o-and-json-same-bad-module", ["mpmd", "m.mlir", "-o", "x", "--json", "x"], files={"m.mlir": b"}"},
         exit=2, error=r"^error: -o 'x' and --json 'x' name the same file"),
    Case("db-stdout", ["run", "m.mlir", "--db", "-"], files={"m.mlir": SMALL}, exit=2, error=USAGE),
    Case("o-failing-leaves-no-db", ["run", "m.mlir", "-o", "/dev/full", "--db", "x.duckdb"],      # cause
         files={"m.mlir": SMALL}, error=r"^error: cannot write '/dev/full': No space left"),
    # ---- engines
    Case("engine-env-bogus", ["run", "m.mlir"], files={"m.mlir": SMALL}, env={"SDYLOG_ENGINE": "bogus"},
         error=r"^error: unknown Datalog engine 'bogus' \(from SDYLOG_ENGINE\)"),
    # Soufflé cross-checks `sdylog datalog` only: no other command has --engine
    *(Case(f"{command}-engine", [command, "m.mlir", *more, "--engine", "memory"], files={"m.mlir": SMALL}, exit=2,
           error=r"(?s)^Usage: .*No such option '--engine'")
      for command, more in [("run", []), ("simulate", []), ("facts", ["-o", "out"]), ("explain", ["%arg0"])]),
    Case("opt-engine", ["opt", "m.mlir", "-sdy-basic-propagate", "--engine", "souffle"], files={"m.mlir": SMALL},
         exit=2, error=r"^error: unknown flag '--engine' \(sdylog opt --help lists the passes\)"),
    # ... and $SDYLOG_ENGINE=souffle is refused there, naming it
    *(Case(f"{command}-engine-env-souffle", [command, "m.mlir", *more], files={"m.mlir": SMALL},
           env={"SDYLOG_ENGINE": "souffle"},
           error=r"^error: the souffle engine \(from \$SDYLOG_ENGINE\) runs only in `sdylog datalog "
                 r"PROGRAM.dl --engine souffle`, a cross-check")
      for command, more in [("run", []), ("opt", ["-sdy-basic-propagate"]), ("mpmd", [])]),
    # DuckDB is the --db file format, no longer an engine: the engines there are, named
    Case("engine-duckdb", ["datalog", "p.dl", "--engine", "duckdb"], files={"p.dl": b""}, exit=2,
         error=r"(?s)^Usage: .*'duckdb' is not one of 'memory', 'souffle'"),
    # ---- run / query / explain options
    Case("query-unknown-relation", ["query", "m.mlir", "nope"], files={"m.mlir": SMALL},
         error=r"^error: unknown relation 'nope'"),
    Case("query-bad-column", ["query", "m.mlir", "final_dim_axis", "--where", "zz=1"], files={"m.mlir": SMALL},
         error=r"has no column 'zz'"),
    Case("query-where-no-equals", ["query", "m.mlir", "final_dim_axis", "--where", "axis"], files={"m.mlir": SMALL},
         error=r"error: "),
    Case("query-where-type", ["query", "m.mlir", "final_dim_axis", "--where", "t=abc"], files={"m.mlir": SMALL},
         error=r"error: "),
    Case("query-limit-negative", ["query", "m.mlir", "final_dim_axis", "--limit", "-1"],         # cause
         files={"m.mlir": SMALL}, exit=2, error=USAGE),
    Case("query-limit-text", ["query", "m.mlir", "final_dim_axis", "--limit", "x"], files={"m.mlir": SMALL},
         exit=2, error=USAGE),
    Case("explain-depth-negative", ["explain", "m.mlir", "%0", "--tree", "--depth", "-1"],       # cause
         files={"m.mlir": SMALL}, exit=2, error=USAGE),
    Case("explain-bad-spec", ["explain", "m.mlir", "0%"], files={"m.mlir": SMALL},
         error=r"^error: cannot read the value '0%'"),
    Case("explain-no-such-value", ["explain", "m.mlir", "%99"], files={"m.mlir": SMALL}, error=r"error: .*%99"),
    Case("explain-no-such-func", ["explain", "m.mlir", "@nope:%0"], files={"m.mlir": SMALL}, error=r"error: .*nope"),
    Case("explain-result-out-of-range", ["explain", "m.mlir", "@main:result7"], files={"m.mlir": SMALL},
         error=r"error: "),
    Case("explain-arg-out-of-range", ["explain", "m.mlir", "@main:arg7"], files={"m.mlir": SMALL}, error=r"error: "),
    Case("explain-bad-input", ["explain", "m.mlir", "%0"], files={"m.mlir": b"// caf\xe9\n"}, error=LOCATED),
    Case("query-bad-input", ["query", "-", "final_dim_axis"], stdin=b"func.func @main(", error=LOCATED),
    Case("run-missing-argument", ["run"], exit=2, error=USAGE),
    Case("unknown-command", ["rnu", "m.mlir"], exit=2, error=USAGE),
    Case("unknown-option", ["run", "m.mlir", "--nope"], files={"m.mlir": SMALL}, exit=2, error=USAGE),
    # ---- opt flags
    Case("opt-unknown-pass", ["opt", "m.mlir", "-sdy-basic-propgate"], files={"m.mlir": SMALL}, exit=2,
         error=r"^error: unknown pass '-sdy-basic-propgate': did you mean .*'-sdy-basic-propagate'"),
    Case("opt-unknown-flag", ["opt", "m.mlir", "--split-inptu-file"], files={"m.mlir": SMALL}, exit=2,
         error=r"^error: unknown flag '--split-inptu-file': did you mean '-split-input-file'\?"),
    Case("opt-unknown-option", ["opt", "m.mlir", "-sdy-basic-propagate=conservativ-propagation=true"],
         files={"m.mlir": SMALL}, exit=2, error=r"has no option 'conservativ-propagation': did you mean 'conservative-propagation'\?"),
    Case("opt-braced-unknown-option", ["opt", "m.mlir", "-sdy-basic-propagate{keep-rules=true}"],
         files={"m.mlir": SMALL}, exit=2, error=r"has no option 'keep-rules'"),
    Case("opt-bad-bool", ["opt", "m.mlir", "-sdy-basic-propagate=keep-sharding-rules=maybe"],
         files={"m.mlir": SMALL}, exit=2, error=r"takes true or false"),
    Case("opt-bad-int", ["opt", "m.mlir", "-sdy-convert-global-to-local=replica-count=x"],
         files={"m.mlir": SMALL}, exit=2, error=r"takes an integer"),
    Case("opt-o-without-name", ["opt", "m.mlir", "-sdy-close-shardings", "-o"], files={"m.mlir": SMALL}, exit=2,
         error=r"^error: -o needs a file name"),
    Case("opt-two-inputs", ["opt", "m.mlir", "n.mlir"], files={"m.mlir": SMALL}, exit=2, error=r"one input file"),
    Case("opt-no-input", ["opt", "-sdy-close-shardings"], exit=2, error=r"no input file"),
    Case("opt-pipeline-unclosed", ["opt", "m.mlir", "--pass-pipeline=builtin.module(sdy-close-shardings"],
         files={"m.mlir": SMALL}, exit=2, error=r"^error: --pass-pipeline: missing '\)'"),
    Case("opt-pipeline-bad-anchor", ["opt", "m.mlir", "--pass-pipeline=builtin.module(foo.bar(sdy-close-shardings))"],
         files={"m.mlir": SMALL}, exit=2, error=r"cannot nest passes under 'foo.bar'"),
    Case("opt-pipeline-unknown-pass", ["opt", "m.mlir", "--pass-pipeline=builtin.module(sdy-close-sharding)"],
         files={"m.mlir": SMALL}, exit=2, error=r"unknown pass '-sdy-close-sharding': did you mean"),
    Case("opt-pipeline-brace", ["opt", "m.mlir", "--pass-pipeline=builtin.module(sdy-basic-propagate{x=1)"],
         files={"m.mlir": SMALL}, exit=2, error=r"missing '}'"),
    Case("opt-pipeline-empty", ["opt", "m.mlir", "--pass-pipeline="], files={"m.mlir": SMALL}, exit=2,
         error=r"expected a pass name"),
    Case("opt-pipeline-trailing", ["opt", "m.mlir", "--pass-pipeline=builtin.module(sdy-close-shardings))"],
         files={"m.mlir": SMALL}, exit=2, error=r"unexpected '\)'"),
    Case("opt-split-bad-chunk", ["opt", "m.mlir", "-split-input-file", "-sdy-close-shardings"],
         files={"m.mlir": SMALL + b"// -----\nfunc.func @main(\n"}, error=r"^m.mlir:7:\d+: error: "),
    # ---- datalog
    Case("dl-missing-program", ["datalog", "nope.dl"], error=r"^error: cannot read 'nope.dl'"),
    Case("dl-syntax", ["datalog", "p.dl"], files={"p.dl": b".decl r(x: number)\nr(1) :- .\n"}, error=LOCATED),
    Case("dl-undeclared", ["datalog", "p.dl"], files={"p.dl": b".decl r(x: number)\nr(x) :- q(x).\n"},
         error=r"^p.dl:2:9: error: "),
    Case("dl-non-utf8", ["datalog", "p.dl"], files={"p.dl": b"// \xe9\n.decl r(x: number)\n"},
         error=r"^p.dl:1:4: error: byte 0xe9 is not UTF-8"),
    Case("dl-missing-include", ["datalog", "p.dl"], files={"p.dl": b'#include "nope.dl"\n'},
         error=r"^p.dl:1:\d+: error: cannot find included file 'nope.dl'"),
    Case("dl-missing-facts", ["datalog", "p.dl", "-D", "-"], files={"p.dl": (DL_HEAD + "r(x) :- e(x).\n").encode()},
         error=r"^error: cannot open fact file './e.facts' of relation 'e'"),
    Case("dl-unsupported-directive", ["datalog", "p.dl"], files={"p.dl": b".decl r(x: number)\n.functor f(number):number\n"},
         error=r"error: "),
]

# runtime errors and bad facts, with relations held in C and in Python
for where, held in (("c", {}), ("python", {"SDYLOG_NATIVE": "0"})):
    CASES += [
        Case(f"dl-division-by-zero-{where}", ["datalog", "p.dl", "-D", "-"], env=held,          # cause
             files={"p.dl": (DL_HEAD + "r(x) :- e(x).\nr(10 / x) :- e(x).\n").encode(), "e.facts": b"0\n"},
             error=r"^p.dl:6:1: error: division by zero in a rule of 'r'$"),
        Case(f"dl-modulo-by-zero-{where}", ["datalog", "p.dl", "-D", "-"], env=held,
             files={"p.dl": (DL_HEAD + "r(10 % x) :- e(x).\n").encode(), "e.facts": b"0\n"},
             error=r"^p.dl:5:1: error: division by zero in a rule of 'r'$"),
        Case(f"dl-bad-fact-{where}", ["datalog", "p.dl", "-D", "-"], env=held,                  # cause
             files={"p.dl": (DL_HEAD + "r(x) :- e(x).\n").encode(), "e.facts": b"1\n2x\n"},
             error=r"^./e.facts:2:1: error: facts of 'e': cannot read '2x' as a number$"),
        Case(f"dl-fact-width-{where}", ["datalog", "p.dl", "-D", "-"], env=held,
             files={"p.dl": (DL_HEAD + "r(x) :- e(x).\n").encode(), "e.facts": b"1\t2\n"},
             error=r"^./e.facts:1:1: error: facts of 'e': 2 columns, the relation has 1$"),
        Case(f"dl-fact-not-utf8-{where}", ["datalog", "p.dl", "-D", "-"], env=held,
             files={"p.dl": b".decl e(x: symbol)\n.input e\n.decl r(x: symbol)\n.output r\nr(x) :- e(x).\n",
                    "e.facts": b"a\n\xe9\n"}, error=r"^./e.facts:2:1: error: .*not UTF-8"),
        Case(f"dl-to-number-{where}", ["datalog", "p.dl", "-D", "-"], env=held,
             files={"p.dl": b'.decl r(x: number)\n.output r\nr(to_number("zz")).\n'},
             error=r"^p.dl:3:1: error: .*to_number\(\"zz\"\) in a rule of 'r'$"),
    ]
CASES += [
    Case("dl-engine-env-memory", ["datalog", "p.dl", "-D", "out"],                                       # cause
         files={"p.dl": (DL_HEAD + "r(x) :- e(x).\nr(10 / x) :- e(x).\n").encode(), "e.facts": b"0\n",
                "out/keep": b""}, env={"SDYLOG_ENGINE": "memory"},
         error=r"^p.dl:6:1: error: division by zero in a rule of 'r'$"),
    Case("dl-engine-bogus", ["datalog", "p.dl", "--engine", "nope"], files={"p.dl": b""}, exit=2, error=USAGE),
    # ---- simulate / interpret
    Case("simulate-rtol-negative", ["simulate", "m.mlir", "--rtol", "-1"], files={"m.mlir": SMALL},      # cause
         exit=2, error=USAGE),
    Case("simulate-atol-negative", ["simulate", "m.mlir", "--atol", "-0.5"], files={"m.mlir": SMALL},
         exit=2, error=USAGE),
    Case("simulate-seed-negative", ["simulate", "m.mlir", "--seed", "-3"], files={"m.mlir": SMALL},
         exit=2, error=USAGE),
    Case("simulate-no-entry", ["simulate", "m.mlir", "--entry", "nope"], files={"m.mlir": SMALL}, error="error: "),
    Case("simulate-bad-pipeline", ["simulate", "m.mlir", "--pipeline", "-sdy-nope"], files={"m.mlir": SMALL},
         exit=2, error=r"unknown pass '-sdy-nope'"),
    Case("simulate-bad-pass-options", ["simulate", "m.mlir", "--pass-options", "nope=1"], files={"m.mlir": SMALL},
         exit=2, error=r"has no option 'nope'"),
    Case("simulate-bad-input", ["simulate", "-"], stdin=b"\xff", error=LOCATED),
    Case("simulate-huge-tensor", ["simulate", "m.mlir"], files={"m.mlir": HUGE_DIMS},
         error=r"^m.mlir:2:1: error: cannot make the random input of argument 0 .* array is too big"),
    Case("interpret-no-entry", ["interpret", "m.mlir", "--entry", "nope"], files={"m.mlir": SMALL}, error="error: "),
    Case("interpret-bad-input", ["interpret", "m.mlir"], files={"m.mlir": SMALL[:30]}, error=LOCATED),
    # ---- facts
    Case("facts-bad-input", ["facts", "m.mlir", "-o", "f"], files={"m.mlir": SELF_CALL[:-3]}, error=LOCATED),
    Case("facts-missing-o", ["facts", "m.mlir"], files={"m.mlir": SMALL}, exit=2, error=USAGE),
]


@pytest.fixture(scope="module")
def worker():
    with CliWorker() as w:
        yield w


def check(case: Case, r) -> None:
    assert r.crash == "", r.crash
    assert r.traceback is None, r.traceback
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert r.exit_code == case.exit, (r.exit_code, r.stderr)
    if case.exit == 0:
        return
    assert r.stdout == "", r.stdout
    assert r.written == [], r.written
    first = r.stderr.splitlines()[0] if r.stderr else ""
    assert re.search(case.error, first if case.error.startswith("^") else r.stderr), r.stderr


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input(worker, case):
    check(case, worker.run(case.args, case.files, case.stdin, case.env))


def test_the_suite_counts():
    """(The issue asks for the number: printed with -s, e.g.
    `python -m pytest tests/commands/test_bad_inputs.py -s`.)"""
    print(f"\nbad-input suite: {len(CASES)} cases")
    assert len({c.id for c in CASES}) == len(CASES)
