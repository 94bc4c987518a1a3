"""The fork server (seqlab/student/forkserver/): a forked child is a child started alone.

Each probe is a student's ``optimizers.sgd`` that looks at its surroundings and returns what it
found in its state dict; it runs in a real forked child, in the real sandbox, with the real
guards. What a forked child must never reach is the server (its signals, memory, descriptors)
and what an earlier child left behind; what it must always get is the grade it would get alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import torch

from seqlab.config import load_config
from seqlab.grading import grade_submission, grading_settings
from seqlab.reference import load_reference
from seqlab.student import children, open_submission
from seqlab.student.forkserver.client import ForkedProcess
from seqlab.student.sandbox import bwrap_command
from seqlab.student.sandbox import resolve as resolve_sandbox
from seqlab.student.spawn import DirectProcess
from seqlab.subset import read_modules
from tests.mutants import all_variants, make_submission, replace_function

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def box(sandbox_mode):
    return resolve_sandbox(sandbox_mode)


def probing(tmp_path, name: str, body: str):
    """A submission whose sgd runs ``body`` (which fills the dict ``found``) and returns it."""
    source = "def sgd(w, dw, state, lr=1e-2):\n" + textwrap.indent(
        "import json, os, signal\nfound = {}\n"
        + textwrap.dedent(body).strip("\n")
        + "\nreturn w, {'found': json.dumps(found)}\n",
        "    ",
    )
    submission = make_submission(tmp_path / name)
    path = submission / "exercises" / "optimizers.py"
    path.write_text(replace_function(path.read_text(), "sgd", source))
    return submission


def run_probe(submission, box) -> tuple[dict, object]:
    config = load_config()
    # The probes test the layers beneath the language subset, so their code runs as plain Python.
    texts = read_modules(submission / "exercises", subset=False)
    with open_submission(submission, load_reference(), limits=config.limits, sandbox=box, texts=texts) as student:
        outcome = student.run("optimizers.sgd", (torch.zeros(2), torch.zeros(2), {}), {"lr": 0.1})
        handle = student.child.handle
    return json.loads(outcome.value[1]["found"]), handle


def test_children_are_forked_and_switched_off_they_start_alone(tmp_path, box, monkeypatch):
    submission = probing(tmp_path, "s", "found['pid'] = os.getpid()")
    _, handle = run_probe(submission, box)
    assert isinstance(handle, ForkedProcess)
    monkeypatch.setenv("SEQLAB_FORKSERVER", "0")
    _, handle = run_probe(submission, box)
    assert isinstance(handle, DirectProcess)


def test_forked_and_alone_give_the_same_grades(tmp_path, box, monkeypatch):
    """The same submissions graded both ways: every test's score, status and message alike. (The
    recorded grades of every bank submission, tests/recorded, were made with children started
    alone and are compared with forked ones on every run: this is the direct comparison.)"""
    variants = all_variants("MUTANTS")[:1]
    graded = {}
    for switch in ("1", "0"):
        monkeypatch.setenv("SEQLAB_FORKSERVER", switch)
        for i, variant in enumerate([None, *variants]):
            submission = make_submission(tmp_path / f"{switch}-{i}", variant)
            module = variant.module if variant else "optimizers"
            result = grade_submission(submission, grading_settings(isolated=True, seed=3, only=module, sandbox=box))
            graded[switch, i] = [
                (t.name, t.score, t.max_score, t.status, t.output.replace(str(submission), "<s>")) for t in result.tests
            ]
    for i in range(len(variants) + 1):
        assert graded["1", i] == graded["0", i]


def test_a_child_cannot_signal_read_or_hold_the_server(tmp_path, box):
    if not box.enforced:
        pytest.skip("without the sandbox the student's process is the grader's user anyway")
    submission = probing(
        tmp_path,
        "s",
        """
        server = os.getppid()
        def attempt(name, fn):
            try:
                found[name] = ['ok', repr(fn())[:100]]
            except BaseException as exc:
                found[name] = [type(exc).__name__, getattr(exc, 'errno', None)]
        def by_pidfd():
            fd = os.open(f'/proc/{server}', os.O_RDONLY | os.O_DIRECTORY)
            try:
                return signal.pidfd_send_signal(fd, signal.SIGKILL)
            finally:
                os.close(fd)
        attempt('pidfd_send_signal', by_pidfd)
        attempt('mem', lambda: open(f'/proc/{server}/mem', 'rb').read(1))
        # its descriptors' numbers are readable (the files' owner is the same user); the
        # descriptors themselves (the control socket first) must not be
        attempt('fds', lambda: [os.open(f'/proc/{server}/fd/{n}', os.O_RDWR) for n in os.listdir(f'/proc/{server}/fd')])
        attempt('environ', lambda: open(f'/proc/{server}/environ', 'rb').read())
        def owner():  # SIGIO to the server whenever the pipe is ready
            import fcntl
            r, w = os.pipe()
            try:
                return fcntl.fcntl(r, fcntl.F_SETOWN, server)
            finally:
                os.close(r)
                os.close(w)
        attempt('owner', owner)
        found['own_fds'] = sorted(int(n) for n in os.listdir('/proc/self/fd'))
        found['argv'] = __import__('sys').argv[1:]
        """,
    )
    server = children.server_for(box)
    server_pid = server.proc.pid
    found, handle = run_probe(submission, box)
    assert isinstance(handle, ForkedProcess)
    for name in ("pidfd_send_signal", "mem", "fds", "environ", "owner"):
        assert found[name][0] in ("PermissionError", "OSError"), (name, found[name])
    fd_in, fd_out = map(int, found["argv"])
    # its two pipes, the standard three and the listing's own descriptor: nothing of the server's
    assert set(found["own_fds"]) - {0, 1, 2, fd_in, fd_out} <= {max(found["own_fds"])}, found["own_fds"]
    again, handle = run_probe(submission, box)
    assert isinstance(handle, ForkedProcess) and children.server_for(box).proc.pid == server_pid


def test_what_a_child_leaves_is_gone_for_the_next(tmp_path, box):
    if not box.enforced:
        pytest.skip("without the sandbox /tmp is the host's: only the scratch folders are the server's to wipe")
    writer = probing(
        tmp_path,
        "writer",
        """
        # os.mknod and os.mkfifo raise no audit event: what a student who gets past the guards
        # can do, and the kernel allows in these places
        for path in ('/tmp/left-by-a', '/dev/shm/left-by-a', 'left-in-scratch'):
            os.mknod(path, 0o600 | 0o100000)
        os.mkfifo('/tmp/a-fifo')
        found['scratch'] = os.getcwd()
        """,
    )
    reader = probing(
        tmp_path,
        "reader",
        """
        found['tmp'] = sorted(os.listdir('/tmp'))
        found['shm'] = sorted(os.listdir('/dev/shm'))
        found['scratch'] = sorted(os.listdir('.'))
        found['cwd'] = os.getcwd()
        """,
    )
    wrote, _ = run_probe(writer, box)
    server_pid = children.server_for(box).proc.pid
    found, handle = run_probe(reader, box)
    assert isinstance(handle, ForkedProcess) and children.server_for(box).proc.pid == server_pid
    assert found["shm"] == [] and found["scratch"] == [], found
    assert not [name for name in found["tmp"] if "left" in name or "fifo" in name], found["tmp"]
    assert found["cwd"] != wrote["scratch"]


# Past the in-process guards (the audit hook reads its lists from its module, which code that
# gets past the static policy can rebind): only the kernel stands between the two children.
PAST_THE_GUARDS = """
import ctypes, sys
sys.modules['seqlab.student.policy'].BLOCKED_EVENTS = frozenset()
libc = ctypes.CDLL(None, use_errno=True)
libc.mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
KEY = 0x5E91AB
def ipc(name, *args):
    found[name] = [libc[name](*args), ctypes.get_errno()]
"""


def test_a_child_can_leave_no_ipc_object_for_the_next(tmp_path, box):
    """System V IPC objects and POSIX message queues outlive their process, in an IPC namespace
    every forked child shares: one submission could leave its code there for the next to run."""
    if not box.enforced:
        pytest.skip("without the sandbox the student's process shares the host's IPC anyway")
    writer = probing(
        tmp_path,
        "writer",
        PAST_THE_GUARDS
        + """
ipc('shmget', KEY, 4096, 0o1600)  # IPC_CREAT | 0600
ipc('msgget', KEY, 0o1600)
ipc('semget', KEY, 1, 0o1600)
ipc('mq_open', b'/left-by-a', os.O_CREAT | os.O_RDWR, 0o600, None)
""",
    )
    reader = probing(
        tmp_path,
        "reader",
        PAST_THE_GUARDS
        + """
ipc('shmget', KEY, 0, 0)
ipc('msgget', KEY, 0)
ipc('semget', KEY, 0, 0)
ipc('mq_open', b'/left-by-a', os.O_RDWR, 0, None)
""",
    )
    EPERM = 1
    wrote, handle = run_probe(writer, box)
    assert isinstance(handle, ForkedProcess)
    assert all(found == [-1, EPERM] for found in wrote.values()), wrote
    found, handle = run_probe(reader, box)
    assert isinstance(handle, ForkedProcess)
    assert all(result[0] == -1 for result in found.values()), found


def test_a_trace_outside_the_wiped_places_retires_the_server(tmp_path, box):
    if not box.enforced:
        pytest.skip("the sandbox's own file systems exist only with the sandbox")
    writer = probing(tmp_path, "writer", "os.mknod('/left-in-the-root', 0o600 | 0o100000)  # no audit event")
    reader = probing(tmp_path, "reader", "found['root'] = sorted(os.listdir('/'))")
    run_probe(writer, box)
    server_pid = children.server_for(box).proc.pid
    found, _ = run_probe(reader, box)  # started alone: the retired server forks no more
    assert "left-in-the-root" not in found["root"]
    found, handle = run_probe(reader, box)
    assert "left-in-the-root" not in found["root"]
    assert isinstance(handle, ForkedProcess), "a fresh server takes over"
    assert children.server_for(box).proc.pid != server_pid


def test_two_submissions_never_share_a_sandbox(tmp_path, box):
    config = load_config()
    first, second = make_submission(tmp_path / "first"), make_submission(tmp_path / "second")
    reference = load_reference()
    with open_submission(
        first, reference, limits=config.limits, sandbox=box, texts=read_modules(first / "exercises", subset=False)
    ) as one:
        one.load_errors  # noqa: B018  (starts its child)
        with open_submission(
            second, reference, limits=config.limits, sandbox=box, texts=read_modules(second / "exercises", subset=False)
        ) as two:
            two.load_errors  # noqa: B018
            assert isinstance(one.child.handle, ForkedProcess)
            assert isinstance(two.child.handle, DirectProcess), "the first one's child is still alive"
    with open_submission(
        second, reference, limits=config.limits, sandbox=box, texts=read_modules(second / "exercises", subset=False)
    ) as three:
        three.load_errors  # noqa: B018
        assert isinstance(three.child.handle, ForkedProcess), "the first one's child is gone"


def test_the_wipe_keeps_what_bwrap_mounted_under_tmp(tmp_path, box):
    """A course cloned under /tmp (CI's clean clone) has its venv and seqlab's files mounted
    read-only under the sandbox's /tmp: the wipe removes a child's files around them, leaves the
    mounts and the folders holding them, and the sandbox still looks as it first did. A file put
    inside those folders is removed too, and retires the server (the folder's times changed); so
    does a System V IPC object, while it lives."""
    if not box.enforced:
        pytest.skip("the sandbox's own file systems exist only with the sandbox")
    course = tmp_path / "course"
    course.mkdir()
    (course / "kept.txt").write_text("read-only")
    scratch = tempfile.mkdtemp(prefix="seqlab-forkserver-")
    code = f"""
import json, os, sys
sys.path.insert(0, {str(ROOT)!r})
from seqlab.student.forkserver.traces import look, wipe_and_check
scratch = {scratch!r}
first = look(scratch)
os.mknod("/tmp/left-by-a-child")
os.mknod(os.path.join(scratch, "left-in-scratch"))
ok = wipe_and_check(scratch, first)
tmp = sorted(os.listdir("/tmp"))
import ctypes  # no filter here: an IPC object as one made past it would be
libc = ctypes.CDLL(None, use_errno=True)
segment = libc.shmget(0x5E91AB, 4096, 0o1600)
ipc_ok = wipe_and_check(scratch, first)
libc.shmctl(segment, 0, None)  # IPC_RMID
ipc_gone_ok = wipe_and_check(scratch, first)
os.mknod("/tmp/under-tmp/left-beside-the-mount")  # in bwrap's skeleton: removed, and it retires
beside_ok = wipe_and_check(scratch, first)
print(json.dumps({{"ok": ok, "beside_ok": beside_ok, "ipc_ok": ipc_ok, "ipc_gone_ok": ipc_gone_ok, "kept": open("/tmp/under-tmp/course/kept.txt").read(),
                  "tmp": tmp, "beside": sorted(os.listdir("/tmp/under-tmp"))}}))
"""
    argv = bwrap_command(
        [sys.executable, "-I", "-c", code],
        exercises=None,
        scratch=scratch,
        mounts=[(str(course), "/tmp/under-tmp/course")],
    )
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=120, cwd=scratch, env={"PATH": "/usr/bin:/bin"}
        )
    finally:
        os.rmdir(scratch)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["ok"] and found["kept"] == "read-only", found
    assert "left-by-a-child" not in found["tmp"] and found["beside"] == ["course"], found
    assert not found["ipc_ok"] and found["ipc_gone_ok"], "a System V IPC object retires the server"
    assert not found["beside_ok"], "a trace inside bwrap's skeleton retires the server, even once removed"
