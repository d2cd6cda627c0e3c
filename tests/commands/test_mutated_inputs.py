"""Property: a corpus module mutated (truncated, bytes flipped, lines
deleted, attributes swapped) and fed to run, opt, explain, query or simulate
gets a diagnostic or a result, never a traceback, an internal error or a
crash, and a failing command writes nothing (no partial output).

A small fixed-seed sample runs in the normal suite; SDYLOG_FUZZ_EXAMPLES=N
runs N examples (e.g. 500) with the same seed."""
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from cli_worker import CliWorker
from small_models import small_models

SOURCES = [p.read_bytes() for p in small_models()]
EXAMPLES = int(os.environ.get("SDYLOG_FUZZ_EXAMPLES", "12"))
# attribute-like spans whose swap keeps the text plausible: shardings, meshes, dense values, key = value pairs
_ATTRIBUTE = re.compile(rb'#sdy\.sharding(?:_per_value)?<[^>]*>|<\[[^\]]*\]>|dense<[^>]*>|\b[\w.]+ = [^,}\s]+')

COMMANDS = [
    ["run", "m.mlir", "-q", "-o", "out.mlir", "--db", "out.duckdb"],
    ["opt", "m.mlir", "-sdy-propagation-pipeline", "-o", "out.mlir"],
    ["explain", "m.mlir", "%0"],
    ["query", "m.mlir", "final_dim_axis", "--limit", "5"],
    ["simulate", "m.mlir"],
]


@st.composite
def mutated(draw) -> bytes:
    text = draw(st.sampled_from(SOURCES))
    kind = draw(st.sampled_from(["truncate", "flip", "delete-lines", "swap-attributes"]))
    if kind == "truncate":
        return text[:draw(st.integers(0, len(text) - 1))]
    if kind == "flip":
        data = bytearray(text)
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        return bytes(data)
    if kind == "delete-lines":
        lines = text.splitlines(keepends=True)
        for _ in range(draw(st.integers(1, 3))):
            if lines:
                del lines[draw(st.integers(0, len(lines) - 1))]
        return b"".join(lines)
    spans = [m.span() for m in _ATTRIBUTE.finditer(text)]
    if len(spans) < 2:
        return text
    i, j = sorted(draw(st.lists(st.integers(0, len(spans) - 1), min_size=2, max_size=2, unique=True)))
    (a0, a1), (b0, b1) = spans[i], spans[j]
    return text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]


@pytest.fixture(scope="module")
def worker():
    with CliWorker() as w:
        yield w


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=mutated(), command=st.sampled_from(COMMANDS))
def test_mutated_corpus_files_get_diagnostics_never_tracebacks(worker, text, command):
    r = worker.run(command, files={"m.mlir": text})
    assert r.crash == "", r.crash
    assert r.traceback is None, r.traceback
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr, r.stderr
    assert r.exit_code in (0, 1), (r.exit_code, r.stderr)
    if r.exit_code == 1:
        assert re.match(r"([^\s:]+:\d+:\d+: )?error: ", r.stderr), r.stderr
        if command[0] != "simulate":      # (simulate prints its report, then exits 1 on a mismatch)
            assert r.stdout == "", r.stdout
        assert r.written == [], r.written
    elif command[0] == "run":
        assert r.written == ["out.duckdb", "out.mlir"], r.written
