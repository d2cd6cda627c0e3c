"""Tokens of Soufflé's language, with the `#include`-style preprocessing done
while reading (each token keeps the file:line:col it came from)."""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

from sdylog.ir.diagnostics import SdylogError, decode_utf8


@dataclass(frozen=True)
class Loc:
    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


def error(loc: Loc | None, message: str) -> SdylogError:
    return SdylogError(message, str(loc) if loc else None)


def shown_path(path: str) -> str:
    """A file's path as locations show it: relative to the current folder, unless outside it."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


@dataclass(slots=True)   # (not frozen: made for every token read, and never changed)
class Token:
    kind: str   # 'ident', 'number', 'unsigned', 'float', 'string', 'directive', 'op', 'eof'
    text: str   # the value: identifier, literal digits, unescaped string, operator
    loc: Loc
    # a variable of a function-like macro's own (in its body, no parameter): (the
    # macro, the number of the call it came from); the parser checks it meets no
    # other variable of its clause (parser.own_variables_apart)
    call: tuple[str, int] | None = None
    # a name of a function-like macro: the functions defined where it stands
    # (as C's preprocessor, which expands a call with the definitions before
    # it, not those of the end of the file)
    functions: dict | None = field(default=None, compare=False, repr=False)


# Longest first: the lexer takes the first that matches.
_OPERATORS = [":-", "<:", "<=", ">=", "!=", "::", "(", ")", "[", "]", "{", "}", ",", ".", ":",
              ";", "=", "<", ">", "!", "+", "-", "*", "/", "%", "^", "|", "_", "$", "@"]
_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r\v\f]+)
  | (?P<nl>\n)
  | (?P<linecomment>//[^\n]*)
  | (?P<blockcomment>/\*)
  | (?P<directive>\.(?:decl|type|input|output|printsize|limitsize|functor|comp|init|override
                   |pragma|plan|lattice|include|number_type|symbol_type)(?=\s|")|\.once\b)
  | (?P<float>[0-9]+\.[0-9]+(?![0-9]*\.))
  | (?P<unsigned>(?:0b[01]+|0x[0-9a-fA-F]+|[0-9]+)u)
  | (?P<number>0b[01]+|0x[0-9a-fA-F]+|[0-9]+)
  | (?P<ident>[?a-zA-Z][_?a-zA-Z0-9]*|_[_?a-zA-Z0-9]+)
  | (?P<string>"(?:\\.|[^"\\\n])*")
  | (?P<op>""" + "|".join(re.escape(o) for o in _OPERATORS) + r""")
""", re.X)
_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "n": "\n",
            "r": "\r", "t": "\t", "v": "\v"}
_PP = re.compile(r"[ \t]*(?P<hash>#)[ \t]*(?P<name>[a-z_]*)(?P<rest>.*)")
_DOT_INCLUDE = re.compile(r'[ \t]*("(?:\\.|[^"\\\n])*")')
_IDENT = re.compile(r"[_?a-zA-Z][_?a-zA-Z0-9]*$")


def _unescape(text: str, loc: Loc) -> str:
    """The value of a string literal (quotes included in `text`)."""
    def one(m):
        if m[1] not in _ESCAPES:
            raise error(loc, f"unknown escape sequence \\{m[1]}")
        return _ESCAPES[m[1]]
    return re.sub(r"\\(.)", one, text[1:-1])


@dataclass
class _Cond:
    active: bool        # this branch's lines are read
    parent_active: bool
    seen_true: bool
    loc: Loc


def _arguments(tokens: list[Token], i: int) -> tuple[list[list[Token]], int]:
    """The arguments of a macro call whose "(" is tokens[i], and the index after its ")"."""
    args, cur, depth = [], [], 0
    for j in range(i + 1, len(tokens)):
        x = tokens[j]
        if x.text in ("(", "[", "{") and x.kind == "op":
            depth += 1
        elif x.text in (")", "]", "}") and x.kind == "op":
            if depth == 0:
                return args + [cur], j + 1
            depth -= 1
        elif x.text == "," and x.kind == "op" and depth == 0:
            args.append(cur)
            cur = []
            continue
        cur.append(x)
    raise error(tokens[i].loc, "a macro call without its ')'")


def _own_variables(params: list[str], body: list[Token]) -> set[str]:
    """The variables a macro's body binds of its own: names that are no
    parameter, no relation or functor (before "("), no keyword."""
    from sdylog.datalog.parser import KEYWORDS   # (the parser imports this module)
    return {b.text for b, after in zip(body, body[1:] + [None])
            if b.kind == "ident" and b.text not in params and b.text not in KEYWORDS
            and not (after is not None and after.text == "(")}


class Preprocessor:
    """Tokens of a file and the files it includes.

    Understands what C's preprocessor (which Soufflé runs) is used for in rule
    files: `#include "f"` (searched beside the including file, then in the
    include dirs), `#define NAME [tokens]` and `#define NAME(a, b) [tokens]`
    (a call's arguments replace a and b; a variable of the body's own is
    marked with its call: Token.call), `#undef`,
    `#ifdef/#ifndef/#else/#endif` (include guards) and Soufflé's own
    `.include "f"` and `.once`. Anything else starting with `#` is an error.
    """

    def __init__(self, include_dirs: list[str] | None = None):
        self.include_dirs = list(include_dirs or [])
        self.macros: dict[str, list[Token]] = {}
        # NAME(params) -> body; replaced, never changed in place, by #define and
        # #undef, so that a call can keep the functions defined where it stands
        self.functions: dict[str, tuple[list[str], list[Token]]] = {}
        self._ncalls = 0                  # macro calls expanded (numbering them: Token.call)
        self.files: list[str] = []        # every file read, in order
        self._once: set[str] = set()
        self._stack: list[str] = []

    def tokens_of_file(self, path: str, display: str | None = None, loc: Loc | None = None) -> list[Token]:
        try:
            with open(path, "rb") as f:
                text = decode_utf8(f.read(), display or path)
        except OSError as e:
            raise error(loc, f"cannot read '{display or path}': {e.strerror}")
        return self.tokens_of_text(text, display or path, os.path.abspath(path))

    def tokens_of_text(self, text: str, filename: str, real_path: str | None = None) -> list[Token]:
        key = real_path or filename
        if key in self._stack:
            raise error(None, f"'{filename}' includes itself")
        if key in self._once:
            return []
        self._stack.append(key)
        self.files.append(real_path or filename)
        try:
            out = self._lex(text, filename, os.path.dirname(real_path) if real_path else os.getcwd())
        finally:
            self._stack.pop()
        if not self._stack:   # (the outermost file: its includes' calls are expanded with its own)
            out = self._calls(out)
        return out

    def _lex(self, text: str, filename: str, here: str) -> list[Token]:
        out: list[Token] = []
        conds: list[_Cond] = []
        line, line_start, pos, n = 1, 0, 0, len(text)
        at_line_start = True

        def active() -> bool:
            return not conds or conds[-1].active

        def skip_to(end: int) -> None:   # (past text[pos:end], counting its lines)
            nonlocal pos, line, line_start
            nls = text.count("\n", pos, end)
            if nls:
                line += nls
                line_start = text.rindex("\n", pos, end) + 1
            pos = end

        while pos < n:
            m = _PP.match(text, pos) if at_line_start else None
            at_line_start = False
            if m:   # a preprocessor line (its `.*` stops at the newline; a backslash-newline goes on)
                end = m.end()
                while end < n and text[end - 1] == "\\":
                    end = text.find("\n", end + 1)
                    end = n if end < 0 else end
                loc = Loc(filename, line, m.start("hash") - line_start + 1)
                self._directive(m["name"], text[m.start("rest"):end].replace("\\\n", " ").strip(), loc, conds, out,
                                here, active())
                skip_to(end)
                continue
            m = _TOKEN.match(text, pos)
            loc = Loc(filename, line, pos - line_start + 1)
            if not m:
                if text[pos] == '"':
                    raise error(loc, "unterminated string")
                raise error(loc, f"unexpected character '{text[pos]}'")
            kind = m.lastgroup
            if kind == "nl":
                at_line_start = True
                skip_to(m.end())
                continue
            elif kind == "blockcomment":
                close = text.find("*/", m.end())
                if close < 0:
                    raise error(loc, "unterminated comment")
                skip_to(close + 2)
                continue
            elif kind in ("ws", "linecomment"):
                pass
            elif active():
                value = m.group()
                if kind == "string":
                    value = _unescape(value, loc)
                elif kind == "ident":   # (one object per name: a cached program pickles it once)
                    value = sys.intern(value)
                if kind == "directive":
                    if value == ".once":
                        self._once.add(self._stack[-1])
                        pos = m.end()
                        continue
                    if value == ".include":
                        name = _DOT_INCLUDE.match(text, m.end())
                        if not name:
                            raise error(loc, ".include needs a file name in double quotes")
                        self._include(_unescape(name[1], loc), here, loc, out)
                        pos = name.end()
                        continue
                if kind == "ident" and value in self.macros:
                    out += [self._token(t.kind, t.text, loc) for t in self.macros[value]]
                else:
                    out.append(self._token(kind, value, loc))
            pos = m.end()
        if conds:
            raise error(conds[-1].loc, "unterminated #if")
        return out

    def _token(self, kind: str, text: str, loc: Loc) -> Token:
        return Token(kind, text, loc, functions=self.functions if kind == "ident" and text in self.functions else None)

    def _calls(self, tokens: list[Token], depth: int = 0, functions: dict | None = None) -> list[Token]:
        """The tokens with each call of a function-like macro replaced by its
        body, the arguments put in for its parameters (calls in it expanded too,
        with the functions defined where the call stands). `functions`: those
        of every call in tokens (a body's); else each name token's own (Token.functions)."""
        if depth > 50:
            raise error(tokens[0].loc if tokens else None, "macros call each other without end")
        out, i = [], 0
        while i < len(tokens):
            t = tokens[i]
            here = functions if functions is not None else t.functions or {}
            fn = here.get(t.text) if t.kind == "ident" else None
            if fn is None or i + 1 == len(tokens) or tokens[i + 1].text != "(":
                out.append(t)
                i += 1
                continue
            args, i = _arguments(tokens, i + 1)
            params, body = fn
            if len(args) != len(params) and not (params == [] and args == [[]]):
                raise error(t.loc, f"macro '{t.text}' needs {len(params)} argument{'s' * (len(params) != 1)}, "
                            f"given {len(args)}")
            given = dict(zip(params, args))
            own, call = _own_variables(params, body), (t.text, self._ncalls)
            self._ncalls += 1
            expanded = []
            for b in body:
                if b.kind == "ident" and b.text in given:
                    expanded += given[b.text]
                else:
                    expanded.append(Token(b.kind, b.text, t.loc, call if b.kind == "ident" and b.text in own else None))
            out += self._calls(expanded, depth + 1, here)
        return out

    def _include(self, name: str, here: str, loc: Loc, out: list[Token]) -> None:
        """The tokens of file `name`, found beside the including file or in an include dir."""
        found = [p for p in (os.path.join(d, name) for d in (here, *self.include_dirs)) if os.path.isfile(p)]
        if not found:
            raise error(loc, f"cannot find included file '{name}'")
        out.extend(self.tokens_of_file(found[0], shown_path(found[0]), loc))

    def _directive(self, name, rest, loc, conds, out, here, is_active):
        if name in ("ifdef", "ifndef"):
            word = rest.split()[0] if rest.split() else ""
            if not _IDENT.match(word):
                raise error(loc, f"#{name} needs a macro name")
            truth = (word in self.macros) == (name == "ifdef")
            conds.append(_Cond(is_active and truth, is_active, truth, loc))
            return
        if name == "else":
            if not conds:
                raise error(loc, "#else without #if")
            c = conds[-1]
            c.active = c.parent_active and not c.seen_true
            c.seen_true = True
            return
        if name == "endif":
            if not conds:
                raise error(loc, "#endif without #if")
            conds.pop()
            return
        if not is_active:
            return
        if name == "include":
            m = re.fullmatch(r'"([^"]+)"|<([^>]+)>', rest)
            if not m:
                raise error(loc, '#include needs "file"')
            self._include(m.group(1) or m.group(2), here, loc, out)
        elif name == "define":
            call = re.match(r"([_?a-zA-Z][_?a-zA-Z0-9]*)\(([^)]*)\)(.*)$", rest)
            parts = [call[1], call[3]] if call else rest.split(None, 1)
            if not parts or not _IDENT.match(parts[0]):
                raise error(loc, "#define needs a macro name (#define NAME value, #define NAME(a, b) value)")
            body = self._lex(parts[1] if len(parts) > 1 else "", loc.file, here)
            if call is None:
                self.macros[parts[0]] = body
                return
            params = [p.strip() for p in call[2].split(",")] if call[2].strip() else []
            if not all(map(_IDENT.match, params)) or len(set(params)) < len(params):
                raise error(loc, f"#define {parts[0]}: parameters are distinct names")
            self.functions = {**self.functions, parts[0]: (params, body)}
        elif name == "undef":
            self.macros.pop(rest.strip(), None)
            self.functions = {k: v for k, v in self.functions.items() if k != rest.strip()}
        elif name == "pragma" and rest.strip() == "once":
            self._once.add(self._stack[-1])
        else:
            raise error(loc, f"unsupported preprocessor directive '#{name}'")
