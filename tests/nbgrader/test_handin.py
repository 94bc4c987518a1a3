"""`seqlab nbgrader autograde`'s reader stage: one student's hand-in costs that student only.

Every case here mixes one bad hand-in into an honest class (``_faults.HONEST``) and checks that
the honest students are exported for grading with no reason, and the bad one is named with why.
The class-level runs through nbgrader itself are in test_autograde_faults.py (slow).
"""

from __future__ import annotations

import itertools
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqlab.labs.figures import distribution_figure, histogram_edges
from seqlab.nbgrader.export import ExportError, export_topic, notebook_topic, read_notebook
from seqlab.nbgrader.handin import HASHED_PREFIX, folder_name, id_problem, shown
from seqlab.nbgrader.record import record_only
from seqlab.nbgrader.source import load_topics
from seqlab.paths import SOLUTIONS_DIR
from tests.nbgrader._faults import (
    GENERATED,
    HONEST,
    TOPIC,
    assert_honest_exported,
    bad_notebook_bytes,
    hand_in,
    link,
    make_course,
    reader_stage,
)

SOURCE = {t.topic: t for t in load_topics(SOLUTIONS_DIR)}[TOPIC]


@pytest.fixture(scope="module")
def built_course(tmp_path_factory) -> Path:
    return make_course(tmp_path_factory.mktemp("built"))


@pytest.fixture
def course(built_course, tmp_path) -> Path:
    """A fresh copy of the honest class per test (building the course costs more than copying it)."""
    return Path(shutil.copytree(built_course, tmp_path / "course", symlinks=True))


# --- the class report's histogram ---------------------------------------------------------------


def test_two_correct_char_rnn_runs_one_rounding_step_apart_are_drawn():
    # the class that stopped autograde: two correct runs, 1.0 and 1.0000000000000002
    figure = distribution_figure("rnn.train_char_rnn", "accuracy", [1.0, 1.0000000000000002], None)
    assert figure.svg.startswith("<svg") and "2 submissions" in figure.alt
    for values in ([0.0, 0.0], [5.0], [1e-300, 2e-300], [float("nan"), 1.0], [0.5] * 40):
        assert distribution_figure("rnn.train_char_rnn", "accuracy", values, 0.5).svg


@settings(GENERATED, max_examples=25)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=30), st.integers(1, 20))
def test_histogram_edges_hold_every_value_in_finite_bins(values, bins):
    edges = histogram_edges(values, bins)
    assert len(edges) == bins + 1 and all(math.isfinite(e) for e in edges)
    assert all(a < b for a, b in itertools.pairwise(edges))
    assert edges[0] <= min(values) and max(values) <= edges[-1]
    counts, _ = np.histogram(values, bins=edges)  # what matplotlib's hist calls
    assert counts.sum() == len(values)


# --- malformed notebooks ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (json.dumps({"nbformat": 4, "metadata": {}, "cells": [1]}), "cell 1 is a JSON number, not a cell"),
        ("[" * 100_000 + "]" * 100_000, "nested too deep"),
        ('{"cells": ' + "[" * 70 + "]" * 70 + "}", "nested more than 64 deep"),
        (json.dumps({"cells": [{"cell_type": "code", "source": 5}]}), "source is neither text nor a list"),
        (json.dumps({"cells": [{"cell_type": "code", "metadata": {"nbgrader": []}}]}), "nbgrader metadata"),
        (json.dumps({"cells": [], "metadata": {"seqlab": "x"}}), "metadata.seqlab"),
        ('{"cells": [{"cell_type": "code", "source": "def adam\\ud800"}]}', "not valid Unicode"),
        (b'{"cells": []}\xff', "not UTF-8"),
        ("", "not a readable notebook"),
        ("1", "a JSON number, not an object"),
    ],
    ids=[
        "cell-is-1",
        "deep-json",
        "deep-notebook",
        "source",
        "nbgrader-meta",
        "seqlab-meta",
        "surrogate",
        "not-utf8",
        "empty",
        "number",
    ],
)
def test_a_malformed_notebook_costs_its_student_only(course, tmp_path, content, named):
    hand_in(course, "mallory", content if isinstance(content, bytes) else content.encode())
    stage = reader_stage(course, tmp_path / "exports")
    assert_honest_exported(stage, tmp_path / "exports")
    reason = stage["outcomes"]["mallory"].reason
    assert named in reason and "mallory" in reason  # the notebook is named by its path
    assert "mallory" not in stage["folders"]  # nothing of it goes to grade-all


def test_a_huge_answer_cell_is_refused_by_name(course, tmp_path):
    notebook = json.loads((course / "source" / TOPIC / f"{TOPIC}.ipynb").read_text())
    answer = next(c for c in notebook["cells"] if c["metadata"].get("nbgrader", {}).get("solution"))
    answer["source"] = "x = 1\n" * 200_000
    hand_in(course, "mallory", json.dumps(notebook).encode())
    stage = reader_stage(course, tmp_path / "exports")
    assert_honest_exported(stage, tmp_path / "exports")
    assert "characters in one answer cell" in stage["outcomes"]["mallory"].reason


# --- links ----------------------------------------------------------------------------------------


def test_a_notebook_linked_to_the_instructors_source_is_refused_by_name(course, tmp_path):
    source = course / "source" / TOPIC / f"{TOPIC}.ipynb"
    link(source, course / "submitted" / "mallory" / TOPIC / f"{TOPIC}.ipynb")
    stage = reader_stage(course, tmp_path / "exports")
    assert_honest_exported(stage, tmp_path / "exports")
    reason = stage["outcomes"]["mallory"].reason
    assert f"mallory/{TOPIC}/{TOPIC}.ipynb" in reason and "symbolic link" in reason
    assert "mallory" not in stage["folders"]


@pytest.mark.parametrize("where", ["student", "assignment", "other-file", "sub-folder"])
def test_a_link_anywhere_in_a_students_folder_is_refused(course, tmp_path, where):
    source = course / "source" / TOPIC
    mallory = course / "submitted" / "mallory"
    if where == "student":
        link(course / "submitted" / "alice", mallory)
    elif where == "assignment":
        link(source, mallory / TOPIC)
    else:
        hand_in(course, "mallory", (source / f"{TOPIC}.ipynb").read_bytes())
        at = mallory / TOPIC / ("data.txt" if where == "other-file" else "sub/key.ipynb")
        link(source / f"{TOPIC}.ipynb", at)
    stage = reader_stage(course, tmp_path / "exports")
    assert_honest_exported(stage, tmp_path / "exports")
    assert "symbolic link" in stage["outcomes"]["mallory"].reason
    assert "mallory" not in stage["folders"]


def test_read_notebook_never_follows_a_link(course):
    source = course / "source" / TOPIC / f"{TOPIC}.ipynb"
    at = link(source, course / "elsewhere" / "n.ipynb")
    with pytest.raises(ExportError, match="symbolic link"):
        read_notebook(at)


def test_nbgrader_collect_refuses_a_link_in_the_exchange(course, tmp_path):
    from nbgrader.coursedir import CourseDirectory

    from seqlab.nbgrader.collect import LinkRefusingCollect

    collect = LinkRefusingCollect(coursedir=CourseDirectory(root=str(course)))
    inbound = tmp_path / "inbound"
    honest, mallory = inbound / "alice+optimizers+ts", inbound / "mallory+optimizers+ts"
    honest.mkdir(parents=True)
    (honest / f"{TOPIC}.ipynb").write_text("{}")
    link(course / "source" / TOPIC / f"{TOPIC}.ipynb", mallory / f"{TOPIC}.ipynb")
    collect.do_copy(honest, tmp_path / "submitted" / "alice")
    collect.do_copy(mallory, tmp_path / "submitted" / "mallory")
    assert (tmp_path / "submitted" / "alice" / f"{TOPIC}.ipynb").read_text() == "{}"
    assert not (tmp_path / "submitted" / "mallory").exists()  # nothing of it collected, nothing followed


# --- ids ------------------------------------------------------------------------------------------


def test_an_id_spelled_like_anothers_hashed_folder_gets_its_own(course, tmp_path):
    victim = "Élève"
    hand_in(course, victim, (course / "source" / TOPIC / f"{TOPIC}.ipynb").read_bytes())
    attacker = folder_name(victim)  # a plain-looking id: the victim's folder name as it was derived
    assert attacker.startswith(HASHED_PREFIX)
    stub = (course / "source" / TOPIC / f"{TOPIC}.ipynb").read_text().replace("def adam", "def adam_not_mine")
    hand_in(course, attacker, stub.encode())
    stage = reader_stage(course, tmp_path / "exports")
    assert_honest_exported(stage, tmp_path / "exports")
    folders = stage["folders"]
    assert folders[victim] != folders[attacker] and not stage["outcomes"][attacker].reason
    exports = tmp_path / "exports"
    assert "def adam(" in (exports / folders[victim] / "exercises" / f"{TOPIC}.py").read_text()
    assert "adam_not_mine" in (exports / folders[attacker] / "exercises" / f"{TOPIC}.py").read_text()


@settings(GENERATED, max_examples=25)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=8, unique=True))
def test_no_two_ids_share_a_folder(ids):
    ids += [folder_name(i) for i in ids]  # and every id's folder name taken as an id of its own
    assert len({i for i in ids}) == len({folder_name(i).casefold() for i in set(ids)})


@pytest.mark.parametrize(
    "name",
    ["new\nline", "tab\there", "rtl\u202eexe.txt", "line\u2028sep", "[alice]", "*", "bad\udcff"],
)
def test_an_id_that_cannot_be_carried_is_refused_by_name(course, tmp_path, name):
    assert id_problem(name)
    hand_in(course, name, (course / "source" / TOPIC / f"{TOPIC}.ipynb").read_bytes())
    stage = reader_stage(course, tmp_path / "exports")
    assert_honest_exported(stage, tmp_path / "exports")
    reason = stage["outcomes"][name].reason
    assert "cannot be graded" in reason and shown(name) in reason  # named, printable
    reason.encode("utf-8")  # and writable anywhere


def test_nbgrader_is_shown_only_the_graded_students_folders():
    class Converter:
        class coursedir:  # stands in for nbgrader's CourseDirectory
            assignment_id = TOPIC

        def _format_source(self, assignment, student):
            return f"/c/submitted/{student}/{assignment}"

    converter = Converter()
    converter.assignments = {f"/c/submitted/{s}/{TOPIC}": [f"{s}.ipynb"] for s in ("alice", "a,b", "bad\nname", "bob")}
    record_only(converter, ["alice", "a,b"])
    assert sorted(converter.assignments) == [f"/c/submitted/a,b/{TOPIC}", f"/c/submitted/alice/{TOPIC}"]


def test_export_submission_course_names_the_bad_student_and_exports_the_others(course, tmp_path, capsys):
    from seqlab.cli import main

    link(course / "source" / TOPIC / f"{TOPIC}.ipynb", course / "submitted" / "mallory" / TOPIC / f"{TOPIC}.ipynb")
    hand_in(course, "carol", b'{"cells": [1]}')
    code = main(["nbgrader", "export-submission", "--course", str(course), "--out", str(tmp_path / "out")])
    assert code == 1
    err = capsys.readouterr().err
    assert "NOT EXPORTED mallory" in err and "symbolic link" in err and "NOT EXPORTED carol" in err
    for student in HONEST:
        assert "def adam" in (tmp_path / "out" / student / "exercises" / f"{TOPIC}.py").read_text()


# --- generated notebooks (the small version; the bank runs many more) --------------------------


def check_reader(path: Path) -> None:
    """``read_notebook`` either gives a notebook every later step reads without an exception, or
    an ExportError that names the file; never anything else."""
    try:
        notebook = read_notebook(path)
    except ExportError as exc:
        assert str(path.name) in str(exc)
        return
    notebook_topic(notebook)
    export_topic(SOURCE, notebook, path.name).text.encode("utf-8")


@settings(GENERATED, max_examples=20)
@given(bad_notebook_bytes(huge=False))
def test_generated_notebooks_are_read_or_refused_by_name(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("nb") / "optimizers.ipynb"
    path.write_bytes(content)
    check_reader(path)


def test_the_command_names_the_not_graded_and_the_log_errors_and_exits_1(monkeypatch, capsys, tmp_path):
    import seqlab.nbgrader.autograde as module
    from seqlab.cli import main
    from seqlab.nbgrader.autograde import AutogradeReport, StudentOutcome

    outcomes = [
        StudentOutcome("alice", [TOPIC], graded=True, scores={TOPIC: (10.0, 10.0)}),
        StudentOutcome("new\nline", [], graded=False, reason="student id 'new\\nline' cannot be graded"),
    ]
    report = AutogradeReport(tmp_path, [TOPIC], 1, outcomes, None, errors=["grade-all stopped after grading"])
    monkeypatch.setattr(module, "autograde", lambda *args, **kwargs: report)
    assert main(["nbgrader", "autograde", str(tmp_path), TOPIC]) == 1
    out, err = capsys.readouterr()
    assert "alice" in out and "10/10" in out
    assert "NOT GRADED 'new\\nline'" in out and "1 NOT GRADED" in out
    assert "error: grade-all stopped after grading" in err
