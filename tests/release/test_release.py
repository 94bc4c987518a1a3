"""The student release, its leak check, and both GitHub workflows run here for real.

* ``seqlab release`` renders the student repository; releasing twice gives identical bytes; a
  planted solution line (or marker, grader line, seqlab import, config secret) stops it with
  ``file:line: reason``.
* The student workflow (check.yml) and the instructor workflow (grade.yml) parse; the test takes
  the ``run:`` steps out of them and executes them as GitHub would (expressions substituted, the
  job's environment, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files), skipping only ``uses:`` actions
  and the install steps (simulated: artifacts are copied, seqlab is the one installed here):
  public tests on the released repo with the reference solutions (all pass) and with the stubs
  (all fail, "not implemented"), then collect -> three grading jobs in parallel -> gradebook on
  three uploaded submissions (reference 100%, stubs 0, one bug in adam).
* In a fresh venv (nothing but torch, numpy, pytest: never seqlab), ``pip install`` of the
  released repo and ``pytest`` pass. Installing torch there takes ~40 s, so that venv is built
  in the background while the other tests of this module run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from seqlab import classroom
from seqlab import release as rel
from seqlab.build import strip_markers
from seqlab.cli import main
from seqlab.paths import COURSE_ROOT, SOLUTIONS_DIR

VENV_BIN = Path(sys.executable).parent
PUBLIC = COURSE_ROOT / "public_tests"
FRESH_VENV_TEST = "test_fresh_venv_pip_install_and_pytest"

BUGGY_ADAM = '''
def adam(w, dw, state, lr=1e-3, betas=(0.9, 0.999), eps=1e-8):
    """Adam without the bias correction (a classic mistake)."""
    beta1, beta2 = betas
    t = state.get("step", 0) + 1
    m = beta1 * state.get("m", torch.zeros_like(w)) + (1 - beta1) * dw
    v = beta2 * state.get("v", torch.zeros_like(w)) + (1 - beta2) * dw * dw
    return w - lr * m / (torch.sqrt(v) + eps), {"step": t, "m": m, "v": v}
'''


def run_script(script: str, cwd: Path, env: dict, *, timeout: float) -> subprocess.CompletedProcess:
    """A workflow step's ``run:`` as GitHub runs it: ``bash -e``, no terminal, no input."""
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


# --- fixtures ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "student-repo"
    assert main(["release", str(out)]) == 0
    return out


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


# --- helpers: workflows as GitHub runs them ----------------------------------------------------------


def clean_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "GITHUB_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    return env


def load_workflow(text: str) -> dict:
    data = yaml.safe_load(text)
    if True in data:  # YAML 1.1 reads a bare `on:` as True; the templates quote it
        data["on"] = data.pop(True)
    return data


def torch_version_of(check: dict) -> str:
    step = next(s for s in check["jobs"]["public-tests"]["steps"] if s.get("id") == "torch")
    match = re.fullmatch(r'python -m pip install "torch==([\w.+]+)" --index-url (\S+)', step["run"].strip())
    assert match, step["run"]
    assert match.group(2) == rel.CPU_INDEX, "the student workflow must install the CPU build of torch"
    return match.group(1)


def evaluate(expression: str, context: dict):
    """The small part of GitHub's expression language the templates use: paths, '' literals,
    ==, !=, &&, ||, always()."""
    expression = expression.strip()
    if "||" in expression:
        for part in expression.split("||"):
            value = evaluate(part, context)
            if value:
                return value
        return value
    if "&&" in expression:
        return all(evaluate(part, context) for part in expression.split("&&"))
    for op in ("!=", "=="):
        if op in expression:
            left, right = (evaluate(side, context) for side in expression.split(op, 1))
            return (str(left) != str(right)) if op == "!=" else (str(left) == str(right))
    if expression == "always()":
        return True
    if expression.startswith("'") and expression.endswith("'"):
        return expression[1:-1]
    assert re.fullmatch(r"[A-Za-z_][\w.-]*", expression), f"unsupported expression {expression!r}"
    value = context
    for key in expression.split("."):
        value = value.get(key, "") if isinstance(value, dict) else ""
    return value


def substitute(text: str, context: dict) -> str:
    return re.sub(r"\$\{\{(.+?)\}\}", lambda m: str(evaluate(m.group(1), context)), text)


def run_job(job: dict, workspace: Path, context: dict, *, skip_ids=("install",), extra_env=None) -> dict:
    """Run the `run:` steps of a job in ``workspace``; returns {"outputs": {...}, "summary": str}."""
    workspace.mkdir(parents=True, exist_ok=True)
    github_output = workspace.parent / f"{workspace.name}.output"
    summary = workspace.parent / f"{workspace.name}.summary.md"
    github_output.write_text("")
    summary.write_text("")
    steps_context = context.setdefault("steps", {})
    for step in job["steps"]:
        if "uses" in step or step.get("id") in skip_ids:
            continue
        if "if" in step and not evaluate(step["if"], context):
            continue
        env = clean_env()
        env.update(
            {
                "PATH": f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
                "GITHUB_OUTPUT": str(github_output),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_WORKSPACE": str(workspace),
                "CI": "true",
            }
        )
        env.update(extra_env or {})
        assert "${{" not in step["run"], f"step {step.get('name')!r}: pass expressions through env:, not the script"
        env.update({k: substitute(str(v), context) for k, v in step.get("env", {}).items()})
        proc = run_script(step["run"], workspace, env, timeout=600)
        assert proc.returncode == 0, (
            f"step {step.get('name')!r} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
        if step.get("id"):
            outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
            steps_context[step["id"]] = {"outputs": outputs}
    outputs = dict(line.split("=", 1) for line in github_output.read_text().splitlines() if "=" in line)
    return {"outputs": outputs, "summary": summary.read_text()}


def blocked_imports(tmp: Path, modules=("torch", "numpy", "yaml", "sympy")) -> dict:
    """An environment in which ``modules`` cannot be imported: what a job that installed seqlab
    with --no-deps has."""
    folder = tmp / "no-torch"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        textwrap.dedent(f"""
        import sys
        class _NotInstalled:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {set(modules)!r}:
                    raise ImportError(name + " is not installed in this job")
                return None
        sys.meta_path.insert(0, _NotInstalled())
    """)
    )
    return {"PYTHONPATH": str(folder)}


def make_submission(released: Path, target: Path, kind: str) -> Path:
    """A student repository: the release, with the reference solutions (markers stripped, as a
    student's file has none), or the stubs, or the solutions with one bug."""
    shutil.copytree(released, target)
    if kind in ("reference", "buggy"):
        for path in SOLUTIONS_DIR.glob("*.py"):
            if path.name != "__init__.py":
                (target / "exercises" / path.name).write_text(strip_markers(path.read_text(encoding="utf-8")))
    if kind == "buggy":
        from tests.mutants import replace_function

        path = target / "exercises" / "optimizers.py"
        path.write_text(replace_function(path.read_text(), "adam", BUGGY_ADAM))
    return target


def run_public_tests(repo: Path, check: dict, extra_env=None, python_bin: Path = VENV_BIN) -> tuple[int, str, str]:
    """check.yml's test step, verbatim, in ``repo``; returns (exit code, output, job summary)."""
    step = next(s for s in check["jobs"]["public-tests"]["steps"] if s.get("id") == "test")
    summary = repo.parent / f"{repo.name}.summary.md"
    summary.write_text("")
    env = clean_env()
    env.update({"PATH": f"{python_bin}{os.pathsep}{env.get('PATH', '')}", "GITHUB_STEP_SUMMARY": str(summary)})
    env.update(extra_env or {})
    proc = run_script(step["run"], repo, env, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr, summary.read_text()


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
    }
    from seqlab.contract import MODULES

    expected |= {f"exercises/{m}.py" for m in MODULES} | {f"tests/test_{m}.py" for m in MODULES}
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
    install = next(s for s in grade["steps"] if s.get("id") == "install")["run"]
    assert f'"torch=={rel.DEFAULT_TORCH}" --index-url {rel.CPU_INDEX}' in install
    assert gradebook["needs"] == ["collect", "grade"] and "always()" in gradebook["if"]
    assert (
        "seqlab gradebook _results --out gradebook --expect matrix.json"
        in next(s for s in gradebook["steps"] if s.get("id") == "assemble")["run"]
    )


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
    assert "## Public tests: 30 of 30 functions pass" in summary and "❌" not in summary
    code, output, summary = public["stubs"]
    assert code == 1 and "## Public tests: 0 of 30 functions pass" in summary
    assert summary.count("not implemented yet") == 30 and " passed" not in output.splitlines()[-1]
    code, output, summary = public["buggy"]
    assert code == 1 and "29 of 30 functions pass" in summary
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
    assert all(
        float(buggy[f]) == float(rows["reference"][f]) for f in rows["reference"] if "." in f and f != "optimizers.adam"
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
    with pytest.raises(ValueError, match="both named 'alice'"):
        classroom.build_matrix(roster=roster, uploads=uploads)
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


@pytest.mark.slow
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
    assert "30 of 30 functions pass" in summary


def test_instructor_doc_matches_the_workflow_and_the_config():
    """The README's GitHub autograding section quotes the workflow's commands and the points per topic."""
    from seqlab.config import load_config
    from seqlab.contract import MODULES, functions_of

    readme = (COURSE_ROOT / "README.md").read_text()
    doc = readme[readme.index("## For instructors: autograding on GitHub") : readme.index("## Development")]
    assert doc.startswith("## For instructors: autograding on GitHub\n")
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
    assert f"`max_score` in `gradebook.csv` ({config.max_score:g} with" in doc
    assert f'"torch=={rel.DEFAULT_TORCH}"' in doc
