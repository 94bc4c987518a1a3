"""Similarity on the program as it runs: padding and wrapping a copy does not hide it.

A review hid a verbatim copy of a whole submission three ways: the file under ``if True:`` (no
function was found at the top level, so none was compared), one comment of U+2028 characters
(``str.splitlines`` cut there, every function's source was read from the wrong lines), and a
``pass`` after each statement (a token between every statement broke two thirds of the k-grams).
Each disguise here is applied to a real honest submission's files as source text, the way a
student would, and the copy must still be flagged in every function the original wrote; two
honest submissions written independently (different styles) must still not be."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from seqlab import fingerprints, similarity

HONEST = Path(__file__).resolve().parents[1] / "student" / "honest_submissions"
# Two topic files keep each comparison well under a second; together they hold a dozen of the
# contract's functions, short and long, with loops, branches and nested calls.
MODULES = ("attention", "rnn")


# --- disguises, on source text -------------------------------------------------------------------


def _statement_lines(text: str) -> list[tuple[int, int, int]]:
    """(first line, last line, indentation) of every statement that starts its own line."""
    lines = fingerprints.python_lines(text)
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.stmt):
            # a decorated definition starts at its first decorator (the `def` line is inside it)
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            line = lines[first - 1]
            indent = len(line) - len(line.lstrip(" \t"))
            if first == node.lineno and node.col_offset != len(line[:indent].encode()):
                continue  # not the first statement on its line (`if x: y = 1`, `a; b`)
            found.append((first, node.end_lineno or node.lineno, indent))
    return found


def _insert_after(text: str, where: dict[int, list[str]]) -> str:
    """``text`` with the given lines inserted after each line number (0: before the first)."""
    lines = fingerprints.python_lines(text)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n"
    out = list(where.get(0, []))
    for number, line in enumerate(lines, start=1):
        out.append(line)
        out.extend(where.get(number, []))
    return "".join(out)


def wrap(text: str, header: str = "if True:") -> str:
    """The whole file under ``header`` (``from __future__`` imports stay first: Python requires it)."""
    lines = fingerprints.python_lines(text)
    future = [line for line in lines if line.startswith("from __future__")]
    rest = "".join(line for line in lines if not line.startswith("from __future__"))
    return "".join(future) + header + "\n" + textwrap.indent(rest, "    ")


def _after_future(text: str) -> int:
    """The last line of the module's ``from __future__`` imports (0: none): nothing may precede them."""
    return max(
        (n.end_lineno or 0 for n in ast.parse(text).body if isinstance(n, ast.ImportFrom) and n.module == "__future__"),
        default=0,
    )


def pass_after_each_statement(text: str, every: int = 1) -> str:
    where: dict[int, list[tuple[int, str]]] = {}
    start = _after_future(text)
    for i, (_, last, indent) in enumerate(_statement_lines(text)):
        if i % every == 0 and last >= start:
            where.setdefault(last, []).append((indent, " " * indent + "pass\n"))
    # a body and the statement holding it can end on one line: the inner pass goes first
    return _insert_after(text, {n: [line for _, line in sorted(ps, reverse=True)] for n, ps in where.items()})


def separator_comment(text: str, before: int = 0, width: int = 40) -> str:
    """One comment of U+2028 characters before the ``before``-th statement."""
    statements = sorted(_statement_lines(text))
    first, _, indent = statements[min(before, len(statements) - 1)]
    return _insert_after(text, {first - 1: [" " * indent + "# " + "\u2028" * width + "\n"]})


DEAD = {
    "if-false": "if False:\n    return None\n",
    "while-false": "while 0:\n    x = [i for i in range(3)]\n",
    "ellipsis": "...\n",
    "string": "'''a string that does nothing'''\n",
    "not-true": "if not True:\n    raise ValueError('never')\n",
}


def dead_code(text: str, at: list[tuple[int, str]]) -> str:
    """Dead branches and no-op statements before some statements (never before a docstring or
    an `else`: only where a statement starts its line)."""
    statements = sorted(_statement_lines(text))
    where: dict[int, list[str]] = {}
    lines, start = fingerprints.python_lines(text), _after_future(text)
    for index, kind in at:
        first, _, indent = statements[index % len(statements)]
        if first <= start or lines[first - 1].lstrip().startswith(("elif", "else")):
            continue
        where.setdefault(first - 1, []).append(textwrap.indent(DEAD[kind], " " * indent))
    return _insert_after(text, where)


# --- the class ------------------------------------------------------------------------------------


def _submission(root: Path, style: str, disguise=None) -> Path:
    (root / "exercises").mkdir(parents=True)
    for module in MODULES:
        text = (HONEST / style / "exercises" / f"{module}.py").read_text(encoding="utf-8")
        text = disguise(text) if disguise else text
        ast.parse(text)  # every disguise keeps the file a valid program
        (root / "exercises" / f"{module}.py").write_text(text, encoding="utf-8")
    return root


def _written(root: Path) -> set[str]:
    return {q for module in MODULES for q in fingerprints.read_functions(root / "exercises", module)[0]}


def _similar_functions(report: dict, a: str, b: str) -> dict[str, float]:
    return {f["name"]: p["score"] for f in report["functions"] for p in f["pairs"] if {p["a"], p["b"]} == {a, b}}


def _assert_flagged(tmp_path, disguise, style: str = "terse") -> None:
    original = _submission(tmp_path / "original", style)
    copy = _submission(tmp_path / "copy", style, disguise)
    report = similarity.compare_class({"original": original, "copy": copy})
    similar = _similar_functions(report, "original", "copy")
    written = _written(original)
    assert len(written) >= 8
    # every function the original wrote is found in the copy, token for token
    assert similar == {q: 1.0 for q in written if q in similar} and set(similar) >= written - _stub_only(original)
    pair = next(p for p in report["pairs"] if {p["a"], p["b"]} == {"original", "copy"})
    assert len(pair["functions"]) == pair["of"]


def _stub_only(root: Path) -> set[str]:
    """Functions left as the stubs handed them out (nothing of their own to compare)."""
    stubs = fingerprints.stub_kgrams()
    left = set()
    for module in MODULES:
        for qualname, code in fingerprints.read_functions(root / "exercises", module)[0].items():
            if set(fingerprints._kgram_hashes(code.tokens)) <= stubs.get(qualname, set()):
                left.add(qualname)
    return left


@pytest.mark.parametrize(
    "disguise",
    [
        pytest.param(wrap, id="whole-file-under-if-True"),
        pytest.param(separator_comment, id="one-comment-of-U+2028"),
        pytest.param(pass_after_each_statement, id="pass-after-each-statement"),
    ],
)
def test_each_disguise_of_issue_39_still_flags_the_copy(tmp_path, disguise):
    _assert_flagged(tmp_path, disguise)


@pytest.mark.parametrize("pair", [("terse", "oop"), ("functional", "verbose-debug")], ids="-vs-".join)
def test_independent_honest_solutions_are_not_flagged(tmp_path, pair):
    """Two honest submissions written blind in different styles: a few short functions may
    share enough to be listed (there are few ways to write them), never the pair as a copy."""
    a, b = (_submission(tmp_path / name, name) for name in pair)
    report = similarity.compare_class({pair[0]: a, pair[1]: b})
    similar = _similar_functions(report, *pair)
    assert len(similar) <= 0.25 * len(_written(a) & _written(b)), similar


# --- any combination of disguises -----------------------------------------------------------------

HEADERS = ["if True:", "if 1:", "if not 0:", "if 1 == 1:", "if True and 1:"]
disguises = st.fixed_dictionaries(
    {
        "header": st.none() | st.sampled_from(HEADERS),
        "pass_every": st.none() | st.integers(1, 3),
        "comments": st.lists(st.integers(0, 200), max_size=3),
        "dead": st.lists(st.tuples(st.integers(0, 200), st.sampled_from(sorted(DEAD))), max_size=4),
    }
)


def apply(text: str, plan: dict) -> str:
    text = dead_code(text, plan["dead"])
    if plan["pass_every"]:
        text = pass_after_each_statement(text, plan["pass_every"])
    for before in plan["comments"]:
        text = separator_comment(text, before)
    if plan["header"]:
        text = wrap(text, plan["header"])
    return text


def _check_plan(tmp_path_factory, plan):
    _assert_flagged(tmp_path_factory.mktemp("class"), lambda text: apply(text, plan))


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plan=disguises)
def test_random_combinations_of_disguises_keep_the_copy_flagged(tmp_path_factory, plan):
    _check_plan(tmp_path_factory, plan)


@pytest.mark.bank
@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(plan=disguises, style=st.sampled_from(sorted(p.name for p in HONEST.iterdir() if (p / "exercises").is_dir())))
def test_random_disguises_of_every_honest_style_keep_the_copy_flagged(tmp_path_factory, plan, style):
    _assert_flagged(tmp_path_factory.mktemp("class"), lambda text: apply(text, plan), style)
