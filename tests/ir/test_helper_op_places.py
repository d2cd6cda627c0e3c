"""Errors, warnings and trace lines of an op inside a JAX helper function
(`@_pad`: its ops carry only a name, `loc("reshape")`) name the helper's
call site (format_location of the op, not of its bare location:
sdylog.ir.locations.op_source)."""
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from jaxlib.mlir import ir

from sdylog.ir.diagnostics import SdylogError
from sdylog.ir.module import parse_module, verify_module
from sdylog.ir.rewrite import emit_warning
from sdylog.ir.walk import walk_ops
from sdylog.passes.convert_global_to_local import _verify
from sdylog.simulate.trace import Tracer, tag_ops

PAD = Path(__file__).parent / "data" / "jax_pad_edge.mlir"   # jnp.pad(x, ((1, 2), (3, 0)), mode="edge")
CALL_SITE = "cases35.py:136:29"


def _reshape(module):
    return next(op for op in walk_ops(module.operation) if op.name == "stablehlo.reshape")


def _broken():
    """The module with @_pad's first reshape giving 3x3 of 8 elements."""
    module = parse_module(PAD.read_text(), str(PAD))
    reshape = _reshape(module)
    assert str(reshape.location) == 'loc("reshape")'
    with module.context, ir.Location.unknown():
        reshape.results[0].set_type(ir.RankedTensorType.get([3, 3], ir.F32Type.get()))
    return module


@pytest.mark.parametrize("verify", [verify_module, _verify], ids=["verify_module", "per-device"])
def test_verifier_error_in_a_helper_names_the_call_site(verify):
    with pytest.raises(SdylogError) as e:
        verify(_broken(), str(PAD))
    assert e.value.location == CALL_SITE, str(e.value)


def test_warning_at_an_op_in_a_helper_names_the_call_site(capsys):
    module = parse_module(PAD.read_text(), str(PAD))
    emit_warning(_reshape(module), "look", str(PAD))
    assert capsys.readouterr().err == f"{CALL_SITE}: warning: look\n"


def test_trace_of_an_op_in_a_helper_names_the_call_site():
    module = parse_module(PAD.read_text(), str(PAD))
    tag_ops(module)
    tracer = Tracer(str(PAD))
    tracer.recorder(_reshape(module), [0])({0: np.zeros((1, 8), np.float32)}, SimpleNamespace(device_id=0))
    (traced,) = tracer.records.values()
    assert traced.location == CALL_SITE
