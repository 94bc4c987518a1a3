"""The grading process a notebook kernel talks to.

The grading kernel runs student code, so it must not hold the graders or the reference, nor be
able to read them. It starts this process *before* any student code runs (``kernel.start``), and
from then on only sends it notebooks and reads back points. This process:

1. exports the notebook's topic exactly as ``seqlab nbgrader export-submission`` does (the same
   function), next to plain stubs for the other topics;
2. grades it with ``grade_submission(isolated=True, seed=<the course seed>, only=<topic>)`` --
   the student's module runs in the engine's isolated child, never here, inside the same
   bubblewrap sandbox as ``seqlab grade`` (``--sandbox``, ``SEQLAB_NBGRADER_SANDBOX`` in the kernel);
3. answers with the points per function and the feedback of each test.

Results are cached per exported module text, so the first hidden test cell of a notebook grades
the whole topic and the next ones read the cache (a notebook's file does not change while
nbgrader executes it).

Protocol: one JSON object per line on stdin, one per line on stdout.
  -> {"op": "grade", "topic": "attention", "notebook": {...}, "name": "attention.ipynb"}
  <- {"ok": true, "functions": {"attention.causal_mask": [1.0, 1.0], ...},
      "tests": [{"name": ..., "score": ..., "max_score": ..., "output": ..., "hint": ...}],
      "errors": [...], "missing": [...], "seed": 123}
  <- {"ok": false, "error": "..."}
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from ..student.sandbox import MODES, MODES_HELP


def student_notebooks(course_root: str | None, notebook_dir: str | None) -> list[Path]:
    """The student's submitted notebooks of the course's other assignments, when the kernel runs
    in nbgrader's ``<course>/autograded/<student>/<assignment>/`` (``nbgrader autograde``): a lab
    runs the student's functions of other topics, so it is graded with them, as in
    `seqlab nbgrader autograde`. Elsewhere (``nbgrader validate`` on a student's machine) none."""
    if not course_root or not notebook_dir:
        return []
    course, here = Path(course_root).resolve(), Path(notebook_dir).resolve()
    if here.parent.parent != course / "autograded":
        return []
    student, assignment = here.parent.name, here.name
    submitted = course / "submitted" / student
    if not submitted.is_dir():
        return []
    return sorted(p for p in submitted.glob("*/*.ipynb") if p.parent.name != assignment)


def grade_notebook(notebook: dict, topic: str, name: str, settings, others=()) -> dict:
    """One notebook's topic graded under ``settings`` (a GradingSettings), this topic only.
    ``others``: the student's notebooks of other topics (``student_notebooks``); given, they
    stand for those topics instead of stubs and the topic's labs are graded too."""
    from .. import contract
    from ..build import render_stubs
    from ..grading import grade_submission
    from ..paths import SOLUTIONS_DIR
    from .export import export_topic, notebook_topic, read_notebook
    from .source import parse_topic

    if topic not in contract.MODULES:
        raise ValueError(f"unknown topic {topic!r}")
    module = export_topic(parse_topic(SOLUTIONS_DIR / f"{topic}.py", topic), notebook, name)
    scratch = Path(tempfile.mkdtemp(prefix="seqlab-nbgrade-"))
    try:
        exercises = scratch / "exercises"
        exercises.mkdir()
        (exercises / "__init__.py").write_text("", encoding="utf-8")
        for stub in render_stubs(SOLUTIONS_DIR):
            if stub.name != f"{topic}.py":
                (exercises / stub.name).write_text(stub.text, encoding="utf-8")
        exported = set()
        for path in others:
            other = read_notebook(path)
            other_topic = notebook_topic(other)
            if other_topic in contract.MODULES and other_topic != topic and other_topic not in exported:
                text = export_topic(
                    parse_topic(SOLUTIONS_DIR / f"{other_topic}.py", other_topic), other, path.name
                ).text
                (exercises / f"{other_topic}.py").write_text(text, encoding="utf-8")
                exported.add(other_topic)
        (exercises / f"{topic}.py").write_text(module.text, encoding="utf-8")
        # A lab runs other topics' functions: with stubs for them (no other notebook of the
        # student's at hand) it is not graded here, and its cell says so.
        result = grade_submission(scratch, replace(settings, only=topic, labs=bool(exported)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "ok": True,
        "seed": settings.seed,
        "digest": module.digest,
        "missing": module.missing,
        "functions": {name: [score, max_score] for name, (score, max_score) in result.by_function().items()},
        "tests": [
            {"name": t.name, "score": t.score, "max_score": t.max_score, "output": t.output, "hint": t.hint}
            for t in result.tests
        ],
        "errors": [*result.notices, *result.errors],  # the cell shows both as problem lines
    }


def serve(stdin, stdout, *, seed: int, protected=(), sandbox: str = "auto", others=()) -> None:
    from ..grading import grading_settings
    from ..reference import load_reference

    # once: every request is graded in the same sandbox, with the same notice
    settings = grading_settings(seed=seed, protected_dirs=protected, sandbox=sandbox)
    load_reference()  # warm: the first request should not pay for it
    cache: dict[tuple[str, str], dict] = {}
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            if request.get("op") != "grade":
                raise ValueError(f"unknown op {request.get('op')!r}")
            from .export import answer_cells

            key = (request["topic"], json.dumps(answer_cells(request["notebook"]), sort_keys=True))
            reply = cache.get(key)
            if reply is None:
                reply = grade_notebook(
                    request["notebook"], request["topic"], request.get("name", "notebook"), settings, others
                )
                cache[key] = reply
        except Exception as exc:  # reported to the cell; the server stays up
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        stdout.write(json.dumps(reply) + "\n")
        stdout.flush()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="seqlab-nbgrade-server")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--protect", action="append", default=[], help="paths the student's code may not read")
    # the notice of a missing sandbox reaches the notebook cell as a problem line
    parser.add_argument("--sandbox", choices=MODES, default="auto", help=MODES_HELP)
    parser.add_argument("--notebook-dir", help="the kernel's folder (nbgrader's autograded/<student>/<assignment>)")
    args = parser.parse_args(argv)
    # read now, before the kernel runs any student code; the course is one of the protected paths
    others = next((found for root in args.protect if (found := student_notebooks(root, args.notebook_dir))), [])
    # The protocol owns the real stdout; anything else printed goes to stderr (discarded by the kernel).
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    serve(sys.stdin, protocol, seed=args.seed, protected=args.protect, sandbox=args.sandbox, others=others)


if __name__ == "__main__":
    main()
