"""What the bundle's ``run_autograder`` runs on Gradescope, once per submission.

``python -m seqlab.gradescope.autograder [--root /autograder] [--config PATH]``

1. reads the upload in ``ROOT/submission`` into a private working folder with the reader every
   grading path uses (``seqlab.submission``: the same shapes, refusals and messages);
2. grades that copy with ``seqlab grade`` in a child process (the isolated runner, the same
   command and options instructors run by hand), bounded by ``gradescope.grading_timeout_s``;
3. writes ``ROOT/results/results.json``: the grade's tests with the visibility the config gives
   them, the notes on what was found in the upload, the page-level visibility.

Whatever happens (no upload, an unreadable one, a grader that dies or runs out of time) it writes
a valid results.json that says what went wrong, with score 0, and exits 0: a crashed autograder
shows the student nothing useful. The results are written here, after grading has finished, by
this process; nothing the student's code prints or writes can become the results.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_ROOT = "/autograder"

# Shown to the student when seqlab, not their code, failed: the score is 0 until a regrade.
GRADER_FAILED = (
    "The autograder could not grade this submission because of a problem on the course's side, "
    "not in your code. Your instructor has the log; the submission will be regraded."
)


def autograder_root(cli_root: str | None = None) -> Path:
    """``--root``, else ``AUTOGRADER_ROOT``, else Gradescope's ``/autograder``."""
    return Path(cli_root or os.environ.get("AUTOGRADER_ROOT") or DEFAULT_ROOT)


def failure_results(message: str, *, max_score: float, started: float, notes: Sequence[str] = ()) -> dict[str, Any]:
    """A results.json for a submission that could not be graded: score 0 and the reason.

    Always visible at once, whatever the config's visibility: a student whose upload could not be
    read must learn it before the deadline, and the message gives away nothing of the grading."""
    output = "\n".join([message, *notes]) if notes else message
    return {
        "score": 0.0,
        "max_score": round(float(max_score), 4),
        "execution_time": round(time.monotonic() - started, 4),
        "output": output,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def upload_problem(exc: BaseException, upload: Path) -> str:
    """What the student reads when their upload could not be read: that the fault is in the
    upload, what the reader found (with the upload's paths as they uploaded them), and what to
    upload instead."""
    from ..escape import one_line
    from ..submission import MODULE_FILES, SubmissionError

    if isinstance(exc, SubmissionError):
        found = one_line(exc)  # it quotes the upload's file names: no control character, one line
    else:  # the reader did not expect it; its type and first line still say what was found
        found = f"it could not be read ({type(exc).__name__}: {one_line(exc)[:200] or 'no details'})"
    found = found.replace(f"{upload}/", "").replace(str(upload), "your upload")
    return (
        f"Your upload could not be graded; the problem is in the files you uploaded, not in the course: {found}. "
        f"Upload the files {', '.join(MODULE_FILES)} (flat, in an exercises/ folder, or in one .zip of "
        f"them), then submit again."
    )


def graded_results(result, config, notes: list[str], started: float) -> dict[str, Any]:
    """Gradescope's results.json for a finished grade, with the config's page-level visibility."""
    from ..reports.gradescope import markdown_lines, review_tests, to_gradescope

    data = to_gradescope(result)
    data["tests"] += review_tests(result)  # hidden: the course's staff see them, the student never
    data["execution_time"] = round(time.monotonic() - started, 4)  # the whole run, upload reading included
    # Each test already carries its visibility: the grading applied this config to the markers'.
    data["visibility"] = config.gradescope.visibility
    data["stdout_visibility"] = config.gradescope.stdout_visibility
    if notes:
        data["output"] = markdown_lines(notes) + "\n\n" + data["output"]
    return data


def write_results(data: dict[str, Any], path: Path) -> Path:
    """Replace whatever is at ``path`` (a stale file, a folder, a link) with ``data``, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False)
    os.replace(tmp, path)  # replaces a link itself, never the file it points to
    return path


def run_grade(staged: Path, out: Path, config_path: str, timeout_s: float) -> tuple[int | None, str]:
    """``seqlab grade`` on the staged copy in its own process group; (exit code or None on
    timeout, its output). The group is killed on timeout so no grading process outlives it."""
    cmd = [
        sys.executable,
        "-m",
        "seqlab",
        "grade",
        str(staged),
        "--out",
        str(out),
        "--device",
        "cpu",
        "--quiet",
        "--config",
        config_path,
    ]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout_s)
        return proc.returncode, output
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        return None, output


def autograde(root: Path, config_path: Path | None, started: float) -> dict[str, Any]:
    from ..config import load_config
    from ..grading.settings import graded_max_score
    from ..results import GradingResult
    from ..submission import SubmissionError, read_submission

    config = load_config(config_path)
    with tempfile.TemporaryDirectory(prefix="seqlab-gradescope-") as folder:
        work = Path(folder)
        upload = root / "submission"
        try:
            notes = list(read_submission(upload, work / "submission").notes)
        except Exception as exc:  # whatever breaks here, the upload broke it
            # Reading the upload only reads what the student handed in: a failure here is a fault
            # in their upload (a broken or truncated zip, a file the reader cannot decode), and
            # the student must hear that, with what to fix, never GRADER_FAILED's "the course's
            # side". The reader's own refusals (SubmissionError) say what is wrong in
            # its words; anything else it raised is named by its type, its traceback in the log.
            if not isinstance(exc, SubmissionError):
                traceback.print_exc()
            problem = upload_problem(exc, upload)
            print(f"upload: {problem}")
            return failure_results(problem, max_score=graded_max_score(config), started=started)
        for note in notes:
            print(f"upload: {note}")
        timeout_s = config.gradescope.grading_timeout_s
        code, output = run_grade(work / "submission", work / "out", config.source, timeout_s)
        print(output, end="" if output.endswith("\n") else "\n")
        if code is None:
            return failure_results(
                f"Grading stopped after {timeout_s:g} s, the time this assignment allows; a correct submission "
                f"takes seconds. Look for a loop that never ends or very slow code, then submit again.",
                max_score=graded_max_score(config),
                started=started,
                notes=notes,
            )
        saved = work / "out" / "seqlab_result.json"
        if code != 0 or not saved.is_file():
            print(f"seqlab grade exited with {code}; no result was written", file=sys.stderr)
            return failure_results(GRADER_FAILED, max_score=graded_max_score(config), started=started, notes=notes)
        return graded_results(GradingResult.load(saved), config, notes, started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m seqlab.gradescope.autograder", description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=None, help="the autograder folder (default: $AUTOGRADER_ROOT or /autograder)")
    parser.add_argument("--config", type=Path, default=None, help="grading config (default: the course's)")
    args = parser.parse_args(argv)
    started = time.monotonic()
    root = autograder_root(args.root)
    results_path = root / "results" / "results.json"
    try:
        data = autograde(root, args.config, started)
    except Exception:  # the last line of defence: the log gets the traceback, the student a page
        traceback.print_exc()
        max_score = 0.0
        try:
            from ..config import load_config
            from ..grading.settings import graded_max_score

            max_score = graded_max_score(load_config(args.config))
        except Exception:  # the page still goes out, out of 0; the log says why
            traceback.print_exc()
        data = failure_results(GRADER_FAILED, max_score=max_score, started=started)
    write_results(data, results_path)
    print(f"wrote {results_path}: {data['score']:g} / {data['max_score']:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
