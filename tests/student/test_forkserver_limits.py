"""The fork server's resource limits, and what a broken server or child may cost.

Every child the server forks inherits the server's limits: one a child lowered (an address
space below what the next child sets for itself) would make every later child of that worker
fail. A forked child's own filter refuses prlimit64 on any process but itself, and the server
compares its limits with its first ones before every fork. Whatever still breaks a server or a
child before it loads anything costs that submission at most: its results.json is written, and
the next submission is graded by a fresh server.
"""

from __future__ import annotations

import json
import os
import resource
import signal
from pathlib import Path

import jsonschema
import pytest

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from seqlab.reports import write_all
from seqlab.student import children
from seqlab.student.forkserver.client import ForkedProcess, ForkServer
from seqlab.student.sandbox import resolve as resolve_sandbox
from seqlab.student.spawn import DirectProcess
from tests._helpers import RESULTS_SCHEMA
from tests.attacks import ATTACKS, build
from tests.mutants import make_submission
from tests.student.test_forkserver import probing, run_probe

SYS_PRLIMIT64 = 302  # x86_64


def test_a_forked_childs_filter_refuses_other_processes_limits():
    """The second filter of a forked child, loaded into a process forked from this one: its own
    limits (pid 0 or its pid) it may read and change, its parent's or pid 1's not, nor through a
    pid with high bits set that the kernel would read as its parent's."""
    pytest.importorskip("pyseccomp")
    if os.uname().machine != "x86_64":
        pytest.skip("the raw syscall number below is x86_64's")
    import ctypes

    from seqlab.student.forkserver.server import load_filter, reach_only_self

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the forked process reports through the pipe)
        found = {}
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: what bwrap sets for the real child
            load_filter(libc, reach_only_self(os.getpid()))
            nofile = resource.getrlimit(resource.RLIMIT_NOFILE)

            def attempt(name, fn):
                try:
                    fn()
                    found[name] = "ok"
                except OSError as exc:
                    found[name] = exc.errno

            attempt("parent", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, nofile))
            attempt("parent-read", lambda: resource.prlimit(os.getppid(), resource.RLIMIT_AS))
            attempt("init", lambda: resource.prlimit(1, resource.RLIMIT_NOFILE))
            attempt("self-by-0", lambda: resource.prlimit(0, resource.RLIMIT_NOFILE, nofile))
            attempt("self-by-pid", lambda: resource.prlimit(os.getpid(), resource.RLIMIT_NOFILE, nofile))
            attempt("setrlimit", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile))
            libc.syscall.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
            old = (ctypes.c_uint64 * 2)()
            done = libc.syscall(SYS_PRLIMIT64, (1 << 32) | os.getppid(), resource.RLIMIT_AS, None, old)
            found["high-bits"] = "ok" if done == 0 else ctypes.get_errno()
        except BaseException as exc:
            found["error"] = repr(exc)
        os.write(write, json.dumps(found).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as source:
        found = json.loads(source.read())
    os.waitpid(pid, 0)
    EPERM = 1
    assert found == {
        "parent": EPERM,
        "parent-read": EPERM,
        "init": EPERM,
        "self-by-0": "ok",
        "self-by-pid": "ok",
        "setrlimit": "ok",
        "high-bits": EPERM,
    }, found


@pytest.fixture
def box(sandbox_mode):
    return resolve_sandbox(sandbox_mode)


def _server_process(server) -> int:
    """The pid, in this process's namespace, of the Python that serves (bwrap stands between)."""
    pid = server.proc.pid
    for _ in range(4):
        if not Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].endswith(b"bwrap"):
            return pid
        kids = [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        pid = kids[0]
    raise AssertionError("no Python under the server's bwrap")


def _break(server) -> None:
    """What a route past the filter could do: the server's address space capped below the limit
    each child sets for itself, so each one it forks fails before it loads anything."""
    cap = (int(load_config().limits.memory_mb) - 1) << 20
    resource.prlimit(_server_process(server), resource.RLIMIT_AS, (cap, cap))


@pytest.mark.slow
def test_a_changed_limit_retires_the_server(tmp_path, box):
    submission = probing(tmp_path, "s", "found['pid'] = os.getpid()")
    _, handle = run_probe(submission, box)
    assert isinstance(handle, ForkedProcess)
    server = children.server_for(box)
    _break(server)
    _, handle = run_probe(submission, box)  # started alone: the server saw its limit and retired
    assert isinstance(handle, DirectProcess)
    _, handle = run_probe(submission, box)
    assert isinstance(handle, ForkedProcess), "a fresh server takes over"
    assert children.server_for(box).proc.pid != server.proc.pid


def _graded(submission, out: Path, **options):
    result = grade_submission(submission, grading_settings(isolated=True, seed=5, only="optimizers", **options))
    paths = write_all(result, out)
    jsonschema.validate(json.loads(paths["results.json"].read_text()), RESULTS_SCHEMA)
    return result


@pytest.mark.slow
def test_after_a_hostile_submission_breaks_the_server_the_next_scores_full_marks(tmp_path, box, fast_config):
    attack = next(a for a in ATTACKS if a.name == "prlimit-lowers-the-fork-servers-limits")
    honest = make_submission(tmp_path / "honest")
    full = _graded(honest, tmp_path / "before", config=fast_config, sandbox=box.kind)
    assert full.score == full.max_score
    hostile = _graded(
        build(attack, tmp_path), tmp_path / "hostile", config=fast_config, sandbox=box.kind, static_policy=False
    )
    assert hostile.score < hostile.max_score
    server = children.server_for(box)
    if server is not None and server.ready:
        _break(server)  # past its filter, which the attack alone does not get
    after = _graded(honest, tmp_path / "after", config=fast_config, sandbox=box.kind)
    assert (after.score, after.errors) == (full.score, full.errors), after.errors


@pytest.mark.slow
def test_a_forked_child_dead_before_loading_costs_nothing_and_retires_its_server(tmp_path, box, monkeypatch):
    """A forked child killed before it read its submission (as a broken server's children die):
    the load is tried again with a fresh server, and the grade is the grade."""
    honest = make_submission(tmp_path / "honest")
    assert _graded(honest, tmp_path / "warm", sandbox=box.kind).score > 0  # the server is up
    first_server = children.server_for(box)
    real_fork = ForkServer.fork
    killed = []

    def fork_and_kill_the_first(self, exercises):
        child = real_fork(self, exercises)
        if child is not None and not killed:
            killed.append(child.handle.pid)
            self._ask({"op": "kill", "pid": child.handle.pid})
        return child

    monkeypatch.setattr(ForkServer, "fork", fork_and_kill_the_first)
    result = _graded(honest, tmp_path / "out", sandbox=box.kind)
    assert killed and result.score == result.max_score, result.errors
    assert children.server_for(box) is not first_server


@pytest.mark.slow
def test_no_child_ever_loading_still_writes_a_result(tmp_path, box, monkeypatch):
    """Every child dead on arrival: each test says why, and a results.json is written."""
    real_take = children.take

    def dead_on_arrival(exercises=None, sandbox=None):
        child = real_take(exercises, sandbox)
        if isinstance(child.handle, ForkedProcess):
            child.handle.server._ask({"op": "kill", "pid": child.handle.pid})
        else:
            os.killpg(child.handle.proc.pid, signal.SIGKILL)
        return child

    monkeypatch.setattr("seqlab.student.isolated.take", dead_on_arrival)
    result = _graded(make_submission(tmp_path / "s"), tmp_path / "out", sandbox=box.kind)
    assert result.score == 0
    assert any("before loading anything" in e for e in result.errors), result.errors
