"""The student release, its leak check, and the student workflow.

* ``seqlab release`` renders the student repository; releasing twice gives identical bytes; a
  planted solution line (or marker, grader line, seqlab import, config secret) stops it with
  ``file:line: reason``.
* The student workflow (check.yml) parses and runs only public things. Its steps run here as
  GitHub would run them (tests/release/_github.py) in test_classroom.py, next to the
  instructor's grading workflow, and below in a fresh venv.
* In a fresh venv (nothing but torch, numpy, pytest: never seqlab), ``pip install`` of the
  released repo and ``pytest`` pass. Installing torch there takes ~40 s, so that venv is built
  in the background while the other tests of this module run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from seqlab import release as rel
from seqlab.cli import main
from seqlab.contract import FUNCTIONS
from seqlab.paths import COURSE_ROOT, SOLUTIONS_DIR
from tests.release._github import clean_env, load_workflow, make_submission, run_public_tests, torch_version_of

PUBLIC = COURSE_ROOT / "public_tests"
FRESH_VENV_TEST = "test_fresh_venv_pip_install_and_pytest"

# --- fixtures ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def fresh_venv(request, tmp_path_factory):
    """Starts building the fresh venv at once (only when its test is selected); yields (job, venv, log)."""
    if not any(item.name == FRESH_VENV_TEST for item in request.session.items):
        yield None
        return
    root = tmp_path_factory.mktemp("fresh-venv")
    venv = root / "venv"
    torch_version = torch_version_of(load_workflow(rel.render_release()[".github/workflows/check.yml"]))
    log = (root / "log.txt").open("w")
    command = (
        f"{sys.executable} -m venv {venv} && {venv}/bin/python -m pip install -q --no-compile "
        f"--disable-pip-version-check torch=={torch_version}"
    )
    job = subprocess.Popen(
        ["bash", "-c", command], stdout=log, stderr=subprocess.STDOUT, env=clean_env(), stdin=subprocess.DEVNULL
    )
    yield job, venv, root / "log.txt"
    if job.poll() is None:
        job.kill()
        job.wait()
    log.close()
    shutil.rmtree(root, ignore_errors=True)  # ~800 MB of torch


# --- the release and its leak check ---------------------------------------------------------------


def test_release_contents_and_idempotence(released, tmp_path):
    files = rel.read_tree(released)
    expected = {
        "README.md",
        "pyproject.toml",
        ".gitignore",
        ".github/workflows/check.yml",
        rel.MANIFEST,
        "exercises/__init__.py",
        "tests/conftest.py",
        "tests/_check.py",
        "tests/_labs.py",
        "tests/_autograd.py",  # the autograd property the labs rely on, per function
        "tests/_gradcheck.py",  # its rule and words, the grader's own (seqlab/student/gradcheck.py)
        "tests/_budget.py",  # the labs' budgets and clock, the grader's own (seqlab/labs/budget.py)
        "tests/test_code_rules.py",
        "tests/_forbidden.py",  # the forbidden operations, checked as the grader checks them
        "tests/_static_names.py",  # the grader's own source scan (seqlab/grading/static_names.py)
        "tests/_apiwatch.py",  # the grader's own run-time API recorder (seqlab/student/apiwatch.py)
        "tests/_updates.py",  # the labs' count of adam's steps, the grader's own (seqlab/student/updates.py)
        "tests/_rules.json",  # the rules those apply, as data from the grading config
    }
    from seqlab.contract import MODULES
    from seqlab.release.render import SUBSET_DIR

    expected |= {f"exercises/{m}.py" for m in MODULES} | {f"tests/test_{m}.py" for m in MODULES}
    expected |= {f"tests/_subset/{p.name}" for p in SUBSET_DIR.glob("*.py")}  # the grader's own subset
    assert set(files) == expected
    assert "raise NotImplementedError()" in files["exercises/attention.py"]
    # a second release elsewhere: the same bytes; a release over the first one: nothing rewritten
    again = tmp_path / "again"
    assert main(["release", str(again)]) == 0
    assert rel.read_tree(again) == files
    report = rel.release(released)
    assert report.written == [] and report.removed == []
    # a file an earlier release wrote and this one does not is removed; foreign folders are refused
    (released / "tests" / "test_old.py").write_text("x = 1\n")
    manifest = released / rel.MANIFEST
    manifest.write_text(manifest.read_text() + "0" * 64 + "  tests/test_old.py\n")
    assert rel.release(released).removed == ["tests/test_old.py"]
    assert rel.read_tree(released) == files
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    with pytest.raises(rel.ReleaseError, match="not empty"):
        rel.release(foreign)
    assert main(["release", "--scan", str(released)]) == 0


def test_planted_solution_line_stops_the_release(tmp_path, capsys):
    public = tmp_path / "public"
    shutil.copytree(PUBLIC, public, ignore=shutil.ignore_patterns("__pycache__"))
    path = public / "test_optimizers.py"
    lines = path.read_text().splitlines()
    lines.insert(20, "    return w - lr * dw, {}")
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    assert main(["release", str(out), "--public-tests", str(public)]) == 1
    err = capsys.readouterr().err
    assert re.search(
        r"tests/test_optimizers\.py:21: a line of a solution region \(solutions/optimizers\.py:\d+\)", err
    ), err
    assert not out.exists(), "a release that fails the leak check writes nothing"


def test_leak_check_names_file_line_and_reason():
    secrets = rel.collect_secrets()
    secrets.config_values["918273645"] = "exam.seed"  # as if grading_config.yaml held a secret seed
    grader_line = next(iter(secrets.grader_lines))
    config_line = next(
        line
        for line in (COURSE_ROOT / "grading_config.yaml").read_text().splitlines()
        if "why:" not in line and len(line.strip()) > 60 and not line.lstrip().startswith("#")
    )
    planted = {
        "exercises/rnn.py": "import torch\n\n\ndef rnn_cell(x, h_prev, W_xh, W_hh, b_h):\n"
        "    ### BEGIN SOLUTION\n    return torch.tanh(x @ W_xh.T + h_prev @ W_hh.T + b_h)\n",
        "tests/test_extra.py": "import torch\nfrom seqlab.reference import load_reference\n\n" + grader_line + "\n",
        "README.md": "# Notes\nSee the graders in the course repo.\nSeed: 918273645\n" + config_line + "\n",
        "exercises/helpers.py": 'x = 1\n    h = sq_avg = None; v = momentum * state["velocity"] + dw  # tweak\n',
        "config/grading_config.yaml": "version: 1\n",
        "solutions/rnn.py": "\n",
    }
    leaks = {str(leak) for leak in rel.scan(planted, secrets)}
    expect = [
        r"exercises/rnn\.py:5: a solution region marker",
        r"exercises/rnn\.py:6: a line of a solution region \(solutions/rnn\.py:\d+\)",
        r"tests/test_extra\.py:2: mentions the instructor package \(seqlab\)",
        r"tests/test_extra\.py:4: a line of a hidden grader \(graders/\w+\.py:\d+\)",
        r"README\.md:2: mentions the hidden graders",
        r"README\.md:3: the value of exam\.seed in grading_config\.yaml",
        r"README\.md:4: a line of the grading config \(grading_config\.yaml:\d+\)",
        r"exercises/helpers\.py:2: a line of a solution region \(solutions/optimizers\.py:\d+\)",  # inside a line
        r"config/grading_config\.yaml:1: a hidden file",
        r"solutions/rnn\.py:1: a hidden file",
    ]
    for pattern in expect:
        assert any(re.fullmatch(pattern + ".*", leak) for leak in leaks), (pattern, sorted(leaks))


def test_a_contract_name_on_a_line_of_its_own_is_public():
    """ruff puts a long @grades marker's function name on a line of its own; the public tests
    name the same function the same way (the contract is public), which is no leak."""
    secrets = rel.collect_secrets()
    assert '"attention.scaled_dot_product_attention",' not in secrets.grader_lines
    shipped = {"tests/test_attention.py": '    out = call(\n        "attention.scaled_dot_product_attention",\n    )\n'}
    assert rel.scan(shipped, secrets) == []


def test_foreign_file_in_the_release_folder_is_caught(released, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(released, repo)
    (repo / "notes").mkdir()
    shutil.copy(SOLUTIONS_DIR / "attention.py", repo / "notes" / "attention.py")
    with pytest.raises(rel.LeakError) as failure:
        rel.release(repo)
    assert any(leak.path == "notes/attention.py" for leak in failure.value.leaks)
    assert main(["release", "--scan", str(repo)]) == 1


# --- the workflows -----------------------------------------------------------------------------------


def test_student_workflow_parses_and_runs_only_public_things(released):
    text = (released / ".github/workflows/check.yml").read_text()
    check = load_workflow(text)
    assert "push" in check["on"] and check["permissions"] == {"contents": "read"}
    steps = check["jobs"]["public-tests"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    assert torch_version_of(check) == rel.DEFAULT_TORCH
    assert runs[1:] == ["python -m pip install .", 'pytest --summary-md="$GITHUB_STEP_SUMMARY"']
    assert "secrets." not in text and not re.search("seqlab|graders|solutions", text, re.I)


@pytest.mark.slow
@pytest.mark.e2e
def test_fresh_venv_pip_install_and_pytest(released, tmp_path, fresh_venv):
    """Acceptance: in a fresh venv, `pip install` of the released repo, then `pytest` (check.yml's
    own install and test steps; only its torch step is replaced by the same pinned version from
    the local wheel, because the CPU index is not reachable here)."""
    job, venv, log = fresh_venv
    assert job.wait(timeout=600) == 0, Path(log).read_text()[-3000:]
    check = load_workflow((released / ".github/workflows/check.yml").read_text())
    repo = make_submission(released, tmp_path / "student", "reference")
    env = clean_env()
    env.update({"PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(venv)})
    install = next(s for s in check["jobs"]["public-tests"]["steps"] if s.get("id") == "install")["run"]
    proc = subprocess.run(["bash", "-e", "-c", install], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    probe = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import seqlab"], cwd=repo, env=env, capture_output=True, text=True
    )
    assert probe.returncode != 0, "students never have the instructor package"
    code, output, summary = run_public_tests(repo, check, extra_env={"VIRTUAL_ENV": str(venv)}, python_bin=venv / "bin")
    assert code == 0, output[-3000:]
    assert f"{len(FUNCTIONS)} of {len(FUNCTIONS)} functions pass" in summary
