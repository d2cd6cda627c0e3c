"""Reading MLIR locations: source positions and JAX's names (sdylog.ir.locations)."""
import pytest

from sdylog.ir.locations import (CallSiteLoc, FileLoc, FusedLoc, NameLoc, UnknownLoc, parse_location, source_of,
                                 where)

JAX_OP = ('loc("jit(mlp)/dot_general"(callsite("mlp"("/src/m.py":7:20 to :26) at '
          '"<module>"("/src/m.py":12:5 to :49))))')


def test_a_jax_op_location():
    loc = parse_location(JAX_OP)
    assert isinstance(loc, NameLoc) and isinstance(loc.child, CallSiteLoc)
    assert source_of(loc) == FileLoc("/src/m.py", 7, 20)    # the user's frame, not its caller
    w = where(JAX_OP)
    assert (w.source, w.name) == ("/src/m.py:7:20", "jit(mlp)/dot_general")
    assert str(w) == "/src/m.py:7:20 (jit(mlp)/dot_general)"


@pytest.mark.parametrize("text,source,name", [
    ('loc("x")', None, "x"),
    ("loc(\"params['w1']\")", None, "params['w1']"),
    ('loc("-":3:8)', "f.mlir:3:8", None),                # the parser's buffer name becomes the file
    ('loc("a.py":1:2 to 3:4)', "a.py:1:2", None),
    ('loc(fused["a"("f.py":1:2), "b"])', "f.py:1:2", "a"),
    ('loc(fused<"meta">["f.py":1:1, "g.py":2:2])', "f.py:1:1", None),
    ('loc(callsite("f.py":1:2 at "g.py":3:4))', "f.py:1:2", None),
    ('loc("jit:"("jit"))', None, "jit:"),
    ('loc("with \\"quote\\""("q.py":1:1))', "q.py:1:1", 'with "quote"'),
    ("loc(unknown)", None, None),
    ("loc(#loc3)", None, None),                            # not read: unknown
])
def test_location_forms(text, source, name):
    w = where(text, "f.mlir")
    assert (w.source, w.name) == (source, name)


def test_unknown_and_garbage_read_as_unknown():
    assert parse_location("loc(unknown)") == UnknownLoc()
    assert parse_location("nonsense") == UnknownLoc()
    assert parse_location('loc("unterminated') == UnknownLoc()
    assert str(where("loc(unknown)")) == "?"
    assert isinstance(parse_location('loc(fused["a", "b"])'), FusedLoc)


def test_locations_of_a_parsed_module(mlir_ctx):
    from jaxlib.mlir import ir
    module = ir.Module.parse('func.func @main(%a: tensor<4xf32> loc("x")) -> tensor<4xf32> {\n'
                             '  %0 = stablehlo.negate %a : tensor<4xf32> loc("jit(f)/neg"("m.py":3:4))\n'
                             '  return %0 : tensor<4xf32>\n}\n')
    fn = module.body.operations[0]
    arg = fn.regions[0].blocks[0].arguments[0]
    neg = fn.regions[0].blocks[0].operations[0]
    assert str(where(arg.location)) == "x"
    assert str(where(neg.location)) == "m.py:3:4 (jit(f)/neg)"
