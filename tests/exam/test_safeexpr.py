"""Safe parsing of typed answers: what is accepted, what is refused, and that nothing runs."""

from __future__ import annotations

import re
import signal
import time

import pytest
import sympy

from seqlab.exam import safeexpr
from seqlab.exam.safeexpr import AnswerRejected, Sym, equivalent, parse, parse_number, parse_numbers

D = Sym("d", 1, 64, integer=True)
SYMS = {"d": D.sympy()}


@pytest.mark.parametrize(
    "text",
    [
        "d",
        "d**1",
        "sqrt(d)**2",
        "d^2/d",
        "2*d/2",
        "Rational(1,2)*d*2",
        "0.5*d*2",
        "(d)",
        " d ",
        "exp(log(d))",
        "d + 0",
        "-(-d)",
    ],
)
def test_equivalent_forms_of_d_are_accepted(text):
    answer = parse(text, SYMS)
    assert equivalent(SYMS["d"], answer, {"d": D}).equivalent


@pytest.mark.parametrize("text", ["d**2", "sqrt(d)", "2*d", "d + 1", "1", "1/d", "log(d)", "d - 1e-6"])
def test_wrong_forms_of_d_are_rejected(text):
    answer = parse(text, SYMS)
    assert not equivalent(SYMS["d"], answer, {"d": D}).equivalent


INJECTIONS = [
    "__import__('os').system('touch CANARY')",
    "__import__",
    "eval(d)",
    "exec(d)",
    "open(d)",
    "lambda: 1",
    "(lambda x: x)(d)",
    "d.__class__",
    "d.subs",
    "(1).real",
    "().__class__.__bases__[0].__subclasses__()",
    "[c for c in d]",
    "{d: d}",
    "d if d else d",
    "d[0]",
    "d == d",
    "d and d",
    "globals()",
    "getattr(d, d)",
    "Symbol(d)",
    "sympify(d)",
    "x" * 10_000_000,
    "(" * 10_000 + "d" + ")" * 10_000,
    "(" * 13 + "d" + ")" * 13,
    "-" * 400 + "d",
    "9**9**9**9",
    "10**10**10",
    "exp(exp(exp(d)))",
    "d**d**d",
    "2**(d**(d**2))",
    "1e308*1e308",
    "d\x00",
    "d; import os",
    "d #",
    "d @ d",
    "'d'",
    "f'{d}'",
    "1j*d",
    "d, d",
    "",
]


@pytest.mark.parametrize("text", INJECTIONS, ids=lambda t: repr(t[:30]) + (f"...({len(t)})" if len(t) > 30 else ""))
def test_injections_are_rejected_quickly_with_a_message(text):
    parse("d", SYMS)  # the first parse in a process imports sympy: that is not the rejection's time
    start = time.process_time()  # this process's work, not the machine's load
    with pytest.raises(AnswerRejected) as info:
        parse(text, SYMS)
    assert str(info.value)  # a message for the student
    assert time.process_time() - start < 0.5


def test_non_text_is_rejected():
    for value in (None, 3, ["d"], {"d": 1}, b"d"):
        with pytest.raises(AnswerRejected):
            parse(value, SYMS)


def test_the_parser_never_calls_sympify_or_parse_expr(monkeypatch):
    import sympy.parsing.sympy_parser as sp

    def boom(*a, **k):
        raise AssertionError("parse_expr must not be used on answers")

    monkeypatch.setattr(sp, "parse_expr", boom)
    monkeypatch.setattr(sympy, "parse_expr", boom, raising=False)
    assert parse("sqrt(d)**2 + exp(-d)", SYMS) == SYMS["d"] + sympy.exp(-SYMS["d"])


def test_numbers_and_lists():
    assert parse_number("1/4") == 0.25
    assert parse_number("sqrt(2)/2") == pytest.approx(2**0.5 / 2)
    assert parse_number("2.5e-3") == 0.0025
    assert parse_number("2^10") == 1024
    assert parse_number("pi/2") == pytest.approx(1.5707963267948966)
    assert parse_numbers("(2, 5, 16)") == [2, 5, 16]
    assert parse_numbers("[0.1, -0.2]") == [0.1, -0.2]
    assert parse_numbers("3") == [3]
    with pytest.raises(AnswerRejected):
        parse_number("d")  # no symbols in numeric answers
    with pytest.raises(AnswerRejected):
        parse_number("(-8)^(1/3)")
    with pytest.raises(AnswerRejected):
        parse_numbers("[[1, 2]]")


@pytest.mark.parametrize(
    "text", ["tanh(0.3)", "0.5*sigmoid(1)", "exp(1)/3", "cos(21/10000^(6/16))", "log(2)", "e^2", "e"]
)
def test_a_number_asked_is_not_computed_for_the_student(text):
    """What a question asks the student to work out (an activation, a sinusoid, a softmax's
    exponentials) is refused in a number, saying why; the same text is a formula's to use."""
    with pytest.raises(AnswerRejected, match="a number is asked"):
        parse_numbers(text)
    parse(text, {})  # a formula may use every function and e


def test_numeric_fallback_decides_what_simplify_cannot():
    tau, n = Sym("tau", 0.5, 1.0), Sym("n", 1.5, 4.0)
    table = {"tau": tau.sympy(), "n": n.sympy()}
    verdict = equivalent(table["tau"] / table["n"], parse("min(1, tau/n)", table), {"tau": tau, "n": n})
    assert verdict.equivalent  # min(1, tau/n) = tau/n on the stated ranges (n > tau)
    assert not equivalent(table["tau"] / table["n"], parse("min(1, n/tau)", table), {"tau": tau, "n": n}).equivalent


def test_time_limit_interrupts_and_restores_an_outer_timer():
    def handler(signum, frame):  # an outer timer, like pytest-timeout's
        raise AssertionError("outer timer fired")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, 30)
    try:
        start = time.perf_counter()
        with pytest.raises(safeexpr.TimeLimitExceeded), safeexpr.time_limit(0.2):
            while True:
                pass
        assert time.perf_counter() - start < 2
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 20 < remaining <= 30  # the outer timer is running again
        assert signal.getsignal(signal.SIGALRM) is handler
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_slow_simplify_falls_back_to_the_numeric_check(monkeypatch):
    def slow(expr, *a, **k):
        while True:
            pass

    x = Sym("x", -3, 3)
    table = {"x": x.sympy()}
    expected = parse("sigmoid(x)", table)
    answer = parse("(1 + tanh(x/2))/2", table)  # the same function; expand cannot show it
    monkeypatch.setattr(sympy, "simplify", slow)
    start = time.perf_counter()
    verdict = equivalent(expected, answer, {"x": x}, seconds=0.2)
    assert verdict.equivalent and verdict.how == "numeric"
    assert not equivalent(expected, parse("(1 + tanh(x))/2", table), {"x": x}, seconds=0.2).equivalent
    assert time.perf_counter() - start < 3


@pytest.mark.parametrize(
    "text, message",
    [
        ("2x", "implicit multiplication: write 2*x"),
        ("2(x+1)", "implicit multiplication: write 2*(...)"),
        ("(x+1)(x-1)", "implicit multiplication: write (x + 1)*(...)"),
        ("x x", "implicit multiplication: write x*x"),
        # a product hint names only what the answer may use: "write x*y" would lead to another error
        ("x y", "unknown name 'y' (symbols allowed here: x)"),
        ("2 MiB", "unknown name 'MiB' (symbols allowed here: x)"),
        ("2 sqrt(x)", "implicit multiplication: write 2*sqrt(...)"),
        # a power or a call before a bracket: Python reads a call of what stands before it
        ("x^3(1-x^2)", "implicit multiplication: write x^3*(...)"),
        ("x^(2)(x)", "implicit multiplication: write x^2*(...)"),
        ("tanh(x)(1-x)", "implicit multiplication: write tanh(x)*(...)"),
        ("sqrt(2)(3)", "implicit multiplication: write sqrt(2)*(...)"),
        ("h(1-x)", "for a product write h*(...)"),
        ("x^", "the expression ends with an operator"),
        ("x */ 2", "two operators in a row"),
        ("x = 2", "character '=' is not allowed"),
        ("(x + 1", "unbalanced brackets"),
        ("y", "unknown name 'y'"),
    ],
)
def test_rejected_forms_say_what_to_write(text, message):
    with pytest.raises(AnswerRejected, match=re.escape(message)):
        parse(text, {"x": sympy.Symbol("x")})


def test_e_and_exp_are_eulers_number_in_formulas_too():
    x = sympy.Symbol("x")
    assert parse("e^x", {"x": x}) == sympy.exp(x)
    assert parse("exp(1)*x", {"x": x}) == sympy.E * x
    assert parse_numbers("2e5, 2.5e-3") == [200000.0, 0.0025]  # e in a number stays a number
    e = sympy.Symbol("e")
    assert parse("e^2", {"e": e}) == e**2  # a question's own symbol e wins
