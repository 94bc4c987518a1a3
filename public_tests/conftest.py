"""pytest set-up of the public tests: a per-function table at the end of every run.

``pytest`` prints, after the usual report, one line per exercise function (how many of its
public tests pass and the first problem). ``pytest --summary-md=FILE`` also appends that table
in Markdown to FILE; the CI workflow points it at the job summary of the run.
"""

from __future__ import annotations

import ast
import re
from collections import OrderedDict
from pathlib import Path

import _labs
import pytest
from _subset.modules import install, read_modules

# Your modules are imported the way the grader imports them: read once, checked against the
# language subset (README.md, "The language subset"), compiled and run with the same guards. A
# module that breaks a rule fails to import here with the grader's own message.
EXERCISES = Path(__file__).resolve().parents[1] / "exercises"


def _topics() -> tuple[str, ...]:
    """The topics in teaching order (each builds on the ones before), as exercises/__init__.py
    lists them; tests run in this order. Read, not imported: importing it runs nothing."""
    for node in ast.parse((EXERCISES / "__init__.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["TOPICS"]:
            return tuple(ast.literal_eval(node.value))
    return ()


TOPICS = _topics()

# Filled while the tests run: function -> {"passed", "total", "problem"}; collection errors.
_STATE: dict = {"results": OrderedDict(), "errors": []}


def pytest_addoption(parser):
    parser.addoption(
        "--summary-md",
        metavar="FILE",
        default=None,
        help="append a Markdown table of the results (one row per function) to FILE",
    )


def pytest_configure(config):
    install(read_modules(EXERCISES), EXERCISES)
    config.addinivalue_line("markers", "checks(function): the exercise function a public test checks")
    _STATE["results"], _STATE["errors"] = OrderedDict(), []
    _labs.RESULTS = _STATE["results"]  # a failed lab names the functions it runs that failed here


def _first_line(report) -> str:
    crash = getattr(getattr(report, "longrepr", None), "reprcrash", None)
    text = (crash.message if crash is not None else str(report.longrepr or "")).removeprefix("Failed: ")
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "failed")
    return line if len(line) <= 240 else line[:237] + "..."


def _topic_rank(item) -> int:
    topic = Path(str(item.path)).stem.removeprefix("test_")
    return TOPICS.index(topic) if topic in TOPICS else len(TOPICS)


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=_topic_rank)  # stable: within a file, the order of the file


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    marker = item.get_closest_marker("checks")
    outcome.get_result().checked_function = marker.args[0] if marker else item.module.__name__


def pytest_runtest_logreport(report):
    if report.when != "call" and not report.failed:
        return  # setup and teardown count only when they fail
    function = getattr(report, "checked_function", report.nodeid)
    entry = _STATE["results"].setdefault(function, {"passed": 0, "total": 0, "problem": ""})
    entry["total"] += 1
    if report.passed:
        entry["passed"] += 1
    elif not entry["problem"]:
        entry["problem"] = _first_line(report)


def _import_problem(report) -> str:
    """'exercises/rnn.py, line 323: SyntaxError: invalid syntax' from a failed import's traceback."""
    text = str(report.longrepr or "")
    errors = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ") and ln[1:].strip()]
    places = re.findall(r"(exercises/\w+\.py)(?:\", line |:)(\d+)", text)
    where = f"{places[-1][0]}, line {places[-1][1]}: " if places else ""
    return where + (errors[-1] if errors else _first_line(report))


def pytest_collectreport(report):
    if report.failed:
        _STATE["errors"].append(f"{report.nodeid} could not be imported: {_import_problem(report)}")


def _function_rows():
    """The rows of exercise functions (``module.function``), in the order the tests ran; the
    language-subset checks are reported with the errors, not counted as functions."""
    rows = [(f, e) for f, e in _STATE["results"].items() if "." in f]
    rules = [e["problem"] for f, e in _STATE["results"].items() if "." not in f and e["problem"]]
    return rows, rules


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    rows, rules = _function_rows()
    errors = rules + _STATE["errors"]
    if not rows and not errors:
        return
    done = sum(1 for _, e in rows if e["passed"] == e["total"])
    write = terminalreporter.write_line
    broken = f"; {len(errors)} test file(s) could not run" if errors else ""
    terminalreporter.section(f"exercises: {done} of {len(rows)} functions pass their public tests{broken}")
    for function, e in rows:
        status = "ok  " if e["passed"] == e["total"] else "FAIL"
        problem = f"  {e['problem']}" if e["problem"] else ""
        write(f"{status} {function:40s} {e['passed']}/{e['total']}{problem}")
    for error in errors:
        write(f"ERROR {error}")
    path = config.getoption("summary_md")
    if path:
        _append_markdown(Path(path), rows, errors)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("`", "'")


def _append_markdown(path: Path, rows, errors) -> None:
    done = sum(1 for _, e in rows if e["passed"] == e["total"])
    passed = sum(e["passed"] for _, e in rows)
    total = sum(e["total"] for _, e in rows)
    broken = f"; {len(errors)} test file(s) could not run" if errors else ""
    lines = [f"## Public tests: {done} of {len(rows)} functions pass ({passed} of {total} tests{broken})", ""]
    if errors:
        lines += ["**Some tests could not run** (fix these first):", ""]
        lines += [f"- {_cell(e)}" for e in errors] + [""]
    lines += ["| | function | tests passed | first problem |", "|---|---|---:|---|"]
    for function, e in rows:
        mark = "✅" if e["passed"] == e["total"] else "❌"
        lines.append(f"| {mark} | `{function}` | {e['passed']}/{e['total']} | {_cell(e['problem'])} |")
    lines += [
        "",
        "These are the public tests only. Your grade comes from the hidden tests your instructor runs "
        'after the deadline, on larger random inputs (see README.md, "How grading works").',
        "",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write("\n".join(lines))
