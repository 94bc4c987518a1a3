"""GitHub Classroom autograding: the instructor's grading workflow (grade.yml) parses, keeps
student code away from secrets, and runs here for real: collect -> three grading jobs in
parallel -> gradebook on three uploaded submissions (reference 100%, stubs 0, one bug in adam),
after the student workflow's public tests on the same three released repositories. The matrix
comes from a classroom roster, and docs/github.md quotes the workflow."""

from __future__ import annotations

import json
import re
import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

from seqlab import classroom
from seqlab import release as rel
from seqlab.cli import main
from seqlab.contract import FUNCTIONS
from seqlab.labs import LABS
from seqlab.paths import COURSE_ROOT
from tests.release._github import blocked_imports, load_workflow, make_submission, run_job, run_public_tests


def test_grade_workflow_parses_and_isolates_student_code(tmp_path):
    out = tmp_path / "grade.yml"
    assert main(["ci-workflow", str(out), "--timeout", "600"]) == 0
    wf = load_workflow(out.read_text())
    assert set(wf["on"]) == {"workflow_dispatch"} and wf["permissions"] == {"contents": "read"}
    collect, grade, gradebook = (wf["jobs"][j] for j in ("collect", "grade", "gradebook"))
    assert grade["strategy"]["matrix"]["submission"] == "${{ fromJSON(needs.collect.outputs.matrix) }}"
    assert grade["strategy"]["fail-fast"] is False
    checkout = next(s for s in grade["steps"] if s.get("name") == "Check out the student's repository")
    assert checkout["with"]["persist-credentials"] is False, "the token must not stay on disk for student code"
    step = next(s for s in grade["steps"] if s.get("id") == "grade")
    assert "seqlab grade-all _in --out _work --device cpu --timeout 600" in step["run"]
    assert "secrets" not in json.dumps(step), "no secret may reach the step that runs student code"
    # every package from the hashed lock (torch's CPU build among them), as make setup installs it
    install = next(s for s in grade["steps"] if s.get("id") == "install")["run"]
    assert "bash scripts/setup.sh" in install and "pip install" not in json.dumps(wf)
    assert "--sandbox bwrap" in step["run"], "the grading must fail, not run unsandboxed"
    assert gradebook["needs"] == ["collect", "grade"] and "always()" in gradebook["if"]
    assert (
        "seqlab gradebook _results --out gradebook --expect matrix.json"
        in next(s for s in gradebook["steps"] if s.get("id") == "assemble")["run"]
    )


@pytest.mark.slow
@pytest.mark.e2e
def test_public_tests_and_autograding_end_to_end(released, tmp_path):
    """Item 4 of the issue: both workflows' commands, run here on three submissions."""
    check = load_workflow((released / ".github/workflows/check.yml").read_text())
    uploads = tmp_path / "course" / "submissions"
    uploads.mkdir(parents=True)
    subs = {kind: make_submission(released, uploads / kind, kind) for kind in ("reference", "stubs", "buggy")}

    # 1. the student workflow's test step, in each released repository
    with ThreadPoolExecutor(3) as pool:
        public = dict(zip(subs, pool.map(lambda repo: run_public_tests(repo, check), subs.values())))
    code, output, summary = public["reference"]
    assert code == 0, output[-3000:]
    n = len(FUNCTIONS)  # every function has public tests, the labs' included
    assert f"## Public tests: {n} of {n} functions pass" in summary and "❌" not in summary
    code, output, summary = public["stubs"]
    assert code == 1 and f"## Public tests: 0 of {n} functions pass" in summary
    # the stubs follow the language subset (its 8 checks pass); no function's test passes. A
    # training lab's first problem is the earlier stubs it runs (charged once, named first).
    labs = summary.count(" runs your own ")
    assert labs == 4 and summary.count("not implemented yet") == n - labs and f"0 of {n} functions pass" in summary
    code, output, summary = public["buggy"]
    # every lab trains with the student's own adam: their public tests fail too, naming it
    runs_adam = [f for f, lab in LABS.items() if "optimizers.adam" in lab.uses]
    assert runs_adam, "the buggy adam must reach a lab for this test to mean anything"
    assert code == 1 and f"{n - 1 - len(runs_adam)} of {n} functions pass" in summary, summary
    assert all(f"| ❌ | `{f}` |" in summary for f in runs_adam), summary
    assert "optimizers.adam, which failed public tests of their own" in summary  # the lab names it
    assert "| ❌ | `optimizers.adam` |" in summary
    for kind in subs:  # the public tests leave nothing behind that a student would commit
        shutil.rmtree(subs[kind] / "tests" / "__pycache__", ignore_errors=True)
        shutil.rmtree(subs[kind] / ".pytest_cache", ignore_errors=True)

    # 2. the instructor workflow: collect -> one grading job per submission -> gradebook
    workflow = tmp_path / "course" / ".github" / "workflows" / "grade.yml"
    assert main(["ci-workflow", str(workflow)]) == 0
    wf = load_workflow(workflow.read_text())
    no_torch = blocked_imports(tmp_path)
    context = {"inputs": {}, "secrets": {}}
    collected = run_job(wf["jobs"]["collect"], tmp_path / "course", context, extra_env=no_torch)
    matrix = json.loads(collected["outputs"]["matrix"])
    assert [(e["name"], e["upload"]) for e in matrix] == [
        ("buggy", "submissions/buggy"),
        ("reference", "submissions/reference"),
        ("stubs", "submissions/stubs"),
    ]

    def grade_job(entry):
        workspace = tmp_path / "runners" / entry["name"]
        shutil.copytree(tmp_path / "course", workspace)  # actions/checkout of the course repository
        job = run_job(wf["jobs"]["grade"], workspace, {"inputs": {}, "secrets": {}, "matrix": {"submission": entry}})
        return workspace / "_out", job["summary"]

    with ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(grade_job, matrix))
    artifacts = tmp_path / "gradebook-runner" / "_results"  # download-artifact, merge-multiple
    for out, summary in outs:
        shutil.copytree(out, artifacts, dirs_exist_ok=True)
        assert summary.strip(), "each grading job writes its summary"
    context = {"inputs": {}, "needs": {"collect": {"outputs": collected["outputs"], "result": "success"}}}
    book = run_job(wf["jobs"]["gradebook"], artifacts.parent, context, extra_env=no_torch)

    import csv

    rows = {r["submission"]: r for r in csv.DictReader((artifacts.parent / "gradebook" / "gradebook.csv").open())}
    assert set(rows) == {"reference", "stubs", "buggy"}
    assert rows["reference"]["status"] == "graded" and float(rows["reference"]["percent"]) == 100.0
    assert rows["stubs"]["status"] == "graded" and float(rows["stubs"]["total"]) == 0
    buggy = rows["buggy"]
    assert float(buggy["optimizers.adam"]) < 5 and float(buggy["percent"]) < 100
    # the labs are left out of these gradings (SEQLAB_LABS=0): their cells are empty for both
    assert all(
        buggy[f] == rows["reference"][f]
        if rows["reference"][f] == ""
        else float(buggy[f]) == float(rows["reference"][f])
        for f in rows["reference"]
        if "." in f and f != "optimizers.adam"
    )
    for name in rows:
        assert (artifacts / name / "results.json").is_file()
    assert "# Gradebook: 3 of 3 submissions graded" in book["summary"]


def test_matrix_from_a_classroom_roster_and_missing_results(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "assignment_name,github_username,roster_identifier,student_repository_name,"
        "student_repository_url,points_awarded,points_available\n"
        "hw,alice-gh,alice,hw-alice-gh,https://github.com/course-org/hw-alice-gh,10,112\n"
        "hw,bob-gh,,hw-bob-gh,https://github.com/course-org/hw-bob-gh.git,0,112\n"
    )
    uploads = tmp_path / "uploads"
    uploads.mkdir()
    (uploads / "carol.zip").write_bytes(b"PK")
    matrix = classroom.build_matrix(roster=roster, uploads=uploads, ref="deadline-tag")
    assert matrix == [
        {"name": "alice", "repo": "course-org/hw-alice-gh", "ref": "deadline-tag", "upload": ""},
        {"name": "bob-gh", "repo": "course-org/hw-bob-gh", "ref": "deadline-tag", "upload": ""},
        {"name": "carol", "repo": "", "ref": "", "upload": f"{uploads.as_posix()}/carol.zip"},
    ]
    (uploads / "alice").mkdir()
    # alice's roster repository and an upload folder of the same name: both are graded, each
    # under a name of its own (neither stops the class nor takes the other's row)
    twins = [e["name"] for e in classroom.build_matrix(roster=roster, uploads=uploads) if e["name"].startswith("alice")]
    assert len(twins) == 2 and len(set(twins)) == 2 and all(n.startswith("alice+") for n in twins), twins
    # a job that died before uploading still gets a row in the gradebook
    results = tmp_path / "results"
    results.mkdir()
    rows = classroom.assemble_gradebook(results, tmp_path / "book", expect=matrix)
    assert [(r["submission"], r["status"]) for r in rows] == [
        ("alice", "error"),
        ("bob-gh", "error"),
        ("carol", "error"),
    ]
    assert "grading job failed" in (tmp_path / "book" / "gradebook.csv").read_text()


def test_instructor_doc_matches_the_workflow_and_the_config():
    """docs/github.md quotes the workflow's commands and the points per topic."""
    from seqlab.config import load_config
    from seqlab.contract import MODULES, functions_of

    doc = (COURSE_ROOT / "docs" / "github.md").read_text(encoding="utf-8")
    assert doc.startswith("# For instructors: autograding on GitHub\n")
    wf = load_workflow(classroom.render_grade_workflow())
    for job, step_id in (("grade", "grade"), ("gradebook", "assemble"), ("collect", "matrix")):
        command = next(s for s in wf["jobs"][job]["steps"] if s.get("id") == step_id)["run"]
        seqlab_line = next(line for line in command.splitlines() if "seqlab " in line)
        quoted = re.search(r"seqlab [\w-]+ [^\"$)]*", seqlab_line).group(0).strip()
        assert quoted.split(" --roster")[0] in " ".join(doc.split()), quoted
    config = load_config()
    for module in MODULES:
        points = sum(config.rules(f).points for f in functions_of(module))
        assert f"| {module} | `pytest tests/test_{module}.py` | {points:g} |" in doc
    # the total is a generated figure (seqlab/docs_figures.py writes it between markers)
    assert (
        f"`max_score` in `gradebook.csv` (<!-- generated: total-points -->{config.max_score:g}<!-- /generated --> with"
        in doc
    )
    assert f'"torch=={rel.DEFAULT_TORCH}"' in doc
