"""Bad hand-ins for `seqlab nbgrader autograde`'s reader stage: a small course, honest students,
and generated notebooks of every wrong shape (test_handin.py, test_handin_bank.py).

The reader stage is what runs before anything is graded: the class folder scanned
(``autograde._hand_ins``), each student's notebooks read and exported (``autograde._export_class``).
A full autograde costs tens of seconds, so the generated inputs go through this stage only; a
handful of full runs are in test_autograde_faults.py.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from seqlab.nbgrader.autograde import _all_assignments, _export_class, _hand_ins, assignment_notebooks
from seqlab.nbgrader.course import build_course

TOPIC = "optimizers"
HONEST = ("alice", "bob")
# Hypothesis settings for the generated hand-ins: no example database (the runs must not write
# into the tree), no deadline (the 2-core machine is shared), and the health checks that object
# to large generated inputs off (large inputs are the point).
GENERATED = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)


def make_course(root: Path) -> Path:
    """A one-topic course (no gradebook: the reader stage needs none) with the honest class
    handed in: each honest student's notebook is the source notebook (the solutions)."""
    course = build_course(root / "course", seed=7, topics=(TOPIC,)).course_dir
    for student in HONEST:
        hand_in(course, student, (course / "source" / TOPIC / f"{TOPIC}.ipynb").read_bytes())
    return course


def hand_in(course: Path, student: str, content: bytes) -> Path:
    path = course / "submitted" / student / TOPIC / f"{TOPIC}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return path


def reader_stage(course: Path, exports: Path) -> dict:
    """The outcomes of the reader stage (``autograde``'s own calls, in its order)."""
    notebooks = {TOPIC: assignment_notebooks(course, TOPIC)}
    others = {a: assignment_notebooks(course, a) for a in _all_assignments(course) if a not in notebooks}
    handed_in, empty, refused = _hand_ins(course / "submitted", notebooks, others)
    shutil.rmtree(exports, ignore_errors=True)
    exports.mkdir(parents=True)
    outcomes, folders, _ = _export_class(course / "submitted", exports, notebooks, handed_in, empty, others, refused)
    return {"outcomes": outcomes, "folders": folders}


def assert_honest_exported(stage: dict, exports: Path) -> None:
    for student in HONEST:
        outcome = stage["outcomes"][student]
        assert not outcome.reason, (student, outcome.reason)
        module = exports / stage["folders"][student] / "exercises" / f"{TOPIC}.py"
        assert "def adam" in module.read_text()


# --- generated notebooks --------------------------------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=30),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)),
    max_leaves=20,
)
_grade_ids = st.one_of(
    st.sampled_from([f"{TOPIC}-adam", f"{TOPIC}-sgd", f"{TOPIC}-adam-tests", "rnn-rnn_cell", "x"]),
    _json,
)


@st.composite
def _cell(draw):
    """A cell of some shape: nbformat's, with any of its keys missing or of the wrong type, or no
    object at all (a cell that is the number 1)."""
    kind = draw(st.sampled_from(["good", "good", "good", "wrong", "not-a-cell"]))  # mostly cells: some notebooks read
    if kind == "not-a-cell":
        return draw(_json)
    cell = {
        "cell_type": draw(st.sampled_from(["code", "markdown", "raw"])),
        "id": "c",
        "metadata": {"nbgrader": {"grade_id": draw(_grade_ids), "solution": True}},
        "source": draw(st.one_of(st.text(max_size=80), st.lists(st.text(max_size=20), max_size=4))),
        "outputs": [],
    }
    if kind == "wrong":
        key = draw(st.sampled_from(["cell_type", "metadata", "source", "nbgrader", "grade_id"]))
        value = draw(st.one_of(_json, st.just(None)))
        if key == "nbgrader":
            cell["metadata"]["nbgrader"] = value
        elif key == "grade_id":
            cell["metadata"]["nbgrader"]["grade_id"] = value
        elif draw(st.booleans()):
            cell[key] = value
        else:
            del cell[key]
    return cell


@st.composite
def _notebook_json(draw):
    """A notebook-like JSON value: nbformat's top level with cells of any shape, or keys
    missing or wrong."""
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": draw(st.one_of(st.just({"seqlab": {"topic": TOPIC}}), _json)),
        "cells": draw(st.one_of(st.lists(_cell(), max_size=6), _json)),
    }
    for key in draw(st.lists(st.sampled_from(list(notebook)), max_size=2, unique=True)):
        del notebook[key]
    return draw(st.one_of(st.just(notebook), _json))


def _deep(depth: int, opener: str) -> bytes:
    closer = {"[": "]", '{"a":': "}"}[opener]
    return (opener * depth + "1" + closer * depth).encode()


@st.composite
def bad_notebook_bytes(draw, *, huge: bool = True) -> bytes:
    """The bytes of a malformed notebook: wrong JSON shapes, deep nesting, truncation, text that
    is not UTF-8 (or a lone surrogate escaped in JSON), a huge answer cell."""
    shape = draw(
        st.sampled_from(
            ["shape", "deep", "truncated", "not-utf8", "surrogate", "utf16", "binary", "empty"]
            + (["huge"] if huge else [])
        )
    )
    if shape == "shape":
        return json.dumps(draw(_notebook_json())).encode()
    if shape == "deep":
        return _deep(draw(st.integers(min_value=60, max_value=200_000)), draw(st.sampled_from(["[", '{"a":'])))
    honest = json.dumps(_honest_like(draw(st.text(max_size=40)))).encode()
    if shape == "truncated":
        return honest[: draw(st.integers(min_value=0, max_value=len(honest) - 1))]
    if shape == "not-utf8":
        at = draw(st.integers(min_value=0, max_value=len(honest)))
        return honest[:at] + draw(st.sampled_from([b"\xff", b"\xc3(", b"\xe9t\xe9", b"\xed\xa0\x80"])) + honest[at:]
    if shape == "surrogate":
        return honest.replace(b"def adam", b"def adam\\ud800", 1)
    if shape == "utf16":
        return honest.decode().encode("utf-16")
    if shape == "binary":
        return draw(st.binary(max_size=200))
    if shape == "empty":
        return b""
    size = draw(st.sampled_from([1024 * 1024 + 1, 3 * 1024 * 1024]))
    return json.dumps(_honest_like("x" * size)).encode()


def _honest_like(extra: str) -> dict:
    """A small well-formed seqlab notebook whose adam answer ends with ``extra``."""
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"seqlab": {"topic": TOPIC}},
        "cells": [
            {
                "cell_type": "code",
                "id": "a",
                "metadata": {"nbgrader": {"grade_id": f"{TOPIC}-adam", "solution": True}},
                "source": "def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):\n    raise NotImplementedError\n# "
                + extra,
                "outputs": [],
                "execution_count": None,
            }
        ],
    }


def link(target: Path, at: Path) -> Path:
    at.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, at)
    return at
