"""An MLIR context with the dialects sdylog reads: builtin, func, stablehlo, chlo, sdy."""
from functools import cache

from jaxlib.mlir import ir
from jaxlib.mlir._mlir_libs import _jax_mlir_ext
# (the Python classes of the ops the bindings hand out: imported here, not by the first op cast to one)
from jaxlib.mlir.dialects import builtin, chlo, func, sdy, stablehlo  # noqa: F401
from jaxlib.mlir._mlir_libs import _mlir


# The bindings hand out a dense elements attribute as DenseIntElementsAttr or
# DenseFPElementsAttr, and raise TypeError for any other element type (a
# complex constant's `value`), wherever it is read: by name, by index (where
# the error aborts the process) or in `op.attributes.items()`. This caster
# hands those out as the generic DenseElementsAttr instead (str, type, splat,
# equality, copying onto another op).
def _dense_elements(attr: ir.Attribute) -> ir.Attribute:
    element = ir.ShapedType(attr.type).element_type
    if isinstance(element, ir.FloatType):
        return ir.DenseFPElementsAttr(attr)
    if isinstance(element, (ir.IntegerType, ir.IndexType)):
        return ir.DenseIntElementsAttr(attr)
    return ir.DenseElementsAttr(attr)



def make_context(allow_unregistered: bool = False) -> ir.Context:
    """A new context (a test that changes one has its own)."""
    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)  # func, arith, ... as JAX registers them
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    sdy.register_dialect(ctx)
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    ctx.allow_unregistered_dialects = allow_unregistered
    with ctx:  # (the class has no static typeid; an instance has)
        typeid = ir.Attribute.parse("dense<0> : tensor<i1>").typeid
    _mlir.register_type_caster(typeid, replace=True)(_dense_elements)
    # MLIR's verifier (after parsing, and `sdylog opt` after each pass) checks a
    # module's functions on the context's thread pool when it has several:
    # sdylog's modules have few, each verified in microseconds, and waking the
    # pool's threads costs more than that (a tenth of a small model's run, and
    # milliseconds on a busy machine). One thread does the same work.
    ctx.enable_multithreading(False)
    return ctx


@cache
def shared_context(allow_unregistered: bool = False) -> ir.Context:
    """The process's context for modules parsed without one (module.py), one
    per flag, made once as a compiler does: making one costs ~2 ms, a tenth of
    a small module's whole run. A run leaves nothing in it but what MLIR
    uniques (types, attributes, locations; a process parsing many different
    modules keeps theirs): sdylog attaches no diagnostic handler to it (errors
    come as MLIRError, with their diagnostics) and changes none of its flags."""
    return make_context(allow_unregistered)
