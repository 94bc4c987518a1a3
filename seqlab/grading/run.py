"""Grade one submission: load it behind the handle, run the graders, score, return the model."""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import time
from pathlib import Path

import torch

from .. import contract
from ..grader_index import pytest_alone
from ..paths import COURSE_ROOT, GRADERS_DIR, SOLUTIONS_DIR
from ..reference import load_reference
from ..results import GradingResult
from ..student import StudentError, open_submission
from ..student.policy import protected_course_paths
from ..subset import read_modules
from .across import drop_ruled_out, note_shapes
from .flags import review_flags
from .forbidden_names import static_voids
from .plugin import SeqlabPlugin
from .scoring import score_records
from .settings import GradingError, GradingSettings


def grade_submission(submission: str | Path, settings: GradingSettings) -> GradingResult:
    """Grade ``submission`` in any shape ``seqlab.submission`` reads, through a copy of its regular
    files (raises its SubmissionError when there is none to make), under ``settings``."""
    from ..submission import opened, source_of

    started = time.perf_counter()
    with opened(submission) as folder:
        return _grade(folder, str(source_of(folder).resolve()), started, settings)


def _grade(submission: Path, source: str, started: float, settings: GradingSettings) -> GradingResult:
    import pytest

    config, device, only, box = settings.config, settings.device, settings.only, settings.sandbox
    isolated, graders_dir = settings.isolated, settings.graders_dir
    seed = secrets.randbelow(2**31) if settings.seed is None else settings.seed

    reference = load_reference()
    protected = tuple(protected_course_paths(COURSE_ROOT, (*settings.protected_dirs, SOLUTIONS_DIR, GRADERS_DIR)))
    # Read and checked once, before any of it runs; the child runs exactly these texts.
    texts = read_modules(submission / "exercises", subset=settings.static_policy)
    refused = {m: why for m, why in texts.refused.items() if m in contract.MODULES}
    with open_submission(
        submission,
        reference,
        isolated=isolated,
        device=device,
        limits=config.limits,
        protected_dirs=protected,
        skip=refused,
        sandbox=box,
        tolerances=config.tolerances,
        texts=texts,
    ) as student:
        plugin = SeqlabPlugin(
            student=student, reference=reference, config=config, device=device, seed=seed, only=only, labs=settings.labs
        )
        args = [
            str(graders_dir),
            "--import-mode=importlib",
            f"--rootdir={graders_dir}",
            "-c",
            str(graders_dir / "pytest.ini"),
            "-W",
            "ignore::UserWarning",
            "--assert=plain",
        ]  # graders state their own messages; rewriting costs 0.2 s per run
        for unused in (
            "cacheprovider",
            "terminal",
            "stepwise",
            "logging",
            "doctest",
            "junitxml",
            "pastebin",
            "nose",
            "unittest",
            "legacypath",
            "debugging",
            "faulthandler",
            "setuponly",
            "setupplan",
            "unraisableexception",
            "threadexception",
        ):
            args += ["-p", f"no:{unused}"]  # each costs time per test and none serves grading
        sink = io.StringIO()
        threads = torch.get_num_threads()
        # Graded tensors are tiny: intra-op threads only add barrier waits (4 ms per softmax
        # on a busy 2-core runner instead of microseconds).
        torch.set_num_threads(1)
        try:
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), pytest_alone():
                exit_code = pytest.main(args, plugins=[plugin])
        finally:
            torch.set_num_threads(threads)
        if exit_code == pytest.ExitCode.INTERRUPTED:  # pytest turns Ctrl-C into an exit code
            raise KeyboardInterrupt
        try:
            load_errors = dict(student.load_errors)
        except StudentError as exc:  # no child ever loaded it: the graders' tests said so, one by one
            load_errors = {"exercises": exc.message}
    if exit_code not in (0, 1) or plugin.collection_errors:
        detail = "; ".join(plugin.collection_errors) or sink.getvalue()[-2000:]
        raise GradingError(f"the graders could not run (pytest exit {int(exit_code)}): {detail}")
    if only is None:
        uncovered = [f for f in settings.functions if f not in {r.function for r in plugin.records.values()}]
        if uncovered:
            raise GradingError(f"no grader test for {', '.join(uncovered)} (a full grade must cover every function)")
    tests = score_records(list(plugin.records.values()), config, static_voids(submission, config))
    labs = {}
    if plugin.lab_runs:
        from ..labs.session import summary

        labs = {function: summary(run) for function, run in plugin.lab_runs.items()}
    drop_ruled_out(tests)
    note_shapes(tests)
    errors = [f"{m}: {e}" for m, e in load_errors.items()]
    errors += [why for m, why in texts.refused.items() if m not in contract.MODULES]
    errors += [f"internal grader error in {r.nodeid}: {r.message}" for r in plugin.records.values() if r.grader_error]
    return GradingResult(
        tests=tests,
        submission=source,
        seed=seed,
        device=device,
        execution_time=time.perf_counter() - started,
        errors=errors,
        notices=[box.notice] if box is not None and box.notice else [],
        review_flags=[flag.as_dict() for flag in review_flags(texts.texts)],
        meta={
            "runner": "isolated" if isolated else "in-process",
            "only": only or "",
            "labs": "graded" if settings.labs else "left out",
            "sandbox": box.description if box is not None else "in-process",
            "torch": torch.__version__,
            "pid": os.getpid(),
            **({"lab_runs": labs} if labs else {}),
        },
    )
