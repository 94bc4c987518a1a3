"""The error rule of seqlab/errors.py, held by reading the package's source.

One family: every error a user can see is a SeqlabError; it is caught once, by the command line
(and by grade-all's worker, the entry point of a process of its own, which writes it into the
submission's row instead of printing it); nothing re-wraps an error into another one by its text;
no broad ``except`` throws an exception away without saying why.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

import seqlab

PACKAGE_DIR = Path(seqlab.__file__).resolve().parent
SOURCES = {
    path.relative_to(PACKAGE_DIR.parent).as_posix(): path.read_text(encoding="utf-8")
    for path in sorted(PACKAGE_DIR.rglob("*.py"))
}


@functools.cache
def _nodes() -> dict[str, list[ast.AST]]:
    """Every node of every module of the package, parsed by the first test that asks: parsed at
    import, it would cost every worker's collection 0.9 s, whether it runs these tests or not."""
    return {name: list(ast.walk(ast.parse(text))) for name, text in SOURCES.items() if not name.startswith("<")}


# Errors that are not the user's to fix, each with the reason it stays outside the family.
OUTSIDE_THE_FAMILY = {
    # the child's frames failed to decode: the parent kills the child and charges the current
    # call, so the message reaches a report as a test's failure, never the command line
    "CodecError",
    # the student's code failed a call: that is a failed test in the grade, not an error
    "StudentError",
    # the subset's dataclasses shim raises it in the student's own code, under the standard
    # library's name (an AttributeError, as honest code catches it); the subset ships standalone
    "FrozenInstanceError",
}
# Where SeqlabError itself may be caught: the command line, and grade-all's worker process.
CATCHERS = {"seqlab/cli.py", "seqlab/batch.py"}
BROAD = {"Exception", "BaseException"}


def _classes() -> dict[str, tuple[str, list[str]]]:
    """``{class name: (file, [base names])}`` of every class in the package."""
    found = {}
    for name, nodes in _nodes().items():
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                bases = [b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases]
                found[node.name] = (name, bases)
    return found


def _in_family(name: str, classes: dict[str, tuple[str, list[str]]], seen: frozenset = frozenset()) -> bool:
    if name == "SeqlabError":
        return True
    if name not in classes or name in seen:
        return False
    return any(_in_family(base, classes, seen | {name}) for base in classes[name][1])


def test_every_error_class_is_in_the_family_or_says_why_not():
    classes = _classes()
    errors = {n: where for n, (where, _b) in classes.items() if n.endswith(("Error", "Unavailable"))}
    outside = {n: where for n, where in errors.items() if not _in_family(n, classes) and n not in OUTSIDE_THE_FAMILY}
    assert not outside, f"errors outside the SeqlabError family (join it, or say why in this test): {outside}"
    assert set(errors) >= OUTSIDE_THE_FAMILY, f"stale names in OUTSIDE_THE_FAMILY: {OUTSIDE_THE_FAMILY - set(errors)}"


# `raise SomeError(str(exc)) from None`: the first error's type is lost and its message is the
# second's, so the family's one catch in the CLI would have caught the first as it was.
REWRAP = re.compile(r"raise\s+\w+\(\s*str\(\s*\w+\s*\)\s*\)")


def test_nothing_rewraps_an_error_by_its_text():
    hits = [
        f"{name}:{number}: {line.strip()}"
        for name, text in SOURCES.items()
        for number, line in enumerate(text.splitlines(), 1)
        if REWRAP.search(line)
    ]
    assert not hits, "re-wrapped errors (let the SeqlabError pass as it is):\n" + "\n".join(hits)


def _caught_names(handler: ast.ExceptHandler) -> set[str]:
    if handler.type is None:
        return {"BaseException"}
    nodes = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in nodes}


def _handlers():
    for name, nodes in _nodes().items():
        for node in nodes:
            if isinstance(node, ast.ExceptHandler):
                yield name, node


def test_seqlab_error_is_caught_only_at_the_entry_points():
    places = {f"{name}:{h.lineno}" for name, h in _handlers() if "SeqlabError" in _caught_names(h)}
    assert {p.split(":")[0] for p in places} <= CATCHERS, f"SeqlabError caught outside {sorted(CATCHERS)}: {places}"


def _swallows(handler: ast.ExceptHandler) -> bool:
    """A broad handler whose body is only ``pass``: the exception vanishes, and so does its why."""
    return bool(_caught_names(handler) & BROAD) and all(isinstance(s, ast.Pass) for s in handler.body)


def _drops(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Pass | ast.Continue | ast.Break) or (
        isinstance(statement, ast.Return) and isinstance(statement.value, ast.Constant | ast.Name | None)
    )


def _unexplained(name: str, handler: ast.ExceptHandler) -> bool:
    """A broad handler that only drops the exception (``pass``, ``return None``, ``continue``)
    must say why on its line; one that reports, re-raises or recovers says it in its code."""
    if not _caught_names(handler) & BROAD or not all(_drops(s) for s in handler.body):
        return False
    return "#" not in SOURCES[name].splitlines()[handler.lineno - 1]


def test_no_broad_except_swallows_or_goes_unexplained():
    swallowed = [f"{name}:{h.lineno}" for name, h in _handlers() if _swallows(h)]
    unexplained = [f"{name}:{h.lineno}" for name, h in _handlers() if _unexplained(name, h)]
    assert not swallowed, f"`except Exception: pass` and the like: {swallowed}"
    assert not unexplained, f"broad handlers that drop the exception without a reason on their line: {unexplained}"


@pytest.mark.parametrize(
    "source, swallows, unexplained",
    [
        ("try:\n    f()\nexcept Exception:\n    pass\n", True, True),
        ("try:\n    f()\nexcept:\n    pass\n", True, True),
        ("try:\n    f()\nexcept Exception:  # why\n    return None\n", False, False),
        ("try:\n    f()\nexcept Exception:\n    return None\n", False, True),
        ("try:\n    f()\nexcept Exception as exc:\n    log(exc)\n", False, False),
        ("try:\n    f()\nexcept BaseException:\n    traceback.print_exc()\n", False, False),
        ("try:\n    f()\nexcept (OSError, Exception):\n    raise Other() from None\n", False, False),
        ("try:\n    f()\nexcept ValueError:\n    pass\n", False, False),
    ],
)
def test_the_handler_rules_see_what_they_mean(source, swallows, unexplained):
    tree = ast.parse("def g():\n" + "".join(f"    {line}\n" for line in source.splitlines()))
    handler = next(n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler))
    SOURCES["<example>"] = "def g():\n" + "".join(f"    {line}\n" for line in source.splitlines())
    try:
        assert (_swallows(handler), _unexplained("<example>", handler)) == (swallows, unexplained)
    finally:
        del SOURCES["<example>"]
