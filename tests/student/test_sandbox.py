"""The layers around student code, each tested on its own.

* the bubblewrap sandbox, with raw hostile code and nothing else (no static policy, no audit
  hook): what the kernel alone refuses;
* the audit hook alone (what ``--sandbox none`` still stops), one policy for both guards;
* the static code policy: honest code always passes, each rule names its line;
* ``--sandbox`` on the command line, the loud notice without a sandbox, a CI token in the
  grader's environment that must never reach a report.

Tests that need bwrap fail when the environment variable CI is set and bwrap cannot run (CI must
prove the sandbox), and are skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from seqlab import contract
from seqlab.paths import COURSE_ROOT
from seqlab.student import policy, sandbox
from seqlab.student.seccomp import filter_fd
from seqlab.subset import problems_of, refusals
from tests.attacks.sandbox_bank import FAKE_TOKEN, LEAK
from tests.mutants import all_variants, make_submission

ROOT = Path(__file__).resolve().parents[2]


def need_bwrap() -> None:
    problem = sandbox.probe()
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"CI must test the real sandbox, and bwrap cannot run here: {problem}")
        pytest.skip(f"bwrap cannot run here: {problem}")


def run_in_sandbox(code: str, exercises: Path | None = None, env: dict | None = None) -> dict:
    """Run ``code`` with ``python -I`` in the sandbox exactly as the grading child starts (mounts,
    seccomp, rlimits) but with no audit hook and no policy; it prints one JSON object."""
    scratch = tempfile.mkdtemp(prefix="seqlab-student-")
    fd = filter_fd()
    argv = sandbox.bwrap_command(
        [sys.executable, "-I", "-c", code], exercises=exercises, scratch=scratch, seccomp_fd=fd
    )
    try:
        done = subprocess.run(
            argv,
            pass_fds=[fd] if fd is not None else [],
            preexec_fn=sandbox.apply_rlimits,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=scratch,
            env=env or {"PATH": "/usr/bin:/bin"},
        )
    finally:
        if fd is not None:
            os.close(fd)
        os.rmdir(scratch)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


PROBES = r"""
import errno, json, os, socket, sys
course, out = sys.argv[1], sys.argv[2]
found = {}
def attempt(name, fn):
    try:
        found[name] = ["ok", repr(fn())[:200]]
    except BaseException as exc:
        found[name] = [type(exc).__name__, getattr(exc, "errno", None)]
attempt("solutions", lambda: open(os.path.join(course, "solutions", "optimizers.py")).read())
attempt("graders", lambda: os.listdir(os.path.join(course, "graders")))
attempt("config", lambda: open(os.path.join(course, "grading_config.yaml")).read())
attempt("git", lambda: os.listdir(os.path.join(course, ".git")))
attempt("exams", lambda: os.listdir(os.path.join(course, "exams")))
attempt("tests", lambda: os.listdir(os.path.join(course, "tests")))
attempt("output", lambda: os.listdir(out))
attempt("course_listing", lambda: sorted(os.listdir(course)))
attempt("write_usr", lambda: open("/usr/seqlab-x", "w"))
attempt("write_venv", lambda: open(os.path.join(sys.prefix, "seqlab-x"), "w"))
attempt("write_scratch", lambda: open("scratch.txt", "w").write("fine"))
attempt("fork", lambda: os.fork())
attempt("inet_socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
attempt("pids", lambda: sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
attempt("parent_environ", lambda: open(f"/proc/{os.getppid()}/environ", "rb").read().decode())
attempt("uid", lambda: (os.getuid(), os.getgid()))
attempt("net", lambda: sorted(os.listdir("/sys/class/net")) if os.path.isdir("/sys/class/net") else [])
attempt("kill_all", lambda: os.kill(-1, 0))
import resource
attempt("nofile", lambda: resource.getrlimit(resource.RLIMIT_NOFILE))
attempt("torch", lambda: float(__import__("torch").ones(3).sum()))
print(json.dumps(found))
"""


def test_the_sandbox_alone_hides_the_course_the_parent_and_the_network(tmp_path):
    need_bwrap()
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text("{}")
    code = PROBES.replace("sys.argv[1], sys.argv[2]", f"{str(COURSE_ROOT)!r}, {str(out)!r}")
    found = run_in_sandbox(code, env={"PATH": "/usr/bin:/bin"})
    for secret in ("solutions", "graders", "config", "git", "exams", "tests", "output"):
        assert found[secret][0] == "FileNotFoundError", (secret, found[secret])
    # Only what the child imports of the checkout is there: its own code and the venv.
    listing = eval(found["course_listing"][1])
    assert set(listing) <= {"seqlab", ".venv"}, listing
    assert found["write_usr"][0] == found["write_venv"][0] == "OSError" and found["write_usr"][1] == 30  # EROFS
    assert found["write_scratch"][0] == "ok"
    assert found["fork"] == ["PermissionError", 1], found["fork"]  # seccomp: no new processes
    assert found["inet_socket"][0] == "OSError", found["inet_socket"]  # seccomp: AF_UNIX only
    assert eval(found["pids"][1]) == [1, 2], found["pids"]  # its own PID namespace
    assert found["uid"][1] == "(65534, 65534)"
    assert found["nofile"][1] == f"({sandbox.RLIMITS['RLIMIT_NOFILE']}, {sandbox.RLIMITS['RLIMIT_NOFILE']})"
    assert found["torch"] == ["ok", "3.0"]


def test_the_mounts_come_from_the_child_interpreter_and_leave_the_course_out():
    paths = sandbox.python_paths()
    assert os.path.realpath(sys.base_prefix) in paths
    assert all(
        not (p + os.sep).startswith(str(COURSE_ROOT) + os.sep) or p == os.path.realpath(sys.prefix) for p in paths
    ), paths
    argv = sandbox.bwrap_command(["python"], exercises=Path("/sub/exercises"), scratch="/tmp/seqlab-student-x")
    mounted = {argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind"}
    assert str(COURSE_ROOT) not in mounted and str(COURSE_ROOT / "solutions") not in mounted
    assert "/sub/exercises" in mounted and "/sub" not in mounted
    assert {"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--disable-userns"} <= set(argv)


def test_bwrap_reports_a_signal_death_like_a_direct_child():
    assert sandbox.exit_status(128 + 9) == -9 and sandbox.exit_status(128 + 24) == -24
    assert sandbox.exit_status(0) == 0 and sandbox.exit_status(3) == 3


def test_resolve_falls_back_loudly_and_bwrap_fails_without_it(monkeypatch):
    monkeypatch.setattr(sandbox, "BWRAP", "/nonexistent/bwrap")
    sandbox.probe.cache_clear()
    try:
        box = sandbox.resolve("auto")
        assert box.kind == "none" and box.notice.startswith("not sandboxed: /nonexistent/bwrap is not installed")
        with pytest.raises(sandbox.SandboxUnavailable, match="bwrap"):
            sandbox.resolve("bwrap")
        assert sandbox.resolve("none").notice.startswith("not sandboxed: --sandbox none")
        with pytest.raises(sandbox.SandboxUnavailable, match="unknown sandbox 'docker'"):
            sandbox.resolve("docker")  # as SEQLAB_NBGRADER_SANDBOX may say: reported, not a traceback
    finally:
        sandbox.probe.cache_clear()


# --- one policy for both guards, and what the hook alone stops ---------------------------------------


def test_one_policy_is_the_union_of_what_either_guard_blocked():
    protected = policy.protected_course_paths(COURSE_ROOT)
    for name in ("solutions", "graders", "tests", "grading_config.yaml", "exams", ".git"):
        assert str(COURSE_ROOT / name) in protected
    # sockets were only refused in the grading child, ctypes calls only in the nbgrader kernel
    assert {1} == policy.LOCAL_SOCKET_FAMILIES  # network sockets are refused at creation (AF_UNIX only)
    for event in (
        "socket.connect",
        "socket.getaddrinfo",
        "ctypes.call_function",
        "ctypes.dlopen",
        "os.fork",
        "os.kill",
        "_posixsubprocess.fork_exec",
        "sys.addaudithook",
    ):
        assert event in policy.BLOCKED_EVENTS, event
    from seqlab.nbgrader import guard
    from seqlab.student import guards

    for module in (guard, guards):  # neither keeps a list of its own any more
        source = Path(module.__file__).read_text()
        assert "install_audit_hook" in source and "BLOCKED" not in source and "_PATH_EVENTS" not in source


HOOK_ONLY = r"""
import json, os, socket, sys
from seqlab.student.guards import install_audit_hook
course, scratch = sys.argv[1], sys.argv[2]
os.chdir(scratch)
install_audit_hook([os.path.join(course, n) for n in ("solutions", "graders", ".git", "exams")], scratch)
found = {}
def attempt(name, fn):
    try:
        fn()
        found[name] = "ok"
    except BaseException as exc:
        found[name] = type(exc).__name__
attempt("git", lambda: os.listdir(os.path.join(course, ".git")))
attempt("solutions", lambda: open(os.path.join(course, "solutions", "rnn.py")).read())
attempt("dir_fd", lambda: os.open(course, os.O_RDONLY))
attempt("hard_link", lambda: os.link(os.path.join(course, "solutions", "rnn.py"), "x.py"))
attempt("rename_out", lambda: (open("n", "w").close(), os.rename("n", os.path.join(course, "n"))))
attempt("socket", lambda: socket.socket())
attempt("ctypes", lambda: __import__("ctypes").CDLL("libc.so.6"))
attempt("fork", lambda: os.fork())
attempt("kill", lambda: os.kill(os.getppid(), 0))
attempt("scratch", lambda: open("ok.txt", "w").write("x"))
print(json.dumps(found))
"""


def test_the_fallback_hook_alone_refuses_the_plain_routes(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", HOOK_ONLY, str(COURSE_ROOT), str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found.pop("scratch") == "ok"
    assert set(found.values()) == {"AuditRefusal"}, found


# --- the static code policy ----------------------------------------------------------------------------


def test_honest_code_always_passes_the_static_policy(tmp_path):
    """The references, the stubs and every known-wrong and alternative-correct variant."""
    for folder in ("solutions", "exercises"):
        for module in contract.MODULES:
            assert problems_of((ROOT / folder / f"{module}.py").read_text(), f"{folder}/{module}.py") == []
    count = 0
    for variant in [*all_variants("MUTANTS"), *all_variants("ALTERNATIVES")]:  # the demo's bugs included
        count += 1
        submission = make_submission(tmp_path / f"v{count}", variant)
        assert refusals(submission, [variant.module]) == {}, (variant.function, variant.description)
    assert count >= 143


@pytest.mark.parametrize(
    "line, rule",
    [
        ("import subprocess", "the module 'subprocess' is not in the subset"),
        ("import seqlab.reference", "the module 'seqlab' is not in the subset"),
        ("from torch import _C", "the private name torch._C"),
        ("from torch.utils import cpp_extension", "torch.utils"),
        ("y = torch._C", "the private attribute '_C' of torch"),
        ("y = torch.os.system", "torch.os is the os module"),
        ("y = (lambda: 0).__globals__", "the dunder attribute '__globals__'"),
        ("y = eval('1')", "the builtin eval()"),
        ("y = getattr(torch, 'o' + 's')", "getattr used other than as getattr(obj, 'name')"),
        ("y = getattr(torch, '__globals__')", "the dunder attribute '__globals__'"),
        ("torch.allclose = None", "monkeypatching"),
        ("y = globals()", "the builtin globals()"),
        ("y = open('/etc/passwd')", "the builtin open()"),
        ("y = __builtins__", "the dunder name '__builtins__'"),
    ],
)
def test_each_rule_names_its_line(line, rule):
    source = f"import torch\n\n\ndef f(x):\n    {line}\n    return x\n"
    found = problems_of(source, "exercises/rnn.py")
    assert any(p.startswith("exercises/rnn.py, line 5: ") and rule in p for p in found), found


def test_a_refused_module_is_never_loaded_and_costs_only_itself(tmp_path):
    submission = make_submission(tmp_path / "s")
    path = submission / "exercises" / "positional.py"
    path.write_text(path.read_text() + f"\nimport os\nos.makedirs('{tmp_path / 'ran'}')\n")
    from seqlab.grading import grade_submission, grading_settings

    result = grade_submission(submission, grading_settings(only="positional,optimizers.sgd", seed=1, sandbox="none"))
    assert not (tmp_path / "ran").exists(), "the module ran although the policy refused it"
    scores = result.by_function()
    assert all(scores[q][0] == 0 for q in contract.functions_of("positional"))
    assert scores["optimizers.sgd"][0] == scores["optimizers.sgd"][1]
    assert any("exercises/positional.py, line" in e and "os.makedirs" in e for e in result.errors), result.errors


# --- the command line and the grader's own environment ------------------------------------------------


def test_grade_without_a_sandbox_says_so_in_the_terminal_and_every_report(tmp_path):
    submission = make_submission(tmp_path / "s")
    out = tmp_path / "out"
    done = subprocess.run(
        [
            str(ROOT / ".venv" / "bin" / "seqlab"),
            "grade",
            str(submission),
            "--out",
            str(out),
            "--only",
            "attention.causal_mask",
            "--sandbox",
            "none",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "WARNING: not sandboxed: --sandbox none" in done.stderr
    assert "not sandboxed" in json.loads((out / "results.json").read_text())["output"]
    for report in ("summary.md", "report.html"):
        assert "not sandboxed" in (out / report).read_text(), report
    missing = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "seqlab"), "grade", str(submission), "--out", str(out), "--sandbox", "bwrap"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SEQLAB_BWRAP": "/nonexistent/bwrap"},
    )
    assert missing.returncode == 2 and "--sandbox bwrap" in missing.stderr


def test_auto_without_bubblewrap_gives_the_real_reason_as_a_notice(tmp_path):
    # The fallback's reason is the probe's (bubblewrap missing, with its install command), and the
    # reports call it a notice: nobody asked for --sandbox none, and grading itself went fine.
    submission = make_submission(tmp_path / "s")
    out = tmp_path / "out"
    done = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "seqlab"), "grade", str(submission), "--out", str(out)]
        + ["--only", "attention.causal_mask", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SEQLAB_BWRAP": "/nonexistent/bwrap"},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    output = json.loads((out / "results.json").read_text())["output"]
    assert "notice: not sandboxed: /nonexistent/bwrap is not installed" in output, output
    assert "apt-get install bubblewrap" in output and "--sandbox none" not in output, output
    assert "error: not sandboxed" not in output, output


TOKEN_READER = f'''
def sgd(w, dw, state, lr=1e-2):
    import os
    for pid in {{os.getppid(), 1}} | {{int(p) for p in os.listdir("/proc") if p.isdigit()}}:
        try:
            env = open(f"/proc/{{pid}}/environ", "rb").read()
        except Exception:
            continue
        at = env.find(b"{FAKE_TOKEN}")
        if at >= 0:   # only the variable: an error message is cut at 500 characters
            raise RuntimeError("{LEAK} " + env[max(at - 20, 0):at + 60].decode("utf-8", "replace"))
    return w * 0, {{}}
'''
DRIVER = r"""
import json, sys
from seqlab.grading import grade_submission, grading_settings
result = grade_submission(
    sys.argv[1], grading_settings(only="optimizers.sgd", seed=1, sandbox=sys.argv[2], static_policy=False)
)
print(json.dumps([t.output for t in result.tests] + list(result.errors)))
"""


@pytest.mark.slow  # ~3 s each: a whole grading through the command line
@pytest.mark.parametrize("mode", ["bwrap", "none"])
def test_a_ci_token_in_the_graders_environment(tmp_path, mode):
    """With the sandbox the token never reaches student code; without it, /proc/<parent>/environ
    gives it away (what docs/threat-model.md warns about: the fallback needs a clean environment)."""
    if mode == "bwrap":
        need_bwrap()
    from tests.mutants import Variant

    submission = make_submission(tmp_path / "s", Variant("optimizers.sgd", "reads the environ", TOKEN_READER))
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(submission), mode],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "GITHUB_TOKEN": FAKE_TOKEN},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    leaked = FAKE_TOKEN in done.stdout
    assert leaked == (mode == "none"), done.stdout[-1000:]
