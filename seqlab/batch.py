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
``.DS_Store``) is skipped and said so, and two hand-ins that would share a name stop the run.
"""

from __future__ import annotations

import json
import queue
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from .defaults import SUBMISSION_TIMEOUT_S
from .errors import SeqlabError, UserError
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
from .submission import SubmissionError, is_submission, read_submission

# What grade-all writes into its output folder beside the submissions' own folders (and their
# ``.tmp`` twins while written); a submission named like one is renamed, so that neither is lost.
OWN_NAMES = ("gradebook", "class_report", "similarity")
WORK_DIR = "_submissions"  # the copies read from the hand-ins; no safe name starts with "_"


@dataclass
class Submission:
    name: str
    source: Path  # the folder or zip as handed in
    path: Path | None  # the copy holding exercises/ (None when it could not be read)
    problem: str = ""


def safe_submission_name(name: str) -> str:
    """A hand-in's name as a results folder and gradebook key: letters, digits and ``._-`` only,
    never hidden, never one of the files grade-all writes beside the results folders."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"
    return f"student-{safe}" if safe.casefold().startswith(OWN_NAMES) else safe


def _entry_name(entry: Path) -> str:
    is_zip = entry.suffix.lower() == ".zip" and not entry.is_dir() and not entry.is_symlink()
    return safe_submission_name(entry.stem if is_zip else entry.name)


def hand_ins(submissions_dir: Path) -> tuple[dict[str, Path], list[tuple[str, str]]]:
    """``({name: hand-in}, [(entry, why skipped)])`` of a class folder. Two hand-ins whose names
    are one after making them safe (``alice/`` and ``alice.zip``; ``Bob`` and ``bob``, one folder
    on a case-insensitive disk) stop the run: which of them would be graded is not ours to pick."""
    named: dict[str, list[Path]] = {}
    skipped = []
    for entry in sorted(Path(submissions_dir).iterdir()):
        if is_submission(entry):
            named.setdefault(_entry_name(entry).casefold(), []).append(entry)
        else:
            skipped.append((entry.name, "hidden" if entry.name.startswith(".") else "not a folder or a .zip"))
    clashes = [entries for entries in named.values() if len(entries) > 1]
    if clashes:
        raise UserError(
            "; ".join(
                f"{' and '.join(e.name for e in entries)} would both be graded as {_entry_name(entries[0])!r}"
                for entries in clashes
            )
            + f" (in {submissions_dir}): rename all but one"
        )
    return {_entry_name(entries[0]): entries[0] for entries in named.values()}, skipped


def discover(named: dict[str, Path], work_dir: Path) -> list[Submission]:
    """Every hand-in of :func:`hand_ins` read into ``work_dir/_submissions/<name>``
    (seqlab.submission: the same shapes and messages as ``seqlab grade``)."""
    found = []
    for name, entry in named.items():
        try:
            copy = read_submission(entry, Path(work_dir) / WORK_DIR / name).folder
            found.append(Submission(name, entry, copy))
        except SubmissionError as exc:
            found.append(Submission(name, entry, None, str(exc)))
    return found


class _Worker:
    """A grading process that lives across submissions: it imports torch, pytest and the graders
    once. It runs only trusted code (each submission still gets its own fresh student child);
    if it dies or hangs, it is replaced and only the submission in hand is affected.

    Jobs and answers are pickled frames on a socket pair (multiprocessing.connection): both
    ends are seqlab's own, so a job carries its GradingSettings as they are, and nothing the
    worker prints can be mistaken for an answer."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.channel: Connection | None = None

    def _start(self) -> None:
        ours, theirs = socket.socketpair()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"from seqlab.batch import worker_main; worker_main({theirs.fileno()})"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=[theirs.fileno()],
        )
        theirs.close()
        self.channel = Connection(ours.detach())

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
        if self.channel is not None:
            self.channel.close()
            self.channel = None

    def grade(self, job: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self.stop()
            self._start()
        assert self.proc is not None and self.channel is not None  # _start made both
        try:
            self.channel.send(job)
        except OSError:
            self.stop()
            return {"status": "error", "reason": "the grading process could not be reached"}
        try:
            if not self.channel.poll(timeout):
                self.stop()
                return {"status": "error", "reason": f"grading took longer than {timeout:g} s"}
            return self.channel.recv()
        except (EOFError, OSError):
            code = self.proc.wait()
            self.stop()
            if code in (130, -2):  # interrupted (Ctrl-C): not done, a rerun grades it
                return {"status": "interrupted"}
            return {"status": "error", "reason": f"the grading process died (exit {code})"}


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
            write_all(result, Path(job["out"]))
            status = {"status": "graded"}
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
    target.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    try:
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
    status.update(name=sub.name, source=str(sub.source), seconds=round(time.perf_counter() - started, 2))
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
    status_path = out / sub.name / STATUS_FILE
    if not status_path.is_file():
        return False
    try:
        return json.loads(status_path.read_text()).get("source") == str(sub.source)
    except ValueError:
        return False


def _unwritten(sub: Submission) -> int:
    """How many stubs a hand-in left as they were (a stub raises NotImplementedError; its source
    is read as text, never run): a scheduling guess, nothing more. A stub grades in an instant and
    a lab left as one trains nothing, so a hand-in with many of them is short work. ``sub.path``
    is seqlab's own copy (seqlab.submission: regular files only, size-capped)."""
    if sub.path is None:
        return 1 << 30  # not readable: written off at once
    count = 0
    for source in (sub.path / "exercises").glob("*.py"):
        try:
            count += source.read_text(errors="replace").count("NotImplementedError")
        except OSError:
            pass
    return count


def _similarity(subs: list[Submission]) -> dict:
    from .similarity import compare_class

    return compare_class({s.name: s.path for s in subs})


@dataclass(frozen=True)
class ClassRun:
    """How a class is run, beside how each hand-in is graded: ``jobs`` submissions at once,
    ``force`` regrades those already graded, ``timeout`` seconds per submission, ``similarity``
    adds the per-function similarity of the class to its report."""

    jobs: int = 1
    force: bool = False
    timeout: float = SUBMISSION_TIMEOUT_S
    similarity: bool = False


def grade_all(
    submissions_dir: Path, out: Path, settings: GradingSettings, run: ClassRun = ClassRun(), progress=None
) -> list[dict]:
    """Every hand-in of ``submissions_dir`` graded under ``settings`` (a GradingSettings; every
    worker grades under it as it is) into ``out``. ``progress.skip(entry, why)`` hears of each
    entry that is no hand-in."""
    submissions_dir, out = Path(submissions_dir), Path(out)
    if not submissions_dir.exists():
        raise SubmissionError(f"{submissions_dir}: does not exist")
    if not submissions_dir.is_dir() or submissions_dir.is_symlink():
        raise SubmissionError(f"{submissions_dir}: not a folder (grade-all takes a folder of submissions)")
    max_score = settings.max_score
    named, skipped = hand_ins(submissions_dir)  # a clash stops the run before anything is written
    out.mkdir(parents=True, exist_ok=True)
    subs = discover(named, out)
    todo = [s for s in subs if run.force or not _is_done(out, s)]
    if progress:
        for entry, why in skipped:
            if hasattr(progress, "skip"):
                progress.skip(entry, why)
        progress.start(total=len(subs), already=len(subs) - len(todo))

    read: dict = {}  # rows already read, reused while their files are unchanged

    def refresh():
        rows = collect(out, [s.name for s in subs], {s.name: s.problem for s in subs if s.path is None}, read)
        write_gradebook(out, rows)
        return rows

    rows = refresh()
    job = {"settings": settings, "max_score": max_score}
    jobs = max(1, min(run.jobs, len(todo) or 1))
    workers: queue.Queue[_Worker] = queue.Queue()
    for _ in range(jobs):
        workers.put(_Worker())
    pool = ThreadPoolExecutor(max_workers=jobs)
    pending: dict[Future[dict[str, Any]], Submission] = {}
    try:
        # Longest first: the class's last minutes are one worker finishing while the others wait,
        # and that wait is shortest when the work left at the end is the quick work.
        backlog = sorted(todo, key=_unwritten)
        while backlog or pending:
            while backlog and len(pending) < jobs:
                sub = backlog.pop(0)
                pending[pool.submit(_grade_one, sub, out, workers, job, run.timeout)] = sub
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                sub = pending.pop(future)
                status = future.result()
                if progress:
                    progress.advance(sub.name, status)
            rows = refresh()
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)
        while not workers.empty():
            workers.get().stop()
        rows = refresh()
        # Source text only, parsed in this trusted process and never run: see seqlab/similarity.py.
        similar = _similarity(subs) if run.similarity else None
        link_reports(rows, out, out)
        write_class_report(out, rows, similar)
        if progress:
            progress.stop()
    return rows
