"""Grade a whole class: ``seqlab grade-all SUBMISSIONS_DIR --out DIR --jobs N``.

N grading processes (``--jobs N``) each take submissions (a folder, or a zip of one) in turn;
each submission's code runs in its own fresh, isolated child, and a grading process that dies
or hangs is replaced, so one submission takes nothing else down.
Results land in ``DIR/<name>/``; ``gradebook.csv`` and the class report (``seqlab.gradebook``)
are rebuilt from every finished result after each submission, so an interrupted run leaves a consistent
gradebook and a rerun picks up where it stopped (``--force`` regrades everything).
No submission is ever lost: one that could not be graded still gets a row with the reason, the
points it could have had, and a results.json that says why. Each hand-in is read by
``seqlab.submission``, as ``seqlab grade`` reads one; an entry that is not one (``notes.txt``,
``.DS_Store``) is skipped and said so. Every hand-in gets a name no other can have
(:func:`hand_ins`), and whatever one hand-in does (a corrupt zip, a name that is not UTF-8, a
1000-deep tree, a name that is console markup) costs nothing but its own row: everyone else is
graded, gradebook.csv and the LMS files are written, and then the class report is drawn.
"""

from __future__ import annotations

import json
import queue
import sys
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .defaults import SUBMISSION_TIMEOUT_S
from .engines.process import _Worker
from .engines.shards import draw_reports
from .errors import SeqlabError
from .gradebook import (
    RESULT_FILE,
    STATUS_FILE,
    collect,
    link_reports,
    write_class_report,
    write_gradebook,
    write_text_atomic,
)
from .grading.settings import GradingSettings
from .submission import SubmissionError

# re-exported: grade-all's names, where callers look for them
from .submission.handins import (
    LMS_DIR,
    OWN_NAMES,
    WORK_DIR,
    HandIns,
    Submission,
    discover,
    hand_in_digest,
    hand_ins,
    safe_submission_name,
    shown,
    unwritten_stubs,
)

if TYPE_CHECKING:
    from .engines.shards import Shard

__all__ = ["LMS_DIR", "OWN_NAMES", "WORK_DIR", "ClassRun", "HandIns", "Submission", "discover", "grade_all"]
__all__ += ["hand_ins", "safe_submission_name", "shown", "unwritten_stubs", "worker_main"]
__all__ += ["link_reports", "write_class_report"]  # re-exported, as before the engines


def worker_main(fd: int) -> None:
    """Grade the jobs read from the channel ``fd``, answering each with its status; a job's
    ``settings`` are the parent's GradingSettings as they are, so nothing is read or probed
    again here."""
    from .grading import GradingError, grade_submission
    from .reports import write_all

    channel = Connection(fd)
    while True:
        try:
            job = channel.recv()
        except EOFError:  # the parent is gone
            return
        try:
            settings = replace(job["settings"], protected_dirs=(job["out"], *job["settings"].protected_dirs))
            result = grade_submission(job["submission"], settings)
            result.save(Path(job["out"]) / RESULT_FILE)  # the grade, recorded before any report
            status = {"status": "graded"}
            try:
                write_all(result, Path(job["out"]))
            except Exception as exc:  # a report that fails is said, never a lost grade
                status["report_error"] = f"{type(exc).__name__}: {exc}"[:500]
        except (GradingError, SeqlabError) as exc:
            status = {"status": "error", "reason": str(exc)[:500]}
        except Exception as exc:  # a grader bug must cost this submission only, with the reason
            status = {"status": "error", "reason": f"internal error: {type(exc).__name__}: {exc}"[:500]}
        channel.send(status)


def _grade_one(sub: Submission, out: Path, workers: queue.Queue[_Worker], job: dict, timeout: float) -> dict:
    """One submission through a worker; ``job``: what every job of the run shares (the settings,
    the full points). Whatever happens, the submission's folder ends with a status and a
    results.json that says it."""
    target = out / sub.name
    started = time.perf_counter()
    try:
        target.mkdir(parents=True, exist_ok=True)
        if sub.path is None:
            status: dict[str, Any] = {"status": "error", "reason": sub.problem}
        else:
            worker = workers.get()
            try:
                status = worker.grade({"submission": str(sub.path), "out": str(target), **job}, timeout)
            finally:
                workers.put(worker)
            if status["status"] == "interrupted":
                return {**status, "name": sub.name}
            if status["status"] == "graded" and not (target / RESULT_FILE).is_file():
                status = {"status": "error", "reason": "the grader wrote no result"}
    except Exception as exc:  # a bug in seqlab costs this submission only, with the reason
        status = {"status": "error", "reason": f"internal error: {type(exc).__name__}: {exc}"[:500]}
    for key in ("reason", "report_error"):  # they may name the student's files
        if key in status:
            status[key] = shown(str(status[key]))
    if "report_error" in status:
        print(
            f"grade-all: error: {sub.name}: its reports could not be written (graded, the grade is recorded): "
            f"{status['report_error']}",
            file=sys.stderr,
        )
    status.update(name=sub.name, source=str(sub.source), digest=hand_in_digest(sub))
    if "run" in job:  # an engine's run: a retried task finds its own finished grade (engines.dask_engine)
        status["run"] = job["run"]
    status["seconds"] = round(time.perf_counter() - started, 2)
    if status["status"] != "graded":
        _write_failure(target, status, job["max_score"], started)
    write_text_atomic(target / STATUS_FILE, json.dumps(status, indent=2))
    return status


def _write_failure(target: Path, status: dict, max_score: float, started: float) -> None:
    """The results.json of a submission that could not be graded: score 0 of the full points, the
    reason; a stale result of an earlier run must not be read as this one's."""
    from .gradescope.autograder import failure_results

    status["max_score"] = max_score
    (target / RESULT_FILE).unlink(missing_ok=True)
    data = failure_results(f"not graded: {status['reason']}", max_score=max_score, started=time.monotonic())
    data["execution_time"] = round(time.perf_counter() - started, 4)
    write_text_atomic(target / "results.json", json.dumps(data, indent=2, ensure_ascii=False))


def _is_done(out: Path, sub: Submission) -> bool:
    """Graded before from the same hand-in and files (a changed one is regraded, not kept)."""
    status_path = out / sub.name / STATUS_FILE
    if not status_path.is_file():
        return False
    try:
        status = json.loads(status_path.read_text())
    except ValueError:
        return False
    return status.get("source") == str(sub.source) and status.get("digest") == hand_in_digest(sub)


@dataclass(frozen=True)
class ClassRun:
    """How a class is run, beside how each hand-in is graded: ``jobs`` submissions at once,
    ``force`` regrades those already graded, ``timeout`` seconds per submission, ``similarity``
    adds the per-function similarity of the class to its report; ``shard``: grade only its
    hand-ins (seqlab.engines.shards); ``engine``: who runs the tasks (None: ``jobs`` local
    grading processes; else an object whose ``grade(backlog, out, job, timeout, done)`` runs
    :func:`_grade_one` per hand-in and calls ``done(sub, status)`` as each ends)."""

    jobs: int = 1
    force: bool = False
    timeout: float = SUBMISSION_TIMEOUT_S
    similarity: bool = False
    shard: Shard | None = None
    engine: Any = None


def grade_all(
    submissions_dir: Path,
    out: Path,
    settings: GradingSettings,
    run: ClassRun = ClassRun(),
    progress=None,
    record: Callable[[list[dict]], object] | None = None,
) -> list[dict]:
    """Every hand-in of ``submissions_dir`` graded under ``settings`` (a GradingSettings; every
    worker grades under it as it is) into ``out``. ``progress.skip(entry, why)`` hears of each
    entry that is no hand-in, ``progress.rename(entry, name, why)`` of each graded under a name
    not its own. ``record(rows)``: where else the grades go (the LMS files), called once the
    class is graded, after gradebook.csv and before any report is drawn.

    One hand-in costs nothing but its own row: whatever reading or grading it raises is its
    row's reason; a report or figure that fails is an error in the log (and the rows are still
    returned), never a lost grade."""
    submissions_dir, out = Path(submissions_dir), Path(out)
    if not submissions_dir.exists():
        raise SubmissionError(f"{submissions_dir}: does not exist")
    if not submissions_dir.is_dir() or submissions_dir.is_symlink():
        raise SubmissionError(f"{submissions_dir}: not a folder (grade-all takes a folder of submissions)")
    max_score = settings.max_score
    found = hand_ins(submissions_dir)
    out.mkdir(parents=True, exist_ok=True)
    named = {n: p for n, p in found.named.items() if run.shard is None or run.shard.holds(n)}
    subs = discover(named, out)
    todo = [s for s in subs if run.force or not _is_done(out, s)]
    if progress:
        for entry, why in found.skipped:
            _tell(progress, "skip", entry, why)
        for entry, name, why in found.renamed:
            _tell(progress, "rename", entry, name, why)
        _tell(progress, "start", total=len(subs), already=len(subs) - len(todo))

    read: dict = {}  # rows already read, reused while their files are unchanged

    def refresh():
        rows = collect(out, [s.name for s in subs], {s.name: s.problem for s in subs if s.path is None}, read)
        write_gradebook(out, rows, run.shard.gradebook if run.shard else "gradebook.csv")
        return rows

    rows = refresh()
    job = {"settings": settings, "max_score": max_score}
    # Longest first: the class's last minutes are one worker finishing while the others wait,
    # and that wait is shortest when the work left at the end is the quick work.
    backlog = sorted(todo, key=unwritten_stubs)
    if run.engine is not None:
        return _on_engine(backlog, subs, out, job, run, progress, refresh, record)
    jobs = max(1, min(run.jobs, len(todo) or 1))
    workers: queue.Queue[_Worker] = queue.Queue()
    for _ in range(jobs):
        workers.put(_Worker())
    pool = ThreadPoolExecutor(max_workers=jobs)
    pending: dict[Future[dict[str, Any]], Submission] = {}
    finished = False
    try:
        while backlog or pending:
            while backlog and len(pending) < jobs:
                sub = backlog.pop(0)
                pending[pool.submit(_grade_one, sub, out, workers, job, run.timeout)] = sub
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                sub = pending.pop(future)
                try:
                    status = future.result()
                except Exception as exc:  # its folder could not even be written: its row says pending
                    status = {"status": "error", "reason": shown(f"internal error: {type(exc).__name__}: {exc}")}
                if progress:
                    _tell(progress, "advance", sub.name, status)
            rows = refresh()
        finished = True
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)
        while not workers.empty():
            workers.get().stop()
        rows = _finish(subs, out, run, progress, refresh, record if finished else None)
    return rows


def _on_engine(backlog, subs, out, job, run, progress, refresh, record) -> list[dict]:
    """The backlog through ``run.engine``; the gradebook refreshed as each hand-in ends, and
    written (with the LMS files and the class report) once at the end, as the local path does."""
    finished = False
    due = throttled(refresh)

    def done(sub: Submission, status: dict) -> None:
        if progress:
            _tell(progress, "advance", sub.name, status)
        due()

    try:
        run.engine.grade(backlog, out, job, run.timeout, done)
        finished = True
    finally:
        rows = _finish(subs, out, run, progress, refresh, record if finished else None)
    return rows


def throttled(refresh: Callable[[], object]) -> Callable[[], None]:
    """``refresh`` when due: a second after the last, or 50 times as long as the last took.
    Each refresh stats every row's files: after every task of a class of 10,000 that is ~2e8
    stats, and on a LocalCluster the scheduler shares this process's interpreter, so a refresh
    is time the scheduler waits (the simulated class: 5.6 % overhead at once a second, 4.5 % so).
    status.json is the record; the gradebook is rewritten whole at the end."""
    next_at = [0.0]

    def due() -> None:
        if time.monotonic() >= next_at[0]:
            started = time.monotonic()
            refresh()
            next_at[0] = time.monotonic() + max(1.0, 50 * (time.monotonic() - started))

    return due


def _finish(subs, out, run, progress, refresh, record) -> list[dict]:
    """The gradebook once more, then the LMS files (``record``), then the class report: a
    shard draws no report (``seqlab gradebook`` merges the shards and draws it once)."""
    rows = refresh()
    failed: Exception | None = None
    if record is not None:
        try:
            record(rows)
        except Exception as exc:  # said after the reports are drawn: they do not depend on it
            failed = exc
    if run.shard is None:
        folders = {s.name: s.path for s in subs}
        draw_reports(rows, folders, out, run.similarity, {s.name: out for s in subs}, write_class_report)
    if progress:
        _tell(progress, "stop")
    if failed is not None:
        raise failed
    return rows


def _tell(progress, event: str, *args, **kwargs) -> None:
    """One progress event; a progress display that fails (or has no such event) costs the log a
    line, never a grade."""
    call = getattr(progress, event, None)
    if call is None:
        return
    try:
        call(*args, **kwargs)
    except Exception as exc:
        print(
            f"grade-all: the progress display failed ({type(exc).__name__}: {shown(str(exc))[:200]})", file=sys.stderr
        )
