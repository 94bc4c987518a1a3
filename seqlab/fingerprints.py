"""Token fingerprints of one function as a student wrote it (MOSS's winnowing; see
seqlab/similarity.py for the method and why): the code is only parsed, never run."""

from __future__ import annotations

import ast
import hashlib
import io
import keyword
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

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


def _offsets(source: str) -> list[int]:
    starts, total = [], 0
    for line in source.splitlines(keepends=True):
        starts.append(total)
        total += len(line)
    return starts + [total]


def normalise(
    source: str, skip: tuple[tuple[int, int], tuple[int, int]] | None = None
) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens of `source` with names, strings and layout made irrelevant (see the module doc).
    `skip` is a ((row, col), (row, col)) range left out (the docstring)."""
    line_start = _offsets(source)
    raw = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _DROPPED]
    if skip is not None:
        raw = [t for t in raw if not (skip[0] <= t.start < skip[1])]
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


def _function_node(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    # The last top-level definition is the one Python binds, so it is the one graded.
    found = None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            found = node
    return found


def _docstring_range(
    node: ast.FunctionDef | ast.AsyncFunctionDef, first_line: int
) -> tuple[tuple[int, int], tuple[int, int]] | None:
    doc = node.body[0] if node.body else None
    if (
        isinstance(doc, ast.Expr)
        and isinstance(doc.value, ast.Constant)
        and isinstance(doc.value.value, str)
        and doc.end_lineno is not None  # always set on a node parsed from source
        and doc.end_col_offset is not None
    ):
        return (doc.lineno - first_line + 1, doc.col_offset), (doc.end_lineno - first_line + 1, doc.end_col_offset)
    return None


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
    lines = text.splitlines(keepends=True)
    found = {}
    for qualname in contract.functions_of(module):
        node = _function_node(tree, qualname.split(".", 1)[1])
        if node is None:
            continue
        source = "".join(lines[node.lineno - 1 : node.end_lineno])
        try:
            tokens, spans = normalise(source, _docstring_range(node, node.lineno))
        except (tokenize.TokenError, SyntaxError, IndentationError):
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
