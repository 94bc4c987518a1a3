"""`seqlab check-exercise NAME`: what a new or changed exercise trips, and nothing else.

For one contract function (``positional.sinusoidal_encoding``), in this order, cheapest first:

1. **config**: its entry in ``grading_config.yaml`` (points, its patterns match its grader titles)
   and at least one graded test of its own in ``graders/``;
2. **stub**: ``exercises/<topic>.py`` is what ``seqlab build`` writes from ``solutions/``;
3. **notebook**: the ``idea_<f>`` and ``check_<f>`` macros in ``templates/notebooks/<topic>.md.j2``
   (the notebook builder stops without them, after minutes of nbgrader);
4. **docs**: the generated tables of ``docs/`` list it and are current (``seqlab regenerate``);
5. **reference**: ``solutions/`` graded on this function alone scores its full points (no crash,
   no forbidden call: its values are what the grader compares with), and **torch**: the
   reference against the PyTorch built-in, ``tests/reference/test_<topic>.py`` (the project's
   checkout only);
6. **public tests**: in a fresh ``seqlab release``, ``tests/test_<topic>.py``'s tests of the
   function fail on the released stub (a public test that passes on a stub checks nothing) and
   pass once ``solutions/`` is copied over the stubs (none yet: it says where they belong);
7. **mutants**: the known mistakes and alternatives of the function's whole topic
   (``tests/mutants/``, the graders' tables) against the graders, with their recorded grades (the
   project's checkout only): a new function changes the topic's total, so every recorded grade
   of the topic moves, not only the new function's (a blind maintainer trial found them stale
   when this step selected the function alone).

Every step runs even after one fails; the command exits 1 when any did. The whole suite
(`make test`) still runs in CI; this is the inner loop of one exercise.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from .. import build as builder
from .. import contract, docs_figures
from ..config import ConfigError, check_test_patterns, course_figures, load_config
from ..errors import UserError
from ..grader_index import titles_by_function
from ..paths import COURSE_ROOT, EXERCISES_DIR, GRADERS_DIR, SOLUTIONS_DIR, TEMPLATES_DIR

MUTANT_TESTS = ("tests/grading/test_mutants.py", "tests/grading/test_derived_mutants.py")
# Each subprocess step's limit: the whole command is meant to take under two minutes; a step
# past this is a hang (a grader looping), reported as a failure rather than waited on.
STEP_TIMEOUT_S = 300


class Failed(Exception):
    """A step's finding (not an error of seqlab's: the command reports it and goes on)."""


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("check-exercise", help="run the checks one exercise trips (config to mutants)")
    p.add_argument("name", help="the contract function, module.function (e.g. positional.sinusoidal_encoding)")
    p.add_argument("--jobs", type=int, default=2, help="pytest workers for the mutants (default 2)")
    p.set_defaults(func=run)


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=STEP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Failed(f"{' '.join(command[2:5])}...: no result after {STEP_TIMEOUT_S} s") from None


def _tail(run: subprocess.CompletedProcess[str], lines: int = 15) -> str:
    return "\n".join((run.stdout + run.stderr).strip().splitlines()[-lines:])


def check_config(name: str) -> str:
    config = load_config()
    if name not in config.functions:
        raise Failed(f"no `functions: {name}:` entry in {config.source}")
    titles = titles_by_function(GRADERS_DIR).get(name, [])
    if not titles:
        raise Failed(f"no @grades({name!r}, ...) test in {GRADERS_DIR}")
    # this function's patterns only: another function's problem is not this exercise's
    check_test_patterns(replace(config, functions={name: config.functions[name]}), {name: titles})
    return f"{config.rules(name).points:g} points, {len(titles)} graded tests"


def check_stub(name: str) -> str:
    topic = contract.split(name)[0]
    stale = [f for f in builder.stale_files(SOLUTIONS_DIR, EXERCISES_DIR) if Path(f).stem in (topic, "__init__")]
    if stale:
        raise Failed(f"exercises/ is stale ({', '.join(stale)}): run `seqlab build` (or `seqlab regenerate`)")
    return f"exercises/{topic}.py is current"


def check_notebook(name: str) -> str:
    topic, function = contract.split(name)
    template = TEMPLATES_DIR / "notebooks" / f"{topic}.md.j2"
    text = template.read_text(encoding="utf-8") if template.is_file() else ""
    if name in contract.LABS:
        wanted = ["lab_text", "lab_code"]
    else:
        wanted = [f"idea_{function}", f"check_{function}"]  # conventions_ is optional
    missing = [m for m in wanted if f"{{% macro {m}(" not in text]
    if missing:
        raise Failed(f"{template.relative_to(COURSE_ROOT)}: no macro {', '.join(missing)} (see its other functions')")
    return f"{', '.join(wanted)} in {template.name}"


def check_docs(name: str) -> str:
    stale = docs_figures.regenerate(COURSE_ROOT / "docs", check=True)
    if stale:
        raise Failed(f"docs with stale generated figures ({', '.join(stale)}): run `seqlab regenerate`")
    points = course_figures().points.get(name)
    return f"docs current ({points:g} points in the topics table)" if points is not None else "docs current"


def _hand_in(target: Path, source: Path) -> Path:
    """A submission folder whose exercises/ is a copy of ``source``."""
    shutil.copytree(source, target / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    return target


def check_reference(name: str, tmp: Path) -> str:
    hand_in, out = _hand_in(tmp / "reference", SOLUTIONS_DIR), tmp / "reference-out"
    command = [sys.executable, "-m", "seqlab", "grade", str(hand_in), "--only", name, "--in-process"]
    run = _run([*command, "--seed", "1", "--out", str(out), "--quiet"], COURSE_ROOT)
    if run.returncode != 0 or not (out / "results.json").is_file():
        raise Failed(f"grading the reference failed (exit {run.returncode}):\n{_tail(run)}")
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))
    lost = [t["name"] for t in result["tests"] if t["score"] < t["max_score"]]
    if result["score"] < result["max_score"] or lost:
        raise Failed(f"the reference scores {result['score']:g} / {result['max_score']:g}; lost in: {lost[:5]}")
    return f"{result['score']:g} / {result['max_score']:g} over {len(result['tests'])} tests"


def check_against_torch(name: str) -> str:
    topic, function = contract.split(name)
    tests = COURSE_ROOT / "tests" / "reference" / f"test_{topic}.py"
    if not tests.is_file():
        raise UserError(f"{tests}: not found (the reference tests live in seqlab's own checkout)")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests), "-k", function]
    run = _run(command, COURSE_ROOT)
    if run.returncode == 5:  # worth adding, not required (docs/DESIGN.md, "Adding an exercise")
        return f"none yet: a comparison with the PyTorch built-in belongs in tests/reference/test_{topic}.py"
    if run.returncode != 0:
        raise Failed(f"the reference disagrees with PyTorch:\n{_tail(run)}")
    return _tail(run, 1)


def check_public_tests(name: str, tmp: Path) -> str:
    topic, function = contract.split(name)
    release = tmp / "public-stub"
    made = _run([sys.executable, "-m", "seqlab", "release", str(release)], COURSE_ROOT)
    if made.returncode != 0:
        raise Failed(f"`seqlab release` failed:\n{_tail(made)}")
    if not (release / "tests" / f"test_{topic}.py").is_file():
        raise Failed(f"the release has no tests/test_{topic}.py (public_tests/test_{topic}.py)")
    reference = shutil.copytree(release, tmp / "public-reference")  # the release, its stubs answered
    for source in SOLUTIONS_DIR.glob("*.py"):
        if source.name != "__init__.py":
            shutil.copy(source, reference / "exercises" / source.name)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/test_{topic}.py", "-k", function]
    on_reference, on_stub = _run(command, reference), _run(command, release)
    if on_reference.returncode == 5:  # worth adding, not required
        return f"none yet: visible checks of {function} belong in public_tests/test_{topic}.py"
    if on_reference.returncode != 0:
        raise Failed(f"the reference fails its public tests:\n{_tail(on_reference)}")
    if on_stub.returncode == 0:
        raise Failed(f"the released stub passes its public tests: they check nothing\n{_tail(on_stub, 5)}")
    return f"reference passes, released stub fails ({_tail(on_reference, 1)})"


def check_mutants(name: str, jobs: int) -> str:
    missing = [t for t in MUTANT_TESTS if not (COURSE_ROOT / t).is_file()]
    if missing:
        raise UserError(f"{', '.join(missing)}: not in {COURSE_ROOT} (the mutant banks live in seqlab's own checkout)")
    workers = ["-n", str(jobs)] if jobs > 1 else []
    env = {k: v for k, v in os.environ.items() if k != "SEQLAB_RECORD"}  # compare, never record
    topic, _ = contract.split(name)
    own = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--co", "-k", name, *MUTANT_TESTS]
    if _run(own, COURSE_ROOT, env).returncode == 5:
        raise Failed(f"no mutant or alternative of {name} (tests/mutants/<topic>.py, the grader's tables)")
    # the whole topic: a new function moves the topic's total and so every recorded grade of it
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers, "-k", topic, *MUTANT_TESTS]
    run = _run(command, COURSE_ROOT, env)
    if run.returncode != 0:
        hint = f"; a new or changed grade: `seqlab regenerate --recorded --only recorded -k {topic}`"
        raise Failed(f"mutants and alternatives failed{hint}:\n{_tail(run, 25)}")
    return _tail(run, 1)


def steps(name: str, tmp: Path, jobs: int) -> list[tuple[str, Callable[[], str]]]:
    return [
        ("config", lambda: check_config(name)),
        ("stub", lambda: check_stub(name)),
        ("notebook", lambda: check_notebook(name)),
        ("docs", lambda: check_docs(name)),
        ("reference", lambda: check_reference(name, tmp)),
        ("torch", lambda: check_against_torch(name)),
        ("public tests", lambda: check_public_tests(name, tmp)),
        ("mutants", lambda: check_mutants(name, jobs)),
    ]


def run(args) -> int:
    name = args.name
    if name not in contract.FUNCTIONS:
        raise UserError(f"{name!r} is not a contract function (module.function, a `def` in solutions/)")
    failed = 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="seqlab-check-exercise-") as tmp:
        for step, check in steps(name, Path(tmp), args.jobs):
            began = time.monotonic()
            try:
                verdict, detail = "ok", check()
            except (Failed, ConfigError) as exc:  # a finding of this step; the next steps still run
                verdict, detail, failed = "FAILED", str(exc), failed + 1
            print(f"{step:13s} {verdict:6s} {time.monotonic() - began:5.1f} s  {detail}", flush=True)
    total = time.monotonic() - started
    print(f"{name}: {'all checks passed' if not failed else f'{failed} check(s) failed'} in {total:.0f} s")
    return 1 if failed else 0
