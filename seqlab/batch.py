"""Grade a whole class: ``seqlab grade-all SUBMISSIONS_DIR --out DIR --jobs N``.

N grading processes (``--jobs N``) each take submissions (a folder, or a zip of one) in turn;
each submission's code runs in its own fresh, isolated child, and a grading process that dies
or hangs is replaced, so one submission takes nothing else down.
Results land in ``DIR/<name>/``; ``gradebook.csv`` and the class report (``seqlab.gradebook``)
are rebuilt from every finished result after each submission, so an interrupted run leaves a consistent
gradebook and a rerun picks up where it stopped (``--force`` regrades everything).
No submission is ever lost: one that could not be graded still gets a row with the reason.
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import shutil
import subprocess
import sys
import time
import zipfile
from collections import Counter
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from .defaults import SUBMISSION_TIMEOUT_S
from .gradebook import (
    RESULT_FILE,
    STATUS_FILE,
    collect,
    gradebook_from_results,  # noqa: F401 - callers have found it here
    write_class_report,
    write_gradebook,
    write_text_atomic,
)

MAX_UNZIPPED_BYTES = 200 << 20


@dataclass
class Submission:
    name: str
    source: Path  # the folder or zip as handed in
    path: Path | None  # the folder holding exercises/ (None when it could not be found)
    problem: str = ""


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "submission"


def _find_exercises_root(folder: Path) -> Path | None:
    if (folder / "exercises").is_dir():
        return folder
    for candidate in sorted(folder.glob("*/exercises")) + sorted(folder.glob("*/*/exercises")):
        if candidate.is_dir():
            return candidate.parent
    return None


def _unzip(source: Path, target: Path) -> str:
    """Extract safely (no absolute paths, no '..', bounded size); returns a problem or ''."""
    try:
        with zipfile.ZipFile(source) as archive:
            total = 0
            for info in archive.infolist():
                parts = Path(info.filename).parts
                if info.filename.startswith("/") or ".." in parts:
                    return f"{source.name}: unsafe path in zip ({info.filename!r})"
                total += info.file_size
                if total > MAX_UNZIPPED_BYTES:
                    return f"{source.name}: unzips to more than {MAX_UNZIPPED_BYTES >> 20} MB"
            shutil.rmtree(target, ignore_errors=True)
            archive.extractall(target)
    except (zipfile.BadZipFile, OSError) as exc:
        return f"{source.name}: not a readable zip ({exc})"
    return ""


def discover(submissions_dir: Path, work_dir: Path) -> list[Submission]:
    found = []
    for entry in sorted(Path(submissions_dir).iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            name = _safe_name(entry.name)
            root = _find_exercises_root(entry)
            found.append(Submission(name, entry, root, "" if root else "no exercises/ folder in it"))
        elif entry.suffix.lower() == ".zip":
            name = _safe_name(entry.stem)
            target = work_dir / "_unzipped" / name
            problem = _unzip(entry, target)
            root = None if problem else _find_exercises_root(target)
            found.append(Submission(name, entry, root, problem or ("" if root else "no exercises/ folder in the zip")))
        else:
            found.append(Submission(_safe_name(entry.name), entry, None, "not a folder or a .zip"))
    names = Counter(s.name for s in found)
    for s in found:  # two entries with one safe name must not share a results folder
        if names[s.name] > 1:
            s.name = f"{s.name}-{_safe_name(s.source.suffix or 'dir')}"
    return found


class _Worker:
    """A grading process that lives across submissions: it imports torch, pytest and the graders
    once. It runs only trusted code (each submission still gets its own fresh student child);
    if it dies or hangs, it is replaced and only the submission in hand is affected."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None

    def _start(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from seqlab.batch import worker_main; worker_main()"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def grade(self, job: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            self.stop()
            return {"status": "error", "reason": "the grading process could not be reached"}
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.stop()
            return {"status": "error", "reason": f"grading took longer than {timeout:g} s"}
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            self.proc = None
            if code in (130, -2):  # interrupted (Ctrl-C): not done, a rerun grades it
                return {"status": "interrupted"}
            return {"status": "error", "reason": f"the grading process died (exit {code})"}
        return json.loads(line)


def worker_main() -> None:
    """Grade the jobs read from stdin, one JSON line each; answer one JSON line each."""
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # nothing printed can corrupt the protocol
    sys.stdout = sys.stderr
    from .config import ConfigError, load_config
    from .grading import grade_submission
    from .grading.run import GradingError
    from .reports import write_all

    configs: dict = {}
    for line in sys.stdin:
        job = json.loads(line)
        try:
            config = configs.get(job["config"]) or configs.setdefault(job["config"], load_config(job["config"]))
            result = grade_submission(
                job["submission"],
                device=job["device"],
                seed=job["seed"],
                isolated=not job["in_process"],
                config=config,
                only=job.get("only"),
                protected_dirs=(job["out"], *job.get("protected", ())),
                sandbox=job.get("sandbox", "auto"),
            )
            write_all(result, Path(job["out"]))
            status = {"status": "graded"}
        except (GradingError, ConfigError) as exc:
            status = {"status": "error", "reason": str(exc)[:500]}
        except Exception as exc:  # a grader bug must cost this submission only, with the reason
            status = {"status": "error", "reason": f"internal error: {type(exc).__name__}: {exc}"[:500]}
        protocol.write(json.dumps(status) + "\n")


def _grade_one(sub: Submission, out: Path, workers: queue.Queue[_Worker], settings: dict, timeout: float) -> dict:
    """One submission through a worker; ``settings``: the grading options every job of the run
    shares (the worker protocol's keys besides ``submission`` and ``out``)."""
    target = out / sub.name
    target.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    if sub.path is None:
        status = {"status": "error", "reason": sub.problem}
    else:
        worker = workers.get()
        try:
            status = worker.grade({"submission": str(sub.path), "out": str(target), **settings}, timeout)
        finally:
            workers.put(worker)
        if status["status"] == "interrupted":
            return {**status, "name": sub.name}
        if status["status"] == "graded" and not (target / RESULT_FILE).is_file():
            status = {"status": "error", "reason": "the grader wrote no result"}
    status.update(name=sub.name, source=str(sub.source), seconds=round(time.perf_counter() - started, 2))
    write_text_atomic(target / STATUS_FILE, json.dumps(status, indent=2))
    return status


def _is_done(out: Path, sub: Submission) -> bool:
    status_path = out / sub.name / STATUS_FILE
    if not status_path.is_file():
        return False
    try:
        return json.loads(status_path.read_text()).get("source") == str(sub.source)
    except ValueError:
        return False


def _similarity(subs: list[Submission]) -> dict:
    from .similarity import compare_class

    return compare_class({s.name: s.path for s in subs})


safe_submission_name = _safe_name  # public: the CI matrix names results folders by the same rule


def grade_all(
    submissions_dir: Path,
    out: Path,
    *,
    jobs: int = 1,
    force: bool = False,
    seed: int | None = None,
    device: str = "cpu",
    timeout: float = SUBMISSION_TIMEOUT_S,
    in_process: bool = False,
    config: str | None = None,
    progress=None,
    similarity: bool = False,
    sandbox: str = "auto",
    only: str | None = None,
    protected_dirs: tuple = (),
) -> list[dict]:
    """``only``: grade these topics/functions (as `seqlab grade --only`); ``protected_dirs``: folders
    the students' code may not read, besides the graders, solutions and ``out``."""
    submissions_dir, out = Path(submissions_dir), Path(out)
    if not submissions_dir.is_dir():
        raise FileNotFoundError(f"{submissions_dir}: not a directory")
    out.mkdir(parents=True, exist_ok=True)
    subs = discover(submissions_dir, out)
    todo = [s for s in subs if force or not _is_done(out, s)]
    if progress:
        progress.start(total=len(subs), already=len(subs) - len(todo))

    def refresh():
        rows = collect(out, [s.name for s in subs], {s.name: s.problem for s in subs if s.path is None})
        write_gradebook(out, rows)
        return rows

    rows = refresh()
    settings = {
        "seed": seed,
        "device": device,
        "in_process": in_process,
        "config": config,
        "sandbox": sandbox,
        "only": only,
        "protected": [str(p) for p in protected_dirs],
    }
    jobs = max(1, min(jobs, len(todo) or 1))
    workers: queue.Queue[_Worker] = queue.Queue()
    for _ in range(jobs):
        workers.put(_Worker())
    pool = ThreadPoolExecutor(max_workers=jobs)
    pending = {}
    try:
        backlog = list(todo)
        while backlog or pending:
            while backlog and len(pending) < jobs:
                sub = backlog.pop(0)
                pending[pool.submit(_grade_one, sub, out, workers, settings, timeout)] = sub
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
        similar = _similarity(subs) if similarity else None
        write_class_report(out, rows, similar)
        if progress:
            progress.stop()
    return rows
