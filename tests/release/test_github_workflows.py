"""Both generated GitHub workflows, every job run end to end on fresh runners, labs on.

The instructor's ``grade.yml`` (collect -> one grading job per submission -> gradebook) and the
student's ``check.yml`` run here job by job (tests/release/_runner.py): every ``run:`` step as
written, in ``bash -e``, with the GITHUB_* files as temporary files and the ``${{ }}``
expressions bound to test values (the workflow's own input defaults with a deadline, a stand-in
token for the secret, the commit of the student's push as ``github.sha``). Each job starts from
nothing: its own workspace, its own fresh Python, the system ``PATH``, no project venv, none of
the test suite's settings (so the labs are graded, as on GitHub).

The actions cannot run here, so each is stood in for by the equivalent shell:
``actions/checkout`` is a ``git clone`` (``fetch-depth``, ``ref`` and ``path`` honoured) of a
course repository made from this working tree, or of a student's repository;
``actions/setup-python`` is a fresh venv of this machine's Python (the version must be the one
asked for); ``actions/upload-artifact`` copies into a folder of artifacts and
``actions/download-artifact`` copies out of it (``pattern``, ``merge-multiple``).

Where this machine differs from a hosted runner: it has no network, so pip takes packages from
the folders its configuration names (check.yml's PyTorch index is tried, found unreachable, and
pip goes on with the same wheel from there); bubblewrap is installed already and this kernel has
no AppArmor user-namespace restriction, so the grading job's bubblewrap step skips its ``sudo
apt-get`` and ``sudo sysctl`` branches (they run on a hosted runner).

The class: alice's repository from the roster, her reference solutions committed before the
deadline and the stubs pushed after it (the deadline step must grade the first commit), and
bob's upload with one bug in adam.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from seqlab import classroom
from seqlab.cli import main
from seqlab.config import load_config
from seqlab.contract import FUNCTIONS
from seqlab.grading.settings import graded_max_score
from seqlab.labs import LABS
from seqlab.paths import COURSE_ROOT
from tests.release import _runner
from tests.release._github import blocked_imports, load_workflow, make_submission

ALICE_REPO = "course-org/hw-seq-alice"
DEADLINE = "2026-12-01T23:59:00+01:00"
GIT_ID = {"GIT_AUTHOR_NAME": "test", "GIT_AUTHOR_EMAIL": "t@example.org"}
GIT_ID |= {"GIT_COMMITTER_NAME": "test", "GIT_COMMITTER_EMAIL": "t@example.org"}


def _commit(repo: Path, message: str, date: str) -> str:
    env = {**os.environ, **GIT_ID, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for args in (["add", "-A"], ["commit", "--quiet", "-m", message]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, timeout=120)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()


def _init(repo: Path) -> None:
    subprocess.run(["git", "init", "--quiet", "-b", "main"], cwd=repo, check=True, timeout=60)


def _course_repository(root: Path, released: Path) -> Path:
    """The instructor's private repository: this working tree's files (tracked and new, not the
    ignored), the rendered grade.yml, a roster naming alice's repository and bob's upload."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=COURSE_ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    course = root / "course"
    for name in filter(None, listed.split("\0")):
        source = COURSE_ROOT / name
        if source.is_file() and not source.is_symlink():
            (course / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, course / name)
    assert main(["ci-workflow", str(course / ".github" / "workflows" / "grade.yml")]) == 0
    (course / "classroom").mkdir(exist_ok=True)
    (course / "classroom" / "roster.csv").write_text(f"name,repo\nalice,{ALICE_REPO}\n")
    shutil.rmtree(course / "submissions", ignore_errors=True)
    make_submission(released, course / "submissions" / "bob", "buggy")
    _init(course)
    _commit(course, "Course with a class to grade", "2026-12-02T08:00:00+01:00")
    return course


def _alice(root: Path, released: Path) -> tuple[Path, str]:
    """alice's repository: the reference solutions before the deadline, the stubs after it."""
    repo = make_submission(released, root / "alice", "reference")
    _init(repo)
    before = _commit(repo, "all done", "2026-11-30T12:00:00+01:00")
    shutil.rmtree(repo / "exercises")
    shutil.copytree(released / "exercises", repo / "exercises")
    _commit(repo, "start over", "2026-12-03T09:00:00+01:00")
    return repo, before


def _fail(run: _runner.JobRun, what: str) -> str:
    return f"{what}: {run.result}\n" + "\n".join(f"--- {name}\n{text[-3000:]}" for name, text in run.job.log)


@pytest.mark.slow
@pytest.mark.e2e
# Three fresh installs of the whole lock (about 75 s each on an idle core, many minutes each when
# the machine's two cores are shared), two gradings and the public tests, labs on: the suite's
# 600 s stopped a healthy run on a busy machine, where a passing one took 26 min at a load of
# 10-16 on two cores; 2400 s leaves it room and still ends a hung step.
@pytest.mark.timeout(2400)
def test_every_job_of_both_workflows_runs_end_to_end(released, tmp_path):
    alice, before_deadline = _alice(tmp_path / "students", released)
    course = _course_repository(tmp_path, released)
    runners, artifacts = tmp_path / "runners", tmp_path / "artifacts"
    artifacts.mkdir()
    repos = {ALICE_REPO: alice}
    course_actions = {
        "actions/checkout": _runner.checkout(course, repos),
        "actions/setup-python": _runner.setup_python,
        "actions/upload-artifact": _runner.upload_artifact(artifacts),
        "actions/download-artifact": _runner.download_artifact(artifacts),
    }
    grade_yml = load_workflow((course / ".github/workflows/grade.yml").read_text())
    check_yml = load_workflow((alice / ".github/workflows/check.yml").read_text())
    inputs = {k: v.get("default", "") for k, v in grade_yml["on"]["workflow_dispatch"]["inputs"].items()}
    inputs["deadline"] = DEADLINE
    base = {"inputs": inputs, "secrets": {"STUDENT_REPOS_TOKEN": "stand-in-token"}, "github": {"sha": ""}}
    try:
        with ThreadPoolExecutor(3) as pool:
            # the student's push of her solutions: check.yml, beside the instructor's run
            student = pool.submit(
                _runner.run_job,
                check_yml["jobs"]["public-tests"],
                runners / "public-tests",
                {"github": {"sha": before_deadline}},
                {"actions/checkout": _runner.checkout(alice, {}), "actions/setup-python": _runner.setup_python},
            )
            collect = _runner.run_job(grade_yml["jobs"]["collect"], runners / "collect", base, course_actions)
            assert collect.result == "success", _fail(collect, "collect")
            needs = {"collect": {"result": "success", "outputs": collect.outputs}}
            grade = grade_yml["jobs"]["grade"]
            combos = _runner.matrix_of(grade, {**base, "needs": needs})
            assert [c["submission"]["name"] for c in combos] == ["alice", "bob"]
            runs = list(
                pool.map(
                    lambda combo: _runner.run_job(
                        grade,
                        runners / f"grade-{combo['submission']['name']}",
                        {**base, "needs": needs, "matrix": combo},
                        course_actions,
                    ),
                    combos,
                )
            )
            for run in runs:
                assert run.result == "success", _fail(run, "grade")
            needs["grade"] = {"result": "success", "outputs": {}}
            book_job = grade_yml["jobs"]["gradebook"]
            assert _runner.condition(book_job["if"], {**base, "needs": needs})
            book = _runner.run_job(book_job, runners / "gradebook", {**base, "needs": needs}, course_actions)
            assert book.result == "success", _fail(book, "gradebook")
            public = student.result()
        _check_grading(runs, before_deadline, artifacts)
        _check_gradebook(book, artifacts)
        _check_public_tests(public)
    finally:
        shutil.rmtree(runners, ignore_errors=True)  # one venv of the whole lock per job: GBs


def _check_grading(runs: list[_runner.JobRun], before_deadline: str, artifacts: Path) -> None:
    alice, bob = runs
    for run in runs:
        # the sandbox was checked on, and the grading ran in it
        assert "sandbox: bwrap + seccomp" in run.job.log_of(
            "Check that the sandbox is on (bubblewrap with the seccomp filter), else stop"
        )
        assert run.job.log_of("Install bubblewrap (the kernel sandbox around student code)").startswith("bubblewrap")
    max_score = graded_max_score(load_config(), labs=True)
    assert f"## seqlab: {max_score:g} / {max_score:g} points (100.0%)" in alice.summary
    assert "## seqlab: " in bob.summary and "(100.0%)" not in bob.summary
    # the deadline step went back to the commit before the deadline, and says which
    assert (artifacts / "result-alice" / "alice" / "commit.txt").read_text().strip() == before_deadline
    for name in ("alice", "bob"):
        folder = artifacts / f"result-{name}" / name
        assert {"results.json", "report.html", "summary.md", "seqlab_result.json"} <= {p.name for p in folder.iterdir()}
        assert json.loads((folder / "seqlab_result.json").read_text())["meta"]["sandbox"] == "bwrap + seccomp"


def _check_gradebook(book: _runner.JobRun, artifacts: Path) -> None:
    config = load_config()
    gradebook = artifacts / "gradebook"
    assert {"gradebook.csv", "summary.md", "class_report.md", "class_report.html"} <= {
        p.name for p in gradebook.iterdir()
    }
    # the job's summary page: the gradebook table, then the class report
    assert book.summary.startswith("# Gradebook: 2 of 2 submissions graded")
    assert book.summary == (gradebook / "summary.md").read_text()
    assert (gradebook / "class_report.md").read_text() in book.summary
    assert "<svg" in (gradebook / "class_report.html").read_text()  # matplotlib drew its figures
    rows = {r["submission"]: r for r in csv.DictReader((gradebook / "gradebook.csv").open())}
    assert set(rows) == {"alice", "bob"} and all(r["status"] == "graded" for r in rows.values())
    alice, bob = rows["alice"], rows["bob"]
    assert float(alice["percent"]) == 100.0
    for function in FUNCTIONS:  # every function graded, the labs included
        assert float(alice[function]) == config.rules(function).points, function
        assert bob[function] != "", function
    assert set(LABS) <= set(FUNCTIONS)
    assert float(bob["optimizers.adam"]) < config.rules("optimizers.adam").points
    assert float(bob["percent"]) < 100


def _check_public_tests(public: _runner.JobRun) -> None:
    assert public.result == "success", _fail(public, "public-tests")
    n = len(FUNCTIONS)
    assert f"## Public tests: {n} of {n} functions pass" in public.summary


def _sandbox_step(extra_env: dict) -> subprocess.CompletedProcess:
    """The grading job's sandbox check, its script as written, with seqlab from this venv."""
    grade = load_workflow(classroom.render_grade_workflow())["jobs"]["grade"]
    script = next(s for s in grade["steps"] if s.get("id") == "sandbox")["run"]
    env = {**_runner.machine_env(), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{_runner.SYSTEM_PATH}"}
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=COURSE_ROOT,
        env={**env, **extra_env},
        capture_output=True,
        text=True,
        timeout=120,
    )


# three Python starts that import seqlab's sandbox (~1 s in all): with the platform's path
@pytest.mark.e2e
def test_the_sandbox_check_stops_a_grading_job_without_the_sandbox(tmp_path):
    """On a runner where bubblewrap cannot run, or runs without the seccomp filter, the job
    stops with an error that says so, before any student code is graded."""
    done = _sandbox_step({})
    assert done.returncode == 0 and done.stdout.strip() == "sandbox: bwrap + seccomp", done.stdout + done.stderr
    done = _sandbox_step({"SEQLAB_BWRAP": str(tmp_path / "no-bwrap")})
    assert done.returncode == 1 and "::error::no kernel sandbox on this runner" in done.stderr, done.stderr
    assert "is not installed" in done.stderr
    done = _sandbox_step(blocked_imports(tmp_path, modules=("pyseccomp",)))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "::error::the sandbox is incomplete on this runner: bwrap (no seccomp filter" in done.stderr
