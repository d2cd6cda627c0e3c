"""What each relation of a program means: the `//` comment lines right above
its `.decl` in its rule file (every relation is declared once with its
meaning and columns: rules/schema.dl, rules/propagation/*.dl), for
`sdylog query --list` and the table `relations` of a `--db` file."""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class RelationDoc:
    name: str
    kind: str             # "input" (loaded facts) or "derived" (the rules compute it)
    columns: str          # "t: Tensor, d: number, axis: symbol"
    doc: str              # the comment above the .decl, as one paragraph ("" when none)
    where: str            # "propagation/core.dl:120"


def relation_docs(program) -> dict[str, RelationDoc]:
    """Every declared relation of `program`, by name, in declaration order."""
    inputs = set(program.inputs)
    out = {}
    for name, decl in program.relations.items():
        loc = decl.loc
        path = loc and _source(program, loc.file)
        out[name] = RelationDoc(
            name, "input" if name in inputs else "derived",
            ", ".join(f"{c.name}: {c.type_name}" for c in decl.columns),
            (_comment_above(path, loc.line) or _entry_in_comments(path, name)) if loc else "",
            f"{_short(loc.file)}:{loc.line}" if loc else "?")
    return out


def _source(program, shown: str) -> str:
    """The file a location shows: locations are relative to the folder the
    program was loaded from, which for a cached program (cache.py) was
    another process's; the program's files are the paths it read."""
    return next((f for f in program.files if f == shown or f.endswith(os.sep + shown)), shown)


def _comment_above(path: str, line: int) -> str:
    lines = _lines(path)
    text = []
    k = line - 2          # (line is 1-based: the .decl's own line is lines[line - 1])
    while 0 <= k < len(lines) and lines[k].lstrip().startswith("//"):
        line = lines[k].lstrip()[2:].strip()
        if line.startswith("---"):   # a section's heading (`// ---- meshes`), not this relation's
            break
        text.append(line)
        k -= 1
    return " ".join(reversed(text)).strip()


def _entry_in_comments(path: str, name: str) -> str:
    """A comment block that documents several relations, one entry each:
    `// name(a, b): meaning`, continued by lines indented further."""
    lines = _lines(path)
    for k, line in enumerate(lines):
        text = line.lstrip()
        if not (text.startswith("//") and text[2:].strip().startswith(f"{name}(")):
            continue
        out = [text[2:].strip()]
        for more in lines[k + 1:]:
            more = more.lstrip()
            if not more.startswith("//   "):
                break
            out.append(more[2:].strip())
        return " ".join(out)
    return ""


@lru_cache(maxsize=64)
def _lines(path: str) -> tuple[str, ...]:
    try:
        with open(path, encoding="utf-8") as f:
            return tuple(f.read().splitlines())
    except OSError:
        return ()


def _short(path: str) -> str:
    """`propagation/core.dl` of a rule file (what follows `rules/`)."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[parts.index("rules") + 1:]) if "rules" in parts else parts[-1]
