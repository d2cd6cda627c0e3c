#!/usr/bin/env python3
"""Shrink a program on which sdylog and Shardy differ (by hand, before it
becomes a regression case):

    python tests/generators/shrink.py PROGRAM.mlir [--flags "-sdy-propagation-pipeline"]
        [--reshards 0|1] [-o SMALL.mlir]

Greedy, on the text of a generated program (vs_shardy.py --save writes
them): it drops one op line at a time, or one value that a `return`
returns (with its result type and attributes in the function's
signature), keeping each cut after which the program still parses and
sdylog still differs from Shardy (or still fails, if it failed), until no
cut is left. hypothesis shrinks what the property tests find; this is for
the large programs of the long runs.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/, for `generators`

from generators import shardy_differential as diff            # noqa: E402
from generators.stablehlo_programs import GeneratorError, check_text  # noqa: E402

_OP_LINE = re.compile(r"\s*(%[\w#:]+ = |sdy\.sharding_group )")
_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def split_top(text: str) -> list[str]:
    """`text` split at the commas outside any brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in _BRACKETS:
            depth += 1
        elif ch in _BRACKETS.values() and not (ch == ">" and text[i - 1] == "-"):
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _closing(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] in _BRACKETS:
            depth += 1
        elif text[i] in _BRACKETS.values() and not (text[i] == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced brackets")


def drop_returned(lines: list[str], ret: int, drop: set[int]) -> list[str] | None:
    """`lines` without the operands `drop` of the top-level `return` at line
    `ret`, and without their types and attributes in its function's result
    list (None when that is not possible or would leave none)."""
    m = re.match(r"(\s*)return (.*) : (.*)$", lines[ret])
    head = max((i for i in range(ret) if lines[i].startswith("func.func")), default=None)
    if not m or head is None or "-> (" not in lines[head]:
        return None
    values, types = split_top(m.group(2)), split_top(m.group(3))
    sig = lines[head]
    start = sig.index("-> (") + 3
    end = _closing(sig, start)
    results = split_top(sig[start + 1:end])
    if len(values) != len(types) or len(results) != len(values) or len(drop) >= len(values):
        return None
    keep = [k for k in range(len(values)) if k not in drop]
    out = list(lines)
    out[head] = sig[:start] + "(" + ", ".join(results[k] for k in keep) + ")" + sig[end + 1:]
    out[ret] = f"{m.group(1)}return {', '.join(values[k] for k in keep)} : {', '.join(types[k] for k in keep)}"
    return out


def fewer_returns(lines: list[str], differs) -> list[str]:
    """Drop values @main returns (its return is the first top-level one of a
    generated program): halves first, then smaller chunks."""
    ret = next((i for i, line in enumerate(lines) if line.startswith("  return ")), None)
    if ret is None:
        return lines
    n = len(split_top(lines[ret].split(" : ")[0][len("  return "):]))
    size = max(1, n // 2)
    while size >= 1:
        k = n - size
        while k >= 0:
            smaller = drop_returned(lines, ret, set(range(max(k, 0), k + size)))
            if smaller is not None and differs(smaller):
                lines, n = smaller, n - size
            k -= size
        size //= 2
    return lines


def fewer_ops(lines: list[str], differs) -> list[str]:
    """Drop op lines one at a time, last first (an op's users go before it)."""
    for i in reversed(range(len(lines))):
        if i < len(lines) and _OP_LINE.match(lines[i]) and not lines[i].rstrip().endswith(("{", "(")):
            smaller = lines[:i] + lines[i + 1:]
            if differs(smaller):
                lines = smaller
    return lines


_NAME = re.compile(r"%[A-Za-z0-9_]+")


def without_dead_priorities(lines: list[str]) -> list[str]:
    """`lines` without user priorities on ops whose results nothing live
    reads: a cut can leave such an op, and jaxlib's Shardy crashes on it
    (stablehlo_programs.FunctionBuilder.finish says why)."""
    defined = {i: set(_NAME.findall(line.split(" = ", 1)[0])) for i, line in enumerate(lines) if _OP_LINE.match(line)
               and " = " in line}
    live = set()
    for i, line in enumerate(lines):
        if i not in defined:
            live.update(_NAME.findall(line))
    changed = True
    while changed:
        changed = False
        for i, names in defined.items():
            if names & live and not set(_NAME.findall(lines[i])) <= live:
                live.update(_NAME.findall(lines[i]))
                changed = True
    return [re.sub(r"\}p\d", "}", line) if i in defined and not defined[i] & live else line
            for i, line in enumerate(lines)]


def still_differs(text: str, flags: list[str], reshards: bool | None, failing: bool) -> bool:
    try:
        check_text(text)
    except GeneratorError:
        return False
    try:
        result = diff.compare(text, flags, reshards)
    except diff.OracleError:
        return False
    except Exception:   # sdylog failed
        return failing
    return not failing and not result.full


def shrink(text: str, flags: list[str], reshards: bool | None = None) -> str:
    try:
        failing = False
        if diff.compare(text, flags, reshards).full:
            raise ValueError("sdylog and Shardy agree on this program")
    except diff.OracleError as e:
        raise ValueError(f"Shardy rejects this program: {e}") from None
    except ValueError:
        raise
    except Exception:
        failing = True

    def differs(smaller: list[str]) -> bool:
        smaller[:] = without_dead_priorities(smaller)
        return still_differs("\n".join(smaller) + "\n", flags, reshards, failing)

    lines = text.rstrip("\n").splitlines()
    while True:
        before = "\n".join(lines)
        lines = fewer_ops(fewer_returns(lines, differs), differs)
        if "\n".join(lines) == before:
            return before + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("program")
    ap.add_argument("--flags", default=diff.PIPELINE)
    ap.add_argument("--reshards", choices=("0", "1"), default=None)
    ap.add_argument("-o", "--output", default=None)
    args = ap.parse_args()
    reshards = None if args.reshards is None else args.reshards == "1"
    try:
        small = shrink(Path(args.program).read_text(), args.flags.split(), reshards)
    except ValueError as e:
        print(f"{args.program}: {e}", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(small)
    else:
        sys.stdout.write(small)
    return 0


if __name__ == "__main__":
    sys.exit(main())
