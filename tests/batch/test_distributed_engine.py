"""grade-all on Dask distributed (``--engine dask``): the gradebook of ``--jobs 2``; a worker
really killed mid-run loses no finished grade and grades nothing twice; tasks that need a GPU go
only to the workers that declare one. Real Dask clusters on this machine (LocalCluster and
SpecCluster), nothing mocked."""

from __future__ import annotations

import csv
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from seqlab.batch import ClassRun, grade_all
from seqlab.engines.dask_engine import DaskEngine
from tests.batch._faults import ONLY
from tests.batch.test_distributed_shards import seqlab, write_small_class
from tests.mutants import make_submission


def _settings():
    from seqlab.grading import grading_settings
    from seqlab.student.sandbox import Sandbox

    return grading_settings(seed=7, only=ONLY, labs=False, sandbox=Sandbox("none", "a test of the Dask engine"))


def _statuses(out: Path) -> dict[str, dict]:
    found = {}
    for path in out.glob("*/status.json"):
        try:
            found[path.parent.name] = {**json.loads(path.read_text()), "stamp": path.stat().st_ino}
        except ValueError:  # written by rename: never half a file, but say so if it were
            found[path.parent.name] = {"status": "unreadable"}
    return found


@pytest.mark.bank
@pytest.mark.slow
def test_the_dask_engine_on_two_workers_gives_the_gradebook_of_jobs_2(tmp_path):
    """The command as an instructor runs it, both ways, same seed: gradebook.csv and the LMS
    files byte for byte; a rerun on the engine grades nothing again."""
    klass = tmp_path / "class"
    write_small_class(klass)
    grade = ("--seed", 5, "--only", ONLY, "--no-labs", "--sandbox", "none", "--jobs", 2)
    local, dask = tmp_path / "local", tmp_path / "dask"
    assert seqlab("grade-all", klass, "--out", local, *grade).returncode == 1  # fay: no hand-in
    ran = seqlab("grade-all", klass, "--out", dask, *grade, "--engine", "dask")
    assert ran.returncode == 1, ran.stderr[-3000:]
    assert (dask / "gradebook.csv").read_bytes() == (local / "gradebook.csv").read_bytes()
    for lms in sorted((local / "lms").iterdir()):
        assert (dask / "lms" / lms.name).read_bytes() == lms.read_bytes(), lms.name
    before = _statuses(dask)
    again = seqlab("grade-all", klass, "--out", dask, *grade, "--engine", "dask")
    assert "6 of 6 already graded" in again.stdout, again.stdout[-2000:]
    assert _statuses(dask) == before  # resumable: nothing rewritten


@pytest.mark.bank
@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_no_grade_and_grades_nothing_twice(tmp_path):
    """Two worker processes under nannies; once the first grades are recorded and a worker is
    busy with another, that worker's process gets SIGKILL. Dask runs its task again elsewhere;
    the run ends with every hand-in graded once: the grades recorded before the kill are the
    same files after it (not regraded), and the gradebook has one row per hand-in."""
    from distributed import Client, LocalCluster

    klass, out = tmp_path / "class", tmp_path / "out"
    for index in range(8):
        make_submission(klass / f"s{index}")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        engine = DaskEngine(scheduler=cluster.scheduler_address)
        result: dict = {}
        thread = threading.Thread(
            target=lambda: result.update(rows=grade_all(klass, out, _settings(), ClassRun(engine=engine)))
        )
        thread.start()
        with Client(cluster) as client:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:  # the first grade recorded, and a task in hand
                busy = [w for w, keys in client.processing().items() if keys]
                if busy and any(s.get("status") == "graded" for s in _statuses(out).values()):
                    break
                time.sleep(0.2)
            else:
                pytest.fail("no grade was recorded in 300 s")
            before = {n: s for n, s in _statuses(out).items() if s.get("status") == "graded"}
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            thread.join(timeout=600)
        assert not thread.is_alive()
        with pytest.raises(ProcessLookupError):  # really gone (its nanny reaped it), not paused
            os.kill(pid, 0)
    rows = result["rows"]
    assert sorted(r["submission"] for r in rows) == [f"s{i}" for i in range(8)]
    assert all(r["status"] == "graded" and r["result"].percent == 100.0 for r in rows), rows
    after = _statuses(out)
    assert before and all(after[name] == status for name, status in before.items())  # kept, not regraded
    assert len({s["run"] for s in after.values()}) == 1  # all of this one run
    with (out / "gradebook.csv").open(newline="") as handle:
        names = [row["submission"] for row in csv.DictReader(handle)]
    assert sorted(names) == [f"s{i}" for i in range(8)]  # one row each


@pytest.mark.bank
@pytest.mark.slow
def test_tasks_that_need_a_gpu_go_only_to_the_workers_that_declare_one(tmp_path):
    """A cluster of one plain worker and one started as ``--resources GPU=1`` would be: every task
    marked to need a GPU runs on the second (no GPU is needed to test the routing; the grading
    itself runs on the CPU here)."""
    from distributed import Nanny, Scheduler, SpecCluster

    klass, out = tmp_path / "class", tmp_path / "out"
    for index in range(4):
        make_submission(klass / f"s{index}")
    workers = {
        "cpu": {"cls": Nanny, "options": {"nthreads": 1}},
        "gpu": {"cls": Nanny, "options": {"nthreads": 1, "resources": {"GPU": 1}}},
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None}}
    with SpecCluster(workers=workers, scheduler=scheduler) as cluster:
        cluster.wait_for_workers(2)
        gpu = next(w.worker_address for name, w in cluster.workers.items() if name == "gpu")
        engine = DaskEngine(scheduler=cluster.scheduler_address, resources={"GPU": 1})
        rows = grade_all(klass, out, _settings(), ClassRun(engine=engine))
    assert all(r["status"] == "graded" for r in rows) and len(rows) == 4
    assert set(engine.ran) == {f"s{i}" for i in range(4)} and set(engine.ran.values()) == {gpu}
