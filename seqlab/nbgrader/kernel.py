"""What runs inside a notebook's kernel: the quick checks students run and the hidden test cells.

Students import ``quick_check`` (the visible part of every test cell). The hidden part of a test
cell is ``hidden_points("topic.function", notebook="topic.ipynb")``: it sends the notebook to the
grading server (``server.py``), which exports the topic and grades it with the real graders in
the isolated child, and it returns the function's points as the cell's value -- nbgrader's partial
credit (``nbgrader.utils.determine_grade`` reads a number from the cell's ``execute_result``).

In an nbgrader execution (``NBGRADER_EXECUTION`` is ``autograde`` or ``validate``),
nbgrader_config.py makes the kernel call ``start(seed=..., course_root=...)`` before the first
cell (IPKernelApp.exec_lines): it starts the server, then installs the guard (``guard.py``), so
no student code ever runs while the kernel could still read the course or start a process.

Rules that keep nbgrader's score equal to ``seqlab grade``'s:

* in ``autograde`` a failed quick check prints and does not raise (an error in a test cell is a
  zero for the whole cell; the hidden graders decide the points, with partial credit);
* nothing in a test cell writes to stderr (nbgrader zeroes a cell with any stderr output, e.g.
  a PyTorch UserWarning): ``quick_check`` captures warnings and stderr while autograding and
  prints them on stdout; the hidden grading runs in other processes.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import threading
import warnings

from ..contract import LABS

_server: subprocess.Popen | None = None
_lock = threading.Lock()
_state: dict = {"seed": None, "course_root": None, "started_by_nbgrader": False}


def _execution() -> str:
    return os.environ.get("NBGRADER_EXECUTION", "")


def _protected_course_paths(course_root: str | None) -> list[str]:
    from ..paths import CONFIG_PATH, COURSE_ROOT, GRADERS_DIR, SOLUTIONS_DIR
    from ..student.policy import protected_course_paths

    # SEQLAB_COURSE may move the config, graders or solutions out of the course root: name them too.
    return protected_course_paths(COURSE_ROOT, (SOLUTIONS_DIR, GRADERS_DIR, CONFIG_PATH, course_root))


def _spawn_server(seed: int, course_root: str | None) -> subprocess.Popen:
    global _server
    protect = []
    if course_root:
        # the kernel's folder names the student, whose other notebooks the labs are graded with
        protect = ["--protect", course_root, "--notebook-dir", os.getcwd()]
    bootstrap = "from seqlab.nbgrader.server import main; main()"
    # -I: no PYTHON* variables, no user site, no current directory on sys.path (the kernel's folder
    # holds the student's files). stderr goes nowhere (SEQLAB_NBGRADER_SERVER_LOG=path keeps it, to
    # debug seqlab): anything on the kernel's own stderr would be attached to the running cell, and
    # nbgrader zeroes a test cell with stderr output.
    log = os.environ.get("SEQLAB_NBGRADER_SERVER_LOG")
    # not a with-block: the server process outlives this function and owns the handle
    stderr = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    home = os.path.expanduser("~")
    # The student's process the server starts runs in the same sandbox as `seqlab grade` (auto:
    # bubblewrap when it works); SEQLAB_NBGRADER_SANDBOX=bwrap makes a missing one an error.
    sandbox = os.environ.get("SEQLAB_NBGRADER_SANDBOX", "auto")
    _server = subprocess.Popen(
        [sys.executable, "-I", "-c", bootstrap, "--seed", str(int(seed)), *protect, "--sandbox", sandbox],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        encoding="utf-8",
        cwd=home if os.path.isdir(home) else "/",
        close_fds=True,
    )
    if not isinstance(stderr, int):  # the log file: the server holds its own copy now
        stderr.close()
    # Reap the server the moment it exits. At shutdown ipykernel signals its children and waits
    # (0.01 s, 0.03 s, ... 3 s) until none is left; an unreaped server stays a zombie child, so
    # the kernel outlives nbgrader's grace period and is killed 2.5 s later, once per notebook.
    threading.Thread(target=_server.wait, name="seqlab-server-reaper", daemon=True).start()
    _state["seed"], _state["course_root"] = int(seed), course_root
    return _server


def start(seed: int, course_root: str | None = None) -> None:
    """Kernel start-up in an nbgrader execution: grading server first, then the guard."""
    from . import guard

    if guard.installed() is not None:
        return
    _state["started_by_nbgrader"] = True
    server = None
    try:
        server = _spawn_server(seed, course_root)
        # torch loads its native libraries with ctypes when imported, which the guard refuses: import
        # it now, while that is still allowed (the notebook's own `import torch` then finds it loaded).
        import torch
        import torch.nn.functional  # noqa: F401
    finally:
        # Whatever failed above, no student code runs without the guard (hidden_points then
        # reports the missing server in the cell).
        allowed = [
            os.getcwd(),
            sys.prefix,
            sys.base_prefix,
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        ]
        # ipykernel stops the kernel's children at shutdown: it may signal the server, nothing else.
        guard.install(
            _protected_course_paths(course_root), allowed, signal_pids=(server.pid,) if server is not None else ()
        )


def _ask(request: dict) -> dict:
    with _lock:
        if _server is None or _server.poll() is not None:
            if _state["started_by_nbgrader"]:
                raise RuntimeError("the seqlab grading server is gone (did code in the notebook stop it?)")
            seed = int(os.environ.get("SEQLAB_NBGRADER_SEED", "0"))
            _spawn_server(seed, None)
        server = _server
        assert server is not None and server.stdin is not None and server.stdout is not None  # spawned with pipes
        try:
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
            line = server.stdout.readline()
        except (OSError, ValueError) as exc:
            raise RuntimeError(f"lost the seqlab grading server ({exc})") from None
    if not line:
        raise RuntimeError("the seqlab grading server stopped without an answer")
    return json.loads(line)


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def hidden_points(qualname: str, notebook: str) -> float:
    """Grade ``qualname`` of this notebook with the hidden graders; return its points."""
    from . import guard

    if _execution() == "autograde" and guard.installed() is None:
        raise RuntimeError(
            "seqlab: this kernel was not started by the course's nbgrader_config.py (its guard is not "
            "active), so the hidden tests will not run here. Run `nbgrader autograde` from the course "
            "folder that `seqlab nbgrader` wrote, or merge its Execute settings into your config."
        )
    topic = qualname.split(".", 1)[0]
    with open(notebook, encoding="utf-8") as fh:
        content = json.load(fh)
    reply = _ask({"op": "grade", "topic": topic, "notebook": content, "name": os.path.basename(notebook)})
    if not reply.get("ok"):
        raise RuntimeError(f"seqlab grading failed: {reply.get('error')}")
    function = qualname.split(".", 1)[1]
    if function in reply.get("missing", []):
        print(f"{function}: its answer cell is missing from the notebook; 0 points")
    for error in reply.get("errors", []):
        print(f"problem: {error[:600]}")
    if qualname not in reply["functions"] and qualname in LABS:
        print(
            f"{function}: a lab runs your other topics' functions, so it is graded on all your "
            "notebooks together (`seqlab nbgrader autograde`, or seqlab grade on a whole submission), "
            "not in this notebook's kernel; 0 points here"
        )
        return 0.0
    if qualname not in reply["functions"]:
        raise RuntimeError(f"seqlab: no hidden tests for {qualname} in this course's graders")
    score, max_score = reply["functions"][qualname]
    tests = [t for t in reply["tests"] if t["name"].split(":", 1)[0].strip() == qualname]
    failed = [t for t in tests if t["score"] < t["max_score"] - 1e-9]
    print(
        f"{function}: {_fmt(score)} of {_fmt(max_score)} points from the hidden tests "
        f"({len(tests) - len(failed)} of {len(tests)} tests passed)"
    )
    said, hinted = set(), set()
    for t in failed:
        if t["output"] in said:  # e.g. "not implemented yet", once
            continue
        said.add(t["output"])
        title = t["name"].split(":", 1)[-1].strip()
        print(f"  - {title} ({_fmt(t['score'])}/{_fmt(t['max_score'])}): {t['output'][:500]}")
        if t.get("hint") and t["hint"] not in hinted:  # each hint once per function
            hinted.add(t["hint"])
            print(f"    hint: {t['hint'][:300]}")
    return round(float(score), 6)


def subset_problems(name: str) -> list[str]:
    """The language subset's verdict on the notebook cell that defines ``name``, in the grader's
    words: the exported module is checked the same way, so a rule broken here costs the topic."""
    import linecache

    from ..subset import problems_of

    function = getattr(sys.modules.get("__main__"), name, None)
    code = getattr(function, "__code__", None)
    if code is None:
        return []
    cell = "".join(linecache.getlines(code.co_filename))
    return problems_of(cell, "your answer cell") if cell else []


@contextlib.contextmanager
def quick_check(name: str):
    """The visible check of a test cell.

    Interactive (or nbgrader validate): a failure raises, so students see it. While autograding:
    a failure and any warning are printed on stdout and the cell goes on to the hidden tests.
    """
    problems = subset_problems(name)
    if _execution() != "autograde":
        if problems:
            raise AssertionError("your answer breaks the language subset the grader applies:\n" + "\n".join(problems))
        yield
        print(f"{name}: quick check passed")
        return
    if problems:
        print(f"{name}: quick check failed: it breaks the language subset: " + "; ".join(problems)[:800])
    stderr = io.StringIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with contextlib.redirect_stderr(stderr):
            try:
                yield
            except NotImplementedError:
                print(f"{name}: quick check failed: not implemented yet")
            except Exception as exc:
                print(f"{name}: quick check failed: {type(exc).__name__}: {str(exc)[:500]}")
            else:
                print(f"{name}: quick check passed")
    for w in caught:
        print(f"  (warning {w.category.__name__}: {str(w.message)[:300]})")
    if stderr.getvalue().strip():
        print("  (stderr: " + stderr.getvalue().strip()[:500] + ")")
