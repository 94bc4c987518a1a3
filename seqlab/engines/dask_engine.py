"""grade-all on Dask distributed (``--engine dask``): one task per hand-in, on a LocalCluster of
``--jobs`` worker processes or on an existing cluster (``--scheduler ADDRESS``: a
``dask scheduler``, a dask-jobqueue SLURMCluster, a Kubernetes deployment; docs/cluster.md).

A task runs grade-all's own per-student path (``seqlab.batch._grade_one``) in the worker, with
a grading process of its own kept per worker thread (``seqlab.engines.process``): the same
sandbox, the same status.json and results folder, the same grade as on one machine. Workers
need the course checkout, the locked environment and the output folder (a shared disk on a
cluster). The parent refreshes gradebook.csv as each task ends and writes the LMS files and the
class report once, after the last (``seqlab.batch``).

A lost worker costs only its task: Dask runs it again elsewhere. Each task carries the run's
token; a task that finds its hand-in's status.json already written with that token (its first
try finished, then its worker died before the answer reached the scheduler) returns that status
and grades nothing, so a hand-in is graded once per run. A rerun regrades only what is missing
or changed (status.json's source and digest), as grade-all does without an engine.

``resources``: what each task needs of its worker, e.g. ``{"GPU": 1}`` under ``--device cuda``,
so that those tasks go only to workers started with ``--resources GPU=1``.
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..batch import Submission, _grade_one, _write_failure
from ..errors import SeqlabError
from ..gradebook import STATUS_FILE, write_text_atomic
from ..submission.handins import shown
from .process import _Worker


class EngineError(SeqlabError):
    """The engine could not start: no such scheduler, Dask not installed."""


# Tasks sent to the scheduler per message, each batch a priority lower than the one before: a
# message per task, each carrying the settings, was part of the 12 ms a task the parent spent on
# the first simulated class of 10,000 (bench_distributed.py); batches of 100 keep grade-all's
# longest-first order to within 100 hand-ins.
CHUNK = 100

# One grading process per worker thread, kept across that worker's tasks (torch, pytest and the
# graders imported once per worker, as grade-all's own --jobs workers do).
_LOCAL = threading.local()


def _pool() -> queue.Queue[_Worker]:
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = queue.Queue()
        pool.put(_Worker())
    return pool


def grade_task(sub: Submission, out: str, job: dict, timeout: float) -> dict:
    """One hand-in, in a Dask worker: its status (the one already recorded when an earlier try
    of this task in this run finished it)."""
    from distributed import get_worker

    try:
        earlier = json.loads((Path(out) / sub.name / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        earlier = None
    if isinstance(earlier, dict) and earlier.get("run") == job["run"]:
        return {**earlier, "worker": get_worker().address, "retried": True}
    status = _grade_one(sub, Path(out), _pool(), job, timeout)
    return {**status, "worker": get_worker().address}


class DaskEngine:
    """Dask as grade-all's engine: ``workers`` local worker processes (one thread each) when no
    ``scheduler`` address is given. ``ran``: name -> the worker that graded it (tests, logs)."""

    def __init__(
        self, workers: int = 1, scheduler: str | None = None, resources: dict | None = None, task: Callable = grade_task
    ) -> None:
        self.workers, self.scheduler, self.resources = workers, scheduler, resources or None
        self.task = task  # grade_task; benchmarks/bench_distributed.py passes a stand-in of its cost
        self.ran: dict[str, str] = {}

    def _client(self) -> tuple[Any, Any]:
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise EngineError("--engine dask needs dask[distributed] (make setup installs it)") from None
        if self.scheduler is not None:
            try:
                return Client(self.scheduler, timeout="30s"), None
            except (OSError, TimeoutError) as exc:
                raise EngineError(f"--scheduler {self.scheduler}: cannot reach it ({exc})") from None
        cluster = LocalCluster(
            n_workers=self.workers,
            threads_per_worker=1,  # one hand-in at a time per worker process, as --jobs has it
            processes=True,
            dashboard_address=None,  # nothing listening that the class did not ask for
            resources=self.resources,
        )
        return Client(cluster), cluster

    def grade(self, backlog: list[Submission], out: Path, job: dict, timeout: float, done: Callable) -> None:
        """Every hand-in of ``backlog`` as a task (the first given the highest priority: grade-all
        orders the backlog longest first); ``done(sub, status)`` as each ends."""
        from distributed import as_completed

        client, cluster = self._client()
        job = {**job, "run": uuid.uuid4().hex}
        try:
            # the settings (the whole config) sent to each worker once, not pickled into every task
            shared = client.scatter(job, broadcast=True, hash=False)
            futures: dict[Any, Submission] = {}
            for start in range(0, len(backlog), CHUNK):
                chunk = backlog[start : start + CHUNK]
                mapped = client.map(
                    self.task,
                    chunk,
                    [str(out)] * len(chunk),
                    [shared] * len(chunk),
                    [timeout] * len(chunk),
                    key=[f"grade-{sub.name}-{job['run']}" for sub in chunk],
                    priority=len(backlog) - start,
                    resources=self.resources,
                    pure=False,
                )
                futures.update(zip(mapped, chunk, strict=True))
            for future in as_completed(futures):
                sub = futures[future]
                try:
                    status = future.result()
                except Exception as exc:  # lost on every worker it was given (Dask's KilledWorker)
                    status = _lost(sub, out, job, f"{type(exc).__name__}: {exc}")
                self.ran[sub.name] = status.pop("worker", "")
                done(sub, status)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _lost(sub: Submission, out: Path, job: dict, why: str) -> dict:
    """A task Dask gave up on: its row says why, with the full points it could have had; no
    digest is recorded, so a rerun grades it again."""
    status = {"status": "error", "reason": shown(f"the engine lost it: {why}")[:500], "name": sub.name}
    status["source"] = str(sub.source)
    folder = out / sub.name
    folder.mkdir(parents=True, exist_ok=True)
    _write_failure(folder, status, job["max_score"], time.perf_counter())
    write_text_atomic(folder / STATUS_FILE, json.dumps(status, indent=2))
    return status
