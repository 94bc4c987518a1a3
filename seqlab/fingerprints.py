"""Token fingerprints of one function as a student wrote it (MOSS's winnowing; see
seqlab/similarity.py for the method and why): the code is only parsed, never run."""

from __future__ import annotations

import ast
import bisect
import hashlib
import io
import itertools
import keyword
import tokenize
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from . import contract
from .paths import EXERCISES_DIR

# Noise threshold: a shared run shorter than this many normalised tokens is never counted.
# One ordinary statement is 8-15 tokens (`V = V . softmax ( V , V = - 1 )` is 12); at 12,
# a single shared idiom such as that line does not count on its own, while two consecutive
# copied lines always do.
KGRAM_TOKENS = 12
# Winnowing window: any shared run of at least KGRAM_TOKENS + WINDOW - 1 = 15 tokens is
# guaranteed a shared fingerprint. Student functions are short (20-300 tokens), so the window
# is kept small: it thins the fingerprints little but keeps the guarantee at about one line.
WINDOW = 4
# A student's topic file is a few kB; a file larger than this is not read (and says so),
# which bounds the parse time of hostile input.
MAX_SOURCE_BYTES = 1 << 20

_DROPPED = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
_CLOSERS = {")", "]", "}"}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python >= 3.12
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


@dataclass
class FunctionCode:
    """One function as written by one submission: its source and its normalised tokens."""

    source: str
    tokens: list[str]
    spans: list[tuple[int, int]]  # each token's (start, end) offsets in `source`
    fingerprints: dict[int, list[int]] = field(default_factory=dict)  # hash -> token positions


def python_lines(text: str) -> list[str]:
    """``text`` cut into lines as Python's parser counts them (ends kept): at ``\n``, ``\r\n``
    and ``\r`` only. ``str.splitlines`` also cuts at U+2028, U+0085 and form feeds, so one
    comment of U+2028 characters shifted every line after it and hid a copied function."""
    return io.StringIO(text, newline="").readlines()


def _offsets(source: str) -> list[int]:
    starts, total = [], 0
    for line in python_lines(source):
        starts.append(total)
        total += len(line)
    return starts + [total]


Range = tuple[tuple[int, int], tuple[int, int]]  # ((row, col), (row, col)), rows from 1, columns in characters


def normalise(source: str, skip: Range | Sequence[Range] | None = None) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens of `source` with names, strings and layout made irrelevant (see the module doc).
    `skip`: a ((row, col), (row, col)) range, or several, left out (code that never runs or
    does nothing: see :func:`inert_ranges`)."""
    line_start = _offsets(source)
    raw = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _DROPPED]
    if skip:
        ranges: list[Range] = sorted(cast("list[Range]", [skip] if isinstance(skip[0][0], int) else list(skip)))
        # A token is skipped when a range holds it: the furthest end among the ranges starting
        # at or before it lies past it. Sorted starts and running ends make that a binary search
        # per token, so a file of 50,000 `pass` lines costs no more than its length.
        starts = [start for start, _ in ranges]
        furthest = list(itertools.accumulate((end for _, end in ranges), max))
        raw = [t for t in raw if (i := bisect.bisect_right(starts, t.start)) == 0 or furthest[i - 1] <= t.start]
    tokens, spans = [], []
    fstring_depth = 0
    for i, tok in enumerate(raw):
        text = tok.string
        # Since Python 3.12 an f-string is many tokens: it counts as one string, like any other.
        if tok.type == _FSTRING_START:
            fstring_depth += 1
            if fstring_depth == 1:
                tokens.append("S")
                spans.append((line_start[tok.start[0] - 1] + tok.start[1], 0))
            continue
        if fstring_depth:
            if tok.type == _FSTRING_END:
                fstring_depth -= 1
                if not fstring_depth:
                    spans[-1] = (spans[-1][0], line_start[tok.end[0] - 1] + tok.end[1])
            continue
        if tok.type == tokenize.OP and text == ";":
            continue  # `a; b` is `a` newline `b`
        if tok.type == tokenize.OP and text == "," and i + 1 < len(raw) and raw[i + 1].string in _CLOSERS:
            continue  # a formatter's trailing comma
        if tok.type == tokenize.NAME and not keyword.iskeyword(text):
            text = text if tokens and tokens[-1] == "." else "V"
        elif tok.type == tokenize.STRING:
            text = "S"
        elif tok.type == tokenize.NUMBER:
            text = _number(text)
        tokens.append(text)
        spans.append((line_start[tok.start[0] - 1] + tok.start[1], line_start[tok.end[0] - 1] + tok.end[1]))
    return tokens, spans


def _number(text: str) -> str:
    """A number by its value (`1e-08` is `1e-8`, `0x10` is `16`); complex literals as written."""
    for parse in (lambda t: int(t, 0), float):
        try:
            return repr(parse(text))
        except ValueError:
            continue
    return text


def _kgram_hashes(tokens: list[str]) -> list[int]:
    return [
        int.from_bytes(
            hashlib.blake2b("\x1f".join(tokens[i : i + KGRAM_TOKENS]).encode(), digest_size=8).digest(), "big"
        )
        for i in range(len(tokens) - KGRAM_TOKENS + 1)
    ]


def winnow(hashes: list[int], window: int = WINDOW) -> dict[int, list[int]]:
    """Robust winnowing: the minimum hash of every window (the rightmost one on a tie), each
    selected position once. Returns hash -> positions. A sequence shorter than a window is one
    window."""
    selected: dict[int, list[int]] = defaultdict(list)
    if not hashes:
        return {}
    width = min(window, len(hashes))
    last = -1
    for start in range(len(hashes) - width + 1):
        span = hashes[start : start + width]
        low = min(span)
        position = start + max(i for i, h in enumerate(span) if h == low)
        if position != last:
            selected[low].append(position)
            last = position
    return dict(selected)


# --- the program as it runs: dead branches, no-op statements ------------------------------------
# Code that never runs or does nothing is left out of the tokens, so padding a copy with it hides
# nothing: a branch whose test is a constant (`if True:`, `if 1:`, `if not 0:`, `while False:`),
# `pass`, and statements that are a constant alone (docstrings anywhere, `...`, `0`). Seen in
# a class: the whole file under `if True:` hid every function, and a `pass` after each statement hid two
# thirds of a copy. Only the test's own tokens and the branch that cannot run are dropped: the
# live branch's code counts as if it were written without the `if`.


def constant_truth(test: ast.expr) -> bool | None:
    """The truth of a test built from literals only (``True``, ``1``, ``not 0``, ``1 == 1``,
    ``()``), or None when it depends on anything at run time."""
    try:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = constant_truth(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            values = [constant_truth(v) for v in test.values]
            if None in values:
                return None
            return all(values) if isinstance(test.op, ast.And) else any(values)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left, right = ast.literal_eval(test.left), ast.literal_eval(test.comparators[0])
            compare = {ast.Eq: "__eq__", ast.NotEq: "__ne__", ast.Lt: "__lt__", ast.LtE: "__le__",
                       ast.Gt: "__gt__", ast.GtE: "__ge__"}.get(type(test.ops[0]))  # fmt: skip
            if compare is None or type(left) not in _SCALARS or type(right) not in _SCALARS:
                return None
            result = getattr(left, compare)(right)
            return None if result is NotImplemented else bool(result)
        return bool(ast.literal_eval(test))
    except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError, OverflowError):
        return None


_SCALARS = (int, float, bool, str, bytes, type(None))


def _live_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of ``body`` that run, in order, with the live branch of every constant
    test in place of the test."""
    for node in body:
        truth = constant_truth(node.test) if isinstance(node, (ast.If, ast.While)) else None
        if isinstance(node, ast.If) and truth is not None:
            yield from _live_statements(node.body if truth else node.orelse)
        elif isinstance(node, ast.While) and truth is False:
            yield from _live_statements(node.orelse)
        else:
            yield node


def _function_node(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    # The last definition Python binds at module level is the one graded (a definition inside
    # `if True:` is bound like one at the top).
    found = None
    for node in _live_statements(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
    return found


def _inert(node: ast.AST) -> bool:
    return isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


def inert_ranges(function: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[Range]:
    """The source ranges of ``function`` (rows counted from its first line, columns in
    characters) that never run or do nothing: a constant test's ``if``/``while`` with its test
    and its dead branch, ``pass``, statements that are a constant alone (the docstring too)."""

    def at(row: int, col: int) -> tuple[int, int]:  # ast columns are UTF-8 bytes; tokenize's characters
        text = lines[row - 1] if 0 < row <= len(lines) else ""
        return row - function.lineno + 1, len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))

    def start(node: ast.AST) -> tuple[int, int]:
        return at(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(node: ast.AST) -> tuple[int, int]:
        return at(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    ranges: list[Range] = []
    for node in ast.walk(function):
        if _inert(node):
            ranges.append((start(node), end(node)))
        elif isinstance(node, (ast.If, ast.While)):
            truth = constant_truth(node.test)
            live = node.body if truth else node.orelse
            if truth is None or (isinstance(node, ast.While) and truth):
                continue  # a real test, or `while True:` (a loop that runs)
            if not live:
                ranges.append((start(node), end(node)))
                continue
            ranges.append((start(node), start(live[0])))  # `if test:` (and a dead body before `else:`)
            if truth and node.orelse:
                ranges.append((end(live[-1]), end(node)))  # `else:` and the dead branch after it
    return ranges


def read_functions(exercises: Path, module: str) -> tuple[dict[str, FunctionCode], str]:
    """The contract functions of one topic file: name -> code, and a problem ('' when none)."""
    path = Path(exercises) / f"{module}.py"
    if not path.is_file():
        return {}, ""
    if path.stat().st_size > MAX_SOURCE_BYTES:
        return {}, f"{module}.py is larger than {MAX_SOURCE_BYTES >> 10} kB: not compared"
    try:
        text = path.read_bytes().decode("utf-8")
        tree = ast.parse(text)
    except UnicodeDecodeError:
        return {}, f"{module}.py is not UTF-8 text: not compared"
    except SyntaxError as exc:
        return {}, f"{module}.py does not parse (line {exc.lineno}: {exc.msg}): not compared"
    except OSError as exc:
        return {}, f"{module}.py could not be read ({exc.strerror or exc}): not compared"
    except (ValueError, RecursionError, MemoryError) as exc:
        return {}, f"{module}.py could not be parsed ({type(exc).__name__}): not compared"
    lines = python_lines(text)
    found = {}
    for qualname in contract.functions_of(module):
        node = _function_node(tree, qualname.split(".", 1)[1])
        if node is None:
            continue
        source = "".join(lines[node.lineno - 1 : node.end_lineno])
        try:
            tokens, spans = normalise(source, inert_ranges(node, lines))
        except (tokenize.TokenError, SyntaxError, IndentationError, RecursionError):
            continue  # cannot happen for a function ast parsed; never fail the report over it
        found[qualname] = FunctionCode(source, tokens, spans)
    return found, ""


def stub_kgrams(exercises: Path = EXERCISES_DIR) -> dict[str, set[int]]:
    """Every k-gram hash of every stub function: code that each student was handed."""
    kgrams = {}
    for module in dict.fromkeys(name.split(".")[0] for name in contract.FUNCTIONS):
        functions, _ = read_functions(exercises, module)
        for qualname, code in functions.items():
            kgrams[qualname] = set(_kgram_hashes(code.tokens))
    return kgrams
