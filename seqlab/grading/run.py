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
from ..config import GradingConfig, load_config
from ..paths import COURSE_ROOT, GRADERS_DIR, SOLUTIONS_DIR
from ..reference import load_reference
from ..results import GradingResult
from ..student import StudentError, open_submission
from ..student.policy import protected_course_paths
from .forbidden_names import static_voids
from .plugin import SeqlabPlugin
from .scoring import score_records
from .static_policy import policy_violations


class GradingError(RuntimeError):
    """The grader itself could not run (not the submission's fault)."""


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise GradingError("--device cuda was asked for, but torch sees no CUDA device here")
    if device not in ("cpu",) and not device.startswith("cuda"):
        raise GradingError(f"unknown device {device!r} (use auto, cpu or cuda)")
    return device


def grade_submission(
    submission: str | Path,
    *,
    device: str = "cpu",
    seed: int | None = None,
    only: str | None = None,
    isolated: bool = True,
    config: GradingConfig | None = None,
    protected_dirs: tuple = (),
    graders_dir: Path = GRADERS_DIR,
    sandbox: str = "auto",
    static_policy: bool = True,
) -> GradingResult:
    """``static_policy=False`` is for the attack bank only: it lets hostile code run so that the
    layers beneath the policy (sandbox, audit hook) are shown to stop it on their own."""
    import pytest

    from ..student.sandbox import SandboxUnavailable
    from ..student.sandbox import resolve as resolve_sandbox

    started = time.perf_counter()
    submission = Path(submission).resolve()
    if not submission.is_dir():
        raise GradingError(f"{submission}: not a directory")
    if not (submission / "exercises").is_dir():
        raise GradingError(f"{submission}: no exercises/ folder in it (a submission is a directory holding exercises/)")
    config = config or load_config()
    device = resolve_device(device)
    seed = secrets.randbelow(2**31) if seed is None else int(seed)
    try:
        box = resolve_sandbox(sandbox) if isolated else None
    except (SandboxUnavailable, ValueError) as exc:
        raise GradingError(str(exc)) from None
    reference = load_reference()
    protected = tuple(protected_course_paths(COURSE_ROOT, (*protected_dirs, SOLUTIONS_DIR, GRADERS_DIR)))
    refused = policy_violations(submission) if static_policy else {}  # before any of it runs
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
    ) as student:
        plugin = SeqlabPlugin(student=student, reference=reference, config=config, device=device, seed=seed, only=only)
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
            with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
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
        uncovered = [f for f in contract.FUNCTIONS if f not in {r.function for r in plugin.records.values()}]
        if uncovered:
            raise GradingError(f"no grader test for {', '.join(uncovered)} (a full grade must cover every function)")
    tests = score_records(list(plugin.records.values()), config, static_voids(submission, config))
    errors = [box.notice] if box is not None and box.notice else []
    errors += [f"{m}: {e}" for m, e in load_errors.items()]
    errors += [f"internal grader error in {r.nodeid}: {r.message}" for r in plugin.records.values() if r.grader_error]
    return GradingResult(
        tests=tests,
        submission=str(submission),
        seed=seed,
        device=device,
        execution_time=time.perf_counter() - started,
        errors=errors,
        meta={
            "runner": "isolated" if isolated else "in-process",
            "only": only or "",
            "sandbox": box.description if box is not None else "in-process",
            "torch": torch.__version__,
            "pid": os.getpid(),
        },
    )
