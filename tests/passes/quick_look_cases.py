"""Cases for the tests that a pass's quick look at a module agrees with its
rules.

Before evaluating its rules on the facts of every op, a partitioner pass
looks whether it has anything to do, or which ops its rules need to see,
from the census and the module's distinct shardings. Without that look (the
reference) the rules see everything; the pass must print the same either
way. The cases: Shardy's lit inputs when ../shared is there, one module per
function (the look at a file of many functions would always find
something), beside each test file's own modules.
"""
from __future__ import annotations

import importlib.util
import re
from functools import lru_cache
from pathlib import Path

import pytest

from sdylog.ir import split_input
from sdylog.ir.diagnostics import SdylogError
from sdylog.passes.driver import optimize_text, parse_flags

_CONFORMANCE_CASES = Path(__file__).resolve().parents[1] / "conformance" / "conformance_cases.py"
_FUNC = re.compile(r"^func\.func\s+(?:public\s+|private\s+)?@([\w$.-]+)", re.M)


@lru_cache(maxsize=1)
def _conformance():
    spec = importlib.util.spec_from_file_location("_quick_look_conformance_cases", _CONFORMANCE_CASES)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lit_modules(*paths: str) -> list:
    """pytest params: a module per function of each case of the lit files at
    `paths` (files or folders under shardy-tests/export); one skipped param
    without ../shared."""
    cc = _conformance()
    if cc.shared_dir() is None:
        return [pytest.param("", marks=pytest.mark.skip(reason=cc.missing_reason()))]
    run_lit = cc.script("run_lit")
    params = []
    for rel in paths:
        root = cc.tests_dir() / "export" / rel
        for path in sorted(root.rglob("*.mlir")) if root.is_dir() else [root]:
            for i, chunk in enumerate(split_input(path.read_text())):
                for name in _FUNC.findall(chunk):
                    text = run_lit.function_module(chunk, name)
                    if text is not None:
                        params.append(pytest.param(text, id=f"{path.stem}#{i}@{name}"))
    return params


def outcome(text: str, flags: list[str]) -> str:
    """What `sdylog opt` prints for `text` with `flags`, or its error."""
    try:
        return optimize_text(text, "t.mlir", parse_flags(flags))
    except SdylogError as e:
        return f"error: {e}"


def assert_look_agrees(text: str, flag: str, pass_module, look: str, monkeypatch) -> None:
    """The pass of `flag` prints the same for `text` with its look
    (`pass_module.look`) and with the look always saying yes."""
    quick = outcome(text, [flag])
    monkeypatch.setattr(pass_module, look, lambda module, ctx: True)
    assert outcome(text, [flag]) == quick
