"""Safe parsing and comparison of the answers students type.

``sympy.parse_expr``/``sympify`` run Python's ``eval`` on the text, so a student answer never
reaches them. Instead every answer goes through these gates, in order, each cheap and each
giving the student a message:

1. it is a ``str`` of at most ``MAX_LENGTH`` characters (checked before anything else looks at
   it, so a 10 MB answer costs one ``len``);
2. every character is in a small alphabet (letters, digits, spaces, ``+ - * / ^ ( ) [ ] , . _``):
   no quotes, so no strings, no ``:``/``;``/``=``/``@``/``{}``, so no lambdas, slices,
   assignments, dicts or decorators;
3. brackets balance and nest at most ``MAX_DEPTH`` deep (counted on the text, before the
   parser sees it);
4. Python's ``ast`` parses it (parsing never executes anything) and a whitelist walk accepts
   only numbers, the question's own symbol names, ``+ - * / **`` (``^`` means power),
   unary ``+ -``, and calls of whitelisted function names with positional arguments;
   attribute access, subscripts, comprehensions, lambdas, keywords, dunders and every other
   node are refused; at most ``MAX_NODES`` nodes;
5. magnitudes are bounded: every constant sub-expression is evaluated in floating point and must
   stay below ``MAX_CONSTANT``; a constant power of a symbolic base has ``|exponent| <=
   MAX_EXPONENT``; exponentials (``exp``, ``sigmoid``, ``tanh``, a symbolic exponent) do not
   nest. Together these keep every later computation small: no huge integers, no towers.

Only then is a sympy expression built, node by node, from the checked tree. Equivalence is
``simplify(expected - answer) == 0`` under a time limit, with a numeric fallback (plain
floats, at fixed pseudo-random points inside each symbol's range) when simplify cannot decide.
"""

from __future__ import annotations

import ast
import math
import random
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sympy

MAX_LENGTH = 500
MAX_DEPTH = 12
MAX_NODES = 200
MAX_CONSTANT = 1e100
MAX_EXPONENT = 64
SIMPLIFY_SECONDS = 2.0

ALPHABET = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t+-*/^()[],._")


class AnswerRejected(ValueError):
    """The answer text is not acceptable; ``str(exc)`` is the message for the student."""


@dataclass(frozen=True)
class Sym:
    """A symbol a question allows, with the range its values take.

    The range gives sympy its assumptions (``low > 0``: positive, ``low >= 0``: nonnegative,
    else real) and the numeric check its sample points.
    """

    name: str
    low: float = 0.5
    high: float = 3.0
    integer: bool = False

    def sympy(self) -> sympy.Symbol:
        kind = {"integer": True} if self.integer else {"real": True}
        if self.low > 0:
            kind["positive"] = True
        elif self.low >= 0:
            kind["nonnegative"] = True
        return sympy.Symbol(self.name, **kind)


def _sigmoid(x):
    return 1 / (1 + sympy.exp(-x))


# name -> (sympy builder, number of arguments, is an exponential)
FUNCTIONS: dict[str, tuple[Callable, int, bool]] = {
    "sqrt": (sympy.sqrt, 1, False),
    "exp": (sympy.exp, 1, True),
    "log": (sympy.log, 1, False),
    "ln": (sympy.log, 1, False),
    "tanh": (sympy.tanh, 1, True),
    "sigmoid": (_sigmoid, 1, True),
    "sin": (sympy.sin, 1, False),
    "cos": (sympy.cos, 1, False),
    "abs": (sympy.Abs, 1, False),
    "Abs": (sympy.Abs, 1, False),
    "min": (sympy.Min, 2, False),
    "max": (sympy.Max, 2, False),
    "Rational": (sympy.Rational, 2, False),
    "frac": (sympy.Rational, 2, False),
}
CONSTANTS = {"pi": sympy.pi, "E": sympy.E}
NUMERIC_CONSTANTS = {**CONSTANTS, "e": sympy.E}
# A number asked for is the student's to compute. In a numeric answer the grader evaluates
# arithmetic on numbers, the rules' "simple arithmetic" (+ - * / ^, roots, fractions), and no
# function a question asks them to work out (exp, log, tanh, sigmoid, sin, cos, and e^x): with
# them the screen media would let the grader do an LSTM step or a sinusoid that the paper's
# student does by hand. Formulas keep every function. The check script refuses the same.
NUMBER_FUNCTIONS = ("Rational", "frac", "sqrt")
NUMBER_CONSTANTS = {"pi": sympy.pi}
NUMBER_ASKED = "a number is asked (+ - * / ^, sqrt and fractions on numbers)"

_FLOAT_FUNCS: dict[str, Callable[..., float]] = {
    "sqrt": math.sqrt,
    "exp": math.exp,
    "log": math.log,
    "ln": math.log,
    "tanh": math.tanh,
    "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
    "sin": math.sin,
    "cos": math.cos,
    "abs": abs,
    "Abs": abs,
    "min": min,
    "max": max,
    "Rational": lambda p, q: p / q,
    "frac": lambda p, q: p / q,
}
_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


def check_text(text: object) -> str:
    """Gates 1-3: type, length, alphabet, bracket depth. Returns the text with ``^`` as ``**``."""
    if not isinstance(text, str):
        raise AnswerRejected(f"answer must be text, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise AnswerRejected(f"answer rejected: longer than {MAX_LENGTH} characters ({len(text)})")
    text = text.strip()
    if not text:
        raise AnswerRejected("no answer given")
    for ch in text:
        if ch not in ALPHABET:
            raise AnswerRejected(
                f"answer rejected: character {ch!r} is not allowed "
                "(use numbers, symbol names, + - * / ^ ** and parentheses)"
            )
    depth = 0
    pairs = {")": "(", "]": "["}
    stack: list[str] = []
    for ch in text:
        if ch in "([":
            stack.append(ch)
            depth = max(depth, len(stack))
            if depth > MAX_DEPTH:
                raise AnswerRejected(f"answer rejected: brackets nested deeper than {MAX_DEPTH}")
        elif ch in ")]" and (not stack or stack.pop() != pairs[ch]):
            raise AnswerRejected("answer rejected: unbalanced brackets")
    if stack:
        raise AnswerRejected("answer rejected: unbalanced brackets")
    if "__" in text:
        raise AnswerRejected("answer rejected: names with '__' are not allowed")
    return text.replace("^", "**")


def _short(text: str) -> str:
    return text if len(text) <= 20 else "..."


def _function_call(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS


class _Checker:
    """Gate 4 and 5: walk the tree, accept only whitelisted nodes, bound magnitudes."""

    def __init__(
        self, symbols: Mapping[str, object], constants: Mapping[str, Any], allow_list: bool, numeric: bool = False
    ):
        self.symbols = symbols
        self.constants = constants
        self.allow_list = allow_list
        self.numeric = numeric
        self.count = 0

    def check(self, tree: ast.Expression) -> None:
        body = tree.body
        if isinstance(body, (ast.Tuple, ast.List)):
            if not self.allow_list:
                raise AnswerRejected("answer rejected: a single expression is expected, not a list")
            if not body.elts:
                raise AnswerRejected("answer rejected: empty list")
            for elt in body.elts:
                self.visit(elt, 0)
        else:
            self.visit(body, 0)

    def visit(self, node: ast.AST, exp_depth: int) -> tuple[bool, float | None]:
        """Returns (contains a symbol, float value when constant)."""
        self.count += 1
        if self.count > MAX_NODES:
            raise AnswerRejected(f"answer rejected: more than {MAX_NODES} terms")
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise AnswerRejected("answer rejected: only numbers are allowed as constants")
            return False, self._bounded(float(value))
        if isinstance(node, ast.Name):
            if node.id in self.symbols:
                return True, None
            if node.id in self.constants:
                return False, float(self.constants[node.id])
            if node.id in FUNCTIONS:
                raise AnswerRejected(f"answer rejected: {node.id} must be called, e.g. {node.id}(x)")
            if self.numeric and node.id in NUMERIC_CONSTANTS:
                raise AnswerRejected(f"answer rejected: {NUMBER_ASKED}: write the value of {node.id} as a decimal")
            allowed = ", ".join(sorted(self.symbols)) or "none"
            raise AnswerRejected(f"answer rejected: unknown name {node.id!r} (symbols allowed here: {allowed})")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            sym, val = self.visit(node.operand, exp_depth)
            return sym, (None if val is None else -val if isinstance(node.op, ast.USub) else val)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            right = node.right
            if isinstance(node.op, ast.Pow) and isinstance(right, ast.Call) and not _function_call(right):
                # w^3(1-h^2): Python reads w ** (3 called on (1-h^2)); the student meant (w^3)*(1-h^2)
                power = _short(ast.unparse(node.left)) + "^" + _short(ast.unparse(right.func)).replace("**", "^")
                raise AnswerRejected(f"answer rejected: implicit multiplication: write {power}*(...)")
            if isinstance(node.op, ast.Pow):
                return self._pow(node, exp_depth)
            _, lval = self.visit(node.left, exp_depth)
            _, rval = self.visit(node.right, exp_depth)
            if lval is not None and rval is not None:
                return False, self._float_binop(node.op, lval, rval)
            return True, None
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id in self.symbols or node.func.id in self.constants:
                # 2(x+1), x(y+1), (a+b)(c+d), tanh(x)(1-x): Python reads a call, the student meant
                # a product; whatever stands before the bracket, the hint is the same
                left = _short(ast.unparse(node.func)).replace("**", "^")
                left = f"({left})" if isinstance(node.func, ast.BinOp) else left
                raise AnswerRejected(f"answer rejected: implicit multiplication: write {left}*(...)")
            if node.func.id not in FUNCTIONS:
                raise AnswerRejected(
                    f"answer rejected: calling {node.func.id!r} is not allowed (functions: "
                    f"{', '.join(sorted(FUNCTIONS))}); for a product write {node.func.id}*(...)"
                )
            if self.numeric and node.func.id not in NUMBER_FUNCTIONS:
                raise AnswerRejected(
                    f"answer rejected: {NUMBER_ASKED}: {node.func.id}(...) is yours to work out; write its value"
                )
            if node.keywords:
                raise AnswerRejected("answer rejected: keyword arguments are not allowed")
            name = node.func.id
            _, nargs, is_exp = FUNCTIONS[name]
            if len(node.args) != nargs or any(isinstance(a, ast.Starred) for a in node.args):
                raise AnswerRejected(f"answer rejected: {name} takes {nargs} argument(s)")
            depth = exp_depth + 1 if is_exp else exp_depth
            if depth > 1:
                raise AnswerRejected("answer rejected: exponentials may not be nested")
            results = [self.visit(a, depth) for a in node.args]
            if name in ("Rational", "frac"):
                for a in node.args:
                    if not (isinstance(a, ast.Constant) and type(a.value) is int) and not (
                        isinstance(a, ast.UnaryOp)
                        and isinstance(a.operand, ast.Constant)
                        and type(a.operand.value) is int
                    ):
                        raise AnswerRejected(f"answer rejected: {name} takes two integers")
                if results[1][1] == 0:
                    raise AnswerRejected("answer rejected: division by zero")
            if all(val is not None for _, val in results):
                try:
                    return False, self._bounded(_FLOAT_FUNCS[name](*[v for _, v in results]))
                except (ValueError, ZeroDivisionError, OverflowError):
                    raise AnswerRejected(f"answer rejected: {name} of this number is undefined or too large") from None
            return True, None
        raise AnswerRejected(f"answer rejected: {_describe(node)} is not allowed")

    def _pow(self, node: ast.BinOp, exp_depth: int) -> tuple[bool, float | None]:
        symbolic_exponent = any(isinstance(n, ast.Name) and n.id in self.symbols for n in ast.walk(node.right))
        if symbolic_exponent:
            # x ** (something with a symbol) is an exponential: it may not sit inside another,
            # and nothing inside it (base or exponent) may be one
            if exp_depth >= 1:
                raise AnswerRejected("answer rejected: exponentials may not be nested")
            self.visit(node.right, exp_depth + 1)
            self.visit(node.left, exp_depth + 1)
            return True, None
        _, exponent = self.visit(node.right, exp_depth)
        bsym, base = self.visit(node.left, exp_depth)
        assert exponent is not None  # an exponent with a symbol in it returned above
        if bsym:
            if abs(exponent) > MAX_EXPONENT:
                raise AnswerRejected(f"answer rejected: exponents above {MAX_EXPONENT} are not allowed")
            return True, None
        assert base is not None  # no symbol in it: visit gave its value
        return False, self._float_binop(node.op, base, exponent)

    def _float_binop(self, op: ast.operator, a: float, b: float) -> float:
        try:
            if isinstance(op, ast.Add):
                v = a + b
            elif isinstance(op, ast.Sub):
                v = a - b
            elif isinstance(op, ast.Mult):
                v = a * b
            elif isinstance(op, ast.Div):
                v = a / b
            else:
                if a < 0 and b != int(b):
                    raise AnswerRejected("answer rejected: fractional power of a negative number")
                v = a**b
        except ZeroDivisionError:
            raise AnswerRejected("answer rejected: division by zero") from None
        except OverflowError:
            raise AnswerRejected("answer rejected: number too large") from None
        if isinstance(v, complex):
            raise AnswerRejected("answer rejected: complex number")
        return self._bounded(v)

    @staticmethod
    def _bounded(v: float) -> float:
        if not math.isfinite(v) or abs(v) > MAX_CONSTANT:
            raise AnswerRejected("answer rejected: number too large")
        return v


def _describe(node: ast.AST) -> str:
    names = {
        ast.Attribute: "attribute access ('.name')",
        ast.Subscript: "indexing ('[...]')",
        ast.Lambda: "lambda",
        ast.Compare: "comparison",
        ast.BoolOp: "and/or",
        ast.IfExp: "if/else",
        ast.ListComp: "a comprehension",
        ast.GeneratorExp: "a comprehension",
        ast.Tuple: "a nested list",
        ast.List: "a nested list",
        ast.Starred: "'*' unpacking",
    }
    for cls, text in names.items():
        if isinstance(node, cls):
            return text
    if isinstance(node, ast.BinOp):
        return f"the operator {type(node.op).__name__}"
    return f"the construct {type(node).__name__}"


def _build(node: ast.AST, symbols: Mapping[str, sympy.Symbol], constants: Mapping[str, object]):
    """Gate passed: turn the checked tree into a sympy expression (no eval, no sympify)."""
    if isinstance(node, ast.Constant):
        v = node.value
        return sympy.Integer(v) if isinstance(v, int) else sympy.Rational(repr(v))
    if isinstance(node, ast.Name):
        return symbols[node.id] if node.id in symbols else constants[node.id]
    if isinstance(node, ast.UnaryOp):
        arg = _build(node.operand, symbols, constants)
        return -arg if isinstance(node.op, ast.USub) else arg
    if isinstance(node, ast.BinOp):
        a, b = _build(node.left, symbols, constants), _build(node.right, symbols, constants)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            return a / b
        return a**b
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # _Checker admits calls of the listed names only
        fn = FUNCTIONS[node.func.id][0]
        return fn(*[_build(a, symbols, constants) for a in node.args])
    raise AssertionError(f"unchecked node {type(node).__name__}")  # pragma: no cover


def parse(
    text: object, symbols: Mapping[str, sympy.Symbol] | None = None, *, allow_list: bool = False, numeric: bool = False
):
    """The checked answer as a sympy expression (or a list of them when ``allow_list``).

    ``symbols`` maps the names a question allows to sympy symbols. ``numeric``: a number is
    asked, so only arithmetic on numbers (``NUMBER_FUNCTIONS``, ``pi``); a formula may use every
    function and ``e``. Raises ``AnswerRejected`` with a message for the student.
    """
    symbols = dict(symbols or {})
    for name in symbols:
        if not name.isidentifier() or name.startswith("_") or name in FUNCTIONS:
            raise ValueError(f"bad symbol name {name!r}")
    # ``e`` is Euler's number in numbers and formulas alike, unless a question names a symbol e
    constants = NUMBER_CONSTANTS if numeric else {k: v for k, v in NUMERIC_CONSTANTS.items() if k not in symbols}
    source = check_text(text)
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise AnswerRejected(f"answer rejected: {syntax_hint(source, symbols, constants)}") from None
    _Checker(symbols, constants, allow_list, numeric).check(tree)
    body = tree.body
    if isinstance(body, (ast.Tuple, ast.List)):
        return [_build(e, symbols, constants) for e in body.elts]
    return _build(body, symbols, constants)


_IMPLICIT = (
    # 2x, 2(x+1), 2 sqrt(x): a number right before a name or a bracket
    re.compile(r"(?<![A-Za-z_0-9.])(\d+(?:\.\d*)?)\s*([A-Za-z_][A-Za-z_0-9]*|\()"),
    # (a+b)(c+d), (a+b)x, (a+b)2: a closing bracket right before something to multiply
    re.compile(r"(\))\s*([A-Za-z_][A-Za-z_0-9]*|\d+|\()"),
    # x y: two names side by side (a name before '(' is a call, checked by the whitelist)
    re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s+([A-Za-z_][A-Za-z_0-9]*|\d+)"),
)


def syntax_hint(
    source: str, symbols: Mapping[str, object] | None = None, constants: Mapping[str, object] | None = None
) -> str:
    """Why a text that is not an expression fails, in words a student can act on. Given the names
    the answer may use, a product hint is never given for a name outside them: "write 4560*MiB"
    would lead to another error, so the unknown name is the hint."""
    for pattern in _IMPLICIT:
        m = pattern.search(source)
        if m:
            left, right = m.group(1), m.group(2)
            if pattern is _IMPLICIT[0] and re.fullmatch(r"[eE]\d*", right):
                continue  # 2e5 and 2.5e-3 are numbers, not products
            known = set(symbols or ()) | set(constants or ()) | set(FUNCTIONS)
            if symbols is not None and right[0].isalpha() and right not in known:
                allowed = ", ".join(sorted(symbols)) or "none"
                return f"unknown name {right!r} (symbols allowed here: {allowed})"
            left = "(...)" if left == ")" else left
            if right != "(" and source[m.end() : m.end() + 1] == "(":
                right += "(...)"  # 2 sqrt(x): the product of 2 and a call
            return f"implicit multiplication: write {left}*{right}{'...)' if right == '(' else ''}"
    if re.search(r"[+\-*/^]\s*$", source):
        return "the expression ends with an operator"
    if re.search(r"(\*\*|[+\-*/])\s*[*/]", source.replace("**", "^")) or re.search(
        r"[*/^]{2,}", source.replace("**", "^")
    ):
        return "two operators in a row"
    if ",," in source.replace(" ", "") or source.strip().startswith(",") or source.strip().endswith(","):
        return "an empty entry between commas"
    return "not a valid expression (check operators and brackets)"


def parse_number(text: object) -> float:
    """A numeric answer: a number or simple arithmetic on numbers (``1/3``, ``sqrt(2)/2``)."""
    value = parse(text, {}, numeric=True)
    return _to_float(value)


def parse_numbers(text: object) -> list[float]:
    """A list of numbers, ``1, 2, 3`` or ``[1, 2, 3]`` or ``(2, 5, 16)``; one number is a list of one."""
    value = parse(text, {}, allow_list=True, numeric=True)
    return [_to_float(v) for v in (value if isinstance(value, list) else [value])]


def _to_float(expr) -> float:
    v = evaluate(expr, {})
    if v is None:
        raise AnswerRejected("answer rejected: the expression has no real value")
    return v


# ----------------------------------------------------------------------- float evaluation


def evaluate(expr, values: Mapping[sympy.Symbol, float]) -> float | None:
    """``expr`` at ``values`` in plain floats; None where undefined, complex or overflowing."""
    try:
        v = _feval(expr, values)
    except (ValueError, ZeroDivisionError, OverflowError, TypeError, KeyError):
        return None
    return v if isinstance(v, float) and math.isfinite(v) else None


def _feval(e, values) -> float:
    if e.is_Symbol:
        return float(values[e])
    if e.is_Number:
        return float(e)
    if e is sympy.pi:
        return math.pi
    if e is sympy.E:
        return math.e
    if e.is_Add:
        return math.fsum(_feval(a, values) for a in e.args)
    if e.is_Mul:
        out = 1.0
        for a in e.args:
            out *= _feval(a, values)
        return out
    if e.is_Pow:
        b, x = _feval(e.base, values), _feval(e.exp, values)
        r = b**x
        if isinstance(r, complex):
            raise ValueError("complex")
        return float(r)
    f = e.func
    table: dict[Any, Callable[..., float]] = {
        sympy.exp: math.exp,
        sympy.log: math.log,
        sympy.tanh: math.tanh,
        sympy.sin: math.sin,
        sympy.cos: math.cos,
        sympy.Abs: abs,
    }
    if f in table:
        return float(table[f](*[_feval(a, values) for a in e.args]))
    if f is sympy.Min:
        return min(_feval(a, values) for a in e.args)
    if f is sympy.Max:
        return max(_feval(a, values) for a in e.args)
    if isinstance(e, sympy.Piecewise):
        for expr, cond in e.args:
            if cond is sympy.true or bool(cond.subs({k: sympy.Float(v) for k, v in values.items()})):
                return _feval(expr, values)
        raise ValueError("no branch")
    raise ValueError(f"cannot evaluate {f}")


# ----------------------------------------------------------------------- time limit


class TimeLimitExceeded(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise ``TimeLimitExceeded`` inside the block after ``seconds`` (SIGALRM, main thread).

    Restores any timer already running (pytest-timeout uses the same signal). Off the main
    thread (where signals cannot be used) the caller must use ``run_with_timeout``.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        raise RuntimeError("time_limit needs the main thread")

    def _raise(signum, frame):
        raise TimeLimitExceeded()

    old_handler = signal.signal(signal.SIGALRM, _raise)
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        if old_delay:
            left = max(old_delay - (time.monotonic() - start), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def run_with_timeout(fn: Callable[[], object], seconds: float):
    """``fn()`` limited to ``seconds``; raises ``TimeLimitExceeded``. Works in any thread."""
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        with time_limit(seconds):
            return fn()
    box: dict[str, Any] = {}

    def target():
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        raise TimeLimitExceeded()  # the daemon thread is abandoned; its result is ignored
    if "error" in box:
        raise box["error"]
    return box.get("value")


# ----------------------------------------------------------------------- equivalence


@dataclass(frozen=True)
class Verdict:
    equivalent: bool
    how: str  # "symbolic", "numeric", "differs", "undefined", "timeout"


def equivalent(
    expected,
    answer,
    syms: Mapping[str, Sym],
    *,
    seed: int = 0,
    points: int = 8,
    seconds: float = SIMPLIFY_SECONDS,
    rtol: float = 1e-9,
    atol: float = 1e-12,
) -> Verdict:
    """Is ``answer`` equal to ``expected`` for all values in the symbols' ranges?

    1. Both are evaluated in floats at ``points`` fixed pseudo-random points inside the symbols'
       ranges (seeded by ``seed``, so grading is reproducible); a clear difference at a point
       where the key is defined proves them different, and settles most wrong answers at once.
    2. Otherwise ``simplify(expected - answer)`` runs for at most ``seconds``: zero proves them
       equal, a nonzero number proves them different.
    3. When simplify cannot decide (no result in time, or a symbolic remainder it cannot reduce),
       the numeric agreement of step 1 decides: the numeric fallback.
    """
    numeric = _numeric_check(expected, answer, syms, seed=seed, points=points, rtol=rtol, atol=atol)
    if numeric == "differs":
        return Verdict(False, "differs")
    symbolic = _symbolic_verdict(expected, answer, seconds)
    if symbolic is not None:
        return symbolic
    if numeric == "undefined":
        return Verdict(False, "undefined")
    return Verdict(True, "numeric")


def _symbolic_verdict(expected, answer, seconds: float) -> Verdict | None:
    """Step 2 of :func:`equivalent`: a proof either way, or None when simplify cannot decide in
    ``seconds`` (then the numeric agreement decides)."""
    try:
        diff = run_with_timeout(lambda: _zero_test(expected - answer), seconds)
        if diff == 0:
            return Verdict(True, "symbolic")
        if diff is not None and diff.is_number and diff.free_symbols == set():
            value = evaluate(diff, {})
            if value is not None and value != 0:
                return Verdict(False, "differs")
    except TimeLimitExceeded:
        return None  # undecided in time: the numeric check of step 1 decides
    except Exception:  # sympy gave up on this form (its ways are many: PoleError, polynomial errors, ...)
        # Not being able to reduce an answer says nothing about it: a student's answer is never
        # marked wrong because simplify failed on it, and the numeric check of step 1 decides.
        return None
    return None


def _zero_test(diff):
    """Cheap canonical forms first, ``simplify`` last."""
    for step in (lambda e: e, sympy.expand, sympy.simplify):
        diff = step(diff)
        if diff == 0:
            return diff
    return diff


def _numeric_check(
    expected, answer, syms: Mapping[str, Sym], *, seed: int, points: int, rtol: float, atol: float
) -> str:
    """ "agrees", "differs" or "undefined" (too few points where both are defined)."""
    by_name = {s.name: s for s in syms.values()} if syms else {}
    free = sorted(expected.free_symbols | answer.free_symbols, key=lambda s: s.name)
    rng = random.Random(seed)
    compared = 0
    for _ in range(points * 3):
        values = {}
        for s in free:
            spec = by_name.get(s.name, Sym(s.name))
            values[s] = (
                float(rng.randint(math.ceil(spec.low), int(spec.high)))
                if spec.integer
                else rng.uniform(spec.low, spec.high)
            )
        a, b = evaluate(expected, values), evaluate(answer, values)
        if a is None:
            continue
        if b is None or abs(a - b) > atol + rtol * max(abs(a), abs(b)):
            return "differs"
        compared += 1
        if compared >= points:
            break
    return "agrees" if compared >= min(points, 3) else "undefined"


def mistake_differs(expected, wrong, syms: Mapping[str, Sym], *, points: int = 8) -> bool:
    """Is a named mistake clearly a different function from the key? Floats at fixed points
    inside the symbols' ranges: the same check that settles most wrong answers in grading."""
    return _numeric_check(expected, wrong, syms, seed=0, points=points, rtol=1e-9, atol=1e-12) == "differs"
