"""`seqlab nbgrader`: the course it writes, the export, the kernel guard, and a real nbgrader round trip.

The round trip (``test_nbgrader_round_trip``, marked slow) runs the real nbgrader 0.9 command line,
no mocks, on the class of ``_class.py``: generate_assignment for every topic, autograde of five
optimizers submissions (solutions, stubs, two bugged functions, one that deletes a test cell,
warns and snoops, and one that forges its points -- which only the cross-check with the isolated
grader catches); then validate, the gradebook read back, the same notebooks exported and graded
by the isolated `seqlab grade`, generate_feedback and export. It prints how long it took.
"""

from __future__ import annotations

import ast
import csv
import json
import subprocess
import sys
import textwrap
import time

import nbformat
import pytest
import torch

from seqlab import contract
from seqlab.build import render_stubs
from seqlab.config import load_config
from seqlab.nbgrader import provided
from seqlab.nbgrader.course import build_course
from seqlab.nbgrader.export import answer_id, export_submission, export_topic, grade_cell_id, module_code
from seqlab.nbgrader.gradebook import function_scores
from seqlab.paths import GRADERS_DIR, SOLUTIONS_DIR
from seqlab.reference import load_reference
from seqlab.regions import clear_solutions, strip_markers
from tests.nbgrader._class import (
    BUGGY,
    NBGRADER,
    NBGRADER_CLASS,
    SEED,
    SEQLAB,
    TOPIC,
    TOPICS,
    by_grade_id,
    maximum_points,
    outputs,
    run,
)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return build_course(tmp_path_factory.mktemp("nbgrader") / "course", seed=SEED)


def _nb(course, topic):
    return nbformat.read(str(course.course_dir / "source" / topic / f"{topic}.ipynb"), as_version=4)


# --- the course ---------------------------------------------------------------------------------


def test_every_topic_is_an_assignment_with_an_answer_and_a_test_cell_per_function(course):
    config = load_config()
    assert [p.parent.name for p in course.notebooks] == list(contract.MODULES)
    for topic in contract.MODULES:
        nb = _nb(course, topic)
        nbformat.validate(nb)
        assert nb.metadata["kernelspec"]["name"] == "python3" and nb.metadata["seqlab"]["topic"] == topic
        ids = [c.metadata["nbgrader"]["grade_id"] for c in nb.cells]
        assert len(ids) == len(set(ids)) == len({c["id"] for c in nb.cells}), "grade ids and cell ids are unique"
        assert all(c.metadata["nbgrader"]["schema_version"] == 3 for c in nb.cells)
        cells = by_grade_id(nb)
        for qualname in contract.functions_of(topic):
            name = qualname.split(".")[1]
            chunk = next(c for c in TOPICS[topic].chunks if c.name == name)
            answer, tests = cells[answer_id(topic, name)], cells[grade_cell_id(topic, name)]
            assert answer.metadata["nbgrader"] | {} == {
                "grade": False,
                "grade_id": answer_id(topic, name),
                "locked": False,
                "schema_version": 3,
                "solution": True,
                "task": False,
            }
            assert answer.source.rstrip() == chunk.source.rstrip() and "### BEGIN SOLUTION" in answer.source
            meta = tests.metadata["nbgrader"]
            assert meta["grade"] and meta["locked"] and not meta["solution"]
            assert meta["points"] == config.rules(qualname).points
            assert f'hidden_points("{qualname}", notebook="{topic}.ipynb")' in tests.source
            assert tests.source.index("quick_check") < tests.source.index("### BEGIN HIDDEN TESTS")
            prose = cells[f"{topic}-{name}-text"].source
            assert "$$" in prose and "**Course notes:**" in prose and "| argument |" in prose
        assert "§" in cells[f"{topic}-intro"].source, "the introduction cites the course notes"
    gru = by_grade_id(_nb(course, "lstm_gru"))["lstm_gru-gru_cell-text"].source
    assert "notes' form" in gru and "r \\odot (W_{hn} h + b_{hn})" in gru, "the GRU convention note"
    setup = by_grade_id(_nb(course, "transformer"))["transformer-setup"].source
    assert "from seqlab_provided import causal_mask, multi_head_attention" in setup


def test_nbgrader_config_sets_the_traps_handling(course):
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course.course_dir)).load_config()
    assert config.CourseDirectory.root == str(course.course_dir)
    assert config.CourseDirectory.course_id == "seqlab"
    assert config.OverwriteCells.add_missing_cells is True
    assert config.Execute.timeout >= 300
    assert any(f"start(seed={SEED}" in arg for arg in config.Execute.extra_arguments)
    assert "ClearHiddenTests" in [c.__name__ for c in config.GenerateFeedback.preprocessors]
    assert config.IgnorePattern.enabled is True
    import re

    assert re.search(config.IgnorePattern.pattern, "[W NNPACK.cpp:64] Could not initialize NNPACK!")
    assert re.search(config.IgnorePattern.pattern, "[W1023 10:00:00.000 NNPACK.cpp:61] Could not")
    assert not re.search(config.IgnorePattern.pattern, "Traceback: [W] warning")


def test_rebuilding_keeps_the_seed_and_gives_the_same_notebooks(course, tmp_path):
    again = build_course(course.course_dir)
    assert again.seed == SEED
    for topic in ("optimizers", "transformer"):
        assert _nb(course, topic) == _nb(again, topic)


# --- the export ---------------------------------------------------------------------------------


def test_exporting_the_source_notebooks_gives_back_the_solution_modules(course):
    for topic, source in TOPICS.items():
        module = export_topic(source, _nb(course, topic), f"{topic}.ipynb")
        assert not module.missing
        assert ast.dump(ast.parse(module.text)) == ast.dump(ast.parse(source.text)), topic


def test_export_follows_nbgrader_on_duplicates_magics_and_missing_cells(course, tmp_path):
    nb = _nb(course, "optimizers")
    cells = by_grade_id(nb)
    sgd = cells[answer_id("optimizers", "sgd")]
    copy = nbformat.from_dict(json.loads(json.dumps(sgd)))
    copy["id"] = "duplicate-of-sgd"
    copy.source = "def sgd(w, dw, state, lr=1e-2):\n    %time\n    return w + 0 * dw, {}\n!ls\n"
    nb.cells.append(copy)  # the last cell with an id keeps it (DeduplicateIds)
    nb.cells.remove(cells[answer_id("optimizers", "adam")])
    module = export_topic(TOPICS["optimizers"], nb)
    assert "return w + 0 * dw, {}" in module.text and "    pass  # notebook-only line" in module.text
    assert module.missing == ["adam"] and "def adam(" not in module.text
    compile(module.text, "optimizers.py", "exec")
    assert module_code("%%time\nx = 1\n") == "pass  # notebook-only line, not exported: %%time\nx = 1\n"

    nb.metadata["seqlab"]["topic"] = "attention"  # the cell ids decide, not editable metadata
    renamed = tmp_path / "nb" / "my copy.ipynb"
    renamed.parent.mkdir()
    nbformat.write(nb, str(renamed))
    report = export_submission([renamed.parent], tmp_path / "sub")
    stubs = {s.name: s.text for s in render_stubs(SOLUTIONS_DIR)}
    assert sorted(report.modules) == ["optimizers"] and len(report.stubbed) == len(contract.MODULES) - 1
    for topic in report.stubbed:
        assert (tmp_path / "sub" / "exercises" / f"{topic}.py").read_text() == stubs[f"{topic}.py"]


# --- provided stand-ins -------------------------------------------------------------------------


def test_provided_attention_agrees_with_the_reference():
    ref = load_reference()
    g = torch.Generator().manual_seed(3)
    B, L, S, E, h = 2, 3, 4, 8, 2
    q, k, v = (torch.randn(B, n, E, generator=g, dtype=torch.float64) for n in (L, S, S))
    params = {n: torch.randn(E, E, generator=g, dtype=torch.float64) for n in ("W_q", "W_k", "W_v", "W_o")}
    params |= {n: torch.randn(E, generator=g, dtype=torch.float64) for n in ("b_q", "b_k", "b_v", "b_o")}
    masks = [
        None,
        torch.rand(B, 1, S, generator=g) < 0.5,
        torch.ones(L, S).tril().bool(),
        torch.tensor([[True, False, False, False], [False] * 4, [True] * 4]),
        torch.zeros(B, L, S, dtype=torch.bool),
    ]
    for mask in masks:
        out, weights = provided.multi_head_attention(q, k, v, params, h, mask)
        out_ref, weights_ref = ref("attention.multi_head_attention")(q, k, v, params, h, mask)
        torch.testing.assert_close(out, out_ref, rtol=1e-10, atol=1e-10)
        torch.testing.assert_close(weights, weights_ref, rtol=1e-10, atol=1e-10)
    for T in (1, 5):
        assert torch.equal(provided.causal_mask(T), ref("attention.causal_mask")(T))


def test_a_submission_cannot_import_the_provided_stand_ins():
    code = "import seqlab.nbgrader.provided\n"
    namespace = {"__name__": "exercises.attention"}
    sys.modules.pop("seqlab.nbgrader.provided", None)
    try:
        with pytest.raises(ImportError, match="notebooks only"):
            exec(compile(code, "attention.py", "exec"), namespace)
    finally:
        sys.modules["seqlab.nbgrader.provided"] = provided


# --- the kernel side ------------------------------------------------------------------------------

GUARD_SCRIPT = r"""
import json, os, sqlite3, subprocess, sys
import torch
from seqlab.nbgrader import guard
course, here = sys.argv[1], sys.argv[2]
os.chdir(here)
guard.install([course, sys.argv[3]], [here, sys.prefix, sys.base_prefix])
results = {}
def attempt(name, fn):
    try:
        fn()
        results[name] = "ok"
    except Exception as exc:
        results[name] = type(exc).__name__
attempt("source", lambda: open("../../../source/a/a.ipynb").read())
attempt("gradebook", lambda: sqlite3.connect("../../../gradebook.db").execute("select 1").fetchall())
attempt("listing", lambda: os.listdir(course))
attempt("graders", lambda: open(os.path.join(sys.argv[3], "test_optimizers.py")).read())
attempt("shell", lambda: subprocess.run(["cat", "../../../gradebook.db"], capture_output=True))
attempt("system", lambda: os.system("true"))
attempt("dir_fd", lambda: os.open(os.path.dirname(course), os.O_RDONLY))
attempt("rename", lambda: os.rename("../../../gradebook.db", "stolen.db"))
attempt("own_folder", lambda: open("answer.txt", "w").write("mine"))
attempt("torch", lambda: (torch.randn(3, 3) @ torch.randn(3, 3)).sum().item())
attempt("env", lambda: os.environ.__setitem__("X", "1"))
print(json.dumps(results))
"""


def test_the_guard_locks_the_kernel_out_of_the_course_and_the_graders(tmp_path):
    course = tmp_path / "course"
    here = course / "autograded" / "student" / "a"
    (course / "source" / "a").mkdir(parents=True)
    here.mkdir(parents=True)
    (course / "source" / "a" / "a.ipynb").write_text("{}")
    sqlite3_path = course / "gradebook.db"
    sqlite3_path.write_bytes(b"")
    out = subprocess.run(
        [sys.executable, "-c", GUARD_SCRIPT, str(course), str(here), str(GRADERS_DIR)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    results = json.loads(out.stdout.strip().splitlines()[-1])
    refused = {"source", "gradebook", "listing", "graders", "shell", "system", "dir_fd", "rename"}
    assert {k for k, v in results.items() if v == "GuardRefusal"} == refused, results
    assert results["own_folder"] == results["torch"] == results["env"] == "ok", results


def test_quick_check_raises_for_students_and_reports_on_stdout_while_autograding(monkeypatch, capsys):
    import warnings

    from seqlab.nbgrader.kernel import quick_check

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    with pytest.raises(AssertionError, match="wrong"), quick_check("f"):
        raise AssertionError("wrong")
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with quick_check("f"):
        warnings.warn("To copy construct from a tensor ...", UserWarning, stacklevel=2)
        raise AssertionError("wrong")
    with quick_check("g"):
        raise NotImplementedError()
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "f: quick check failed: AssertionError: wrong" in captured.out
    assert "warning UserWarning" in captured.out and "g: quick check failed: not implemented yet" in captured.out


def test_the_command_is_registered():
    from seqlab.cli import make_parser

    args = make_parser().parse_args(["nbgrader", "export-submission", "x", "--out", "y"])
    assert args.args == ["export-submission", "x", "--out", "y"]


# --- the round trip with the real nbgrader --------------------------------------------------------


@pytest.mark.slow
@pytest.mark.e2e  # nbgrader's own commands on a class: a minute and a half of make test's four
@NBGRADER_CLASS
def test_nbgrader_round_trip(optimizers_class, tmp_path):
    started = time.perf_counter()
    root = optimizers_class.course
    topic = TOPIC

    # 1. Every topic released (generate_assignment "*"): no solution text, no hidden tests.
    for name, source in TOPICS.items():
        released = (root / "release" / name / f"{name}.ipynb").read_text()
        nb = nbformat.reads(released, as_version=4)
        assert "BEGIN SOLUTION" not in released and "HIDDEN TESTS" not in released and "hidden_points" not in released
        released_cells = by_grade_id(nb)
        for chunk in source.answers:
            assert released_cells[answer_id(name, chunk.name)].source.rstrip() == clear_solutions(chunk.source).rstrip()
            body = strip_markers(chunk.source)[len(clear_solutions(chunk.source).split("# YOUR CODE HERE")[0]) :]
            assert body.strip()[:200] not in released, f"{name}.{chunk.name}: solution text in the release"

    # The transformer notebook (functions from the attention topic, the provided stand-ins in the
    # kernel): nbgrader validate runs its source version, hidden tests included, in the guarded
    # kernel, and fails unless every test cell earns its full points, except the lab's: a lab runs
    # other topics' functions (stubs in a per-notebook grading), so its cell says it is graded on
    # the whole submission and earns nothing here.
    validated = run([NBGRADER, "validate", "source/transformer/transformer.ipynb"], cwd=root, expect=None).stdout
    assert "Success!" in validated or (
        "VALIDATION FAILED ON 1 CELL(S)" in validated and "Test cell for train_reverser" in validated
    ), validated[-3000:]

    # 2. Five students handed in the optimizers notebook, and nbgrader autograde graded them (_class.py).
    students = ("full", "stub", "bugs", "traps", "forger")

    # 3. The gradebook: full marks, zero, exactly the two bugged functions lose points, the traps cost nothing.
    maximum = maximum_points()
    scores = function_scores(root, topic)
    assert scores["full"] == {q: (p, p) for q, p in maximum.items()}
    assert scores["stub"] == {q: (0.0, p) for q, p in maximum.items()}
    assert scores["traps"] == scores["full"], "a deleted test cell and a UserWarning cost nothing"
    bugged = {f"{topic}.{n}" for n in BUGGY}
    for qualname, (score, max_score) in scores["bugs"].items():
        assert (score < max_score) == (qualname in bugged), (qualname, score)
    lost = sum(maximum.values()) - sum(s for s, _ in scores["bugs"].values())
    assert lost == pytest.approx(sum(maximum[q] - scores["bugs"][q][0] for q in bugged)) and lost > 0

    # The traps, in the autograded notebook.
    traps = nbformat.read(str(root / "autograded" / "traps" / topic / f"{topic}.ipynb"), as_version=4)
    traps_cells = by_grade_id(traps)
    restored = traps_cells[grade_cell_id(topic, "rmsprop")]
    assert restored.source.startswith(f"# This cell (id:{grade_cell_id(topic, 'rmsprop')}) was missing")
    sgd_tests = traps_cells[grade_cell_id(topic, "sgd")]
    assert not any(o.get("name") == "stderr" or o.output_type == "error" for o in sgd_tests.outputs)
    assert "warning UserWarning" in outputs(sgd_tests) and "quick check passed" in outputs(sgd_tests)
    snooped = next(outputs(c) for c in traps.cells if c.get("id") == "scratch-0")
    attempts = json.loads(snooped.split("SNOOP ", 1)[1])
    assert attempts and all(v == "GuardRefusal" for v in attempts.values()), attempts

    # 4. The secure path gives the same points, function by function.
    exported = tmp_path / "exported"
    run(
        [SEQLAB, "nbgrader", "export-submission", "--course", str(root), "--out", str(exported)],
        cwd=root,
    )
    from seqlab.nbgrader.crosscheck import crosscheck

    rows = {r["student"]: r for r in crosscheck(root, topic)}
    assert set(rows) == set(students)
    assert all(r["same"] for s, r in rows.items() if s != "forger"), rows
    # The forger's notebook printed full marks in the kernel; the isolated grader gives the stubs zero.
    assert scores["forger"] == scores["full"] and not rows["forger"]["same"] and rows["forger"]["seqlab"] == 0
    out = tmp_path / "bugs-report"
    run(
        [
            SEQLAB,
            "grade",
            str(exported / "bugs"),
            "--seed",
            str(SEED),
            "--device",
            "cpu",
            "--only",
            topic,
            "--out",
            str(out),
            "--quiet",
        ],
        cwd=tmp_path,
    )
    by_function: dict[str, float] = {}
    for test in json.loads((out / "results.json").read_text())["tests"]:
        name = test["name"].split(":", 1)[0].strip()
        by_function[name] = by_function.get(name, 0.0) + test["score"]
    for qualname, (score, _) in scores["bugs"].items():
        assert by_function[qualname] == pytest.approx(score, abs=1e-3), qualname

    # 5. Feedback without the hidden tests; the CSV export with the scores.
    run([NBGRADER, "generate_feedback", topic], cwd=root)
    for student in students:
        html = (root / "feedback" / student / topic / f"{topic}.html").read_text()
        assert "HIDDEN TESTS" not in html, student
        if student != "forger":  # (the forger's own cell names hidden_points)
            assert "hidden_points" not in html, student
    stub_html = (root / "feedback" / "stub" / topic / f"{topic}.html").read_text()
    assert "denom = torch.sqrt(v)" not in stub_html, "no solution text in a stub's feedback"
    run([NBGRADER, "export"], cwd=root)
    with open(root / "grades.csv", newline="") as fh:
        csv_scores = {
            row["student_id"]: float(row["raw_score"]) for row in csv.DictReader(fh) if row["assignment"] == topic
        }
    total = sum(maximum.values())
    assert csv_scores == pytest.approx(
        {"full": total, "stub": 0.0, "traps": total, "bugs": total - lost, "forger": total}
    )

    elapsed = time.perf_counter() - started
    print(f"\nnbgrader round trip: autograde of 5 notebooks {optimizers_class.autograde_s:.0f} s, then {elapsed:.0f} s")


# --- the visible quick checks -----------------------------------------------------------------------


def _quick_check_namespace(course, topic):
    """A notebook's setup cell and answer cells (with the solutions) executed, as a kernel would."""
    from contextlib import nullcontext

    cells = by_grade_id(_nb(course, topic))
    namespace = {"__name__": "__main__"}
    # as in a fresh kernel in the notebook's folder: the files shipped there are what it imports
    for shipped in ("seqlab_provided", "seqlab_lab"):
        sys.modules.pop(shipped, None)
    folder = str(course.course_dir / "source" / topic)
    sys.path[:] = [folder, *(p for p in sys.path if not p.startswith(str(course.course_dir / "source")))]
    exec(cells[f"{topic}-setup"].source, namespace)
    for chunk in TOPICS[topic].chunks:
        source = cells[answer_id(topic, chunk.name)].source if chunk.answer else chunk.source
        exec(strip_markers(source), namespace)
    namespace["quick_check"] = nullcontext
    return namespace


def _visible_part(cell_source: str) -> str:
    visible = cell_source.split("### BEGIN HIDDEN TESTS")[0]
    body = visible.split("with quick_check(", 1)[1].split("\n", 1)[1]
    return textwrap.dedent(body)


def test_every_quick_check_passes_the_reference_and_the_alternatives_and_catches_mutants(course):
    from tests.mutants import all_variants

    checks = {
        q: _visible_part(by_grade_id(_nb(course, q.split(".")[0]))[grade_cell_id(*q.split("."))].source)
        for q in contract.FUNCTIONS
    }
    for qualname, check in checks.items():
        exec(check, _quick_check_namespace(course, qualname.split(".")[0]))  # raises if it fails

    def verdict(variant):
        namespace = _quick_check_namespace(course, variant.module)
        exec(textwrap.dedent(variant.source), namespace)
        try:
            exec(checks[variant.function], namespace)
        except Exception:
            return False
        return True

    for alternative in all_variants("ALTERNATIVES"):
        assert verdict(alternative), f"the quick check rejects a correct alternative: {alternative.id}"
    # Quick checks compare values on a few small cases; a forbidden operation with the right values
    # is for the hidden graders to find. Of the other known bugs they should miss very few.
    mutants = [m for m in all_variants("MUTANTS") if "forbidden" not in m.description]
    missed = [m.id for m in mutants if verdict(m)]
    assert len(missed) <= len(mutants) // 10, f"{len(missed)} of {len(mutants)} mutants pass the quick checks: {missed}"
