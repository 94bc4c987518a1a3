"""The class's gradebook and report: gradebook.csv, class_report.{md,html}.

One writing policy for every gradebook seqlab writes (``grade-all``, ``seqlab gradebook`` and
the exam's ``grade-all``): CSV through :func:`csv_text` (the csv module's minimal quoting, ``\n``
line ends, columns in the caller's order, every cell escaped against formulas) and to disk through :func:`write_text_atomic`
(UTF-8, written beside the target and renamed over it, so a reader or an interrupted run never
sees half a file). The columns are the caller's: one per contract function for code, one per
question for an exam.

For code grading the rows come from the per-submission results folders (``DIR/<name>/``, with
``status.json`` from grade-all and ``seqlab_result.json`` from the grader): :func:`collect`
reads them, so the gradebook can be rebuilt from disk at any time.
"""

from __future__ import annotations

import csv
import io
import json
import os
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from . import contract
from .escape import csv_cell
from .reports.html import INSTRUCTOR_REPORT
from .results import GradingResult

STATUS_FILE = "status.json"
RESULT_FILE = "seqlab_result.json"


def csv_text(header: Sequence[object], rows: Iterable[Sequence[object]]) -> str:
    """A CSV document: the header, then the rows, as every seqlab gradebook writes them. Every
    cell goes through :func:`seqlab.escape.csv_cell`: a name, an id or a message that starts like
    a formula (``=HYPERLINK(...)``) is shown as text by the spreadsheet or LMS that opens it."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([csv_cell(cell) for cell in header])
    writer.writerows([csv_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def read_csv(path: Path, error: type[Exception], what: str = "the roster") -> csv.DictReader[str]:
    """The CSV document at ``path`` (UTF-8, with or without a byte-order mark: spreadsheets and
    LMS exports write both), or ``error`` naming the path when it cannot be read."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read {what}: {getattr(exc, 'strerror', None) or exc}") from None
    return csv.DictReader(io.StringIO(text))


def write_text_atomic(path: Path, text: str) -> Path:
    """``text`` to ``path`` in UTF-8, all at once: a reader sees the old file or the new one."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def _stamp(folder: Path) -> tuple:
    """What identifies the files a row is read from: both are written by rename, so a rewrite
    is a new inode (and in practice a new mtime)."""
    stamp: list = []
    for name in (STATUS_FILE, RESULT_FILE):
        try:
            st = (folder / name).stat()
            stamp.append((st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            stamp.append(None)
    return tuple(stamp)


def collect(
    out: Path, names: list[str], unfindable: dict[str, str] | None = None, cache: dict | None = None
) -> list[dict]:
    """One row per name from ``out/<name>/``: graded (with its result), error (with the reason)
    or pending. ``unfindable``: names whose submission could not even be found, with why.
    ``cache``: rows kept from an earlier call (grade-all refreshes the gradebook after every
    submission), reused while their files are unchanged: reading them all every time made a
    class's refreshes quadratic, ~3 ms a row, 2 CPU minutes over a class of 300."""
    unfindable = unfindable or {}
    rows = []
    for name in names:
        folder = out / name
        if cache is not None:
            stamp = (_stamp(folder), unfindable.get(name))
            kept = cache.get(name)
            if kept is None or kept[0] != stamp:
                kept = cache[name] = (stamp, _row(folder, name, unfindable))
            rows.append(dict(kept[1]))  # a copy: a caller's additions (a report link) stay its own
        else:
            rows.append(_row(folder, name, unfindable))
    return rows


def _row(folder: Path, name: str, unfindable: dict[str, str]) -> dict:
    row: dict[str, Any] = {"submission": name, "status": "pending", "reason": "", "result": None}
    status_path = folder / STATUS_FILE
    if status_path.is_file():
        try:
            status = json.loads(status_path.read_text())
            row.update(status=status.get("status", "error"), reason=status.get("reason", ""))
            row["max_score"] = status.get("max_score", "")
        except ValueError:
            row.update(status="error", reason="status file unreadable")
    if row["status"] == "graded":
        try:
            row["result"] = GradingResult.load(folder / RESULT_FILE)
        except (OSError, ValueError, TypeError) as exc:
            row.update(status="error", reason=f"result unreadable: {exc}")
    if row["status"] == "pending" and name in unfindable:
        row.update(status="error", reason=unfindable[name])
    return row


def write_gradebook(out: Path, rows: list[dict], name: str = "gradebook.csv") -> Path:
    """``out/name`` (a shard's own name: seqlab.engines.shards), one line per row."""
    functions = list(contract.FUNCTIONS)
    lines = []
    for row in rows:
        result: GradingResult | None = row["result"]
        if result is None:
            # the points it could have had: a not-graded row still counts against the full mark
            max_score = f"{row['max_score']:.4g}" if isinstance(row.get("max_score"), (int, float)) else ""
            lines.append(
                [row["submission"], row["status"], 0, max_score, "", *[""] * len(functions), "", "", row["reason"]]
            )
            continue
        per = result.by_function()
        lines.append(
            [
                row["submission"],
                row["status"],
                f"{result.score:.4g}",
                f"{result.max_score:.4g}",
                f"{result.percent:.1f}",
                *[f"{per[f][0]:.4g}" if f in per else "" for f in functions],
                result.seed,
                review_cell(result),
                "; ".join(result.errors)[:300],
            ]
        )
    header = ["submission", "status", "total", "max_score", "percent", *functions, "seed", "review", "reason"]
    return write_text_atomic(out / name, csv_text(header, lines))


def review_cell(result: GradingResult) -> str:
    """The gradebook's ``review`` column: each review flag as ``rule at where:line`` (no points
    taken; the evidence is in the class report and the instructor's copy of the report)."""
    return "; ".join(f"{f.get('rule')} at {f.get('where')}:{f.get('line')}" for f in result.review_flags)[:300]


def review_view(rows: list[dict]) -> list[dict]:
    """The class report's "For review" list: each graded submission with review flags, its flags
    and the link to the instructor's copy of its report (``row["review_report"]``)."""
    return [
        {"name": row["submission"], "report": row.get("review_report", ""), "flags": row["result"].review_flags}
        for row in rows
        if row["result"] is not None and row["result"].review_flags
    ]


def class_summary(rows: list[dict]) -> dict:
    results = [r["result"] for r in rows if r["result"] is not None]
    functions = []
    for name in contract.FUNCTIONS:
        scores = [res.by_function()[name] for res in results if name in res.by_function()]
        if not scores:
            continue
        max_score = scores[0][1]
        values = [s for s, _ in scores]
        buckets = [0] * 5  # 0-20%, ..., 80-100%
        for v in values:
            buckets[min(4, int(5 * v / max_score)) if max_score else 0] += 1
        functions.append(
            {
                "name": name,
                "max": max_score,
                "mean": statistics.fmean(values),
                "median": statistics.median(values),
                "full": sum(v >= max_score - 1e-9 for v in values),
                "zero": sum(v <= 1e-9 for v in values),
                "n": len(values),
                "buckets": buckets,
            }
        )
    mistakes: Counter[tuple[str, str]] = Counter()
    who: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row["result"] is None:
            continue
        seen = {(t.function, t.hint.split(":", 1)[0]) for t in row["result"].tests if t.hint}
        mistakes.update(seen)
        for key in seen:
            who.setdefault(key, []).append(row["submission"])
    totals = [res.percent for res in results]
    labs: dict[str, dict[str, list[float]]] = {}  # lab function -> metric -> the class's values
    bounds: dict[str, dict[str, float]] = {}  # lab function -> the bounds its first result recorded
    for res in results:
        for function, run in (res.meta.get("lab_runs") or {}).items():
            for metric, value in (run.get("metrics") or {}).items():
                labs.setdefault(function, {}).setdefault(metric, []).append(float(value))
            if run.get("bounds"):
                bounds.setdefault(function, run["bounds"])
    return {
        "labs": labs,
        "lab_bounds": bounds,
        "n": len(rows),
        "graded": len(results),
        "errors": [r for r in rows if r["status"] == "error"],
        "mean": statistics.fmean(totals) if totals else 0.0,
        "median": statistics.median(totals) if totals else 0.0,
        "functions": functions,
        "mistakes": [
            {"function": f, "mistake": m, "count": c, "students": sorted(who[(f, m)])}
            for (f, m), c in mistakes.most_common(15)
        ],
        "students": students_view(rows),
        "review": review_view(rows),
    }


def _lab_figures(labs: dict, recorded_bounds: dict) -> list:
    """The distribution of each lab's bounded held-out metrics over the class (matplotlib only
    when some result has a lab run), with the bounds the results recorded (``Lab.thresholds``):
    the class report is grade-all's last, serial step, and the task modules import torch."""
    if not labs:
        return []
    from .labs import lab_of
    from .labs.figures import distribution_figure

    figures = []
    for function, metrics in labs.items():
        lab = lab_of(function)
        if lab is None:
            continue
        for metric, bound in lab.thresholds(recorded_bounds.get(function)).items():
            if metrics.get(metric):
                figures.append(distribution_figure(function, metric, metrics[metric], bound))
    return figures


def students_view(rows: list[dict]) -> list[dict]:
    """One row per submission for the class report: its total, the functions below full marks
    and the path of its report.html (``row["report"]``, relative to the class report, if any)."""
    students = []
    for row in rows:
        result = row["result"]
        below = [fn for fn, (s, m) in result.by_function().items() if s < m - 1e-9] if result else []
        students.append(
            {
                "name": row["submission"],
                "status": row["status"],
                "score": result.score if result else None,
                "max_score": result.max_score if result else None,
                "percent": result.percent if result else None,
                "below": below,
                "report": row.get("report", ""),
            }
        )
    return students


def link_reports(rows: list[dict], results_dir: Path, out: Path) -> None:
    """``row["report"]``: each graded submission's report.html as a link from ``out``, and
    ``row["review_report"]`` its instructor's copy where there is one."""
    for row in rows:
        report = Path(results_dir) / row["submission"] / "report.html"
        if report.is_file():
            row["report"] = Path(os.path.relpath(report, out)).as_posix()
        copy = report.with_name(INSTRUCTOR_REPORT)
        if copy.is_file():
            row["review_report"] = Path(os.path.relpath(copy, out)).as_posix()


def write_class_report(out: Path, rows: list[dict], similarity: dict | None = None) -> tuple[Path, Path]:
    """`similarity`: the pairs of `seqlab.similarity.compare_class`, shown when given."""
    from .reports.render import environment

    summary = class_summary(rows)
    summary["similarity"] = similarity
    summary["lab_figures"] = _lab_figures(summary["labs"], summary["lab_bounds"])
    env = environment()
    html = out / "class_report.html"
    md = out / "class_report.md"
    # errors="replace": a results folder's name that is not UTF-8 (a lone surrogate once decoded)
    # is written as U+FFFD-like "?" rather than stopping the report (the HTML autoescape keeps it)
    html.write_text(env.get_template("class_report.html.j2").render(s=summary), encoding="utf-8", errors="replace")
    md.write_text(env.get_template("class_report.md.j2").render(s=summary), encoding="utf-8", errors="replace")
    return html, md


def gradebook_from_results(results_dir: Path, names: list[str], out: Path, *, missing_reason: str) -> list[dict]:
    """gradebook.csv and the class report in ``out`` for ``results_dir/<name>/`` folders written by
    grade-all or by ``seqlab grade --out`` (a result without status.json counts as graded); a name
    with neither gets a row with ``missing_reason``: no submission is ever lost."""
    results_dir, out = Path(results_dir), Path(out)
    rows = collect(results_dir, list(names))
    for row in rows:
        if row["status"] != "pending":
            continue
        result_path = results_dir / row["submission"] / RESULT_FILE
        if not result_path.is_file():
            row.update(status="error", reason=missing_reason)
            continue
        try:
            row.update(status="graded", reason="", result=GradingResult.load(result_path))
        except (OSError, ValueError, TypeError) as exc:
            row.update(status="error", reason=f"result unreadable: {exc}")
    out.mkdir(parents=True, exist_ok=True)
    link_reports(rows, results_dir, out)
    write_gradebook(out, rows)
    write_class_report(out, rows)
    return rows
