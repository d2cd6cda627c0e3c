"""Reading, verifying and printing modules; diagnostics for bad input."""
import subprocess
import sys

import pytest

from sdylog.ir import SdylogError, parse_module, print_module, split_input

GOOD = """sdy.mesh @mesh = <["x"=4, "y"=2]>
func.func @f(%a: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x4xf32> {
  %0 = stablehlo.add %a, %a : tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}
"""


def sdylog(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "sdylog.cli", *args], input=stdin,
                          capture_output=True, text=True)


def test_print_is_mlir_printer_output():
    text = print_module(parse_module(GOOD))
    assert 'sdy.mesh @mesh = <["x"=4, "y"=2]>' in text
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in text
    assert print_module(parse_module(text)) == text  # printing is a fixed point
    assert print_module(parse_module(text), verified=True) == text   # (without the printer's own verify)


@pytest.mark.parametrize("text, where, what", [
    ("func.func @f( {", "in.mlir:1:14", "expected non-function type"),
    ("func.func @f() {\n  %0 = stablehlo.foo : () -> ()\n}", "in.mlir:2:8", "custom op 'stablehlo.foo' is unknown"),
    (GOOD.replace('{"x"}, {}', '{"z"}, {}'), "in.mlir:2:1", 'unknown axis name: "z"'),
    (GOOD.replace('{"x"}, {}', '{"x"}, {"x"}'), "in.mlir:2:1", "duplicate axis"),
    # (the verifier's, not the parser's: parsing verifies)
    ("func.func @f(%a: tensor<2xf32>) -> tensor<4xf32> {\n  return %a : tensor<2xf32>\n}", "in.mlir:2:3",
     "type of return operand 0"),
])
def test_bad_input_is_located(text, where, what):
    with pytest.raises(SdylogError) as e:
        parse_module(text, "in.mlir")
    assert str(e.value).startswith(f"{where}: error: ")
    assert what in str(e.value)


def test_cli_reports_error_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f() {\n  %0 = stablehlo.foo : () -> ()\n}\n")
    out = tmp_path / "out.mlir"
    p = sdylog("opt", str(bad), "-sdy-populate-op-sharding-rules", "-o", str(out))
    assert p.returncode == 1
    assert p.stderr.startswith(f"{bad}:2:8: error: custom op 'stablehlo.foo' is unknown")
    assert "Traceback" not in p.stderr
    assert not out.exists() and list(tmp_path.iterdir()) == [bad]


def test_cli_stdin_and_output_file(tmp_path):
    out = tmp_path / "out.mlir"
    p = sdylog("opt", "-", "-sdy-populate-op-sharding-rules", "-o", str(out), stdin=GOOD)
    assert p.returncode == 0, p.stderr
    assert "sdy.sharding_rule" in out.read_text()


def test_cli_unknown_pass_and_option():
    p = sdylog("opt", "-", "-sdy-no-such-pass", stdin=GOOD)
    assert p.returncode == 2 and "unknown pass '-sdy-no-such-pass'" in p.stderr   # (a usage error)
    p = sdylog("opt", "-", "-sdy-populate-op-sharding-rules=bogus=1", stdin=GOOD)
    assert p.returncode == 2 and "has no option 'bogus'" in p.stderr


def test_cli_missing_file():
    p = sdylog("opt", "/nonexistent.mlir")
    assert p.returncode == 1 and "cannot read /nonexistent.mlir" in p.stderr


def test_split_input_keeps_line_numbers():
    text = "a\n// -----\nb\nc\n// -----\nd\n"
    chunks = split_input(text)
    assert len(chunks) == 3
    assert chunks[0] == "a\n"
    assert chunks[1].splitlines()[2:] == ["b", "c"]   # "b" stays on line 3
    assert chunks[2].splitlines()[5:] == ["d"]


def test_split_input_file_errors_name_the_original_line(tmp_path):
    f = tmp_path / "two.mlir"
    f.write_text(GOOD + "// -----\nfunc.func @g() {\n  %0 = stablehlo.foo : () -> ()\n}\n")
    p = sdylog("opt", str(f), "-split-input-file")
    assert p.returncode == 1
    assert p.stderr.startswith(f"{f}:8:8: error:")


def test_modules_parsed_without_a_context_share_one_per_flag():
    """(context.shared_context: made once per process, as a compiler does; the
    flag for unregistered dialects stays that of its own context.)"""
    unregistered = 'func.func @f() {\n  "x.op"() : () -> ()\n  return\n}\n'
    a, b = parse_module(GOOD), parse_module(GOOD)
    assert a.context is b.context
    lenient = parse_module(unregistered, allow_unregistered=True)
    assert lenient.context is not a.context and lenient.context.allow_unregistered_dialects
    with pytest.raises(SdylogError, match="unregistered"):
        parse_module(unregistered)
    assert print_module(parse_module(GOOD)) == print_module(a)
